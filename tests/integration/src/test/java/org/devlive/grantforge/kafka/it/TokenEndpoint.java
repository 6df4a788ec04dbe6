package org.devlive.grantforge.kafka.it;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * An OAuth 2 token endpoint over loopback HTTP for the client-credentials grant, as Kafka's
 * {@code OAuthBearerLoginCallbackHandler} uses one: a POST with the client's id and secret in Basic authentication
 * is answered with an access token {@link TestIdentityProvider} signs for the client id; a wrong secret with 401.
 */
final class TokenEndpoint implements AutoCloseable {
    private final HttpServer server;
    private final TestIdentityProvider idp;
    private final String expectedAuthorization;

    private TokenEndpoint(TestIdentityProvider idp, String clientId, String clientSecret) throws IOException {
        this.idp = idp;
        this.expectedAuthorization = "Basic " + Base64.getEncoder()
                .encodeToString((clientId + ":" + clientSecret).getBytes(StandardCharsets.UTF_8));
        this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/token", exchange -> answer(exchange, clientId));
        server.start();
    }

    static TokenEndpoint start(TestIdentityProvider idp, String clientId, String clientSecret) throws IOException {
        return new TokenEndpoint(idp, clientId, clientSecret);
    }

    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/token";
    }

    private void answer(HttpExchange exchange, String clientId) throws IOException {
        exchange.getRequestBody().readAllBytes();
        boolean known = "POST".equals(exchange.getRequestMethod())
                && expectedAuthorization.equals(exchange.getRequestHeaders().getFirst("Authorization"));
        byte[] body = (known ? "{\"access_token\":\"" + idp.token(clientId) + "\",\"token_type\":\"Bearer\",\"expires_in\":3600}"
                : "{\"error\":\"invalid_client\"}").getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(known ? 200 : 401, body.length);
        exchange.getResponseBody().write(body);
        exchange.close();
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
