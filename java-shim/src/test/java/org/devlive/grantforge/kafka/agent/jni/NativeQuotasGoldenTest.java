package org.devlive.grantforge.kafka.agent.jni;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import org.apache.kafka.server.quota.ClientQuotaEntity;
import org.devlive.grantforge.kafka.agent.GoldenFixtures;
import org.junit.jupiter.api.Test;

/**
 * {@link NativeQuotas}' codec against the golden bytes of {@code crates/grantforge-jni/src/native_quotas.rs}, without
 * the native library: Java writes the entity Rust decodes, and reads the groups Rust answers.
 */
class NativeQuotasGoldenTest {
    private static ClientQuotaEntity.ConfigEntity part(ClientQuotaEntity.ConfigEntityType type, String name) {
        return new ClientQuotaEntity.ConfigEntity() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public ClientQuotaEntity.ConfigEntityType entityType() {
                return type;
            }
        };
    }

    @Test
    void encodesTheGoldenEntity() {
        List<ClientQuotaEntity.ConfigEntity> parts = Arrays.asList(
            part(ClientQuotaEntity.ConfigEntityType.USER, "golden-alice"),
            part(ClientQuotaEntity.ConfigEntityType.CLIENT_ID, "app é"));
        ClientQuotaEntity entity = () -> parts;
        assertArrayEquals(GoldenFixtures.read("quota-entity.bin"), NativeQuotas.encodeEntity(entity));
    }

    @Test
    void decodesTheGoldenGroups() {
        NativeQuotas.Resolved own = NativeQuotas.decodeResolved(GoldenFixtures.read("quota-resolved.bin"));
        assertEquals("golden-alice", own.userTag);
        assertEquals("app é", own.clientTag);
        assertEquals(10.0, own.limit);
        NativeQuotas.Resolved shared = NativeQuotas.decodeResolved(GoldenFixtures.read("quota-resolved-shared.bin"));
        assertEquals("golden-alice", shared.userTag);
        assertEquals("", shared.clientTag, "the rest of her quota is her shared group's");
        assertEquals(4086.0, shared.limit);
        NativeQuotas.Resolved none = NativeQuotas.decodeResolved(GoldenFixtures.read("quota-resolved-none.bin"));
        assertTrue(Double.isNaN(none.limit), "no quota: NaN");
    }
}
