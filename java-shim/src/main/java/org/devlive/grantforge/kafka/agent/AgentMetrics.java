package org.devlive.grantforge.kafka.agent;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes the native agent's metrics as a standard MBean; every read asks the native library
 * (one JNI call), so JMX always shows the live values. Works on every Kafka version (plain JMX,
 * nothing of Kafka's metrics API).
 */
final class AgentMetrics implements AgentMetricsMBean {
    static final String DOMAIN = "org.devlive.grantforge.kafka";
    private static final Logger LOG = LoggerFactory.getLogger(AgentMetrics.class);
    private static final int NUMBERS = 12;

    private final long handle;
    private ObjectName name;

    private AgentMetrics(long handle) {
        this.handle = handle;
    }

    /** Registers the metrics of one authorizer (role broker or controller); null if JMX refuses. */
    static AgentMetrics register(long handle, String role) {
        AgentMetrics metrics = new AgentMetrics(handle);
        try {
            String instance = ObjectName.quote(metrics.text(1));
            ObjectName name = new ObjectName(DOMAIN + ":type=Agent,instance=" + instance + ",role=" + role);
            MBeanServer server = ManagementFactory.getPlatformMBeanServer();
            if (server.isRegistered(name)) {
                server.unregisterMBean(name);
            }
            server.registerMBean(metrics, name);
            metrics.name = name;
            return metrics;
        } catch (JMException | RuntimeException e) {
            LOG.warn("GrantForge agent metrics are not in JMX: {}", e.toString());
            return null;
        }
    }

    void unregister() {
        try {
            if (name != null && ManagementFactory.getPlatformMBeanServer().isRegistered(name)) {
                ManagementFactory.getPlatformMBeanServer().unregisterMBean(name);
            }
        } catch (JMException e) {
            LOG.debug("unregistering {} failed: {}", name, e.toString());
        }
    }

    private ByteBuffer read() {
        byte[] stats = NativeAgent.stats(handle);
        return stats == null ? null : ByteBuffer.wrap(stats).order(ByteOrder.LITTLE_ENDIAN);
    }

    private long number(int index) {
        ByteBuffer in = read();
        return in == null ? -1 : in.getLong(index * 8);
    }

    /** The strings after the numbers: 0 = last refresh error, 1 = instance. */
    private String text(int index) {
        ByteBuffer in = read();
        if (in == null) {
            return "";
        }
        in.position(NUMBERS * 8);
        String value = Wire.readString(in);
        return index == 0 ? value : Wire.readString(in);
    }

    @Override public long getDecisionsAllowed() { return number(0); }
    @Override public long getDecisionsDenied() { return number(1); }
    @Override public long getCacheHits() { return number(2); }
    @Override public long getCacheMisses() { return number(3); }
    @Override public long getCacheSize() { return number(4); }
    @Override public long getSnapshotVersion() { return number(5); }
    @Override public long getSnapshotAgeSeconds() { return number(6); }
    @Override public String getLastRefreshError() { return text(0); }
    @Override public long getHeartbeatFailures() { return number(7); }
    @Override public long getAuditQueued() { return number(8); }
    @Override public long getAuditSpooledBytes() { return number(9); }
    @Override public long getAuditSent() { return number(10); }
    @Override public long getAuditDropped() { return number(11); }
}
