package org.devlive.grantforge.kafka.agent;

import java.net.InetAddress;
import java.net.UnknownHostException;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;

/** Request contexts as Kafka builds them for a client on a SASL listener. */
final class TestContexts {
    private TestContexts() {
    }

    static AuthorizableRequestContext of(String principalType, String name, String address) {
        final KafkaPrincipal principal = new KafkaPrincipal(principalType, name);
        final InetAddress client;
        try {
            client = InetAddress.getByName(address);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(e);
        }
        return new AuthorizableRequestContext() {
            @Override public String listenerName() { return "SASL_PLAINTEXT"; }
            @Override public SecurityProtocol securityProtocol() { return SecurityProtocol.SASL_PLAINTEXT; }
            @Override public KafkaPrincipal principal() { return principal; }
            @Override public InetAddress clientAddress() { return client; }
            @Override public int requestType() { return 0; }
            @Override public int requestVersion() { return 9; }
            @Override public String clientId() { return "test-client"; }
            @Override public int correlationId() { return 1; }
        };
    }

    static AuthorizableRequestContext user(String name) {
        return of(KafkaPrincipal.USER_TYPE, name, "127.0.0.1");
    }
}
