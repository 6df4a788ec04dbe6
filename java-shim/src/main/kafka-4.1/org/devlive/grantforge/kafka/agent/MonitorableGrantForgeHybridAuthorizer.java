package org.devlive.grantforge.kafka.agent;

import org.apache.kafka.common.metrics.PluginMetrics;

/**
 * {@link GrantForgeHybridAuthorizer} on Kafka 4.1 and later: hybrid mode (GrantForge decides where a policy does, Kafka's
 * ACLs the rest), with the agent's metrics also among Kafka's plugin metrics (KIP-877). Kafka's
 * {@code StandardAuthorizer} is {@code Monitorable} there and needs its own metrics: they are handed on to it first.
 *
 * <p>Built apart from the shim, against Kafka 4.1's kafka-clients and kafka-metadata ({@code java-shim/pom.xml}).
 */
public class MonitorableGrantForgeHybridAuthorizer extends GrantForgeHybridAuthorizer {
    @Override
    public void withPluginMetrics(PluginMetrics metrics) {
        super.withPluginMetrics(metrics);
        AgentPluginMetrics.register(nativeHandle(), metrics);
    }
}
