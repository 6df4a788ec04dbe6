package org.devlive.grantforge.kafka.agent;

import java.util.LinkedHashMap;
import org.apache.kafka.common.metrics.Gauge;
import org.apache.kafka.common.metrics.PluginMetrics;

/**
 * The agent's metrics as Kafka 4.1's plugin metrics (KIP-877), for every Monitorable authorizer of the JAR: every metric
 * the native library lists (its name and description), each a gauge that reads the live value.
 */
final class AgentPluginMetrics {
    private AgentPluginMetrics() {
    }

    static void register(long handle, PluginMetrics metrics) {
        AgentMetrics agent = AgentMetrics.reader(handle);
        for (AgentMetrics.Metric metric : agent.listed()) {
            String name = metric.name;
            Gauge<Object> gauge = (config, now) -> agent.value(name);
            metrics.addMetric(metrics.metricName(name, metric.description, new LinkedHashMap<>()), gauge);
        }
    }
}
