package org.devlive.grantforge.kafka.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import javax.management.AttributeNotFoundException;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.junit.jupiter.api.Test;

/**
 * {@link AgentMetrics} decodes the golden metrics payload the Rust encoder writes
 * ({@code crates/grantforge-jni/src/agent_metrics.rs}) and publishes what it lists, without the native library.
 * The names are those the docs and the integration tests read: they must not change.
 */
class AgentMetricsGoldenTest {
    private static final List<String> NAMES = List.of("decisions-allowed", "decisions-denied", "cache-hits", "cache-misses",
        "cache-size", "snapshot-version", "snapshot-age-seconds", "memberships-age-seconds", "snapshot-state", "server-reachable", "refused-without-snapshot", "heartbeat-failures", "audit-accesses", "audit-queued",
        "audit-spooled-bytes", "audit-topic-spooled-bytes", "audit-topic-spooled-files", "audit-sent", "audit-dropped", "audit-by-user", "audit-by-sink", "shadow-agreements", "shadow-grantforge-refuses",
        "shadow-grantforge-allows", "shadow-not-compared", "shadow-overflow", "shadow-untracked", "shadow-disagreements",
        "hybrid-acl-decisions", "hybrid-acl-share-percent", "last-refresh-error");
    private static final List<String> ATTRIBUTES = List.of("DecisionsAllowed", "DecisionsDenied", "CacheHits", "CacheMisses",
        "CacheSize", "SnapshotVersion", "SnapshotAgeSeconds", "MembershipsAgeSeconds", "SnapshotState", "ServerReachable", "RefusedWithoutSnapshot", "HeartbeatFailures", "AuditAccesses", "AuditQueued", "AuditSpooledBytes",
        "AuditTopicSpooledBytes", "AuditTopicSpooledFiles", "AuditSent", "AuditDropped", "AuditByUser", "AuditBySink", "ShadowAgreements", "ShadowGrantforgeRefuses",
        "ShadowGrantforgeAllows", "ShadowNotCompared", "ShadowOverflow", "ShadowUntracked", "ShadowDisagreements",
        "HybridAclDecisions", "HybridAclSharePercent", "LastRefreshError");
    private static final List<Object> VALUES = List.of(1L, 2L, 3L, 4L, 5L, -1L, 7L, 18L, 21L, 19L, 20L, 8L, 17L, 9L, 10L, 26L, 27L, 11L, 12L, "alice\t7\t0", "topic\talice\t7\t7\t0",
        13L, 14L, 15L, 16L, 22L, 23L, "5\tshadow\t…", 24L, 25L, "the server cannot be reached (é)");

    @Test
    void decodesTheGoldenMetrics() {
        AgentMetrics.Reading reading = AgentMetrics.decode(GoldenFixtures.read("metrics.bin"));
        assertEquals("broker-1", reading.instance);
        List<String> names = new ArrayList<>();
        List<String> attributes = new ArrayList<>();
        List<Object> values = new ArrayList<>();
        for (AgentMetrics.Metric metric : reading.metrics) {
            names.add(metric.name);
            attributes.add(metric.attribute);
            values.add(metric.value);
            assertEquals(metric.value instanceof String, metric.text, metric.name);
        }
        assertEquals(NAMES, names);
        assertEquals(ATTRIBUTES, attributes);
        assertEquals(VALUES, values);
        assertEquals("Actions allowed since the broker started", reading.metrics.get(0).description);
        assertEquals("The last problem keeping the policies current, empty if none",
            reading.metrics.get(reading.metrics.size() - 1).description);
    }

    @Test
    void theMBeanHasAnAttributePerListedMetricAndReadsLiveValues() throws Exception {
        byte[] golden = GoldenFixtures.read("metrics.bin");
        AtomicReference<byte[]> payload = new AtomicReference<>(golden);
        AgentMetrics metrics = AgentMetrics.register(new AgentMetrics(payload::get), "golden-test");
        assertNotNull(metrics);
        try {
            MBeanServer server = ManagementFactory.getPlatformMBeanServer();
            ObjectName name = new ObjectName(AgentMetrics.DOMAIN + ":type=Agent,instance=\"broker-1\",role=golden-test");
            List<String> attributes = new ArrayList<>();
            for (MBeanAttributeInfo info : server.getMBeanInfo(name).getAttributes()) {
                attributes.add(info.getName());
                assertEquals(VALUES.get(attributes.size() - 1) instanceof String ? "java.lang.String" : "long", info.getType(),
                    info.getName());
            }
            assertEquals(ATTRIBUTES, attributes);
            for (int i = 0; i < ATTRIBUTES.size(); i++) {
                assertEquals(VALUES.get(i), server.getAttribute(name, ATTRIBUTES.get(i)), ATTRIBUTES.get(i));
            }
            assertEquals(Arrays.asList(1L, "the server cannot be reached (é)"),
                server.getAttributes(name, new String[] {"DecisionsAllowed", "LastRefreshError"}).asList().stream()
                    .map(a -> a.getValue()).collect(java.util.stream.Collectors.toList()));
            assertThrows(AttributeNotFoundException.class, () -> server.getAttribute(name, "Nothing"));
            // The plugin metrics read the same values by name.
            assertEquals(3L, metrics.value("cache-hits"));
            // A closed agent answers nothing: -1 and empty, as before.
            payload.set(null);
            assertEquals(-1L, server.getAttribute(name, "DecisionsAllowed"));
            assertEquals("", server.getAttribute(name, "LastRefreshError"));
            assertEquals(-1L, metrics.value("snapshot-version"));
        } finally {
            metrics.unregister();
        }
    }

    /** Two authorizers of one instance name in a JVM (an embedded cluster): closing one leaves the other's MBean. */
    @Test
    void closingOneAuthorizerLeavesTheMBeanThatTookItsName() throws Exception {
        byte[] golden = GoldenFixtures.read("metrics.bin");
        AgentMetrics first = AgentMetrics.register(new AgentMetrics(() -> golden), "twin-test");
        AgentMetrics second = AgentMetrics.register(new AgentMetrics(() -> golden), "twin-test");
        ObjectName name = new ObjectName(AgentMetrics.DOMAIN + ":type=Agent,instance=\"broker-1\",role=twin-test");
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        try {
            first.unregister();
            assertTrue(server.isRegistered(name), "the second authorizer's MBean stays");
        } finally {
            second.unregister();
        }
        assertFalse(server.isRegistered(name));
    }
}
