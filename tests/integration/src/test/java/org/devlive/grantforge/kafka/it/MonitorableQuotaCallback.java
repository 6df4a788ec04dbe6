package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

/**
 * {@link QuotaCallback} on Kafka 4.1 and later, with {@code MonitorableGrantForgeClientQuotaCallback}: every
 * assertion of the quota tests, plus the quota table's metrics in Kafka's plugin metrics (KIP-877).
 */
abstract class MonitorableQuotaCallback extends QuotaCallback {
    MonitorableQuotaCallback(String kafkaVersion) {
        super(kafkaVersion, MONITORABLE_CALLBACK);
    }

    /** While alice has her total and clientA its sub-quota: both roles show the JVM's one table. */
    @Test
    @Order(3)
    void kafkasPluginMetricsShowTheQuotaTableUnderBothRoles() throws Exception {
        Map<String, Map<String, Object>> plugins = jmx.read("*:type=plugins,class=MonitorableGrantForgeClientQuotaCallback,*",
                "quota-entities", "quota-users-reserving", "quota-oversubscribed-users", "quota-changes");
        assertEquals(2, plugins.size(), plugins.toString());
        for (Map.Entry<String, Map<String, Object>> role : plugins.entrySet()) {
            assertTrue(role.getKey().contains("config=client.quota.callback.class"), role.getKey());
            Map<String, Object> values = role.getValue();
            assertEquals(2.0, ((Number) values.get("quota-entities")).doubleValue(), role.toString());
            assertEquals(1.0, ((Number) values.get("quota-users-reserving")).doubleValue(), role.toString());
            assertEquals(0.0, ((Number) values.get("quota-oversubscribed-users")).doubleValue(), role.toString());
            assertTrue(((Number) values.get("quota-changes")).doubleValue() >= 2, role.toString());
        }
        assertTrue(plugins.keySet().stream().anyMatch(n -> n.contains("role=broker")), plugins.keySet().toString());
        assertTrue(plugins.keySet().stream().anyMatch(n -> n.contains("role=controller")), plugins.keySet().toString());
    }
}
