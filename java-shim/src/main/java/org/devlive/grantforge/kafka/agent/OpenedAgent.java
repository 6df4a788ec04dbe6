package org.devlive.grantforge.kafka.agent;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.kafka.common.Endpoint;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.server.authorizer.AuthorizerServerInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.devlive.grantforge.kafka.agent.jni.AgentVersion;
import org.devlive.grantforge.kafka.agent.jni.NativeAgent;
import org.devlive.grantforge.kafka.agent.jni.NativeLibraryLoader;
import org.devlive.grantforge.kafka.agent.jni.NativeLogDrain;
import org.devlive.grantforge.kafka.agent.jni.SettingsEncoder;

/**
 * An authorizer's native agent, the one owner of its handle: opened from the authorizer's configuration (the native
 * library loaded, the agent's settings handed over, the handle and the start timeout as the native configuration
 * parsed them), started with the authorizer (its MBean, the listeners' wait for the first snapshot) and given back at
 * its close. Every authorizer of the JAR holds its agent here; a setting the agent refuses stops the broker with a
 * {@link ConfigException} naming the key.
 */
public final class OpenedAgent {
    private static final Logger LOG = LoggerFactory.getLogger(OpenedAgent.class);

    /**
     * Kafka's keys the agent reads beside its own (crates/grantforge-agent/src/config.rs, {@code KAFKA_KEYS}, whose
     * test holds this list to it) and each listener's {@code ssl.client.auth} ({@link #isAgentKey}): no other
     * setting, and so none of Kafka's secrets, reaches the native code.
     */
    static final java.util.Set<String> KAFKA_KEYS = java.util.Collections.unmodifiableSet(new java.util.HashSet<String>(
        java.util.Arrays.asList("super.users", "inter.broker.listener.name", "security.inter.broker.protocol",
            "controller.listener.names", "allow.everyone.if.no.acl.found", "listeners",
            "listener.security.protocol.map", "ssl.client.auth")));

    final long handle;
    /** {@code grantforge.start.timeout.ms} as the native agent parsed and validated it (the only place that does). */
    final long startTimeoutMs;

    private AgentMetrics metrics;

    private OpenedAgent(long handle, long startTimeoutMs) {
        this.handle = handle;
        this.startTimeoutMs = startTimeoutMs;
    }

    static OpenedAgent open(Map<String, ?> configs) {
        Map<String, String> settings = agentSettings(configs);
        String library;
        try {
            library = NativeLibraryLoader.load(settings.get(NativeLibraryLoader.PATH_KEY));
        } catch (NativeLibraryLoader.NativeLoadException e) {
            throw refuseToStart(e.getMessage());
        }
        NativeLogDrain.start();
        byte[] answer = NativeAgent.open(SettingsEncoder.encode(settings));
        NativeLogDrain.drainNow();
        if (answer == null || answer.length == 0) {
            throw refuseToStart("the native agent failed to open; see the previous log lines");
        }
        if (answer[0] != 0) {
            throw refuseToStart(new String(answer, 1, answer.length - 1, StandardCharsets.UTF_8));
        }
        // [0] + handle + start timeout in ms, little-endian longs.
        ByteBuffer fields = ByteBuffer.wrap(answer).order(ByteOrder.LITTLE_ENDIAN);
        long agent = answer.length >= 9 ? fields.getLong(1) : 0L;
        if (answer.length != 17) {
            if (agent != 0L) {
                NativeAgent.close(agent);
                NativeLogDrain.drainNow();
            }
            throw refuseToStart("the native library answered open with " + answer.length
                + " bytes instead of 17; use the native library of this agent version");
        }
        LOG.info("GrantForge agent {} configured on Java {} (native library from {})", AgentVersion.VERSION,
            System.getProperty("java.version"), library);
        AuditTopicWriter.startIfConfigured(agent);
        return new OpenedAgent(agent, fields.getLong(9));
    }

    /**
     * The authorizer's {@code start}: the agent's MBean registered (as the broker's when the authorizer has listeners
     * beside the early-start ones, which are the controllers'), and each listener's future: Kafka's own
     * ({@code kafka}), joined on a broker's listeners with the agent's first snapshot, at most
     * {@code grantforge.start.timeout.ms}, when {@code awaitsSnapshot}. The futures never fail: until a snapshot exists
     * every request but the super users' is refused.
     */
    Map<Endpoint, CompletionStage<Void>> start(AuthorizerServerInfo serverInfo,
                                               Map<Endpoint, ? extends CompletionStage<Void>> kafka,
                                               boolean awaitsSnapshot) {
        Collection<String> early = serverInfo.earlyStartListeners();
        boolean broker = false;
        for (Endpoint endpoint : serverInfo.endpoints()) {
            broker |= !early.contains(endpoint.listenerName().orElse(""));
        }
        metrics = AgentMetrics.register(handle, broker ? "broker" : "controller");
        CompletableFuture<Void> firstSnapshot = new CompletableFuture<Void>();
        if (broker && awaitsSnapshot) {
            awaitFirstSnapshot(firstSnapshot);
        } else {
            firstSnapshot.complete(null);
        }
        Map<Endpoint, CompletionStage<Void>> futures = new HashMap<Endpoint, CompletionStage<Void>>();
        for (Endpoint endpoint : serverInfo.endpoints()) {
            CompletionStage<Void> own = kafka.get(endpoint);
            CompletableFuture<Void> kafkas = own == null ? CompletableFuture.<Void>completedFuture(null)
                : own.toCompletableFuture();
            boolean opensAtOnce = early.contains(endpoint.listenerName().orElse(""));
            futures.put(endpoint, opensAtOnce ? kafkas : CompletableFuture.allOf(kafkas, firstSnapshot));
        }
        return futures;
    }

    /** Completes {@code firstSnapshot} once the agent has a snapshot in force or the start timeout has passed. */
    private void awaitFirstSnapshot(final CompletableFuture<Void> firstSnapshot) {
        Thread waiter = new Thread(new Runnable() {
            @Override
            public void run() {
                try {
                    if (!NativeAgent.awaitSnapshot(handle, startTimeoutMs)) {
                        // The native agent logged why (naming the start timeout's key): shown before the listeners open.
                        NativeLogDrain.drainNow();
                    }
                } finally {
                    // Whatever failed above, the listeners must not wait forever for it.
                    firstSnapshot.complete(null);
                }
            }
        }, "grantforge-start");
        waiter.setDaemon(true);
        waiter.start();
    }

    /**
     * The authorizer's {@code close} (or a configure that fails after opening): its MBean unregistered and the handle
     * given back (the last one of the JVM stops the agent and frees its snapshots and token); the handle then answers
     * nothing.
     */
    void close() {
        try {
            if (metrics != null) {
                metrics.unregister();
            }
        } finally {
            // However unregistering failed, the handle is given back: the last one stops the agent.
            if (handle != 0) {
                NativeAgent.close(handle);
                NativeLogDrain.drainNow();
            }
        }
    }

    static ConfigException refuseToStart(String message) {
        LOG.error("GrantForge agent cannot start: {}", message);
        return new ConfigException(message);
    }

    /**
     * What the agent would refuse in these settings, in the words that would stop the node (the key and the fix), or
     * null when it would accept them. Nothing is opened: the JAR's {@code check-config} asks this before a node
     * starts. Files the settings name (the token, the signing key) are read; the policy file is not.
     */
    public static String settingsProblem(Map<String, ?> configs) throws NativeLibraryLoader.NativeLoadException {
        Map<String, String> settings = agentSettings(configs);
        NativeLibraryLoader.load(settings.get(NativeLibraryLoader.PATH_KEY));
        byte[] answer = NativeAgent.checkSettings(SettingsEncoder.encode(settings));
        if (answer == null) {
            return "the native agent failed to check the settings";
        }
        return answer.length == 0 ? null : new String(answer, StandardCharsets.UTF_8);
    }

    /** The keys the agent reads: its own and {@link #KAFKA_KEYS}. */
    private static Map<String, String> agentSettings(Map<String, ?> configs) {
        Map<String, String> settings = new TreeMap<String, String>();
        for (Map.Entry<String, ?> entry : configs.entrySet()) {
            String key = entry.getKey();
            if (entry.getValue() != null && isAgentKey(key)) {
                settings.put(key, String.valueOf(entry.getValue()));
            }
        }
        // The running Kafka's version, for the heartbeat's agentVersion (crates/grantforge-agent/src/config.rs,
        // RUNNING_KAFKA_VERSION); never a value of the node's own settings.
        settings.put("kafka.version", runningKafkaVersion());
        return settings;
    }

    /**
     * The version kafka-clients records in its jar, read as Kafka's own {@code AppInfoParser} reads it: that class
     * moved to an internals package in Kafka 4.4, the resource is in every release.
     */
    private static String runningKafkaVersion() {
        try (InputStream in = ConfigException.class.getResourceAsStream("/kafka/kafka-version.properties")) {
            if (in == null) {
                return "unknown";
            }
            Properties properties = new Properties();
            properties.load(in);
            return properties.getProperty("version", "unknown").trim();
        } catch (IOException e) {
            return "unknown";
        }
    }

    /**
     * Whether the agent reads {@code key}: its own, {@link #KAFKA_KEYS}, and each listener's
     * {@code listener.name.<listener>.ssl.client.auth} (whether clients without a certificate get in as
     * {@code User:ANONYMOUS}).
     */
    static boolean isAgentKey(String key) {
        return key.startsWith("grantforge.") || KAFKA_KEYS.contains(key)
            || key.startsWith("listener.name.") && key.endsWith(".ssl.client.auth");
    }
}
