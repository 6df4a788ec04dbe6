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
import java.util.Set;
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
                .property("grantforge.audit.topic.bootstrap.servers", KafkaNode.BROKER_ADDRESS)
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
        Map<String, long[]> first = awaitTopicBalanced(Set.of("admin", "alice", "bob"));
        assertTrue(first.get("alice")[0] > 1, "alice's accesses: " + first.get("alice")[0]);
        Map<String, Long> inTopic = readAuditTopic();
        assertEquals(delivered(first), inTopic, "the audit topic per user, and the agent's account of what it wrote there");
        assertEquals(audited(), inTopic, "the audit topic per user, and what the agent audited (AuditByUser)");
        assertTrue(records.values().stream().anyMatch(r -> operation(r).equals("DELETE_TOPICS") && user(r).equals("admin")),
                "the super user's topic deletion");
        for (String nobody : List.of("dave", "broker", "controller")) {
            assertFalse(inTopic.containsKey(nobody), nobody + " (the producer's own requests, the nodes' among themselves)");
        }

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
        Map<String, long[]> after = awaitTopicBalanced(Set.of("admin", "alice", "bob"));
        assertTrue(after.get("bob")[0] > first.get("bob")[0], "bob's refusals of the while are counted");
        Map<String, Long> inTopicAfter = readAuditTopic();
        assertEquals(delivered(after), inTopicAfter, "everything spooled while the topic could not be written is there");
        assertEquals(audited(), inTopicAfter, "and equals what the agent audited");
        assertValidRecords();
    }

    private void produce(String user, String topic, int records, boolean allowed) throws Exception {
        Properties oneEach = new Properties();
        oneEach.put("linger.ms", "0");
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

    /** Waits until every user of the topic sink (those named among them) is delivered, none dropped. */
    private Map<String, long[]> awaitTopicBalanced(Set<String> users) throws Exception {
        AtomicReference<Map<String, long[]>> last = new AtomicReference<>();
        Await.until("the topic sink's account balanced for " + users, Duration.ofSeconds(WAIT_S), () -> {
            last.set(bySink());
            return last.get().keySet().containsAll(users)
                    && last.get().values().stream().allMatch(a -> a[0] == a[1] && a[2] == 0);
        });
        return last.get();
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
            reader = node.consumer("admin", "audit-reader-" + format, new Properties());
            reader.subscribe(List.of(AUDIT_TOPIC));
        }
        long quietSince = System.nanoTime();
        while (System.nanoTime() - quietSince < TimeUnit.SECONDS.toNanos(3)) {
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

    private String operation(JsonNode record) {
        return ocsf() ? record.at("/api/operation").asText() : record.at("/data/action").asText();
    }
}
