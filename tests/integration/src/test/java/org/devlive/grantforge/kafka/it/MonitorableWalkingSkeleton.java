package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link WalkingSkeleton} on Kafka 4.1 and later, with {@code MonitorableGrantForgeKafkaAuthorizer}: every
 * assertion of the walking skeleton, plus the agent's metrics in Kafka's plugin metrics (KIP-877).
 */
abstract class MonitorableWalkingSkeleton extends WalkingSkeleton {
    MonitorableWalkingSkeleton(String kafkaVersion) {
        super(kafkaVersion, KafkaNode.MONITORABLE_AUTHORIZER_CLASS);
    }

    /** The same metrics through Kafka's plugin metrics. */
    @Test
    void kafkasPluginMetricsShowTheAgentOnKafka41AndLater() throws Exception {
        aliceProducesToOrders(3, "plugin-metrics-");
        Map<String, Map<String, Object>> plugins = jmx.read("*:type=plugins,class=MonitorableGrantForgeKafkaAuthorizer,*",
                "decisions-allowed", "cache-hits", "snapshot-version", "audit-dropped", "last-refresh-error");
        Map<String, Object> broker = plugins.entrySet().stream()
                .filter(e -> e.getKey().contains("role=broker") && e.getKey().contains("config=authorizer.class.name"))
                .findFirst().orElseThrow(() -> new AssertionError("no broker plugin metrics: " + plugins.keySet()))
                .getValue();
        assertTrue(plugins.keySet().stream().anyMatch(n -> n.contains("role=controller")), plugins.keySet().toString());
        assertEquals(1L, broker.get("snapshot-version"), broker.toString());
        assertTrue(((Number) broker.get("decisions-allowed")).longValue() >= 3, broker.toString());
        assertTrue(((Number) broker.get("cache-hits")).longValue() >= 1, broker.toString());
        assertEquals(0L, broker.get("audit-dropped"), broker.toString());
        assertEquals("", broker.get("last-refresh-error"), broker.toString());
    }
}
