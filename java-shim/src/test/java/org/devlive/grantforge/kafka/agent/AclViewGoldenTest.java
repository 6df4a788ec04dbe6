package org.devlive.grantforge.kafka.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.Test;
import org.devlive.grantforge.kafka.agent.jni.Wire;

/** {@link AclView} decodes the golden ACL rows the Rust encoder writes ({@code crates/grantforge-jni/src/acl_view.rs}). */
class AclViewGoldenTest {
    private static AclBinding binding(ResourceType type, String name, PatternType pattern, String principal,
                                      AclOperation operation, AclPermissionType permission) {
        return new AclBinding(new ResourcePattern(type, name, pattern), new AccessControlEntry(principal, "*", operation, permission));
    }

    @Test
    void decodesTheGoldenRows() {
        List<AclBinding> rows = AclView.decode(GoldenFixtures.read("acl-rows.bin"));
        assertEquals(List.of(
            binding(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:alice", AclOperation.READ, AclPermissionType.ALLOW),
            binding(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:alice", AclOperation.WRITE, AclPermissionType.ALLOW),
            binding(ResourceType.TOPIC, "café", PatternType.PREFIXED, "Role:analyst", AclOperation.DESCRIBE, AclPermissionType.ALLOW),
            binding(ResourceType.GROUP, "pay-", PatternType.PREFIXED, "Group:ops", AclOperation.READ, AclPermissionType.DENY),
            binding(ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL, "User:*", AclOperation.IDEMPOTENT_WRITE,
                AclPermissionType.ALLOW)),
            rows);
        assertSame(rows.get(0).pattern(), rows.get(1).pattern(), "a resource's rows share its pattern");
        assertSame(rows.get(0).entry().principal(), rows.get(1).entry().principal(), "a principal is decoded once");
    }

    @Test
    void keepsOnlyTheRowsTheFilterMatches() {
        AclBindingFilter topics = new AclBindingFilter(new ResourcePatternFilter(ResourceType.TOPIC, null, PatternType.ANY),
            AccessControlEntryFilter.ANY);
        assertEquals(3, AclView.matching(AclView.decode(GoldenFixtures.read("acl-rows.bin")), topics).size());
        assertTrue(AclView.decode(null).isEmpty(), "a closed agent: no row");
        assertTrue(AclView.decode(new byte[8]).isEmpty(), "no snapshot: no name, no row");
    }

    /** A view written as {@code acl_view.rs} writes it: each distinct name once, rows indexing them. */
    private static byte[] rows(AclBinding... bindings) {
        List<String> names = new java.util.ArrayList<>();
        for (AclBinding b : bindings) {
            for (String name : List.of(b.pattern().name(), b.entry().principal())) {
                if (!names.contains(name)) {
                    names.add(name);
                }
            }
        }
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        Wire.writeInt(out, names.size());
        names.forEach(name -> Wire.writeString(out, name));
        Wire.writeInt(out, bindings.length);
        for (AclBinding b : bindings) {
            out.write(b.pattern().resourceType().code());
            out.write(b.pattern().patternType().code());
            Wire.writeInt(out, names.indexOf(b.pattern().name()));
            Wire.writeInt(out, names.indexOf(b.entry().principal()));
            out.write(b.entry().operation().code());
            out.write(b.entry().permissionType().code());
        }
        return out.toByteArray();
    }

    /** What the decoder shares between rows (a repeated resource, a repeated principal) never changes a row. */
    @Test
    void rowsThatRepeatAResourceOrAPrincipalDecodeAsWritten() {
        List<AclBinding> written = List.of(
            binding(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:alice", AclOperation.READ, AclPermissionType.ALLOW),
            binding(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:bob", AclOperation.READ, AclPermissionType.DENY),
            binding(ResourceType.TOPIC, "orders", PatternType.PREFIXED, "User:alice", AclOperation.READ, AclPermissionType.ALLOW),
            binding(ResourceType.GROUP, "orders", PatternType.PREFIXED, "User:alice", AclOperation.READ, AclPermissionType.ALLOW),
            binding(ResourceType.GROUP, "orderz", PatternType.PREFIXED, "User:alxce", AclOperation.WRITE, AclPermissionType.ALLOW),
            binding(ResourceType.GROUP, "orderz", PatternType.PREFIXED, "User:alice", AclOperation.WRITE, AclPermissionType.ALLOW),
            binding(ResourceType.TOPIC, "", PatternType.LITERAL, "", AclOperation.ALL, AclPermissionType.DENY),
            binding(ResourceType.TOPIC, "", PatternType.LITERAL, "User:café", AclOperation.ALL, AclPermissionType.DENY));
        List<AclBinding> decoded = AclView.decode(rows(written.toArray(new AclBinding[0])));
        assertEquals(written, decoded);
        assertSame(decoded.get(0).pattern(), decoded.get(1).pattern(), "a resource's rows share its pattern");
        assertSame(decoded.get(0).entry().principal(), decoded.get(2).entry().principal(), "principals are shared");
    }

    /**
     * A row of an operation the running Kafka does not have (TWO_PHASE_COMMIT, code 15, on a 3.x broker) is left out:
     * Kafka's enum would make it UNKNOWN, which no listing can show.
     */
    @Test
    void rowsOfAnOperationThisKafkaLacksAreLeftOut() {
        AclBinding read = binding(ResourceType.TRANSACTIONAL_ID, "tx-", PatternType.PREFIXED, "User:alice",
            AclOperation.READ, AclPermissionType.ALLOW);
        AclBinding write = binding(ResourceType.TRANSACTIONAL_ID, "tx-", PatternType.PREFIXED, "User:alice",
            AclOperation.WRITE, AclPermissionType.ALLOW);
        byte[] view = rows(read, write);
        view[view.length - 2] = 15; // the last row's operation
        boolean thisKafkaHasIt = AclOperation.fromCode((byte) 15) != AclOperation.UNKNOWN;
        List<AclBinding> decoded = AclView.decode(view);
        assertEquals(thisKafkaHasIt ? 2 : 1, decoded.size(), decoded.toString());
        assertEquals(read, decoded.get(0));
    }
}
