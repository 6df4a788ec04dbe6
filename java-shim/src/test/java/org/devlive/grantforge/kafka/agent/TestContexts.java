package org.devlive.grantforge.kafka.agent;

import java.net.InetAddress;
import java.net.UnknownHostException;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;

/** Request contexts as Kafka builds them for a client on a SASL listener, and the actions asked with them. */
public final class TestContexts {
    private TestContexts() {
    }

    public static AuthorizableRequestContext of(String principalType, String name, String address) {
        try {
            return of(new KafkaPrincipal(principalType, name), InetAddress.getByName(address), "SASL_PLAINTEXT",
                "test-client");
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(e);
        }
    }

    /** A context of these very objects (the shim's encoder compares a context's parts by identity). */
    public static AuthorizableRequestContext of(final KafkaPrincipal principal, final InetAddress client,
                                         final String listener, final String clientId) {
        return new AuthorizableRequestContext() {
            @Override public String listenerName() { return listener; }
            @Override public SecurityProtocol securityProtocol() { return SecurityProtocol.SASL_PLAINTEXT; }
            @Override public KafkaPrincipal principal() { return principal; }
            @Override public InetAddress clientAddress() { return client; }
            @Override public int requestType() { return 0; }
            @Override public int requestVersion() { return 9; }
            @Override public String clientId() { return clientId; }
            @Override public int correlationId() { return 1; }
        };
    }

    /** An action on a literal resource, audited whatever the answer, as Kafka asks for most requests. */
    public static Action action(AclOperation op, ResourceType type, String name) {
        return new Action(op, new ResourcePattern(type, name, PatternType.LITERAL), 1, true, true);
    }

    public static AuthorizableRequestContext user(String name) {
        return of(KafkaPrincipal.USER_TYPE, name, "127.0.0.1");
    }
}
