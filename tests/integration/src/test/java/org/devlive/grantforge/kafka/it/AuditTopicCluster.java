package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The topic sink on a cluster of split roles ({@link KafkaCluster}: a controller-only node and two brokers), every node
 * in server mode against one GrantForge test server, with {@code grantforge.audit.sinks=grantforge,topic} and the
 * super users' mutations audited. Each node's agent writes its audit to one topic of the cluster (replicated to both
 * brokers) as dave, whom a policy of the server's allows to create, describe and write it; the brokers' producers reach
 * their own client listener, the controller's (which has none) the brokers through a relay set once they exist.
 *
 * <p>The brokers replicate between them as the super user {@value KafkaCluster#INTER_BROKER_USER} (a follower's fetch
 * is a {@code CLUSTER_ACTION} on the cluster) and reach the controller as {@value KafkaCluster#CONTROLLER_USER}: none of
 * it is in the audit topic, nor is the agents' producer, while a super user's topic deletion is. And what the topic
 * holds per user equals what the server received per user, each sink's account balanced on every node.
 *
 * <p>One cluster per class, shared by its tests; each test counts from what the nodes say at its end, so they pass in
 * any order. One subclass per Kafka release.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AuditTopicCluster {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration DEADLINE = Duration.ofSeconds(60);
    private static final String FORMAT = "cloudevents";

    private final String kafkaVersion;
    private TestServer server;
    private FaultProxy controllersBootstrap;
    private KafkaCluster cluster;
    /** Each node's JMX, by node name. */
    private final Map<String, Jmx> jmx = new LinkedHashMap<>();
    private AuditTopicRecords topic;

    AuditTopicCluster(String kafkaVersion) {
        this.kafkaVersion = kafkaVersion;
    }

    @BeforeAll
    void startCluster(@TempDir Path work) throws Exception {
        ObjectNode policies = (ObjectNode) JSON.readTree(ItPaths.fixtures().resolve("server/policies.json").toFile());
        ((ArrayNode) policies.get("policies")).add(JSON.readTree("{\"id\":\"90\",\"name\":\"the audit's producer writes the audit topic\","
                + "\"type\":\"ACCESS\",\"priority\":\"NORMAL\",\"document\":{\"resources\":{\"topic\":{\"values\":[\""
                + AuditTopicRecords.TOPIC + "\"],\"excludes\":false,\"recursive\":false}},\"allow\":[{\"users\":[\"dave\"],"
                + "\"groups\":[],\"roles\":[],\"accessTypes\":[\"create\",\"describe\",\"write\"],\"conditions\":[],"
                + "\"maskType\":null,\"maskValue\":null,\"rowFilter\":null}],\"allowExceptions\":[],\"deny\":[],"
                + "\"denyExceptions\":[],\"validity\":[]}}"));
        Path policyFile = work.resolve("policies.json");
        Files.writeString(policyFile, JSON.writeValueAsString(policies));
        server = TestServer.start(policyFile, work.resolve("server"), 1);
        Path producerConfig = work.resolve("audit-producer.properties");
        Files.writeString(producerConfig, "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config="
                + "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"dave\" password=\"dave-secret\";\n");
        // a relay, not a broker's address: the controller starts before the brokers have their ports
        controllersBootstrap = FaultProxy.start(0);
        String relay = controllersBootstrap.url().substring("http://".length());
        cluster = KafkaCluster.builder().kafkaVersion(kafkaVersion).name("audit-topic-cluster-" + kafkaVersion).brokers(2)
                .eachNode((name, node) -> {
                    server.agentOf(node, work.resolve("cache-" + name), name)
                            .property("grantforge.audit.sinks", "grantforge,topic")
                            .property("grantforge.audit.topic.format", FORMAT)
                            .property("grantforge.audit.topic.bootstrap.servers",
                                    name.equals(KafkaCluster.controllerName()) ? relay : NodeProperties.BROKER_ADDRESS)
                            .property("grantforge.audit.topic.producer.config", producerConfig.toString())
                            .property("grantforge.audit.topic.principal", "User:dave")
                            .property("grantforge.audit.topic.partitions", "1")
                            .property("grantforge.audit.topic.replication.factor", "2")
                            .property("grantforge.audit.topic.timeout.ms", "3000")
                            .property("grantforge.audit.flush.interval.ms", "500")
                            .property("grantforge.audit.fold.window.ms", "1000")
                            .property("grantforge.audit.super.users.mutations", "true");
                    Jmx nodeJmx = Jmx.onFreePort();
                    nodeJmx.jvmArgs().forEach(node::jvmArg);
                    jmx.put(name, nodeJmx);
                })
                .start();
        controllersBootstrap.target("http://" + cluster.broker(1).bootstrapServers());
        Properties everyBroker = new Properties();
        everyBroker.put("bootstrap.servers", cluster.bootstrapServers());
        topic = new AuditTopicRecords(FORMAT, () -> cluster.broker(1).consumer(KafkaNode.SUPER_USER, null, everyBroker));
    }

    @AfterAll
    void stopCluster() throws Exception {
        if (topic != null) {
            topic.close();
        }
        if (cluster != null) {
            cluster.close();
        }
        if (controllersBootstrap != null) {
            controllersBootstrap.close();
        }
        if (server != null) {
            server.close();
        }
    }

    @Test
    void aSuperUsersTopicDeletionIsInTheAuditTopicAndTheBrokersReplicationIsNot() throws Exception {
        String replicated = "replicated-by-both-brokers";
        try (Admin admin = cluster.admin(KafkaNode.SUPER_USER)) {
            admin.createTopics(List.of(new NewTopic(replicated, 1, (short) 2).configs(Map.of("min.insync.replicas", "2"))))
                    .all().get(30, TimeUnit.SECONDS);
            // acks=all with two replicas in sync: each write is acknowledged once the follower has fetched it
            Properties acksAll = new Properties();
            acksAll.put(ProducerConfig.ACKS_CONFIG, "all");
            try (KafkaProducer<String, String> producer = cluster.producer(KafkaNode.SUPER_USER, acksAll)) {
                for (int i = 0; i < 5; i++) {
                    producer.send(new ProducerRecord<>(replicated, "k", "replicated " + i)).get(30, TimeUnit.SECONDS);
                }
            }
            admin.deleteTopics(List.of(replicated)).all().get(30, TimeUnit.SECONDS);
        }
        Predicate<JsonNode> deletion = r -> topic.operation(r).equals("DELETE_TOPICS") && topic.user(r).equals("admin");
        Await.until("the super user's topic deletion in the audit topic", DEADLINE, () -> {
            topic.read();
            return topic.records().stream().anyMatch(deletion);
        });
        List<String> nodesAndProducer = new ArrayList<>();
        for (JsonNode record : topic.records()) {
            String user = topic.user(record);
            if (topic.accessType(record).equals("cluster_action") || user.equals(KafkaCluster.INTER_BROKER_USER)
                    || user.equals(KafkaCluster.CONTROLLER_USER) || user.equals("dave")) {
                nodesAndProducer.add(record.toString());
            }
        }
        assertEquals(List.of(), nodesAndProducer,
                "the nodes' requests among themselves (replication, registration, heartbeats) and the agents' producer");
        assertTrue(topic.records().size() >= 2, "admin's creation and deletion at least: " + topic.records().size());
        System.out.printf("Kafka %s, a controller and 2 brokers: %d records in the audit topic, none of the nodes' own%n",
                kafkaVersion, topic.records().size());
    }

    @Test
    void inServerModeTheAuditTopicHoldsPerUserWhatTheServerReceived() throws Exception {
        try (Admin admin = cluster.admin(KafkaNode.SUPER_USER)) {
            admin.createTopics(List.of(new NewTopic("orders", 1, (short) 2))).all().get(30, TimeUnit.SECONDS);
        }
        produce("alice", 5, true);
        produce("bob", 2, false);
        AtomicReference<Map<String, Map<String, Long>>> last = new AtomicReference<>();
        try {
            Await.until("the audit topic, the server and every node's sinks agree per user", DEADLINE, () -> {
                last.set(views());
                return last.get().get("topic").getOrDefault("alice", 0L) >= 5
                        && last.get().get("topic").getOrDefault("bob", 0L) >= 2
                        && last.get().values().stream().distinct().count() == 1;
            });
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; last seen: " + last.get(), e);
        }
        Map<String, Map<String, Long>> views = last.get();
        assertEquals(views.get("server received"), views.get("topic"), "the audit topic per user and the server's");
        assertEquals(views.get("audited (AuditByUser)"), views.get("topic"), "and what the agents audited");
        assertFalse(views.get("topic").containsKey("dave"), "the producer's own requests");
        System.out.printf("Kafka %s, a controller and 2 brokers in server mode, per user: %s%n", kafkaVersion, views);
        topic.assertValid();
    }

    /**
     * Per user: what the audit topic holds, what the server received, each sink's delivered summed over the nodes (each
     * sink's account balanced, else empty: a sink with something spooled is not yet comparable) and the audit summed.
     */
    private Map<String, Map<String, Long>> views() throws Exception {
        Map<String, Map<String, Long>> views = new LinkedHashMap<>();
        views.put("topic", topic.read());
        views.put("server received", serverReceived());
        for (String sink : List.of("grantforge", "topic")) {
            Map<String, Long> delivered = new TreeMap<>();
            for (Jmx node : jmx.values()) {
                Map<String, long[]> rows = AuditTopicRecords.bySink(node, sink);
                if (!AuditTopicRecords.balanced(rows)) {
                    delivered.put("(spooled on a node)", -1L);
                }
                AuditTopicRecords.delivered(rows).forEach((user, n) -> delivered.merge(user, n, Long::sum));
            }
            views.put(sink + " sink delivered", delivered);
        }
        Map<String, Long> audited = new TreeMap<>();
        for (Jmx node : jmx.values()) {
            AuditTopicRecords.audited(node).forEach((user, n) -> audited.merge(user, n, Long::sum));
        }
        views.put("audited (AuditByUser)", audited);
        return views;
    }

    /** The test server's events, accesses per user (an event stands for {@code count} of them; each event kept once). */
    private Map<String, Long> serverReceived() throws Exception {
        Map<String, Long> accesses = new TreeMap<>();
        for (JsonNode event : JSON.readTree(server.events())) {
            accesses.merge(event.get("user").asText(), event.get("count").asLong(), Long::sum);
        }
        return accesses;
    }

    private void produce(String user, int records, boolean allowed) throws Exception {
        Properties oneEach = new Properties();
        oneEach.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        // a refused producer must fail per record: an idempotent one stops at its refused producer id
        oneEach.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        try (KafkaProducer<String, String> producer = cluster.producer(user, oneEach)) {
            for (int i = 0; i < records; i++) {
                ProducerRecord<String, String> record = new ProducerRecord<>("orders", "k", "v" + i);
                if (allowed) {
                    producer.send(record).get(30, TimeUnit.SECONDS);
                } else {
                    assertThrows(ExecutionException.class, () -> producer.send(record).get(30, TimeUnit.SECONDS));
                }
            }
        }
    }
}
