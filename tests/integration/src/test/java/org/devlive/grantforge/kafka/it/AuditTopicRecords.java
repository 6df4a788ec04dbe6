package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SpecVersion;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;

/**
 * The audit topic as its reader sees it, and the agent's own accounts of it in JMX ({@code AuditByUser},
 * {@code AuditBySink}), for the tests of the topic sink ({@link AuditTopic}, {@link AuditTopicCluster}): each record
 * kept once by its id (a batch written again writes a record twice), read in the topic's format.
 */
final class AuditTopicRecords implements AutoCloseable {
    static final String TOPIC = "_grantforge_audit";
    static final String AGENT_MBEAN = "org.devlive.grantforge.kafka:type=Agent,*";

    private final ObjectMapper json = new ObjectMapper();
    /** {@code ocsf} or {@code cloudevents}. */
    private final String format;
    /** A consumer without a group: the reader makes no consumer offsets topic, nothing of its own to audit. */
    private final Supplier<KafkaConsumer<String, String>> consumer;
    private final Map<String, JsonNode> records = new HashMap<>();
    private KafkaConsumer<String, String> reader;

    AuditTopicRecords(String format, Supplier<KafkaConsumer<String, String>> consumer) {
        this.format = format;
        this.consumer = consumer;
    }

    /** Reads the audit topic to its end (so far): accesses per user (the records' keys), each event once. */
    Map<String, Long> read() throws Exception {
        if (reader == null) {
            reader = consumer.get();
            reader.assign(List.of(new TopicPartition(TOPIC, 0)));
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

    /** Every record read so far, once each. */
    Collection<JsonNode> records() {
        return records.values();
    }

    /** Each record read validates against the published schema of its format (vendored in tests/fixtures/schemas). */
    void assertValid() throws Exception {
        JsonSchema schema = JsonSchemaFactory.getInstance(ocsf() ? SpecVersion.VersionFlag.V202012 : SpecVersion.VersionFlag.V7)
                .getSchema(json.readTree(ItPaths.fixtures().resolve(ocsf() ? "schemas/ocsf-1.8.0-api_activity.json"
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

    String id(JsonNode record) {
        return ocsf() ? record.at("/metadata/uid").asText() : record.get("id").asText();
    }

    String user(JsonNode record) {
        return ocsf() ? record.at("/actor/user/name").asText() : record.at("/data/user").asText();
    }

    long count(JsonNode record) {
        return ocsf() ? record.get("count").asLong() : record.at("/data/count").asLong();
    }

    String accessType(JsonNode record) {
        return ocsf() ? record.at("/unmapped/access_type").asText() : record.at("/data/accessType").asText();
    }

    String operation(JsonNode record) {
        return ocsf() ? record.at("/api/operation").asText() : record.at("/data/action").asText();
    }

    /** One sink's rows of a node's {@code AuditBySink}: user → (accesses, delivered, dropped). */
    static Map<String, long[]> bySink(Jmx jmx, String sink) throws Exception {
        String table = (String) jmx.read(AGENT_MBEAN, "AuditBySink").values().iterator().next().get("AuditBySink");
        Map<String, long[]> rows = new TreeMap<>();
        for (String line : table.split("\n")) {
            String[] cells = line.split("\t");
            if (cells.length == 5 && cells[0].equals(sink)) {
                rows.put(cells[1], new long[] {Long.parseLong(cells[2]), Long.parseLong(cells[3]), Long.parseLong(cells[4])});
            }
        }
        return rows;
    }

    /** Whether every user of {@code rows} ({@link #bySink}) is delivered, none dropped: the sink's spool is empty. */
    static boolean balanced(Map<String, long[]> rows) {
        return rows.values().stream().allMatch(a -> a[0] == a[1] && a[2] == 0);
    }

    /** The delivered column of {@code rows} ({@link #bySink}): user → accesses delivered. */
    static Map<String, Long> delivered(Map<String, long[]> rows) {
        Map<String, Long> delivered = new TreeMap<>();
        rows.forEach((user, a) -> delivered.put(user, a[1]));
        return delivered;
    }

    /** A node's {@code AuditByUser}: user → accesses, none dropped (empty while it audited nothing). */
    static Map<String, Long> audited(Jmx jmx) throws Exception {
        String table = (String) jmx.read(AGENT_MBEAN, "AuditByUser").values().iterator().next().get("AuditByUser");
        Map<String, Long> accesses = new TreeMap<>();
        for (String line : table.split("\n")) {
            if (line.isEmpty()) {
                continue; // a node that audited nothing (yet)
            }
            String[] cells = line.split("\t");
            assertEquals("0", cells[2], "dropped: " + line);
            accesses.put(cells[0], Long.parseLong(cells[1]));
        }
        return accesses;
    }

    /** A number a node's agent publishes in JMX (e.g. {@code AuditTopicSpooledBytes}). */
    static long number(Jmx jmx, String attribute) throws Exception {
        return ((Number) jmx.read(AGENT_MBEAN, attribute).values().iterator().next().get(attribute)).longValue();
    }

    @Override
    public void close() {
        if (reader != null) {
            reader.close();
        }
    }
}
