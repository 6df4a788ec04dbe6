package org.devlive.grantforge.kafka.agent;

import java.util.LinkedHashMap;
import org.apache.kafka.common.metrics.Gauge;
import org.apache.kafka.common.metrics.Monitorable;
import org.apache.kafka.common.metrics.PluginMetrics;
import org.devlive.grantforge.kafka.agent.jni.NativeQuotas;

/**
 * The quota callback for Kafka 4.1 and later: {@link GrantForgeClientQuotaCallback}, whose quota table's metrics
 * (entities, users reserving sub-quotas, oversubscribed users, changes) Kafka publishes through its plugin metrics
 * (KIP-877), tagged {@code config=client.quota.callback.class}, the class and the role (broker or controller), under
 * the metric group {@code plugins}.
 *
 * <p>Name this class in {@code client.quota.callback.class} on Kafka 4.1 and later. Kafka 3.7 to 4.0 have no
 * {@link Monitorable}, so this class cannot load there; name {@link GrantForgeClientQuotaCallback} on those.
 *
 * <p>Built apart from the shim (against kafka-clients 4.1, {@code java-shim/pom.xml}), as
 * {@code MonitorableGrantForgeKafkaAuthorizer} is, so that the shim itself keeps loading on Kafka 3.7.
 */
public class MonitorableGrantForgeClientQuotaCallback extends GrantForgeClientQuotaCallback implements Monitorable {
    /**
     * Kafka calls this after {@code configure}: the native library is loaded. Registers every metric the native
     * library lists for the quota table (its name and description), each a gauge that reads the live value. The
     * table is the JVM's, so a combined node's two instances show the same values under their two roles.
     */
    @Override
    public void withPluginMetrics(PluginMetrics metrics) {
        AgentMetrics quotas = new AgentMetrics(NativeQuotas::stats);
        for (AgentMetrics.Metric metric : quotas.listed()) {
            String name = metric.name;
            Gauge<Object> gauge = (config, now) -> quotas.value(name);
            metrics.addMetric(metrics.metricName(name, metric.description, new LinkedHashMap<>()), gauge);
        }
    }
}
