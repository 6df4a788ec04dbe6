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

    /**
     * Every metric, in the order of {@code NativeAgent.stats}, with its name in Kafka's plugin metrics (Kafka 4.1+,
     * {@code MonitorableGrantForgeKafkaAuthorizer}); the MBean's attributes are the same, in camel case.
     */
    enum Stat {
        DECISIONS_ALLOWED("decisions-allowed", "Actions allowed since the broker started"),
        DECISIONS_DENIED("decisions-denied", "Actions refused since the broker started"),
        CACHE_HITS("cache-hits", "Decisions answered from the decision cache"),
        CACHE_MISSES("cache-misses", "Decisions made from the policies"),
        CACHE_SIZE("cache-size", "Decisions kept in the decision cache now"),
        SNAPSHOT_VERSION("snapshot-version", "Policy version in force, -1 without a snapshot"),
        SNAPSHOT_AGE_SECONDS("snapshot-age-seconds", "Seconds since the snapshot in force was applied, -1 without one"),
        HEARTBEAT_FAILURES("heartbeat-failures", "Heartbeats to the GrantForge server that failed"),
        AUDIT_QUEUED("audit-queued", "Folded audit groups waiting to become events"),
        AUDIT_SPOOLED_BYTES("audit-spooled-bytes", "Bytes of audit events in the disk spool"),
        AUDIT_SENT("audit-sent", "Audit events the GrantForge server accepted"),
        AUDIT_DROPPED("audit-dropped", "Audited accesses dropped (queue or spool full, or refused by the server)"),
        LAST_REFRESH_ERROR("last-refresh-error", "The last problem keeping the policies current, empty if none");

        final String metricName;
        final String description;

        Stat(String metricName, String description) {
            this.metricName = metricName;
            this.description = description;
        }
    }

    private final long handle;
    private ObjectName name;

    private AgentMetrics(long handle) {
        this.handle = handle;
    }

    /** Reads the metrics of an agent without registering an MBean. */
    static AgentMetrics reader(long handle) {
        return new AgentMetrics(handle);
    }

    /** The live value of one metric: a Long, or the String of {@link Stat#LAST_REFRESH_ERROR}. */
    Object value(Stat stat) {
        return stat == Stat.LAST_REFRESH_ERROR ? text(0) : (Object) number(stat.ordinal());
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

    @Override public long getDecisionsAllowed() { return number(Stat.DECISIONS_ALLOWED.ordinal()); }
    @Override public long getDecisionsDenied() { return number(Stat.DECISIONS_DENIED.ordinal()); }
    @Override public long getCacheHits() { return number(Stat.CACHE_HITS.ordinal()); }
    @Override public long getCacheMisses() { return number(Stat.CACHE_MISSES.ordinal()); }
    @Override public long getCacheSize() { return number(Stat.CACHE_SIZE.ordinal()); }
    @Override public long getSnapshotVersion() { return number(Stat.SNAPSHOT_VERSION.ordinal()); }
    @Override public long getSnapshotAgeSeconds() { return number(Stat.SNAPSHOT_AGE_SECONDS.ordinal()); }
    @Override public String getLastRefreshError() { return text(0); }
    @Override public long getHeartbeatFailures() { return number(Stat.HEARTBEAT_FAILURES.ordinal()); }
    @Override public long getAuditQueued() { return number(Stat.AUDIT_QUEUED.ordinal()); }
    @Override public long getAuditSpooledBytes() { return number(Stat.AUDIT_SPOOLED_BYTES.ordinal()); }
    @Override public long getAuditSent() { return number(Stat.AUDIT_SENT.ordinal()); }
    @Override public long getAuditDropped() { return number(Stat.AUDIT_DROPPED.ordinal()); }
}
