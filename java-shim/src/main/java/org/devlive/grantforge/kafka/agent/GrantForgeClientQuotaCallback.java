package org.devlive.grantforge.kafka.agent;

import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.server.quota.ClientQuotaCallback;
import org.apache.kafka.server.quota.ClientQuotaEntity;
import org.apache.kafka.server.quota.ClientQuotaType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.devlive.grantforge.kafka.agent.jni.AgentVersion;
import org.devlive.grantforge.kafka.agent.jni.NativeLibraryLoader;
import org.devlive.grantforge.kafka.agent.jni.NativeLogDrain;
import org.devlive.grantforge.kafka.agent.jni.NativeQuotas;

/**
 * User and client-id quotas (KIP-55) with reserved sub-quotas, for {@code client.quota.callback.class}
 * on brokers and controllers: a sub-quota of a user's clients is carved out of the user's total, and
 * a client id's quota is per user (docs/quotas.md has the rules). Kafka hands every quota entity to
 * {@link #updateQuota} and {@link #removeQuota}; the table and its resolution live in the agent's Rust
 * library, one table per JVM, so the broker's and the controller's instances of a combined node
 * answer alike. The request path ({@link #quotaMetricTags}, {@link #quotaLimit},
 * {@link #quotaResetRequired}) answers from a {@link QuotaView}: it never blocks, never throws and
 * never returns null tags.
 */
public class GrantForgeClientQuotaCallback implements ClientQuotaCallback, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(GrantForgeClientQuotaCallback.class);

    /** Kafka's setting of the largest request a node accepts (its default applies when it is not set). */
    static final String SOCKET_REQUEST_MAX_BYTES = "socket.request.max.bytes";

    /** The answers of this JVM's table kept for the request path; a change forgets what it touches. */
    private static final QuotaView VIEW = new QuotaView();

    /**
     * The quota table's metrics in JMX, {@code org.devlive.grantforge.kafka:type=Quotas} on every Kafka release (one
     * table per JVM, so one MBean; registered by the first instance configured). On 4.1 and later
     * {@code MonitorableGrantForgeClientQuotaCallback} publishes the same metrics as Kafka plugin metrics too.
     */
    static final String MBEAN_KEYS = "type=Quotas";
    private static AgentMetrics mbean;

    /** Per quota type: changes of this JVM's table so far. */
    private static final AtomicLongArray CHANGES = new AtomicLongArray(ClientQuotaType.values().length);

    /** Per quota type: the changes this instance has told Kafka of, or made itself. */
    private final long[] seen = new long[ClientQuotaType.values().length];

    @Override
    public void configure(Map<String, ?> configs) {
        Object path = configs.get(NativeLibraryLoader.PATH_KEY);
        try {
            String library = NativeLibraryLoader.load(path == null ? null : path.toString());
            NativeLogDrain.start();
            if (NativeQuotas.configure(socketRequestMaxBytes(configs.get(SOCKET_REQUEST_MAX_BYTES)))) {
                // A remainder's bound changed: every instance's Kafka re-reads its limits.
                for (int i = 0; i < seen.length; i++) {
                    VIEW.forgetType(i);
                    CHANGES.incrementAndGet(i);
                }
            }
            registerMBean();
            LOG.info("GrantForge quota callback {} configured (native library from {})", AgentVersion.VERSION, library);
        } catch (NativeLibraryLoader.NativeLoadException e) {
            LOG.error("GrantForge quota callback cannot start: {}", e.getMessage());
            throw new ConfigException(e.getMessage());
        }
        for (int i = 0; i < seen.length; i++) {
            seen[i] = CHANGES.get(i);
        }
    }

    private static synchronized void registerMBean() {
        if (mbean == null) {
            mbean = AgentMetrics.registerAs(new AgentMetrics(NativeQuotas::stats, "The GrantForge quota callback's table"
                + " (one per JVM): its entities, users reserving sub-quotas, oversubscribed users and changes."), MBEAN_KEYS);
        }
    }

    /** The node's setting as Kafka validated it at start (a number or its text); 0 for Kafka's default. */
    static long socketRequestMaxBytes(Object value) {
        if (value instanceof Number) {
            return ((Number) value).longValue();
        }
        try {
            return value == null ? 0 : Long.parseLong(value.toString().trim());
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private static final AtomicLong REQUEST_PATH_ERRORS = new AtomicLong();

    @Override
    public Map<String, String> quotaMetricTags(ClientQuotaType quotaType, KafkaPrincipal principal, String clientId) {
        try {
            String user = principal == null ? "" : principal.getName();
            return VIEW.tagsOf(quotaType.ordinal(), user == null ? "" : user, clientId == null ? "" : clientId);
        } catch (RuntimeException e) {
            // Never throw on the request path: the connection joins the group of no quota.
            requestPathFailed("quotaMetricTags", e);
            return QuotaView.tags("", "");
        }
    }

    @Override
    public Double quotaLimit(ClientQuotaType quotaType, Map<String, String> metricTags) {
        try {
            return VIEW.limitOf(quotaType.ordinal(), metricTags);
        } catch (RuntimeException e) {
            requestPathFailed("quotaLimit", e);
            return null;
        }
    }

    /** Errors met on the request path since the JVM started (each answered as "no quota"). */
    static long requestPathErrors() {
        return REQUEST_PATH_ERRORS.get();
    }

    /**
     * Counts an error of a request-path call, which is answered as "no quota" (Kafka must not be
     * thrown at there), and logs the first at ERROR with its stack: a bug must show, and must not
     * flood the log at the rate of requests.
     */
    private static void requestPathFailed(String call, RuntimeException e) {
        if (REQUEST_PATH_ERRORS.getAndIncrement() == 0) {
            LOG.error("GrantForge quota callback: {} failed, so the connection is measured as if no quota applied"
                + " (unthrottled); only this first error is logged, please report it", call, e);
        }
    }

    @Override
    public void updateQuota(ClientQuotaType quotaType, ClientQuotaEntity quotaEntity, double newValue) {
        changed(quotaType, quotaEntity, NativeQuotas.update(quotaType.ordinal(), NativeQuotas.encodeEntity(quotaEntity), newValue));
    }

    @Override
    public void removeQuota(ClientQuotaType quotaType, ClientQuotaEntity quotaEntity) {
        changed(quotaType, quotaEntity, NativeQuotas.remove(quotaType.ordinal(), NativeQuotas.encodeEntity(quotaEntity)));
    }

    /** Kafka made this change itself and re-reads its limits: only the other instances are told. */
    private void changed(ClientQuotaType quotaType, ClientQuotaEntity entity, boolean changed) {
        if (changed) {
            String user = namedUser(entity);
            if (user == null) {
                VIEW.forgetType(quotaType.ordinal());
            } else {
                VIEW.forgetUser(quotaType.ordinal(), user);
            }
            seen[quotaType.ordinal()] = CHANGES.incrementAndGet(quotaType.ordinal());
        }
    }

    /** The entity's named user (its {@code USER} part), or null: a default or client-id entity concerns any user. */
    static String namedUser(ClientQuotaEntity entity) {
        for (ClientQuotaEntity.ConfigEntity part : entity.configEntities()) {
            if (part.entityType() == ClientQuotaEntity.ConfigEntityType.USER) {
                return part.name();
            }
        }
        return null;
    }

    /** True once after a change this instance's Kafka did not make (another instance's update). */
    @Override
    public boolean quotaResetRequired(ClientQuotaType quotaType) {
        int type = quotaType.ordinal();
        long now = CHANGES.get(type);
        if (now == seen[type]) {
            return false;
        }
        seen[type] = now;
        return true;
    }

    @Override
    public boolean updateClusterMetadata(Cluster cluster) {
        return false;
    }

    /** Idempotent; the table is the JVM's and outlives an instance. */
    @Override
    public void close() {
    }
}
