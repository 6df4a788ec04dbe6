package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SpecVersion;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
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
 * that while are spooled, not dropped, and once the policy is back they are delivered. One subclass per release and
 * record format.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AuditTopic {

    private static final long WAIT_S = 60;
    private static final String AUDIT_TOPIC = "_grantforge_audit";
    private static final String AGENT_MBEAN = "org.devlive.grantforge.kafka:type=Agent,*";
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
    private final Map<String, JsonNode> records = new HashMap<>();
    private KafkaConsumer<String, String> reader;

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
    }

    @AfterAll
    void stopNode() {
        if (reader != null) {
            reader.close();
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
        String topic = "made-and-deleted-by-admin";
        try (Admin admin = node.admin("admin")) {
            admin.createTopics(List.of(new NewTopic("orders", 1, (short) 1), new NewTopic("payments", 1, (short) 1),
                    new NewTopic(topic, 1, (short) 1))).all().get(WAIT_S, TimeUnit.SECONDS);
            admin.deleteTopics(List.of(topic)).all().get(WAIT_S, TimeUnit.SECONDS);
        }
        produce("alice", "orders", 5, true);
        produce("bob", "orders", 1, false);
        produce("alice", "payments", 1, false);
        // admin's two mutations, alice's five writes (folded) and her refusal, bob's refusal
        Map<String, long[]> first = awaitTopicBalanced(Map.of("admin", 2L, "alice", 6L, "bob", 1L));
        Map<String, Long> inTopic = awaitTopicEqualsTheAccount();
        assertEquals(audited(), inTopic, "the audit topic per user, and what the agent audited (AuditByUser)");
        assertTrue(records.values().stream().anyMatch(r -> operation(r).equals("DELETE_TOPICS") && user(r).equals("admin")),
                "the super user's topic deletion");
        assertFalse(inTopic.containsKey("dave"), "the producer's own requests");
        assertEquals(List.of(), records.values().stream().filter(r -> accessType(r).equals("cluster_action")).toList(),
                "the nodes' requests among themselves (their replication, registration and heartbeats)");

        // dave may no longer write the audit topic: the events of the while are spooled, then delivered
        writePolicies(false);
        awaitPolicyVersion();
        produce("alice", "orders", 3, true);
        produce("bob", "orders", 2, false);
        Await.until("the audit topic refused and the events spooled", Duration.ofSeconds(WAIT_S), () -> {
            long[] bob = bySink().get("bob");
            return node.logText().contains("cannot write the GrantForge audit topic") && bob != null && bob[0] > bob[1];
        });
        writePolicies(true);
        awaitPolicyVersion();
        Map<String, long[]> after = awaitTopicBalanced(Map.of("admin", first.get("admin")[0],
                "alice", first.get("alice")[0] + 3, "bob", first.get("bob")[0] + 2));
        Map<String, Long> inTopicAfter = awaitTopicEqualsTheAccount();
        assertEquals(audited(), inTopicAfter, "everything spooled while the topic could not be written is there");
        assertValidRecords();
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
        String table = (String) jmx.read(AGENT_MBEAN, "AuditBySink").values().iterator().next().get("AuditBySink");
        Map<String, long[]> rows = new TreeMap<>();
        for (String line : table.split("\n")) {
            String[] cells = line.split("\t");
            if (cells.length == 5 && cells[0].equals("topic")) {
                rows.put(cells[1], new long[] {Long.parseLong(cells[2]), Long.parseLong(cells[3]), Long.parseLong(cells[4])});
            }
        }
        return rows;
    }

    /** Waits until every user of the topic sink is delivered, none dropped, and those named have at least so many accesses. */
    private Map<String, long[]> awaitTopicBalanced(Map<String, Long> atLeast) throws Exception {
        AtomicReference<Map<String, long[]>> last = new AtomicReference<>();
        Await.until("the topic sink's account balanced with at least " + atLeast, Duration.ofSeconds(WAIT_S), () -> {
            last.set(bySink());
            return atLeast.entrySet().stream().allMatch(e -> last.get().containsKey(e.getKey())
                    && last.get().get(e.getKey())[0] >= e.getValue())
                    && last.get().values().stream().allMatch(a -> a[0] == a[1] && a[2] == 0);
        });
        return last.get();
    }

    /**
     * Reads the audit topic until what it holds per user equals what the agent says it delivered there, none dropped
     * and nothing spooled (a node's own mutation may be audited meanwhile); returns it.
     */
    private Map<String, Long> awaitTopicEqualsTheAccount() throws Exception {
        AtomicReference<String> last = new AtomicReference<>();
        Await.until("the audit topic to hold what the agent delivered there", Duration.ofSeconds(WAIT_S), () -> {
            Map<String, long[]> account = bySink();
            Map<String, Long> inTopic = readAuditTopic();
            last.set(inTopic + " in the topic, " + delivered(account) + " delivered");
            return account.values().stream().allMatch(a -> a[0] == a[1] && a[2] == 0)
                    && delivered(account).equals(inTopic);
        });
        return readAuditTopic();
    }

    private static Map<String, Long> delivered(Map<String, long[]> rows) {
        Map<String, Long> delivered = new TreeMap<>();
        rows.forEach((user, a) -> delivered.put(user, a[1]));
        return delivered;
    }

    /** {@code AuditByUser}: user → accesses, none dropped. */
    private Map<String, Long> audited() throws Exception {
        String table = (String) jmx.read(AGENT_MBEAN, "AuditByUser").values().iterator().next().get("AuditByUser");
        Map<String, Long> accesses = new TreeMap<>();
        for (String line : table.split("\n")) {
            String[] cells = line.split("\t");
            assertEquals("0", cells[2], "dropped: " + line);
            accesses.put(cells[0], Long.parseLong(cells[1]));
        }
        return accesses;
    }

    /** Reads the audit topic to its end (so far): accesses per user (the records' keys), each event once. */
    private Map<String, Long> readAuditTopic() throws Exception {
        if (reader == null) {
            // no group: the reader makes no consumer offsets topic, nothing of its own to audit
            reader = node.consumer("admin", null, new Properties());
            reader.assign(List.of(new TopicPartition(AUDIT_TOPIC, 0)));
        }
        long quietSince = System.nanoTime();
        long deadline = quietSince + TimeUnit.SECONDS.toNanos(15);
        // until two seconds bring nothing new (a topic that never stops growing is read for at most the deadline)
        while (System.nanoTime() - quietSince < TimeUnit.SECONDS.toNanos(2) && System.nanoTime() < deadline) {
            for (ConsumerRecord<String, String> record : reader.poll(Duration.ofMillis(500))) {
                JsonNode value = json.readTree(record.value());
                assertEquals(user(value), record.key(), "the record's key is its user");
                records.put(id(value), value);
                quietSince = System.nanoTime();
            }
        }
        Map<String, Long> accesses = new TreeMap<>();
        for (JsonNode value : records.values()) {
            accesses.merge(user(value), count(value), Long::sum);
        }
        return accesses;
    }

    private void assertValidRecords() throws Exception {
        boolean ocsf = ocsf();
        JsonSchema schema = JsonSchemaFactory.getInstance(ocsf ? SpecVersion.VersionFlag.V202012 : SpecVersion.VersionFlag.V7)
                .getSchema(json.readTree(ItPaths.fixtures().resolve(ocsf ? "schemas/ocsf-1.8.0-api_activity.json"
                        : "schemas/cloudevents-1.0.json").toFile()));
        List<String> invalid = new ArrayList<>();
        for (JsonNode record : records.values()) {
            if (!schema.validate(record).isEmpty()) {
                invalid.add(schema.validate(record) + " in " + record);
            }
        }
        assertEquals(List.of(), invalid);
        assertTrue(records.size() >= 5, "records read: " + records.size());
    }

    private boolean ocsf() {
        return format.equals("ocsf");
    }

    private String id(JsonNode record) {
        return ocsf() ? record.at("/metadata/uid").asText() : record.get("id").asText();
    }

    private String user(JsonNode record) {
        return ocsf() ? record.at("/actor/user/name").asText() : record.at("/data/user").asText();
    }

    private long count(JsonNode record) {
        return ocsf() ? record.get("count").asLong() : record.at("/data/count").asLong();
    }

    private String accessType(JsonNode record) {
        return ocsf() ? record.at("/unmapped/access_type").asText() : record.at("/data/accessType").asText();
    }

    private String operation(JsonNode record) {
        return ocsf() ? record.at("/api/operation").asText() : record.at("/data/action").asText();
    }
}
