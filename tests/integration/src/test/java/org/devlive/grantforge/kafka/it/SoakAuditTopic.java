package org.devlive.grantforge.kafka.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

/**
 * The soak's audit topic: every broker's agent sends its audit to the server and to the topic {@value #TOPIC} of the
 * soak's own cluster ({@code grantforge.audit.sinks=grantforge,topic}), its producer logged in as {@value #PRINCIPAL}.
 * Afterwards the topic is read back (each event once, by its id) and set beside what each agent audited, as the
 * server's counts are ({@link Soak.AuditAccount}), and beside each sink's own account ({@code AuditBySink}, and the
 * lines an agent logs at close for a life that ended).
 */
final class SoakAuditTopic implements AutoCloseable {
    static final String TOPIC = AuditTopicSink.TOPIC;
    /** The principal of the agents' producer, whom a policy alone lets write the topic. */
    static final String PRINCIPAL = AuditTopicSink.PRINCIPAL;
    private static final Pattern CLOSED_SINK = Pattern.compile("closed: the audit by sink: (.*)$");
    private static final ObjectMapper JSON = new ObjectMapper();

    /** One sink's account of one user: accesses routed to it, delivered, dropped (over every life of a node). */
    record SinkRow(long accesses, long delivered, long dropped) {
        boolean balanced() {
            return delivered + dropped == accesses;
        }

        SinkRow plus(SinkRow other) {
            return new SinkRow(accesses + other.accesses, delivered + other.delivered, dropped + other.dropped);
        }
    }

    /**
     * One node's audit in the topic: per user, the accesses its records stand for (their counts, folded ones
     * included); and each sink's account per user.
     */
    record Account(String node, Map<String, Long> inTopic, Map<String, Map<String, SinkRow>> bySink) {
        SinkRow topicRow(String user) {
            return bySink.getOrDefault("topic", Map.of()).getOrDefault(user, new SinkRow(0, 0, 0));
        }
    }

    /**
     * Per user of a broker: the accesses of its records in the topic plus the topic sink's drops against the accesses
     * its agent audited ({@code AuditByUser}, the same account the server's counts are held to); the users that are
     * off, in words.
     */
    static List<String> topicOff(Soak.AuditAccount audited, Account topic) {
        java.util.Set<String> users = new java.util.TreeSet<>(audited.users().keySet());
        users.addAll(topic.inTopic().keySet());
        List<String> off = new java.util.ArrayList<>();
        for (String user : users) {
            long in = topic.inTopic().getOrDefault(user, 0L);
            long dropped = topic.topicRow(user).dropped();
            long accesses = audited.users().getOrDefault(user, new Soak.UserAccount(0, 0, 0)).accesses();
            if (in + dropped != accesses) {
                off.add(user + " " + in + " in the topic + " + dropped + " dropped of " + accesses);
            }
        }
        return off;
    }

    /**
     * Each sink's account of a node, per user: delivered + dropped = routed to it, none dropped, and the topic sink's
     * delivered equal to what the topic holds; the rows that are off, in words.
     */
    static List<String> sinksOff(Account account, boolean withTopic) {
        List<String> off = new java.util.ArrayList<>();
        account.bySink().forEach((sink, users) -> users.forEach((user, row) -> {
            if (!row.balanced() || row.dropped() != 0) {
                off.add(sink + " " + user + " " + row.delivered() + " delivered + " + row.dropped() + " dropped of " + row.accesses());
            }
        }));
        if (withTopic) {
            java.util.Set<String> users = new java.util.TreeSet<>(account.inTopic().keySet());
            users.addAll(account.bySink().getOrDefault("topic", Map.of()).keySet());
            for (String user : users) {
                long delivered = account.topicRow(user).delivered();
                if (delivered != account.inTopic().getOrDefault(user, 0L)) {
                    off.add("topic " + user + " " + delivered + " delivered, " + account.inTopic().getOrDefault(user, 0L) + " in the topic");
                }
            }
        }
        return off;
    }

    /** Whether every broker's topic and every node's sinks reconcile (the soak waits for it, within a bound). */
    static boolean reconciled(List<Soak.AuditAccount> audited, List<Account> topics) {
        for (Account topic : topics) {
            boolean broker = topic.node().startsWith("broker-");
            Soak.AuditAccount account = audited.stream().filter(a -> a.node().equals(topic.node())).findFirst().orElseThrow();
            if (!sinksOff(topic, broker).isEmpty() || broker && !topicOff(account, topic).isEmpty()) {
                return false;
            }
        }
        return true;
    }

    /** One record of the topic, as the reconciliation reads it. */
    private record Record(String node, String user, long count) {
    }

    private final KafkaConsumer<String, String> reader;
    private final Map<String, Record> byId = new TreeMap<>();

    SoakAuditTopic(KafkaCluster cluster) {
        // a super user, no group: the reader's own requests are neither checked nor audited
        reader = cluster.consumer(KafkaNode.SUPER_USER, null, new Properties());
    }

    /** A broker's agent with the topic sink beside the server's, the topic on the three brokers. */
    static void configure(KafkaNode.Builder node, Path producerConfig) {
        AuditTopicSink.configure(node, producerConfig, 3);
    }

    /** Adds the rows of an {@code AuditBySink} table (sink, user, accesses, delivered, dropped; a line each). */
    static void addSinkRows(Map<String, Map<String, SinkRow>> bySink, String table) {
        for (String line : table.split("\n")) {
            String[] cells = line.split("\t");
            if (cells.length < 5) {
                continue;
            }
            int n = cells.length;
            // a user's name may hold a tab: the sink is the first field, the three counts the last
            String user = String.join("\t", java.util.Arrays.copyOfRange(cells, 1, n - 3));
            bySink.computeIfAbsent(cells[0], s -> new TreeMap<>()).merge(user, new SinkRow(Long.parseLong(cells[n - 3]),
                Long.parseLong(cells[n - 2]), Long.parseLong(cells[n - 1])), SinkRow::plus);
        }
    }

    /** Adds the sinks' accounts of the lives that ended, as their agents logged them at close. */
    static void addClosedSinkRows(Map<String, Map<String, SinkRow>> bySink, List<String> logLines) {
        StringBuilder table = new StringBuilder();
        for (String line : logLines) {
            Matcher closed = CLOSED_SINK.matcher(line);
            if (closed.find()) {
                // the log escapes the table's tabs as Rust's Debug writes them
                table.append(closed.group(1).replace("\\t", "\t")).append('\n');
            }
        }
        addSinkRows(bySink, table.toString());
    }

    /**
     * Reads what the topic gained since the last read, to its end now; returns per node (the record's source) and
     * user the accesses its records stand for, each event once.
     */
    Map<String, Map<String, Long>> read() {
        List<PartitionInfo> partitions = reader.partitionsFor(TOPIC, Duration.ofSeconds(30));
        List<TopicPartition> assigned = partitions.stream().map(p -> new TopicPartition(TOPIC, p.partition())).toList();
        if (!reader.assignment().containsAll(assigned)) {
            reader.assign(assigned);
            reader.seekToBeginning(assigned);
        }
        Map<TopicPartition, Long> end = reader.endOffsets(assigned, Duration.ofSeconds(30));
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (assigned.stream().anyMatch(tp -> reader.position(tp) < end.get(tp)) && System.nanoTime() < deadline) {
            for (ConsumerRecord<String, String> record : reader.poll(Duration.ofMillis(500))) {
                try {
                    JsonNode event = JSON.readTree(record.value());
                    String source = event.path("source").asText();
                    byId.put(event.path("id").asText(), new Record(source.substring(source.lastIndexOf('/') + 1),
                        event.at("/data/user").asText(), event.at("/data/count").asLong()));
                } catch (IOException e) {
                    throw new IllegalStateException("an audit record that is not JSON: " + record.value(), e);
                }
            }
        }
        Map<String, Map<String, Long>> byNode = new TreeMap<>();
        byId.values().forEach(r -> byNode.computeIfAbsent(r.node(), n -> new TreeMap<>()).merge(r.user(), r.count(), Long::sum));
        return byNode;
    }

    @Override
    public void close() {
        reader.close();
    }
}
