package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The topic sink on a real node in offline mode ({@code grantforge.audit.sinks=topic,log}): the agent's producer logs
 * in as dave, whom a policy allows to create, describe and write the audit topic, over the node's own client listener.
 * After traffic from several principals (alice's allowed produce, folded; bob's and alice's refusals; the super user
 * admin's topic creation and deletion, audited as mutations), the records of the audit topic, read back, equal per user
 * what the agent says it delivered there ({@code AuditBySink}), which equals what it audited ({@code AuditByUser}), none
 * dropped; each record validates against its published schema. Neither the producer's own requests (dave with the
 * sink's client id) nor the node's requests among themselves appear. Then dave's policy is taken away: the events of
 * that while are spooled, not dropped (the spool's bytes and files show in {@code AuditTopicSpooledBytes} and
 * {@code AuditTopicSpooledFiles}), and once the policy is back they are delivered and the spool is empty again. One
 * subclass per release and record format.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AuditTopic {

    private static final long WAIT_S = 60;
    private static final String AUDIT_TOPIC = AuditTopicRecords.TOPIC;
    private final String kafkaVersion;
    /** {@code ocsf} or {@code cloudevents}. */
    private final String format;
    private final ObjectMapper json = new ObjectMapper();
    private final Jmx jmx = Jmx.onFreePort();
    private KafkaNode node;
    private Path policyFile;
    private ObjectNode snapshot;
    /** The policy version last written to the policy file. */
    private long version;
    private AuditTopicRecords topic;

    AuditTopic(String kafkaVersion, String format) {
        this.kafkaVersion = kafkaVersion;
        this.format = format;
    }

    @BeforeAll
    void startNode(@TempDir Path work) throws Exception {
        policyFile = work.resolve("policies.json");
        snapshot = (ObjectNode) json.readTree(ItPaths.snapshot("e2e.json").toFile());
        version = snapshot.get("policyVersion").asLong() - 1;
        writePolicies(true);
        Path producerConfig = work.resolve("audit-producer.properties");
        Properties login = new Properties();
        login.putAll(Map.of("security.protocol", "SASL_PLAINTEXT", "sasl.mechanism", "PLAIN", "sasl.jaas.config",
                "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"dave\" password=\"dave-secret\";"));
        try (var out = Files.newOutputStream(producerConfig)) {
            login.store(out, "the audit topic's producer logs in as dave");
        }
        KafkaNode.Builder builder = KafkaNode.builder().name("audit-topic-" + kafkaVersion).kafkaVersion(kafkaVersion)
                .interNodeUsers("broker", "controller")
                .policyFile(policyFile)
                .property("grantforge.policy.file.poll.interval.ms", "200")
                .property("grantforge.cache.dir", work.resolve("cache").toString())
                .property("grantforge.audit.sinks", "topic,log")
                .property("grantforge.audit.topic.format", format)
                .property("grantforge.audit.topic.bootstrap.servers", NodeProperties.BROKER_ADDRESS)
                .property("grantforge.audit.topic.producer.config", producerConfig.toString())
                .property("grantforge.audit.topic.principal", "User:dave")
                .property("grantforge.audit.topic.partitions", "1")
                .property("grantforge.audit.topic.replication.factor", "1")
                .property("grantforge.audit.topic.timeout.ms", "3000")
                .property("grantforge.audit.flush.interval.ms", "500")
                .property("grantforge.audit.fold.window.ms", "1000")
                .property("grantforge.audit.super.users.mutations", "true");
        jmx.jvmArgs().forEach(builder::jvmArg);
        node = builder.start();
        topic = new AuditTopicRecords(format, () -> node.consumer("admin", null, new Properties()));
    }

    @AfterAll
    void stopNode() {
        if (topic != null) {
            topic.close();
        }
        if (node != null) {
            node.close();
        }
    }

    /** The e2e policies, with dave's right to the audit topic or without it, as the next policy version. */
    private void writePolicies(boolean daveWritesTheAuditTopic) throws Exception {
        ObjectNode copy = snapshot.deepCopy();
        copy.put("policyVersion", ++version);
        if (daveWritesTheAuditTopic) {
            ((ArrayNode) copy.get("policies")).add(json.readTree("{\"id\":\"90\",\"name\":\"the audit's producer writes the audit topic\","
                    + "\"type\":\"ACCESS\",\"priority\":\"NORMAL\",\"document\":{\"resources\":{\"topic\":{\"values\":[\"" + AUDIT_TOPIC
                    + "\"],\"excludes\":false,\"recursive\":false}},\"allow\":[{\"users\":[\"dave\"],\"groups\":[],\"roles\":[],"
                    + "\"accessTypes\":[\"create\",\"describe\",\"write\"],\"conditions\":[],\"maskType\":null,\"maskValue\":null,"
                    + "\"rowFilter\":null}],\"allowExceptions\":[],\"deny\":[],\"denyExceptions\":[],\"validity\":[]}}"));
        }
        Files.writeString(policyFile, json.writeValueAsString(copy), StandardCharsets.UTF_8);
    }

    private void awaitPolicyVersion() throws Exception {
        Await.until("policy version " + version + " applied", Duration.ofSeconds(WAIT_S),
                () -> node.logText().contains("applied policy version " + version + " "));
    }

    @Test
    void theAuditTopicHoldsWhatTheAgentAuditedPerUserAndLosesNothingWhileItCannotBeWritten() throws Exception {
        String deleted = "made-and-deleted-by-admin";
        try (Admin admin = node.admin("admin")) {
            admin.createTopics(List.of(new NewTopic("orders", 1, (short) 1), new NewTopic("payments", 1, (short) 1),
                    new NewTopic(deleted, 1, (short) 1))).all().get(WAIT_S, TimeUnit.SECONDS);
            admin.deleteTopics(List.of(deleted)).all().get(WAIT_S, TimeUnit.SECONDS);
        }
        produce("alice", "orders", 5, true);
        produce("bob", "orders", 1, false);
        produce("alice", "payments", 1, false);
        // admin's two mutations, alice's five writes (folded) and her refusal, bob's refusal
        Map<String, long[]> first = awaitTopicBalanced(Map.of("admin", 2L, "alice", 6L, "bob", 1L));
        Map<String, Long> inTopic = awaitTopicEqualsTheAccount();
        assertEquals(audited(), inTopic, "the audit topic per user, and what the agent audited (AuditByUser)");
        assertEquals(List.of(0L, 0L), spooled(), "nothing waits in the topic sink's spool");
        assertTrue(topic.records().stream().anyMatch(r -> topic.operation(r).equals("DELETE_TOPICS") && topic.user(r).equals("admin")),
                "the super user's topic deletion");
        assertFalse(inTopic.containsKey("dave"), "the producer's own requests");
        assertEquals(List.of(), topic.records().stream().filter(r -> topic.accessType(r).equals("cluster_action")).toList(),
                "the nodes' requests among themselves (their replication, registration and heartbeats)");

        // dave may no longer write the audit topic: the events of the while are spooled, then delivered
        writePolicies(false);
        awaitPolicyVersion();
        produce("alice", "orders", 3, true);
        produce("bob", "orders", 2, false);
        Await.until("the audit topic refused and the events spooled, as its spool's metrics show", Duration.ofSeconds(WAIT_S), () -> {
            long[] bob = bySink().get("bob");
            return node.logText().contains("cannot write the GrantForge audit topic") && bob != null && bob[0] > bob[1]
                    && spooled().stream().allMatch(n -> n > 0);
        });
        System.out.printf("Kafka %s: the topic sink's spool held %s (bytes, files) while the topic could not be written%n",
                kafkaVersion, spooled());
        writePolicies(true);
        awaitPolicyVersion();
        Map<String, long[]> after = awaitTopicBalanced(Map.of("admin", first.get("admin")[0],
                "alice", first.get("alice")[0] + 3, "bob", first.get("bob")[0] + 2));
        Map<String, Long> inTopicAfter = awaitTopicEqualsTheAccount();
        assertEquals(audited(), inTopicAfter, "everything spooled while the topic could not be written is there");
        Await.until("the topic sink's spool metrics back to 0", Duration.ofSeconds(10), () -> spooled().equals(List.of(0L, 0L)));
        topic.assertValid();
    }

    private void produce(String user, String topic, int records, boolean allowed) throws Exception {
        Properties oneEach = new Properties();
        oneEach.put("linger.ms", "0");
        // a refused producer must fail per record: an idempotent one stops at its refused producer id
        oneEach.put("enable.idempotence", "false");
        try (KafkaProducer<String, String> producer = node.producer(user, oneEach)) {
            for (int i = 0; i < records; i++) {
                ProducerRecord<String, String> record = new ProducerRecord<>(topic, "k", "v" + i);
                if (allowed) {
                    producer.send(record).get(WAIT_S, TimeUnit.SECONDS);
                } else {
                    assertThrows(ExecutionException.class, () -> producer.send(record).get(WAIT_S, TimeUnit.SECONDS));
                }
            }
        }
    }

    /** The topic sink's rows of {@code AuditBySink}: user → (accesses, delivered, dropped). */
    private Map<String, long[]> bySink() throws Exception {
        return AuditTopicRecords.bySink(jmx, "topic");
    }

    /** Waits until every user of the topic sink is delivered, none dropped, and those named have at least so many accesses. */
    private Map<String, long[]> awaitTopicBalanced(Map<String, Long> atLeast) throws Exception {
        AtomicReference<Map<String, long[]>> last = new AtomicReference<>();
        Await.until("the topic sink's account balanced with at least " + atLeast, Duration.ofSeconds(WAIT_S), () -> {
            last.set(bySink());
            return atLeast.entrySet().stream().allMatch(e -> last.get().containsKey(e.getKey())
                    && last.get().get(e.getKey())[0] >= e.getValue())
                    && AuditTopicRecords.balanced(last.get());
        });
        return last.get();
    }

    /**
     * Reads the audit topic until what it holds per user equals what the agent says it delivered there, none dropped
     * and nothing spooled (a node's own mutation may be audited meanwhile); returns it.
     */
    private Map<String, Long> awaitTopicEqualsTheAccount() throws Exception {
        Await.until("the audit topic to hold what the agent delivered there", Duration.ofSeconds(WAIT_S), () -> {
            Map<String, long[]> account = bySink();
            return AuditTopicRecords.balanced(account) && AuditTopicRecords.delivered(account).equals(topic.read());
        });
        return topic.read();
    }

    /** {@code AuditTopicSpooledBytes} and {@code AuditTopicSpooledFiles}: what waits in the topic sink's spool. */
    private List<Long> spooled() throws Exception {
        return List.of(AuditTopicRecords.number(jmx, "AuditTopicSpooledBytes"),
                AuditTopicRecords.number(jmx, "AuditTopicSpooledFiles"));
    }

    /** {@code AuditByUser}: user → accesses, none dropped. */
    private Map<String, Long> audited() throws Exception {
        return AuditTopicRecords.audited(jmx);
    }
}
