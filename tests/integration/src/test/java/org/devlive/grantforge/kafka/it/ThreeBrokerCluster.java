package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The agent in a cluster of split roles ({@link KafkaCluster}: one controller-only node, three
 * broker-only nodes), every node in server mode against one GrantForge test server with its own
 * {@code grantforge.instance} and its own disk cache. The policies are the server fixture's plus:
 * bob reads {@code orders} in groups {@code bob-*}; group ops (carol) creates topics {@code ops-*}.
 *
 * <p>One cluster per class, shared by its tests; each test uses topics and policy markers of its own,
 * so they pass in any order. One subclass per Kafka release ({@code ThreeBrokerClusterKafka<version>Test}).
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ThreeBrokerCluster {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** Every wait of these tests: long enough for a loaded 2-core machine, short enough to fail. */
    private static final Duration DEADLINE = Duration.ofSeconds(60);
    private static final DateTimeFormatter LOG_TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss,SSS");
    private static final int POLICY_CHANGES_TIMED = 5;

    private final String kafkaVersion;
    private final AtomicInteger markers = new AtomicInteger();
    private Path work;
    private TestServer server;
    private KafkaCluster cluster;
    /** The cluster's policies as the test server serves them now. */
    private ObjectNode policies;

    ThreeBrokerCluster(String kafkaVersion) {
        this.kafkaVersion = kafkaVersion;
    }

    @BeforeAll
    void startCluster() throws Exception {
        // the server's state and the nodes' disk caches, beside the node directories when those are kept
        String kept = System.getProperty(KafkaNode.WORK_PROPERTY);
        work = kept != null && !kept.isBlank()
            ? Files.createTempDirectory(Files.createDirectories(Path.of(kept)), "cluster-" + kafkaVersion + "-server-")
            : Files.createTempDirectory("grantforge-cluster-" + kafkaVersion + "-");
        policies = (ObjectNode) JSON.readTree(ItPaths.fixtures().resolve("server/policies.json").toFile());
        addPolicy(allow("bob reads orders", "topic", "orders", "users", "bob", "read"));
        addPolicy(allow("bob's consumer groups", "group", "bob-*", "users", "bob", "read"));
        addPolicy(allow("ops create ops topics", "topic", "ops-*", "groups", "ops", "create"));
        Path file = work.resolve("policies.json");
        Files.writeString(file, JSON.writeValueAsString(policies));
        server = TestServer.start(file, work.resolve("server"), 1);
        long launched = System.nanoTime();
        cluster = KafkaCluster.builder().kafkaVersion(kafkaVersion).name("cluster-" + kafkaVersion)
            .eachNode((name, node) -> server.agentOf(node, work.resolve("cache-" + name), name)
                // backing off while the server is down stops at 5 s (not 30 s): nodes are back quickly once it is up
                .property("grantforge.refresh.interval.ms", "5000"))
            .start();
        System.out.printf("Kafka %s: a controller and 3 brokers answer %d ms after the controller's launch%n",
            kafkaVersion, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - launched));
    }

    @AfterAll
    void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
        if (server != null) {
            server.close();
        }
    }

    // ------------------------------------------------------------------------------------------
    // policies

    private static ObjectNode allow(String name, String level, String value, String whoKind, String who, String accessType) {
        ObjectNode item = JSON.createObjectNode();
        for (String kind : List.of("users", "groups", "roles")) {
            ArrayNode members = item.putArray(kind);
            if (kind.equals(whoKind)) {
                members.add(who);
            }
        }
        item.putArray("accessTypes").add(accessType);
        item.putArray("conditions");
        item.putNull("maskType");
        item.putNull("maskValue");
        item.putNull("rowFilter");
        ObjectNode policy = JSON.createObjectNode();
        policy.put("name", name).put("type", "ACCESS").put("priority", "NORMAL");
        ObjectNode document = policy.putObject("document");
        ObjectNode resource = document.putObject("resources").putObject(level);
        resource.putArray("values").add(value);
        resource.put("excludes", false).put("recursive", false);
        document.putArray("allow").add(item);
        for (String empty : List.of("allowExceptions", "deny", "denyExceptions", "validity")) {
            document.putArray(empty);
        }
        return policy;
    }

    private void addPolicy(ObjectNode policy) {
        ArrayNode list = (ArrayNode) policies.get("policies");
        policy.put("id", String.valueOf(900 + list.size()));
        list.add(policy);
    }

    /** Adds a policy (alice writes {@code topic}) and returns the version the server now serves. */
    private int changePolicies(String topic) throws Exception {
        addPolicy(allow("alice writes " + topic, "topic", topic, "users", "alice", "write"));
        server.policies(JSON.writeValueAsString(policies));
        return JSON.readTree(server.state()).get("policyVersion").asInt();
    }

    // ------------------------------------------------------------------------------------------
    // what the nodes and the server say

    private static final Pattern LOG_LINE_TIME = Pattern.compile("^\\[([^\\]]+)\\]");

    /** When {@code node}'s agent logged that it applied {@code version}, or null if it has not (yet). */
    private static Instant appliedAt(KafkaNode node, int version) {
        String applied = "applied policy version " + version + " of service ";
        for (String line : node.logLines()) {
            if (line.contains("[org.devlive.grantforge") && line.contains(applied)) {
                Matcher m = LOG_LINE_TIME.matcher(line);
                if (m.find()) {
                    return LocalDateTime.parse(m.group(1), LOG_TIME).atZone(ZoneId.systemDefault()).toInstant();
                }
            }
        }
        return null;
    }

    private JsonNode instances() throws Exception {
        return JSON.readTree(server.instances());
    }

    /** When the server first heard from {@code instance} that it applied {@code version}, or null. */
    private static Instant reportedAt(JsonNode instances, String instance, int version) {
        for (JsonNode i : instances) {
            if (i.get("instance").asText().equals(instance)) {
                for (JsonNode applied : i.get("applied")) {
                    if (applied.get("policyVersion").asInt() == version) {
                        return Instant.parse(applied.get("firstReportedAt").asText());
                    }
                }
            }
        }
        return null;
    }

    /**
     * Waits until every node logged applying {@code version} and reported it in a heartbeat; returns,
     * in milliseconds after {@code since}, when the last node applied it and when the server heard the
     * last report.
     */
    private long[] awaitEveryNodeApplied(int version, Instant since) throws Exception {
        List<KafkaNode> nodes = cluster.nodes();
        List<String> names = cluster.nodeNames();
        Await.until("every node applies policy version " + version + " and says so in a heartbeat", DEADLINE, () -> {
            JsonNode instances = instances();
            for (int i = 0; i < nodes.size(); i++) {
                if (appliedAt(nodes.get(i), version) == null || reportedAt(instances, names.get(i), version) == null) {
                    return false;
                }
            }
            return true;
        });
        JsonNode instances = instances();
        long applied = 0;
        long reported = 0;
        for (int i = 0; i < nodes.size(); i++) {
            applied = Math.max(applied, Duration.between(since, appliedAt(nodes.get(i), version)).toMillis());
            reported = Math.max(reported, Duration.between(since, reportedAt(instances, names.get(i), version)).toMillis());
        }
        return new long[] {applied, reported};
    }

    // ------------------------------------------------------------------------------------------
    // clients

    /** Creates {@code topic} as the super user, one partition per broker, partition p led by broker p + 1. */
    private void createTopicLedByEachBroker(String topic, Map<String, String> configs) throws Exception {
        int brokers = cluster.brokers().size();
        Map<Integer, List<Integer>> assignment = new HashMap<>();
        for (int p = 0; p < brokers; p++) {
            List<Integer> replicas = new ArrayList<>();
            for (int r = 0; r < brokers; r++) {
                replicas.add((p + r) % brokers + 1);
            }
            assignment.put(p, replicas);
        }
        try (Admin admin = cluster.admin(KafkaNode.SUPER_USER)) {
            admin.createTopics(List.of(new NewTopic(topic, assignment).configs(configs))).all().get(30, TimeUnit.SECONDS);
            Await.until(topic + ": every partition led by its first replica, all replicas in sync", DEADLINE, () -> {
                TopicDescription description = admin.describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS).get(topic);
                for (TopicPartitionInfo partition : description.partitions()) {
                    Node leader = partition.leader();
                    if (leader == null || leader.id() != partition.partition() + 1 || partition.isr().size() != brokers) {
                        return false;
                    }
                }
                return true;
            });
        }
    }

    /** The partition of a topic made by {@link #createTopicLedByEachBroker} that broker {@code id} leads. */
    private static int ledBy(int id) {
        return id - 1;
    }

    /**
     * Writes one record with {@code acks=all} to the partition broker {@code id} leads, bootstrapped to
     * that broker alone (so its agent decides both the metadata and the produce); returns null, or why not.
     */
    private Throwable writeAt(int id, String user, String topic) {
        Properties extra = new Properties();
        // idempotence asks for a producer id first: this is about the produce itself
        extra.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        extra.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "15000");
        try (KafkaProducer<String, String> producer = cluster.broker(id).producer(user, extra)) {
            producer.send(new ProducerRecord<>(topic, ledBy(id), "k", user + " at broker " + id)).get(30, TimeUnit.SECONDS);
            return null;
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (Exception e) {
            return e;
        }
    }

    /** Reads the partition broker {@code id} leads, bootstrapped to that broker alone, without a group; null, or why not. */
    private Throwable readAt(int id, String user, String topic) {
        TopicPartition partition = new TopicPartition(topic, ledBy(id));
        try (KafkaConsumer<String, String> consumer = cluster.broker(id).consumer(user, null)) {
            consumer.assign(List.of(partition));
            long deadline = System.nanoTime() + DEADLINE.toNanos();
            while (System.nanoTime() < deadline) {
                if (!consumer.poll(Duration.ofMillis(500)).isEmpty()) {
                    return null;
                }
            }
            throw new AssertionError(user + " read nothing from " + partition + " in " + DEADLINE.toSeconds() + " s");
        } catch (AssertionError e) {
            throw e;
        } catch (Exception e) {
            return e;
        }
    }

    /** A produce or fetch refused with Kafka's own error, naming the topic. */
    private static void assertRefusedByKafka(String topic, Throwable refusal, String what) {
        TopicAuthorizationException e = assertInstanceOf(TopicAuthorizationException.class, refusal, what);
        assertEquals(Set.of(topic), e.unauthorizedTopics(), what);
    }

    /** Creates a one-partition topic as {@code user} through the brokers that are up; null, or why not. */
    private Throwable createTopicAs(String user, String topic, List<Integer> brokersUp) {
        Properties bootstrap = new Properties();
        bootstrap.put("bootstrap.servers", brokersUp.stream().map(id -> cluster.broker(id).bootstrapServers())
            .collect(Collectors.joining(",")));
        try (Admin admin = cluster.broker(brokersUp.get(0)).admin(user, bootstrap)) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) brokersUp.size()))).all().get(30, TimeUnit.SECONDS);
            return null;
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (Exception e) {
            return e;
        }
    }

    /** Whether the test server holds a refusal of {@code user}'s {@code accessType} on {@code topic} sent by {@code instance}. */
    private boolean refusalAudited(String instance, String user, String topic, String accessType) throws Exception {
        for (JsonNode event : JSON.readTree(server.events())) {
            if (event.get("eventId").asText().startsWith(instance + "-") && event.get("user").asText().equals(user)
                && event.get("resource").asText().equals(topic) && event.get("accessType").asText().equals(accessType)
                && event.get("outcome").asText().equals("DENIED")) {
                return true;
            }
        }
        return false;
    }

    // ------------------------------------------------------------------------------------------
    // tests

    @Test
    void aTopicOnThreeReplicasTakesAcksAllWritesOfOneUserServesThemToAnotherAndEveryBrokerRefusesTheRest() throws Exception {
        String topic = "orders";
        createTopicLedByEachBroker(topic, Map.of("min.insync.replicas", "2"));
        int brokers = cluster.brokers().size();
        List<String> sent = new ArrayList<>();
        // acks=all with min.insync.replicas=2: each write is on at least two
        // brokers before it is acknowledged, copied by followers that fetch as the inter-broker principal
        Properties acksAll = new Properties();
        acksAll.put(ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaProducer<String, String> alice = cluster.producer("alice", acksAll)) {
            for (int p = 0; p < brokers; p++) {
                for (int i = 0; i < 3; i++) {
                    String value = "order " + p + "-" + i;
                    RecordMetadata written = alice.send(new ProducerRecord<>(topic, p, "k", value)).get(30, TimeUnit.SECONDS);
                    assertEquals(p, written.partition());
                    sent.add(value);
                }
            }
        }
        List<String> received = new ArrayList<>();
        try (KafkaConsumer<String, String> bob = cluster.consumer("bob", "bob-orders", new Properties())) {
            bob.subscribe(List.of(topic));
            Await.until("bob reads the " + sent.size() + " orders alice wrote", DEADLINE, () -> {
                for (ConsumerRecord<String, String> record : bob.poll(Duration.ofMillis(500))) {
                    received.add(record.value());
                }
                return received.size() >= sent.size();
            });
            bob.commitSync(Duration.ofSeconds(30));
        }
        Collections.sort(received);
        Collections.sort(sent);
        assertEquals(sent, received);

        for (int id = 1; id <= brokers; id++) {
            String broker = KafkaCluster.brokerName(id);
            assertNull(writeAt(id, "alice", topic), broker + ": alice writes");
            assertRefusedByKafka(topic, writeAt(id, "bob", topic), broker + ": bob may read but not write");
            assertRefusedByKafka(topic, readAt(id, "carol", topic), broker + ": carol may not read");
            // the refusal came from this broker's own agent: it audits it under its own instance
            Await.until(broker + " audits bob's refused write", DEADLINE, () -> refusalAudited(broker, "bob", topic, "write"));
            Await.until(broker + " audits carol's refused read", DEADLINE, () -> refusalAudited(broker, "carol", topic, "read"));
            assertNull(readAt(id, "alice", topic), broker + ": alice reads");
        }
    }

    @Test
    void everyNodeAppliesAPolicyChangeAndTheLastOneIsTimed() throws Exception {
        List<Long> applied = new ArrayList<>();
        List<Long> reported = new ArrayList<>();
        for (int round = 0; round < POLICY_CHANGES_TIMED; round++) {
            String topic = "marker-" + markers.incrementAndGet();
            int version = changePolicies(topic);
            Instant since = Instant.parse(JSON.readTree(server.state()).get("policyVersionSince").asText());
            long[] last = awaitEveryNodeApplied(version, since);
            // the clocks read agree: a node applies a version after it exists and reports it after applying it
            assertTrue(0 <= last[0] && last[0] <= last[1], "version " + version + ": applied after " + last[0]
                + " ms, reported after " + last[1] + " ms");
            applied.add(last[0]);
            reported.add(last[1]);
        }
        System.out.printf("Kafka %s, %d nodes, heartbeat every 1 s: the last node applied a policy change after"
                + " %s ms (median %d ms); the server heard the last report after %s ms (median %d ms)%n",
            kafkaVersion, cluster.nodes().size(), applied, median(applied), reported, median(reported));
        // docs/testing.md quotes these lines
    }

    private static long median(List<Long> values) {
        List<Long> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        return sorted.get(sorted.size() / 2);
    }

    @Test
    void aBrokerRestartedWhileTheServerIsDownComesBackFromItsDiskCacheAndDecidesLikeTheOthers() throws Exception {
        String topic = "restart-" + markers.incrementAndGet();
        int version = changePolicies(topic);
        awaitEveryNodeApplied(version, Instant.now());
        int restarted = 2;
        List<Integer> others = List.of(1, 3);
        KafkaNode broker = cluster.broker(restarted);
        server.fault("{\"mode\":\"down\"}");
        try {
            broker.stop();
            // the controller decides topic creations (the brokers forward them) from its snapshot in memory
            assertNull(createTopicAs("carol", "ops-while-broker-" + restarted + "-is-down", others),
                "the controller lets carol create an ops topic while the server and a broker are down");
            // Kafka's error for a refused creation names no topic
            assertInstanceOf(TopicAuthorizationException.class, createTopicAs("bob", "ops-bob", others), "and refuses bob");

            int logLength = broker.logText().length();
            broker.start();
            String restartLog = broker.logText().substring(logLength);
            assertTrue(restartLog.contains("applied policy version " + version + " of service kafka-demo from the disk cache"),
                "the restarted broker applies its disk cache\n" + broker.diagnostics());
            assertTrue(restartLog.contains("cannot be reached"), "with the server down\n" + broker.diagnostics());

            // partition p is led by broker p + 1, the restarted broker included
            createTopicLedByEachBroker(topic, Map.of());
            for (int id = 1; id <= cluster.brokers().size(); id++) {
                String who = KafkaCluster.brokerName(id) + (id == restarted ? " (restarted from its disk cache)" : "");
                assertNull(writeAt(id, "alice", topic), who + ": alice writes what the new version allows");
                assertRefusedByKafka(topic, writeAt(id, "bob", topic), who + ": bob may not");
            }
            assertNull(createTopicAs("carol", "ops-after-broker-" + restarted + "-restarted", List.of(1, 2, 3)),
                "the controller kept working throughout");
        } finally {
            server.fault("{\"mode\":\"none\"}");
            if (!broker.isAlive()) {
                broker.start(); // the other tests share the cluster
            }
        }
        Map<String, Long> down = heartbeatCounts();
        Await.until("every node heartbeats again once the server is back", DEADLINE,
            () -> heartbeatCounts().entrySet().stream().allMatch(e -> e.getValue() > down.getOrDefault(e.getKey(), 0L)));
    }

    @Test
    void eachNodeIsItsOwnInstanceAndHeartbeatsOnce() throws Exception {
        Set<String> names = new HashSet<>(cluster.nodeNames());
        Map<String, Long> before = heartbeatCounts();
        assertEquals(names, before.keySet(), "the server knows the four nodes, each by its own grantforge.instance");
        long waited = Await.until("every node heartbeats 8 more times", DEADLINE,
            () -> heartbeatCounts().entrySet().stream().allMatch(e -> e.getValue() - before.get(e.getKey()) >= 8));
        Map<String, Long> after = heartbeatCounts();
        assertEquals(names, after.keySet());
        // one heartbeat stream per name, one a second: two nodes sharing a name would send twice as many (each JVM of
        // split roles has one authorizer; ServerModeTest shows a combined node's two authorizers sharing one agent)
        long most = waited / 1000 + 2;
        for (String name : names) {
            long sent = after.get(name) - before.get(name);
            assertTrue(sent <= most, name + " sent " + sent + " heartbeats in " + waited + " ms: more than one stream");
        }
    }

    private Map<String, Long> heartbeatCounts() throws Exception {
        Map<String, Long> counts = new HashMap<>();
        for (JsonNode instance : instances()) {
            counts.put(instance.get("instance").asText(), instance.get("heartbeats").asLong());
        }
        return counts;
    }
}
