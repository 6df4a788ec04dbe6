package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The JAR on aarch64: a Kafka 4.3.1 node (broker and controller at once) on Debian's arm64 JDK, emulated by
 * qemu-user on this x86_64 machine, loads the agent's linux-aarch64 library from the JAR and decides for real
 * clients (on this machine's own JVM): alice produces to orders, bob is refused. Emulation makes the node
 * about ten times slower, so this is the one real node of the platform; the shim's own tests run whole on
 * aarch64 too (java-shim/pom.xml, the aarch64 execution).
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class Aarch64NodeTest {
    private static final int WAIT_S = 120;

    @Test
    void aNodeOnAarch64LoadsTheAarch64LibraryAndDecides() throws Exception {
        try (KafkaNode node = KafkaNode.builder().name("aarch64").kafkaVersion("4.3.1")
                .javaHome(ItPaths.aarch64JavaHome()).policyFile(ItPaths.snapshot("e2e.json"))
                .startTimeout(Duration.ofMinutes(6)).start()) {
            assertTrue(node.logText().contains("(native library from the agent JAR, linux-aarch64)"), node.diagnostics());
            try (var admin = node.admin(KafkaNode.SUPER_USER)) {
                admin.createTopics(List.of(new NewTopic("orders", 1, (short) 1))).all().get(WAIT_S, TimeUnit.SECONDS);
            }
            try (KafkaProducer<String, String> alice = node.producer("alice")) {
                alice.send(new ProducerRecord<>("orders", "k", "alice's order")).get(WAIT_S, TimeUnit.SECONDS);
            }
            Properties plain = new Properties();
            plain.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
            plain.put(ProducerConfig.RETRIES_CONFIG, "0");
            try (KafkaProducer<String, String> bob = node.producer("bob", plain)) {
                ExecutionException e = assertThrows(ExecutionException.class,
                    () -> bob.send(new ProducerRecord<>("orders", "b", "bob's order")).get(WAIT_S, TimeUnit.SECONDS));
                assertInstanceOf(TopicAuthorizationException.class, e.getCause(), "bob's produce to orders: " + e.getCause());
            }
        }
    }
}
