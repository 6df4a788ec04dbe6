package org.devlive.grantforge.kafka.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.server.quota.ClientQuotaEntity;
import org.apache.kafka.server.quota.ClientQuotaType;
import org.junit.jupiter.api.Test;
import org.devlive.grantforge.kafka.agent.jni.NativeQuotas;

/** The quota callback against the real native library, called as Kafka calls it. */
class GrantForgeClientQuotaCallbackTest {

    private static ClientQuotaEntity entity(Object... typeAndName) {
        List<ClientQuotaEntity.ConfigEntity> parts = new ArrayList<>();
        for (int i = 0; i < typeAndName.length; i += 2) {
            final ClientQuotaEntity.ConfigEntityType type = (ClientQuotaEntity.ConfigEntityType) typeAndName[i];
            final String name = (String) typeAndName[i + 1];
            parts.add(new ClientQuotaEntity.ConfigEntity() {
                @Override public String name() { return name; }
                @Override public ClientQuotaEntity.ConfigEntityType entityType() { return type; }
            });
        }
        return () -> parts;
    }

    private static GrantForgeClientQuotaCallback callback() {
        GrantForgeClientQuotaCallback callback = new GrantForgeClientQuotaCallback();
        callback.configure(Collections.emptyMap());
        return callback;
    }

    private static KafkaPrincipal user(String name) {
        return new KafkaPrincipal(KafkaPrincipal.USER_TYPE, name);
    }

    @Test
    void theWorkedExampleGroupsAndLimitsAsDocumented() {
        GrantForgeClientQuotaCallback callback = callback();
        ClientQuotaEntity.ConfigEntityType user = ClientQuotaEntity.ConfigEntityType.USER;
        ClientQuotaEntity.ConfigEntityType client = ClientQuotaEntity.ConfigEntityType.CLIENT_ID;
        for (ClientQuotaType type : Arrays.asList(ClientQuotaType.PRODUCE, ClientQuotaType.FETCH)) {
            boolean produce = type == ClientQuotaType.PRODUCE;
            callback.updateQuota(type, entity(client, "clientA", user, "java-user2"), produce ? 10 : 20);
            callback.updateQuota(type, entity(user, "java-user2"), produce ? 4096 : 8192);
            callback.updateQuota(type, entity(user, "java-user2", client, "clientB"), produce ? 30 : 40);
        }
        Map<String, String> a = callback.quotaMetricTags(ClientQuotaType.PRODUCE, user("java-user2"), "clientA");
        Map<String, String> c = callback.quotaMetricTags(ClientQuotaType.FETCH, user("java-user2"), "clientC");
        assertEquals(Arrays.asList("user", "client-id"), new ArrayList<>(a.keySet()), "user first, then client-id");
        assertEquals(Arrays.asList("java-user2", "clientA"), new ArrayList<>(a.values()));
        assertEquals(Arrays.asList("java-user2", ""), new ArrayList<>(c.values()), "the shared group");
        assertEquals(10.0, callback.quotaLimit(ClientQuotaType.PRODUCE, a));
        assertEquals(8132.0, callback.quotaLimit(ClientQuotaType.FETCH, c));
        assertEquals(40.0, callback.quotaLimit(ClientQuotaType.FETCH,
            callback.quotaMetricTags(ClientQuotaType.FETCH, user("java-user2"), "clientB")));
        assertSame(a, callback.quotaMetricTags(ClientQuotaType.PRODUCE, user("java-user2"), "clientA"),
            "a repeated question is answered from the view, allocating nothing");
        Map<String, String> unthrottled = callback.quotaMetricTags(ClientQuotaType.REQUEST, user("java-user2"), "clientA");
        assertNull(callback.quotaLimit(ClientQuotaType.REQUEST, unthrottled), "no request quota: unthrottled");
        callback.removeQuota(ClientQuotaType.PRODUCE, entity(user, "java-user2", client, "clientA"));
        Map<String, String> nowShared = callback.quotaMetricTags(ClientQuotaType.PRODUCE, user("java-user2"), "clientA");
        assertEquals(Arrays.asList("java-user2", ""), new ArrayList<>(nowShared.values()));
        assertEquals(4066.0, callback.quotaLimit(ClientQuotaType.PRODUCE, nowShared));
        callback.close();
        callback.close();
    }

    @Test
    void anOperatorsValueIsUsedAsSetAndOnlyARemainderIsRaisedToWhatKafkaEnforces() {
        GrantForgeClientQuotaCallback callback = callback();
        ClientQuotaEntity.ConfigEntityType user = ClientQuotaEntity.ConfigEntityType.USER;
        ClientQuotaEntity.ConfigEntityType client = ClientQuotaEntity.ConfigEntityType.CLIENT_ID;
        ClientQuotaEntity defaultUser = entity(ClientQuotaEntity.ConfigEntityType.DEFAULT_USER, "<default>");
        try {
            callback.updateQuota(ClientQuotaType.CONTROLLER_MUTATION, entity(user, "java-edge-mutator"), 0.2);
            callback.updateQuota(ClientQuotaType.REQUEST, entity(user, "java-edge-mutator"), 0.5);
            callback.updateQuota(ClientQuotaType.PRODUCE, defaultUser, 512);
            assertEquals(0.2, limit(callback, ClientQuotaType.CONTROLLER_MUTATION, "java-edge-mutator", "admin"));
            assertEquals(0.5, limit(callback, ClientQuotaType.REQUEST, "java-edge-mutator", "admin"));
            assertEquals(512.0, limit(callback, ClientQuotaType.PRODUCE, "java-edge-anyone", "app"), "the default user's value as set");

            // The seed's remainder: olga's 4096 less clientA's 3900 is shared by her other clients.
            callback.updateQuota(ClientQuotaType.PRODUCE, entity(user, "java-edge-olga"), 4096);
            callback.updateQuota(ClientQuotaType.PRODUCE, entity(user, "java-edge-olga", client, "clientA"), 3900);
            assertEquals(196.0, limit(callback, ClientQuotaType.PRODUCE, "java-edge-olga", "clientC"));
            // Nothing left: Kafka's smallest enforceable bound for 100 MiB requests (socket.request.max.bytes).
            callback.updateQuota(ClientQuotaType.PRODUCE, entity(user, "java-edge-olga", client, "clientA"), 4096);
            assertEquals(49.0, limit(callback, ClientQuotaType.PRODUCE, "java-edge-olga", "clientC"));
            // A node that takes requests of at most 1 MiB enforces 100 times smaller bounds.
            Map<String, Object> configs = new java.util.HashMap<>();
            configs.put(GrantForgeClientQuotaCallback.SOCKET_REQUEST_MAX_BYTES, "1048576");
            new GrantForgeClientQuotaCallback().configure(configs);
            assertEquals(1.0, limit(callback, ClientQuotaType.PRODUCE, "java-edge-olga", "clientC"));
        } finally {
            callback.removeQuota(ClientQuotaType.PRODUCE, defaultUser);
            callback();
        }
    }

    private static Double limit(GrantForgeClientQuotaCallback callback, ClientQuotaType type, String user, String clientId) {
        return callback.quotaLimit(type, callback.quotaMetricTags(type, user(user), clientId));
    }

    @Test
    void theTablesMetricsAreInJmxOnEveryRelease() throws Exception {
        GrantForgeClientQuotaCallback callback = callback();
        callback.updateQuota(ClientQuotaType.FETCH, entity(ClientQuotaEntity.ConfigEntityType.USER, "java-jmx-user"), 1000);
        javax.management.MBeanServer server = java.lang.management.ManagementFactory.getPlatformMBeanServer();
        javax.management.ObjectName name = new javax.management.ObjectName("org.devlive.grantforge.kafka:type=Quotas");
        assertTrue(server.isRegistered(name), "one MBean for the JVM's table");
        long entities = (Long) server.getAttribute(name, "QuotaEntities");
        assertTrue(entities >= 1, "the live count: " + entities);
        for (String attribute : Arrays.asList("QuotaUsersReserving", "QuotaOversubscribedUsers", "QuotaChanges")) {
            assertTrue(server.getAttribute(name, attribute) instanceof Long, attribute);
        }
        callback.removeQuota(ClientQuotaType.FETCH, entity(ClientQuotaEntity.ConfigEntityType.USER, "java-jmx-user"));
        assertEquals(entities - 1, (long) (Long) server.getAttribute(name, "QuotaEntities"), "read live, not at registration");
    }

    @Test
    void aChangeOfOneUsersEntityKeepsEveryOtherAnswerAndRenewsThatUsers() {
        GrantForgeClientQuotaCallback callback = callback();
        ClientQuotaEntity.ConfigEntityType user = ClientQuotaEntity.ConfigEntityType.USER;
        ClientQuotaEntity.ConfigEntityType client = ClientQuotaEntity.ConfigEntityType.CLIENT_ID;
        callback.updateQuota(ClientQuotaType.PRODUCE, entity(user, "java-keep-a"), 5000);
        callback.updateQuota(ClientQuotaType.PRODUCE, entity(user, "java-keep-b"), 6000);
        callback.updateQuota(ClientQuotaType.FETCH, entity(user, "java-keep-a"), 7000);
        Map<String, String> a = callback.quotaMetricTags(ClientQuotaType.PRODUCE, user("java-keep-a"), "app");
        Map<String, String> b = callback.quotaMetricTags(ClientQuotaType.PRODUCE, user("java-keep-b"), "app");
        Map<String, String> aFetch = callback.quotaMetricTags(ClientQuotaType.FETCH, user("java-keep-a"), "app");

        callback.updateQuota(ClientQuotaType.PRODUCE, entity(user, "java-keep-a", client, "app"), 100);
        assertSame(b, callback.quotaMetricTags(ClientQuotaType.PRODUCE, user("java-keep-b"), "app"),
            "another user's answer is kept: Kafka's re-read of its limit stays in Java");
        assertEquals(6000.0, callback.quotaLimit(ClientQuotaType.PRODUCE, b));
        assertSame(aFetch, callback.quotaMetricTags(ClientQuotaType.FETCH, user("java-keep-a"), "app"),
            "another quota type's answers are kept");
        Map<String, String> renewed = callback.quotaMetricTags(ClientQuotaType.PRODUCE, user("java-keep-a"), "app");
        assertEquals(Arrays.asList("java-keep-a", "app"), new ArrayList<>(renewed.values()), "the user's own answer is new");
        assertEquals(100.0, callback.quotaLimit(ClientQuotaType.PRODUCE, renewed));
        assertEquals(4900.0, callback.quotaLimit(ClientQuotaType.PRODUCE, a), "its shared group's limit too");

        // A default concerns every user: no answer of its type is kept.
        ClientQuotaEntity defaultClient = entity(ClientQuotaEntity.ConfigEntityType.DEFAULT_CLIENT_ID, "<default>");
        try {
            callback.updateQuota(ClientQuotaType.PRODUCE, defaultClient, 300);
            Map<String, String> again = callback.quotaMetricTags(ClientQuotaType.PRODUCE, user("java-keep-b"), "app");
            assertEquals(b, again);
            assertFalse(b == again, "asked anew after a default changed");
        } finally {
            callback.removeQuota(ClientQuotaType.PRODUCE, defaultClient);
        }
    }

    @Test
    void onePrincipalWithManyClientIdsFillsOnlyItsShareOfTheView() {
        GrantForgeClientQuotaCallback callback = callback();
        AgentMetrics metrics = new AgentMetrics(NativeQuotas::stats);
        long notKept = (Long) metrics.value("quota-answers-not-kept");
        for (int i = 0; i < QuotaView.MAX_PER_USER; i++) {
            Map<String, String> kept = callback.quotaMetricTags(ClientQuotaType.REQUEST, user("java-flooder"), "c" + i);
            assertSame(kept, callback.quotaMetricTags(ClientQuotaType.REQUEST, user("java-flooder"), "c" + i));
        }
        Map<String, String> past = callback.quotaMetricTags(ClientQuotaType.REQUEST, user("java-flooder"), "one-more");
        assertFalse(past == callback.quotaMetricTags(ClientQuotaType.REQUEST, user("java-flooder"), "one-more"),
            "past its share, the principal's new client ids are asked each time");
        assertEquals(notKept + 2, metrics.value("quota-answers-not-kept"), "and counted");
        Map<String, String> other = callback.quotaMetricTags(ClientQuotaType.REQUEST, user("java-other"), "app");
        assertSame(other, callback.quotaMetricTags(ClientQuotaType.REQUEST, user("java-other"), "app"),
            "another principal's answers are still kept");
    }

    @Test
    void noAnswerResolvedDuringAChangeOutlivesIt() throws Exception {
        GrantForgeClientQuotaCallback callback = callback();
        ClientQuotaEntity.ConfigEntityType user = ClientQuotaEntity.ConfigEntityType.USER;
        ClientQuotaEntity.ConfigEntityType client = ClientQuotaEntity.ConfigEntityType.CLIENT_ID;
        callback.updateQuota(ClientQuotaType.PRODUCE, entity(user, "java-race"), 10_000);
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        List<Thread> askers = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            final int thread = t;
            Thread asker = new Thread(() -> {
                int i = 0;
                while (!stop.get()) {
                    String clientId = "c" + (thread * 1_000_000 + i++ % 50);
                    callback.quotaLimit(ClientQuotaType.PRODUCE,
                        callback.quotaMetricTags(ClientQuotaType.PRODUCE, user("java-race"), clientId));
                }
            });
            asker.start();
            askers.add(asker);
        }
        // Sub-quotas come and go while the askers resolve: each change moves the shared group's limit.
        for (int change = 1; change <= 2_000; change++) {
            callback.updateQuota(ClientQuotaType.PRODUCE, entity(user, "java-race", client, "reserved"), change);
        }
        stop.set(true);
        for (Thread asker : askers) {
            asker.join();
        }
        for (int t = 0; t < 4; t++) {
            for (int i = 0; i < 50; i++) {
                Map<String, String> tags = callback.quotaMetricTags(ClientQuotaType.PRODUCE, user("java-race"), "c" + (t * 1_000_000 + i));
                assertEquals(Arrays.asList("java-race", ""), new ArrayList<>(tags.values()));
                assertEquals(8000.0, callback.quotaLimit(ClientQuotaType.PRODUCE, tags), "10,000 less the last sub-quota");
            }
        }
    }

    @Test
    void socketRequestMaxBytesIsReadAsKafkaHandsItOver() {
        assertEquals(1048576L, GrantForgeClientQuotaCallback.socketRequestMaxBytes(1048576));
        assertEquals(1048576L, GrantForgeClientQuotaCallback.socketRequestMaxBytes(" 1048576 "));
        assertEquals(0L, GrantForgeClientQuotaCallback.socketRequestMaxBytes(null), "not set: Kafka's default");
        assertEquals(0L, GrantForgeClientQuotaCallback.socketRequestMaxBytes("100MB"), "Kafka refuses it before");
    }

    @Test
    void anotherInstancesChangeIsToldOnceAndAnInstancesOwnNever() {
        GrantForgeClientQuotaCallback broker = callback();
        GrantForgeClientQuotaCallback controller = callback();
        assertFalse(broker.quotaResetRequired(ClientQuotaType.CONTROLLER_MUTATION));
        broker.updateQuota(ClientQuotaType.CONTROLLER_MUTATION, entity(ClientQuotaEntity.ConfigEntityType.DEFAULT_USER, "<default>"), 7);
        assertFalse(broker.quotaResetRequired(ClientQuotaType.CONTROLLER_MUTATION), "Kafka made this change itself");
        assertTrue(controller.quotaResetRequired(ClientQuotaType.CONTROLLER_MUTATION), "the other instance re-reads its limits");
        assertFalse(controller.quotaResetRequired(ClientQuotaType.CONTROLLER_MUTATION), "once");
        controller.updateQuota(ClientQuotaType.CONTROLLER_MUTATION, entity(ClientQuotaEntity.ConfigEntityType.DEFAULT_USER, "<default>"), 7);
        assertFalse(broker.quotaResetRequired(ClientQuotaType.CONTROLLER_MUTATION), "the same value again is no change");
        Map<String, String> tags = controller.quotaMetricTags(ClientQuotaType.CONTROLLER_MUTATION, user("anyone"), "x");
        assertEquals(7.0, broker.quotaLimit(ClientQuotaType.CONTROLLER_MUTATION, tags), "both instances answer alike");
    }

    @Test
    void oddQuestionsNeverThrowNorReturnNullTags() {
        GrantForgeClientQuotaCallback callback = callback();
        Map<String, String> tags = callback.quotaMetricTags(ClientQuotaType.PRODUCE, null, null);
        assertEquals(2, tags.size());
        assertNull(callback.quotaLimit(ClientQuotaType.PRODUCE, Collections.emptyMap()));
        callback.updateQuota(ClientQuotaType.PRODUCE, entity(), 5);
        assertFalse(callback.updateClusterMetadata(null));
    }

    /** What MonitorableGrantForgeClientQuotaCallback publishes on Kafka 4.1+: the table's metrics, read as the agent's are. */
    @Test
    void theTablesMetricsDecodeAsTheAgentsDo() {
        GrantForgeClientQuotaCallback callback = callback();
        AgentMetrics before = new AgentMetrics(NativeQuotas::stats);
        List<String> names = new ArrayList<>();
        for (AgentMetrics.Metric metric : before.listed()) {
            names.add(metric.name);
        }
        assertEquals(Arrays.asList("quota-entities", "quota-users-reserving", "quota-oversubscribed-users", "quota-changes",
            "quota-answers-not-kept"), names);
        long entities = (Long) before.value("quota-entities");
        long changes = (Long) before.value("quota-changes");
        ClientQuotaEntity.ConfigEntityType user = ClientQuotaEntity.ConfigEntityType.USER;
        callback.updateQuota(ClientQuotaType.REQUEST, entity(user, "java-metrics-user"), 50);
        assertEquals(entities + 1, before.value("quota-entities"), "a live value");
        assertEquals(changes + 1, before.value("quota-changes"));
        callback.removeQuota(ClientQuotaType.REQUEST, entity(user, "java-metrics-user"));
    }

    @Test
    void anErrorOnTheRequestPathIsAnsweredAsNoQuotaAndLoggedOnceAtError() throws Exception {
        GrantForgeClientQuotaCallback callback = callback();
        long before = GrantForgeClientQuotaCallback.requestPathErrors();
        java.io.PrintStream stderr = System.err;
        java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
        System.setErr(new java.io.PrintStream(captured, true, "UTF-8"));
        try {
            // Kafka never passes null tags; a bug that did must not throw at Kafka's request path.
            assertNull(callback.quotaLimit(ClientQuotaType.PRODUCE, null));
            assertNull(callback.quotaLimit(ClientQuotaType.FETCH, null));
        } finally {
            System.setErr(stderr);
        }
        assertEquals(before + 2, GrantForgeClientQuotaCallback.requestPathErrors(), "every error is counted");
        String log = captured.toString("UTF-8");
        long errors = log.lines().filter(l -> l.contains("ERROR") && l.contains("quotaLimit failed")).count();
        assertEquals(before == 0 ? 1 : 0, errors, "the first error of the JVM is logged, once:\n" + log);
    }
}
