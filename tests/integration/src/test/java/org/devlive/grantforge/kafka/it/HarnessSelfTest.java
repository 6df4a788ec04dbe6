package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The harness alone: a node without any authorizer starts, and its clients work. */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class HarnessSelfTest {

    private static KafkaNode node;

    @BeforeAll
    static void startNode() {
        node = KafkaNode.builder().name("harness-self").noAuthorizer().start();
        System.out.println("[HarnessSelfTest] " + node + " answered after " + node.startedAfterMillis() + " ms");
    }

    @AfterAll
    static void stopNode() {
        if (node != null) {
            node.close();
            assertTrue(!node.isAlive(), "the node's process is gone after close()");
        }
    }

    @Test
    void nodeRunsWithoutAuthorizer() throws Exception {
        // Asked of the running node, not of the properties the harness meant to give it (and not of
        // the log line the harness waited for to call the node started).
        try (Admin admin = node.admin("admin")) {
            String nodeId = admin.describeCluster().nodes().get(30, TimeUnit.SECONDS).iterator().next().idString();
            ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER, nodeId);
            Config config = admin.describeConfigs(List.of(broker)).all().get(30, TimeUnit.SECONDS).get(broker);
            ConfigEntry authorizer = config.get("authorizer.class.name");
            assertEquals("", authorizer.value() == null ? "" : authorizer.value(),
                "the node reports its authorizer: " + authorizer);
        }
        // Kafka's own account of the configuration it read, in the log the harness keeps for the node.
        assertTrue(node.logLines().stream().anyMatch(line -> line.strip().equals("authorizer.class.name =")),
            "the node's log is Kafka's, and Kafka read no authorizer: " + node.serverLogFile());
    }

    @Test
    void createProduceConsume() throws Exception {
        try (Admin admin = node.admin("admin")) {
            admin.createTopics(List.of(new NewTopic("harness", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
            assertTrue(admin.listTopics().names().get(30, TimeUnit.SECONDS).contains("harness"));
        }
        RecordMetadata md;
        try (KafkaProducer<String, String> producer = node.producer("alice")) {
            md = producer.send(new ProducerRecord<>("harness", "k", "hello harness")).get(30, TimeUnit.SECONDS);
        }
        assertEquals("harness", md.topic());
        assertEquals(0L, md.offset());

        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = node.consumer("bob", "harness-group")) {
            consumer.subscribe(Set.of("harness"));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (values.isEmpty() && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                    values.add(r.value());
                }
            }
            consumer.commitSync(Duration.ofSeconds(30));
        }
        assertEquals(List.of("hello harness"), values);
    }
}
