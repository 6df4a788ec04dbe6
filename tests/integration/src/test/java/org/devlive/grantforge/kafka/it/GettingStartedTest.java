package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code docs/getting-started.md}'s node, as a new user makes it from the page's files in
 * {@code docs/examples/getting-started/}: its {@code server.properties} unchanged but for the node's ports, data
 * directory and where the policy file is, its policy file and its client files. The node starts on the oldest and
 * the newest release, registers (the node's own SASL principal is a super user: nothing runs as
 * {@code User:ANONYMOUS}, and no lock-out WARN is logged), alice produces to orders and consumes it, and bob, who
 * may write only returns, is refused orders with Kafka's own error.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class GettingStartedTest {
    private static final Path EXAMPLES = ItPaths.fixtures().resolve("../../docs/examples/getting-started").normalize();
    private static final long WAIT_S = 30;

    @Test
    void theDocumentedNodeOfKafka372ServesAliceAndRefusesBob() throws Exception {
        theDocumentedNodeServesAliceAndRefusesBob("3.7.2");
    }

    @Test
    void theDocumentedNodeOfKafka431ServesAliceAndRefusesBob() throws Exception {
        theDocumentedNodeServesAliceAndRefusesBob("4.3.1");
    }

    private void theDocumentedNodeServesAliceAndRefusesBob(String release) throws Exception {
        Map<String, String> server = read(EXAMPLES.resolve("server.properties"));
        // the page copies policies.json to where grantforge.policy.file points; here it is read in place
        server.put("grantforge.policy.file", EXAMPLES.resolve("policies.json").toString());
        try (KafkaNode node = KafkaNode.builder().name("getting-started-" + release).kafkaVersion(release)
                .documentedProperties(server).start()) {
            try (Admin admin = Admin.create(client(node, "admin"))) {
                admin.createTopics(List.of(new NewTopic("orders", 1, (short) 1), new NewTopic("returns", 1, (short) 1))).all()
                        .get(WAIT_S, TimeUnit.SECONDS);
            }
            try (KafkaProducer<String, String> alice = producer(node, "alice")) {
                alice.send(new ProducerRecord<>("orders", "first order")).get(WAIT_S, TimeUnit.SECONDS);
            }
            assertEquals(List.of("first order"), consume(node, "alice", "orders-readers"));
            try (KafkaProducer<String, String> bob = producer(node, "bob")) {
                bob.send(new ProducerRecord<>("returns", "a return")).get(WAIT_S, TimeUnit.SECONDS);
                ExecutionException refused = assertThrows(ExecutionException.class,
                        () -> bob.send(new ProducerRecord<>("orders", "bob's order")).get(WAIT_S, TimeUnit.SECONDS));
                assertInstanceOf(TopicAuthorizationException.class, refused.getCause(), "bob's produce: " + refused.getCause());
            }
            assertFalse(node.logText().contains("CLUSTER_ACTION on listener"), "the node's own principal is refused:\n" + node.diagnostics());
            assertFalse(node.logText().contains("User:ANONYMOUS"), "a connection without a principal:\n" + node.diagnostics());
        }
    }

    /** A documented client file, with the node's address. */
    private static Properties client(KafkaNode node, String user) throws IOException {
        Properties props = new Properties();
        props.putAll(read(EXAMPLES.resolve(user + ".properties")));
        props.put("bootstrap.servers", node.bootstrapServers());
        return props;
    }

    private static KafkaProducer<String, String> producer(KafkaNode node, String user) throws IOException {
        Properties props = client(node, user);
        props.put("max.block.ms", "20000");
        props.put("delivery.timeout.ms", "20000");
        props.put("request.timeout.ms", "10000");
        return new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
    }

    private static List<String> consume(KafkaNode node, String user, String group) throws IOException {
        Properties props = client(node, user);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer())) {
            consumer.subscribe(List.of("orders"));
            long deadline = System.nanoTime() + Duration.ofSeconds(WAIT_S).toNanos();
            while (values.isEmpty() && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(500))) {
                    values.add(record.value());
                }
            }
        }
        return values;
    }

    private static Map<String, String> read(Path file) throws IOException {
        Properties properties = new Properties();
        try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            properties.load(in);
        }
        Map<String, String> map = new LinkedHashMap<>();
        properties.stringPropertyNames().stream().sorted().forEach(key -> map.put(key, properties.getProperty(key)));
        return map;
    }
}
