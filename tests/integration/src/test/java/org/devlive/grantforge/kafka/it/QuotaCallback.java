package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
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
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
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
 * The agent's quota callback in a real node (broker and controller at once), quotas set with the
 * Admin API's {@code alterClientQuotas} as {@code kafka-configs} sets them: alice ({@code docs/quotas.md}'s
 * "user2") has a produce total, and her client {@code clientA} a sub-quota reserved out of it. The
 * groups show as Kafka's own tests look for them (the broker's quota MBeans, tagged {@code user}
 * and {@code client-id}), clientA is throttled against its small reserved limit while clientC,
 * sharing the large remainder, is not; removing the sub-quota puts clientA back in the shared group.
 * A {@code controller_mutation_rate} is enforced by the node's controller (brokers forward CreateTopics
 * to it): a burst of topic creations past the rate is answered THROTTLING_QUOTA_EXCEEDED, and removing
 * the rate lifts that. One subclass per Kafka release.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
abstract class QuotaCallback {
    static final String CALLBACK = "org.devlive.grantforge.kafka.agent.GrantForgeClientQuotaCallback";
    private static final long WAIT_S = 30;
    /** alice's produce total and clientA's reserved part, in bytes/s. */
    private static final double TOTAL = 10_000_000;
    private static final double RESERVED = 8192;
    /** The super user's controller_mutation_rate (partitions created or deleted per second). */
    private static final double MUTATIONS_PER_SECOND = 1;
    /** Partitions of the first topic of each burst: far past the rate's burst of 11 (1/s over 11 one-second samples). */
    private static final int BURST_PARTITIONS = 100;

    private final String kafkaVersion;
    private KafkaNode node;
    private Admin admin;
    private Jmx jmx;

    QuotaCallback(String kafkaVersion) {
        this.kafkaVersion = kafkaVersion;
    }

    @BeforeAll
    void startNode() throws Exception {
        jmx = Jmx.onFreePort();
        KafkaNode.Builder builder = KafkaNode.builder().name("quotas-" + kafkaVersion).kafkaVersion(kafkaVersion);
        jmx.jvmArgs().forEach(builder::jvmArg);
        node = builder
                .authorizer(KafkaNode.AUTHORIZER_CLASS)
                .policyFile(ItPaths.snapshot("e2e.json"))
                .property("client.quota.callback.class", CALLBACK)
                .start();
        admin = node.admin("admin");
        admin.createTopics(Collections.singletonList(new NewTopic("orders", 1, (short) 1))).all().get(WAIT_S, TimeUnit.SECONDS);
        alter(new ClientQuotaEntity(Collections.singletonMap(ClientQuotaEntity.USER, "alice")), TOTAL);
        alter(aliceClient("clientA"), RESERVED);
    }

    @AfterAll
    void stopNode() {
        if (admin != null) {
            admin.close(Duration.ofSeconds(10));
        }
        if (node != null) {
            node.close();
        }
    }

    private static ClientQuotaEntity aliceClient(String clientId) {
        Map<String, String> parts = new java.util.HashMap<>();
        parts.put(ClientQuotaEntity.USER, "alice");
        parts.put(ClientQuotaEntity.CLIENT_ID, clientId);
        return new ClientQuotaEntity(parts);
    }

    /** Sets (or with null removes) the entity's producer_byte_rate, as kafka-configs does. */
    private void alter(ClientQuotaEntity entity, Double producerByteRate) throws Exception {
        alter(entity, "producer_byte_rate", producerByteRate);
    }

    /** Sets (or with null removes) one quota of the entity, as kafka-configs does. */
    private void alter(ClientQuotaEntity entity, String key, Double value) throws Exception {
        ClientQuotaAlteration.Op op = new ClientQuotaAlteration.Op(key, value);
        admin.alterClientQuotas(Collections.singletonList(new ClientQuotaAlteration(entity, Collections.singletonList(op))))
                .all().get(WAIT_S, TimeUnit.SECONDS);
    }

    /** Sends `count` records of 1 KiB as alice with this client id; returns the client's produce-throttle-time-max. */
    private double produce(String clientId, int count) throws Exception {
        Properties extra = new Properties();
        extra.put(ProducerConfig.CLIENT_ID_CONFIG, clientId);
        extra.put(ProducerConfig.BATCH_SIZE_CONFIG, "1024");
        extra.put(ProducerConfig.ACKS_CONFIG, "1");
        char[] kib = new char[1024];
        java.util.Arrays.fill(kib, 'q');
        try (KafkaProducer<String, String> producer = node.producer("alice", extra)) {
            List<java.util.concurrent.Future<?>> sent = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                sent.add(producer.send(new ProducerRecord<>("orders", new String(kib))));
            }
            for (java.util.concurrent.Future<?> f : sent) {
                f.get(WAIT_S, TimeUnit.SECONDS);
            }
            for (Map.Entry<MetricName, ? extends Metric> m : producer.metrics().entrySet()) {
                if (m.getKey().name().equals("produce-throttle-time-max") && m.getKey().group().equals("producer-metrics")) {
                    return ((Number) m.getValue().metricValue()).doubleValue();
                }
            }
            throw new AssertionError("the producer has no produce-throttle-time-max");
        }
    }

    private boolean brokerHasGroup(String objectName) throws Exception {
        return !jmx.read(objectName).isEmpty();
    }

    @Test
    @Order(1)
    void aReservedSubQuotaIsItsOwnGroupAndThrottledWhileTheSharedRemainderIsNot() throws Exception {
        double throttledA = produce("clientA", 120);
        double throttledC = produce("clientC", 120);
        assertTrue(brokerHasGroup("kafka.server:type=Produce,user=alice,client-id=clientA"),
                "clientA's reserved group (user and client-id tags)");
        assertTrue(brokerHasGroup("kafka.server:type=Produce,user=alice"), "the shared group of alice's other clients (user tag only)");
        assertFalse(brokerHasGroup("kafka.server:type=Produce,user=alice,client-id=clientC"), "clientC has no group of its own");
        assertTrue(throttledA > 0, "120 KiB in a moment against a reserved 8 KiB/s (Kafka's rate window is 10 s) throttles clientA: " + throttledA);
        assertEquals(0.0, throttledC, "120 KiB against the remainder of 10 MB/s: " + throttledC);
    }

    @Test
    @Order(2)
    void removingTheSubQuotaGivesClientAThePoolOfItsUserAgain() throws Exception {
        alter(aliceClient("clientA"), null);
        assertEquals(0.0, produce("clientA", 120), "clientA now shares alice's total");
    }

    /**
     * Creates the topics in one CreateTopics request without the admin client's retry on a quota
     * violation; returns the throttling answer of the first refused topic (null if all were created),
     * and fails on any other error.
     */
    private static ThrottlingQuotaExceededException createTopics(Admin client, List<NewTopic> topics, int[] created)
            throws Exception {
        ThrottlingQuotaExceededException throttled = null;
        Map<String, KafkaFuture<Void>> results = client.createTopics(topics, new CreateTopicsOptions().retryOnQuotaViolation(false)).values();
        for (NewTopic topic : topics) {
            try {
                results.get(topic.name()).get(WAIT_S, TimeUnit.SECONDS);
                created[0]++;
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof ThrottlingQuotaExceededException)) {
                    throw e;
                }
                if (throttled == null) {
                    throttled = (ThrottlingQuotaExceededException) e.getCause();
                }
            }
        }
        return throttled;
    }

    /** An Admin of the super user with its own client id (and its own connections). */
    private Admin superUserAdmin(String clientId) {
        Properties props = node.clientProps(KafkaNode.SUPER_USER);
        props.put(AdminClientConfig.CLIENT_ID_CONFIG, clientId);
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "15000");
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
        return Admin.create(props);
    }

    @Test
    @Order(3)
    void aControllerMutationRateThrottlesTopicCreationAtTheControllerUntilItIsRemoved() throws Exception {
        // e2e.json lets no one but the super user create topics (alice has read and write on orders), so the
        // rate is set for admin: quotas bind super users as anyone (authorization and quotas are apart).
        ClientQuotaEntity admins = new ClientQuotaEntity(Collections.singletonMap(ClientQuotaEntity.USER, KafkaNode.SUPER_USER));
        alter(admins, "controller_mutation_rate", MUTATIONS_PER_SECOND);
        int[] created = {0};
        Admin mutator = superUserAdmin("mutator");
        try {
            // A burst: a topic of 100 partitions, then one of 1 partition, in one request, repeated (new names)
            // until the controller refuses one: the quota reaches the controller's instance a moment after
            // alterClientQuotas returns. The controller checks the rate before it records a topic's partitions, so
            // the first topic of the burst passes and leaves the bucket ~89 mutations short at 1 per second.
            ThrottlingQuotaExceededException throttled = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
            for (int burst = 0; throttled == null && System.nanoTime() < deadline; burst++) {
                List<NewTopic> topics = new ArrayList<>();
                topics.add(new NewTopic("mutations-" + burst + "-wide", BURST_PARTITIONS, (short) 1));
                topics.add(new NewTopic("mutations-" + burst + "-narrow", 1, (short) 1));
                throttled = createTopics(mutator, topics, created);
            }
            assertNotNull(throttled, "CreateTopics past admin's controller_mutation_rate of 1/s is refused with "
                    + "THROTTLING_QUOTA_EXCEEDED within " + WAIT_S + " s (" + created[0] + " topics created)");
            assertTrue(created[0] >= 1, "the burst's first topic is created: the rate is checked before recording");
            assertTrue(throttled.throttleTimeMs() > WAIT_S * 1000, "about 89 s until the bucket refills at 1 mutation/s: "
                    + throttled.throttleTimeMs() + " ms");
            assertTrue(brokerHasGroup("kafka.server:type=ControllerMutation,user=" + KafkaNode.SUPER_USER),
                    "the group of admin's clients as the callback names it (user tag only)");
        } finally {
            // The client honours the answer's throttle time on its connection (KIP-219): it would send nothing
            // more for ~89 s, so it is closed without waiting for that.
            mutator.close(Duration.ZERO);
        }

        // Without the rate, creation goes through long before the bucket would have refilled. Each attempt is a
        // new client (a new connection, which the client side does not hold back): with the rate still in force the
        // controller would refuse it as well, since the rate is the group's (all of admin's clients).
        alter(admins, "controller_mutation_rate", null);
        ThrottlingQuotaExceededException still = null;
        boolean createdAgain = false;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
        for (int attempt = 0; !createdAgain && System.nanoTime() < deadline; attempt++) {
            Admin after = superUserAdmin("mutator-after-" + attempt);
            try {
                int before = created[0];
                still = createTopics(after, Collections.singletonList(new NewTopic("unthrottled-" + attempt, 1, (short) 1)), created);
                createdAgain = created[0] > before;
            } finally {
                after.close(Duration.ZERO);
            }
            if (!createdAgain) {
                Thread.sleep(200);
            }
        }
        assertTrue(createdAgain, "removing the rate lets admin create topics again: " + still);
    }
}
