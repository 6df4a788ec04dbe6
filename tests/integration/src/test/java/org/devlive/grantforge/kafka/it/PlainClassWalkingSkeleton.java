package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link WalkingSkeleton} on Kafka 4.1 and later with the plain {@code GrantForgeKafkaAuthorizer}, the class an
 * operator may name on every release: every expectation of the walking skeleton holds, and it is the plain
 * class that Kafka runs (no plugin metrics, which Kafka publishes only for a {@code Monitorable} plugin).
 */
abstract class PlainClassWalkingSkeleton extends WalkingSkeleton {
    PlainClassWalkingSkeleton(String kafkaVersion) {
        super(kafkaVersion, KafkaNode.AUTHORIZER_CLASS);
    }

    @Test
    void thePlainClassRunsWithoutPluginMetrics() throws Exception {
        aliceProducesToOrders(1, "plain-class-");
        Map<String, Map<String, Object>> plugins = jmx.read("*:type=plugins,config=authorizer.class.name,*");
        assertEquals(Map.of(), plugins, "Kafka published plugin metrics for the authorizer");
        Map<String, Map<String, Object>> agents = jmx.read("org.devlive.grantforge.kafka:type=Agent,*",
                "SnapshotVersion");
        assertTrue(agents.keySet().stream().anyMatch(n -> n.contains("role=broker")), agents.keySet().toString());
    }
}
