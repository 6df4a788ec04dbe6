package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Brokers that replicate over an SSL listener with client certificates, as production runs them: the 1 + 3
 * cluster's inter-broker listener is {@link Transports#MTLS}, each broker presents {@link Transports#BROKER_DN}'s
 * certificate, no mapping rule matches it, and so {@code super.users} names that whole distinguished name. The
 * policies allow nothing, and the PLAIN inter-broker user is no super user: a write that needs every replica
 * succeeds only because the followers' fetches, arriving over TLS as the certificate's principal, are a super
 * user's. A client that is no super user is refused, so an agent that allowed everything fails.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class InterBrokerTlsTest {
    private static final long WAIT_S = 30;

    @TempDir
    Path tmp;

    @ParameterizedTest(name = "Kafka {0}")
    @ValueSource(strings = {"3.7.2", "4.3.1"})
    void brokersReplicateOverTlsAsTheirCertificatesSuperUser(String kafkaVersion) throws Exception {
        Transports transports = new Transports(TestPki.create(tmp.resolve("pki")));
        Path snapshot = tmp.resolve("nothing-allowed.json");
        GrantForgeSnapshot.writePolicies(snapshot, "kafka-cluster-tls", List.of());
        String superUsers = "User:" + KafkaNode.SUPER_USER + ";User:" + KafkaCluster.CONTROLLER_USER + ";User:" + Transports.BROKER_DN;
        Map<String, Jmx> jmx = new java.util.concurrent.ConcurrentHashMap<>();
        try (KafkaCluster cluster = KafkaCluster.builder().kafkaVersion(kafkaVersion).name("inter-broker-tls")
                .eachNode((name, node) -> {
                    node.policyFile(snapshot).property("super.users", superUsers);
                    if (!name.equals(KafkaCluster.controllerName())) {
                        Jmx nodeJmx = Jmx.onFreePort();
                        jmx.put(name, nodeJmx);
                        nodeJmx.jvmArgs().forEach(node::jvmArg);
                        node.listener(transports.mutualTlsListener(ProductionTransports.MAPPING_RULES))
                                .property("inter.broker.listener.name", Transports.MTLS);
                    }
                }).start();
             Admin admin = cluster.admin(KafkaNode.SUPER_USER)) {
            admin.createTopics(List.of(new NewTopic("replicated", 1, (short) 3)
                    .configs(Map.of("min.insync.replicas", "3")))).all().get(WAIT_S, TimeUnit.SECONDS);
            Properties everyReplica = new Properties();
            everyReplica.put("acks", "all");
            try (KafkaProducer<String, String> producer = cluster.producer(KafkaNode.SUPER_USER, everyReplica)) {
                producer.send(new ProducerRecord<>("replicated", "k", "on three brokers")).get(WAIT_S, TimeUnit.SECONDS);
            }
            // The negative control: the policies allow nothing, so a client that is no super user is refused. An agent
            // that allowed everything would pass every other assertion here.
            Properties once = new Properties();
            once.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
            once.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "10000");
            once.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "10000");
            once.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000");
            try (KafkaProducer<String, String> alice = cluster.producer("alice", once)) {
                Throwable refused = assertThrows(Exception.class,
                        () -> alice.send(new ProducerRecord<>("replicated", "k", "refused")).get(WAIT_S, TimeUnit.SECONDS));
                assertTrue(causes(refused).anyMatch(TopicAuthorizationException.class::isInstance), "alice is refused: " + refused);
            }
            TopicDescription topic = admin.describeTopics(List.of("replicated")).allTopicNames().get(WAIT_S, TimeUnit.SECONDS)
                    .get("replicated");
            assertEquals(3, topic.partitions().get(0).isr().size(), "in sync: " + topic);

            // No client of this test uses the SSL listener: its connections are the followers'.
            double tlsConnections = 0;
            for (Jmx broker : jmx.values()) {
                for (Map<String, Object> processor : broker.read("kafka.server:type=socket-server-metrics,listener="
                        + Transports.MTLS + ",networkProcessor=*", "connection-count").values()) {
                    tlsConnections += ((Number) processor.get("connection-count")).doubleValue();
                }
            }
            assertTrue(tlsConnections >= 2, "followers connect over " + Transports.MTLS + ": " + tlsConnections + " connections");
            for (KafkaNode node : cluster.nodes()) {
                List<String> refused = node.logLines().stream().filter(line -> line.contains("is Denied operation = CLUSTER_ACTION"))
                        .collect(Collectors.toList());
                assertEquals(List.of(), refused, node + " refused no cluster action");
            }
        }
    }

    private static Stream<Throwable> causes(Throwable t) {
        return Stream.iterate(t, java.util.Objects::nonNull, Throwable::getCause);
    }
}
