package org.devlive.grantforge.kafka.it;

import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.security.auth.callback.Callback;
import javax.security.auth.callback.UnsupportedCallbackException;
import javax.security.auth.login.AppConfigurationEntry;

import org.apache.kafka.common.security.auth.AuthenticateCallbackHandler;
import org.apache.kafka.common.security.auth.SaslExtensionsCallback;
import org.apache.kafka.common.security.oauthbearer.OAuthBearerToken;
import org.apache.kafka.common.security.oauthbearer.OAuthBearerTokenCallback;

/**
 * A client's {@code sasl.login.callback.handler.class} that presents the access token of its JAAS option
 * {@value #OPTION}, as a client does with a token its identity provider issued (the broker validates it).
 */
public final class StaticTokenLogin implements AuthenticateCallbackHandler {
    public static final String OPTION = "token";
    private static final Pattern CLAIM = Pattern.compile("\"(sub|iat|exp)\":\"?([^\",}]+)");
    private OAuthBearerToken token;

    @Override
    public void configure(Map<String, ?> configs, String saslMechanism, List<AppConfigurationEntry> jaasConfigEntries) {
        String value = (String) jaasConfigEntries.get(0).getOptions().get(OPTION);
        String claims = new String(Base64.getUrlDecoder().decode(value.split("\\.")[1]), java.nio.charset.StandardCharsets.UTF_8);
        Map<String, String> read = new java.util.HashMap<>();
        Matcher claim = CLAIM.matcher(claims);
        while (claim.find()) {
            read.put(claim.group(1), claim.group(2));
        }
        long issuedMs = Long.parseLong(read.get("iat")) * 1000;
        long expiresMs = Long.parseLong(read.get("exp")) * 1000;
        String subject = read.get("sub");
        token = new OAuthBearerToken() {
            @Override
            public String value() {
                return value;
            }

            @Override
            public Set<String> scope() {
                return Set.of("kafka");
            }

            @Override
            public long lifetimeMs() {
                return expiresMs;
            }

            @Override
            public String principalName() {
                return subject;
            }

            @Override
            public Long startTimeMs() {
                return issuedMs;
            }
        };
    }

    @Override
    public void handle(Callback[] callbacks) throws UnsupportedCallbackException {
        for (Callback callback : callbacks) {
            if (callback instanceof OAuthBearerTokenCallback) {
                ((OAuthBearerTokenCallback) callback).token(token);
            } else if (!(callback instanceof SaslExtensionsCallback)) {
                throw new UnsupportedCallbackException(callback);
            }
        }
    }

    @Override
    public void close() {
    }
}
