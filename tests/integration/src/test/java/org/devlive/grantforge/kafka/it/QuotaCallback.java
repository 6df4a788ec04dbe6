package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
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
 * Admin API's {@code alterClientQuotas} as {@code kafka-configs} sets them: alice (the seed's
 * "user2") has a produce total, and her client {@code clientA} a sub-quota reserved out of it. The
 * groups show as Kafka's own tests look for them (the broker's quota MBeans, tagged {@code user}
 * and {@code client-id}), clientA is throttled against its small reserved limit while clientC,
 * sharing the large remainder, is not; removing the sub-quota puts clientA back in the shared group.
 * One subclass per Kafka release.
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
        ClientQuotaAlteration.Op op = new ClientQuotaAlteration.Op("producer_byte_rate", producerByteRate);
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
}
