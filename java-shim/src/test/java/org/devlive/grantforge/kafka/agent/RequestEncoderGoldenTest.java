package org.devlive.grantforge.kafka.agent;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.junit.jupiter.api.Test;

/**
 * {@link RequestEncoder} writes the golden request bytes that the Rust decoder is tested on
 * ({@code crates/grantforge-jni/src/request_encoder.rs}), without the native library.
 */
class RequestEncoderGoldenTest {
    /** User:alice from 192.0.2.7 on SASL_SSL, client {@code producer-1}, PRODUCE v11. */
    private static AuthorizableRequestContext example() throws UnknownHostException {
        final KafkaPrincipal principal = new KafkaPrincipal(KafkaPrincipal.USER_TYPE, "alice");
        final InetAddress client = InetAddress.getByName("192.0.2.7");
        return new AuthorizableRequestContext() {
            @Override public String listenerName() { return "SASL_SSL"; }
            @Override public SecurityProtocol securityProtocol() { return SecurityProtocol.SASL_SSL; }
            @Override public KafkaPrincipal principal() { return principal; }
            @Override public InetAddress clientAddress() { return client; }
            @Override public int requestType() { return 0; }
            @Override public int requestVersion() { return 11; }
            @Override public String clientId() { return "producer-1"; }
            @Override public int correlationId() { return 1; }
        };
    }

    private static final List<Action> ACTIONS = List.of(
        new Action(AclOperation.WRITE, new ResourcePattern(ResourceType.TOPIC, "orders", PatternType.LITERAL), 1, false, true),
        new Action(AclOperation.DESCRIBE, new ResourcePattern(ResourceType.GROUP, "pay-", PatternType.PREFIXED), 1, true, true),
        new Action(AclOperation.READ, new ResourcePattern(ResourceType.TOPIC, "café", PatternType.LITERAL), 1, false, false));

    private static RequestEncoder withoutNativeLibrary() {
        return new RequestEncoder(buffer -> 0L);
    }

    @Test
    void encodesTheGoldenRequestEachTimeItIsAsked() throws UnknownHostException {
        byte[] golden = GoldenFixtures.read("request.bin");
        RequestEncoder encoder = withoutNativeLibrary();
        AuthorizableRequestContext context = example();
        assertArrayEquals(golden, encoder.written(encoder.encodeAuthorize(context, ACTIONS)));
        // The same context again: the buffer keeps it, and the bytes are the same.
        assertArrayEquals(golden, encoder.written(encoder.encodeAuthorize(context, ACTIONS)));
    }

    @Test
    void encodesTheGoldenRequestByResourceType() throws UnknownHostException {
        byte[] golden = GoldenFixtures.read("request-by-resource-type.bin");
        RequestEncoder encoder = withoutNativeLibrary();
        assertArrayEquals(golden, encoder.written(encoder.encodeByResourceType(example(), AclOperation.WRITE, ResourceType.TOPIC)));
        AuthorizableRequestContext context = example();
        encoder.encodeAuthorize(context, ACTIONS);
        assertArrayEquals(golden, encoder.written(encoder.encodeByResourceType(context, AclOperation.WRITE, ResourceType.TOPIC)));
    }
}
