package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.CreateTopicsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.ThrottlingQuotaExceededException;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

/**
 * The agent's quota callback on a controller-only node ({@link KafkaCluster}: one controller, one broker, the newest
 * release), the callback configured on both. A controller instantiates {@code client.quota.callback.class} as a broker
 * does (Kafka's {@code ControllerServer} builds its own quota managers) and Kafka asks it two things: every client
 * quota of the metadata log ({@code updateQuota}, {@code removeQuota}, from its client-quota publisher), and the
 * {@code controller_mutation_rate} of the requests it serves (CreateTopics forwarded by the broker). Produce and fetch
 * quotas are the broker's alone. The controller must start, serve the cluster and answer as the broker's table does.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class QuotaCallbackControllerOnlyTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String QUOTAS_MBEAN = "org.devlive.grantforge.kafka:type=Quotas";
    private static final String ADMIN_MUTATIONS = "kafka.server:type=ControllerMutation,user=" + KafkaNode.SUPER_USER;
    private static final String ALICE_RESERVED = "kafka.server:type=Produce,user=alice,client-id=clientA";
    /** Below one partition a second: a 100-partition topic leaves the bucket far short, so the next one is refused. */
    private static final double MUTATIONS_PER_SECOND = 0.5;
    private static final int BURST_PARTITIONS = 100;

    private final Jmx controllerJmx = Jmx.onFreePort();
    private final Jmx brokerJmx = Jmx.onFreePort();
    private KafkaCluster cluster;
    private Admin admin;

    @BeforeAll
    void startCluster() throws Exception {
        cluster = KafkaCluster.builder().brokers(1).name("controller-quotas").eachNode((name, node) -> {
            Jmx jmx = name.equals(KafkaCluster.controllerName()) ? controllerJmx : brokerJmx;
            jmx.jvmArgs().forEach(node::jvmArg);
            node.policyFile(ItPaths.snapshot("e2e.json")).property("client.quota.callback.class", QuotaCallback.CALLBACK);
        }).start();
        admin = cluster.admin(KafkaNode.SUPER_USER);
        admin.createTopics(List.of(new NewTopic("orders", 1, (short) 1))).all().get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }

    @AfterAll
    void stopCluster() {
        if (admin != null) {
            admin.close(Duration.ofSeconds(10));
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    @Order(1)
    void theControllerConfiguresTheCallbackAndItsTableFollowsTheMetadataLog() throws Exception {
        assertTrue(cluster.controller().logText().contains("GrantForge quota callback"),
            "the controller configured the callback (its INFO line in the controller's log)");
        ClientQuotaEntity alice = entity(Map.of(ClientQuotaEntity.USER, "alice"));
        ClientQuotaEntity aliceClientA = entity(Map.of(ClientQuotaEntity.USER, "alice", ClientQuotaEntity.CLIENT_ID, "clientA"));
        alter(alice, "producer_byte_rate", 10_000_000.0);
        alter(aliceClientA, "producer_byte_rate", 131_072.0);
        // Kafka hands the controller's callback the same quotas as the broker's: its table has both entities and
        // alice reserving a sub-quota, as the broker's does.
        for (Jmx jmx : List.of(controllerJmx, brokerJmx)) {
            Await.until("both of alice's quotas in the table of " + jmx.port(), WAIT,
                () -> quotaTable(jmx, "QuotaEntities") == 2 && quotaTable(jmx, "QuotaUsersReserving") == 1);
        }
        alter(aliceClientA, "producer_byte_rate", null);
        Await.until("the controller's table drops the removed sub-quota", WAIT,
            () -> quotaTable(controllerJmx, "QuotaEntities") == 1 && quotaTable(controllerJmx, "QuotaUsersReserving") == 0);
        alter(alice, "producer_byte_rate", null);
        Await.until("the controller's table is empty again", WAIT, () -> quotaTable(controllerJmx, "QuotaEntities") == 0);
    }

    @Test
    @Order(2)
    void theControllerThrottlesTopicCreationAtTheRateTheCallbackAnswers() throws Exception {
        ClientQuotaEntity admins = entity(Map.of(ClientQuotaEntity.USER, KafkaNode.SUPER_USER));
        alter(admins, "controller_mutation_rate", MUTATIONS_PER_SECOND);
        Await.until("the rate in the controller's table", WAIT, () -> quotaTable(controllerJmx, "QuotaEntities") == 1);
        Admin mutator = mutatorAdmin();
        try {
            ThrottlingQuotaExceededException throttled = null;
            long deadline = System.nanoTime() + WAIT.toNanos();
            for (int burst = 0; throttled == null && System.nanoTime() < deadline; burst++) {
                throttled = createUntilThrottled(mutator, List.of(new NewTopic("mutations-" + burst + "-wide", BURST_PARTITIONS, (short) 1),
                    new NewTopic("mutations-" + burst + "-narrow", 1, (short) 1)));
            }
            assertNotNull(throttled, "the controller refuses CreateTopics past admin's controller_mutation_rate of "
                + MUTATIONS_PER_SECOND + "/s with THROTTLING_QUOTA_EXCEEDED");
            assertTrue(throttled.throttleTimeMs() > 60_000,
                "throttled for the rate the callback answered (0.5/s: about 190 s), got " + throttled.throttleTimeMs() + " ms");
            assertTrue(hasGroup(controllerJmx, ADMIN_MUTATIONS), "the controller measures admin's mutations in the callback's group");
            assertTrue(!hasGroup(brokerJmx, ADMIN_MUTATIONS), "the broker forwards CreateTopics and measures no mutation");
        } finally {
            // the client would honour the ~190 s throttle on its connection before closing
            mutator.close(Duration.ZERO);
            alter(admins, "controller_mutation_rate", null);
        }
    }

    @Test
    @Order(3)
    void produceQuotasAreTheBrokersAndTheControllerMeasuresNone() throws Exception {
        alter(entity(Map.of(ClientQuotaEntity.USER, "alice")), "producer_byte_rate", 10_000_000.0);
        alter(entity(Map.of(ClientQuotaEntity.USER, "alice", ClientQuotaEntity.CLIENT_ID, "clientA")), "producer_byte_rate", 131_072.0);
        Properties extra = new Properties();
        extra.put(ProducerConfig.CLIENT_ID_CONFIG, "clientA");
        extra.put(ProducerConfig.ACKS_CONFIG, "1");
        // until the quota reached the broker the request joins no group: a new record until the group shows
        Await.until("clientA's reserved group on the broker", WAIT, () -> {
            try (KafkaProducer<String, String> producer = cluster.producer("alice", extra)) {
                producer.send(new ProducerRecord<>("orders", "alice's record")).get(WAIT.toSeconds(), TimeUnit.SECONDS);
            }
            return hasGroup(brokerJmx, ALICE_RESERVED);
        });
        Await.until("the controller's table holds the sub-quota too", WAIT, () -> quotaTable(controllerJmx, "QuotaUsersReserving") == 1);
        String anyProduceGroup = "kafka.server:type=Produce,user=*,*";
        assertTrue(hasGroup(brokerJmx, anyProduceGroup), "the pattern finds the broker's group");
        assertTrue(!hasGroup(controllerJmx, anyProduceGroup), "a controller serves no produce request");
    }

    private Admin mutatorAdmin() {
        Properties props = new Properties();
        props.put(AdminClientConfig.CLIENT_ID_CONFIG, "mutator");
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "15000");
        return cluster.admin(KafkaNode.SUPER_USER, props);
    }

    /** Creates the topics in one request without retrying on a quota violation; the first throttle, or null. */
    private static ThrottlingQuotaExceededException createUntilThrottled(Admin client, List<NewTopic> topics) throws Exception {
        ThrottlingQuotaExceededException throttled = null;
        var results = client.createTopics(topics, new CreateTopicsOptions().retryOnQuotaViolation(false)).values();
        for (NewTopic topic : topics) {
            try {
                results.get(topic.name()).get(WAIT.toSeconds(), TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof ThrottlingQuotaExceededException)) {
                    throw e;
                }
                throttled = throttled != null ? throttled : (ThrottlingQuotaExceededException) e.getCause();
            }
        }
        return throttled;
    }

    private static ClientQuotaEntity entity(Map<String, String> parts) {
        return new ClientQuotaEntity(parts);
    }

    /** Sets (or with null removes) one quota of the entity, as kafka-configs does. */
    private void alter(ClientQuotaEntity entity, String key, Double value) throws Exception {
        ClientQuotaAlteration.Op op = new ClientQuotaAlteration.Op(key, value);
        admin.alterClientQuotas(List.of(new ClientQuotaAlteration(entity, List.of(op)))).all().get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }

    private static double quotaTable(Jmx jmx, String attribute) throws Exception {
        Map<String, Map<String, Object>> read = jmx.read(QUOTAS_MBEAN, attribute);
        assertEquals(1, read.size(), "one quota table per JVM: " + read.keySet());
        return ((Number) read.values().iterator().next().get(attribute)).doubleValue();
    }

    private static boolean hasGroup(Jmx jmx, String pattern) throws Exception {
        return !jmx.read(pattern).isEmpty();
    }
}
