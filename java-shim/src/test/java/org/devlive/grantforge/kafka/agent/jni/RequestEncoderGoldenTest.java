package org.devlive.grantforge.kafka.agent.jni;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

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
import org.apache.kafka.server.authorizer.AuthorizationResult;
import org.junit.jupiter.api.Test;
import org.devlive.grantforge.kafka.agent.GoldenFixtures;

/**
 * {@link RequestEncoder} writes the golden request bytes that the Rust decoder is tested on
 * ({@code crates/grantforge-jni/src/request_encoder.rs}), without the native library.
 */
class RequestEncoderGoldenTest {
    /**
     * User:alice from 192.0.2.7 on SASL_SSL, client {@code producer-1}, PRODUCE v11; each call builds new objects,
     * as Kafka does for each request.
     */
    private static AuthorizableRequestContext example() throws UnknownHostException {
        return context(KafkaPrincipal.USER_TYPE, "alice", "192.0.2.7", "SASL_SSL", "producer-1", 0, 11);
    }

    private static AuthorizableRequestContext context(String principalType, String principalName, String address,
                                                      String listener, String clientId, int requestType, int requestVersion)
        throws UnknownHostException {
        final KafkaPrincipal principal = new KafkaPrincipal(principalType, new String(principalName));
        final InetAddress client = InetAddress.getByName(address);
        final String listenerName = new String(listener);
        final String client_id = new String(clientId);
        return new AuthorizableRequestContext() {
            @Override public String listenerName() { return listenerName; }
            @Override public SecurityProtocol securityProtocol() { return SecurityProtocol.SASL_SSL; }
            @Override public KafkaPrincipal principal() { return principal; }
            @Override public InetAddress clientAddress() { return client; }
            @Override public int requestType() { return requestType; }
            @Override public int requestVersion() { return requestVersion; }
            @Override public String clientId() { return client_id; }
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
    void writesTheContextOnceForEqualContextsOfNewObjects() throws UnknownHostException {
        // Kafka's SASL and SSL channels build a new KafkaPrincipal for each request, and the client id is parsed
        // from each request's header: a context equal in value is the same context.
        byte[] golden = GoldenFixtures.read("request.bin");
        RequestEncoder encoder = withoutNativeLibrary();
        for (int request = 0; request < 3; request++) {
            assertArrayEquals(golden, encoder.written(encoder.encodeAuthorize(example(), ACTIONS)));
        }
        assertEquals(1, encoder.contextWrites());
    }

    @Test
    void writesTheContextAgainWhenAnyValueOfItChanges() throws UnknownHostException {
        List<AuthorizableRequestContext> changes = List.of(
            context("Group", "alice", "192.0.2.7", "SASL_SSL", "producer-1", 0, 11),
            context("Group", "bob", "192.0.2.7", "SASL_SSL", "producer-1", 0, 11),
            context("Group", "bob", "192.0.2.8", "SASL_SSL", "producer-1", 0, 11),
            context("Group", "bob", "192.0.2.8", "INTERNAL", "producer-1", 0, 11),
            context("Group", "bob", "192.0.2.8", "INTERNAL", "producer-2", 0, 11),
            context("Group", "bob", "192.0.2.8", "INTERNAL", "producer-2", 3, 11),
            context("Group", "bob", "192.0.2.8", "INTERNAL", "producer-2", 3, 12));
        RequestEncoder encoder = withoutNativeLibrary();
        byte[] previous = encoder.written(encoder.encodeAuthorize(example(), ACTIONS));
        for (AuthorizableRequestContext changed : changes) {
            byte[] bytes = encoder.written(encoder.encodeAuthorize(changed, ACTIONS));
            assertFalse(java.util.Arrays.equals(previous, bytes), "a changed context must be written again");
            RequestEncoder fresh = withoutNativeLibrary();
            assertArrayEquals(fresh.written(fresh.encodeAuthorize(changed, ACTIONS)), bytes);
            previous = bytes;
        }
        assertEquals(1 + changes.size(), encoder.contextWrites());
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

    /**
     * The comparison payload of shadow and compare modes ({@code crates/grantforge-jni/src/comparison_codec.rs}): the
     * golden request, then Kafka's answers as Java writes them, then the flags as Rust writes them, read here.
     */
    @Test
    void encodesTheGoldenComparisonAndReadsItsFlags() throws UnknownHostException {
        byte[] golden = GoldenFixtures.read("comparison.bin");
        // the buffer, kept as the native library would see it, to write the flags into as `compare` does
        java.nio.ByteBuffer[] seen = new java.nio.ByteBuffer[1];
        RequestEncoder encoder = new RequestEncoder(buffer -> {
            seen[0] = buffer;
            return 0L;
        });
        int requestLength = encoder.encodeComparison(example(), ACTIONS,
            List.of(AuthorizationResult.ALLOWED, AuthorizationResult.DENIED, AuthorizationResult.ALLOWED));
        assertArrayEquals(GoldenFixtures.read("request.bin"), encoder.written(requestLength));
        int count = ACTIONS.size();
        assertArrayEquals(java.util.Arrays.copyOf(golden, requestLength + count), encoder.written(requestLength + count));
        for (int i = 0; i < count; i++) {
            seen[0].put(requestLength + count + i, golden[requestLength + count + i]);
        }
        assertEquals(RequestEncoder.GRANTFORGE_ALLOWS, encoder.comparisonFlags(requestLength, count, 0));
        assertEquals(RequestEncoder.GRANTFORGE_ALLOWS | RequestEncoder.DIFFERS | RequestEncoder.WANTS_KAFKA_BASIS,
            encoder.comparisonFlags(requestLength, count, 1));
        assertEquals(RequestEncoder.DIFFERS, encoder.comparisonFlags(requestLength, count, 2));
    }

    /**
     * hybrid.bin: the golden request, the verdicts {@code hybrid} wrote (GrantForge allows action 0, leaves 1 and 2 to
     * Kafka's ACLs) with Kafka's answers written over them (1 allowed, 2 refused), and the ACL behind each
     * ({@code crates/grantforge-jni/src/hybrid_codec.rs} reads the same file).
     */
    @Test
    void readsTheGoldenVerdictsAndWritesKafkasAnswersAsTheLibraryReadsThem() throws UnknownHostException {
        byte[] golden = GoldenFixtures.read("hybrid.bin");
        java.nio.ByteBuffer[] seen = new java.nio.ByteBuffer[1];
        RequestEncoder encoder = new RequestEncoder(buffer -> {
            seen[0] = buffer;
            return 0L;
        });
        int requestLength = encoder.encodeHybrid(example(), ACTIONS);
        assertArrayEquals(GoldenFixtures.read("request.bin"), encoder.written(requestLength));
        byte[] verdicts = {RequestEncoder.VERDICT_ALLOWED, RequestEncoder.VERDICT_LEFT_TO_KAFKA,
            RequestEncoder.VERDICT_LEFT_TO_KAFKA};
        for (int i = 0; i < verdicts.length; i++) {
            seen[0].put(requestLength + i, verdicts[i]);
        }
        assertEquals(RequestEncoder.VERDICT_ALLOWED, encoder.hybridVerdict(requestLength, 0));
        assertEquals(RequestEncoder.VERDICT_LEFT_TO_KAFKA, encoder.hybridVerdict(requestLength, 1));
        int tail = encoder.putAclAnswers(requestLength, 3, new boolean[] {false, true, false},
            new String[] {null, "TOPIC:LITERAL:orders User:alice from * ALLOW WRITE", ""});
        assertArrayEquals(golden, encoder.written(requestLength + tail));
    }
}
