package org.devlive.grantforge.kafka.agent;

import org.apache.kafka.common.metrics.Monitorable;
import org.apache.kafka.common.metrics.PluginMetrics;

/**
 * The agent for Kafka 4.1 and later: {@link GrantForgeKafkaAuthorizer}, whose metrics Kafka also publishes
 * through its plugin metrics (KIP-877), beside the agent's own MBean. Kafka tags them with
 * {@code config=authorizer.class.name}, the class and the role (broker or controller), under the metric group
 * {@code plugins}.
 *
 * <p>Name this class in {@code authorizer.class.name} on Kafka 4.1 and later. Kafka 3.7 to 4.0 have no
 * {@link Monitorable}, so this class cannot load there; name {@link GrantForgeKafkaAuthorizer} on those.
 *
 * <p>Built apart from the shim (against kafka-clients 4.1, {@code java-shim/pom.xml}), so that the shim itself
 * keeps loading on Kafka 3.7.
 */
public class MonitorableGrantForgeKafkaAuthorizer extends GrantForgeKafkaAuthorizer implements Monitorable {
    /** Kafka calls this after {@code configure}: the native agent exists. */
    @Override
    public void withPluginMetrics(PluginMetrics metrics) {
        AgentPluginMetrics.register(nativeHandle(), metrics);
    }
}
