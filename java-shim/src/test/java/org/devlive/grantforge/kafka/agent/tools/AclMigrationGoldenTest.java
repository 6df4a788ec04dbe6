package org.devlive.grantforge.kafka.agent.tools;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.EnumSet;
import java.util.List;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.Test;
import org.devlive.grantforge.kafka.agent.GoldenFixtures;

/**
 * {@link AclMigration} writes the golden request the Rust decoder reads and decodes the golden answer it
 * writes ({@code crates/grantforge-jni/src/acl_migration.rs}), without the native library.
 */
class AclMigrationGoldenTest {
    private static AclBinding binding(ResourceType type, String name, PatternType pattern, String principal, String host,
                                      AclOperation operation, AclPermissionType permission) {
        return new AclBinding(new ResourcePattern(type, name, pattern), new AccessControlEntry(principal, host, operation, permission));
    }

    private static final List<AclBinding> EXAMPLE = List.of(
        binding(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW),
        binding(ResourceType.GROUP, "café-", PatternType.PREFIXED, "Group:ops", "10.0.0.1", AclOperation.DELETE, AclPermissionType.DENY),
        binding(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:bob", "client.example.com", AclOperation.WRITE,
            AclPermissionType.ALLOW));

    @Test
    void writesTheGoldenRequest() {
        assertArrayEquals(GoldenFixtures.read("acl-migration-request.bin"), AclMigration.encodeRequest("kafka-prod", EXAMPLE));
    }

    @Test
    void decodesTheGoldenAnswer() throws Exception {
        AclMigration migration = AclMigration.decodeAnswer(GoldenFixtures.read("acl-migration-answer.bin"));
        assertEquals("grantforge.policy.file", migration.policyFileKey);
        assertTrue(migration.snapshotJson.contains("\"service\": \"kafka-prod\""), migration.snapshotJson);
        assertTrue(migration.policyRequestsJson.contains("\"labels\": ["), migration.policyRequestsJson);
        assertTrue(migration.reportText.startsWith("migrate-acls: 3 ACLs read, 2 migrated into 2 policies, 1 not migrated"),
            migration.reportText);
        assertEquals(3, migration.report.size());
        AclMigration.Entry narrower = migration.report.get(0);
        assertEquals(1, narrower.acl);
        assertEquals(AclMigration.DENY_COVERS_IMPLIED, narrower.finding);
        assertEquals(EnumSet.of(AclOperation.DESCRIBE), narrower.narrowed);
        AclMigration.Entry group = migration.report.get(1);
        assertEquals(AclMigration.GROUP_MEMBERS, group.finding);
        assertTrue(group.narrowed.isEmpty(), "a Group deny narrows nothing");
        AclMigration.Entry left = migration.report.get(2);
        assertEquals(2, left.acl);
        assertEquals(AclMigration.NOT_MIGRATED, left.finding);
        assertEquals(EnumSet.of(AclOperation.WRITE, AclOperation.DESCRIBE), left.narrowed);
        assertTrue(left.message.contains("`client.example.com`"), left.message);
    }

    @Test
    void aFailureCarriesTheNativeMessage() {
        byte[] failure = {1, 5, 0, 0, 0, 'o', 'o', 'p', 's', '!'};
        AclMigration.MigrationException e = assertThrows(AclMigration.MigrationException.class,
            () -> AclMigration.decodeAnswer(failure));
        assertEquals("oops!", e.getMessage());
    }
}
