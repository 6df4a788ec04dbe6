package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.TopicAuthorizationException;

/**
 * An allowed and a refused client of a node running {@code tests/fixtures/snapshots/e2e.json}: alice may write
 * topic {@code orders}, bob may not.
 */
final class AliceAndBob {
    static final long WAIT_S = 30;

    private AliceAndBob() {
    }

    /** The super user creates topic {@code orders} and waits until the node lists it. */
    static void createOrders(KafkaNode node) throws Exception {
        try (Admin admin = node.admin("admin")) {
            admin.createTopics(List.of(new NewTopic("orders", 1, (short) 1))).all().get(WAIT_S, TimeUnit.SECONDS);
            Await.until("topic orders listed", java.time.Duration.ofSeconds(WAIT_S),
                    () -> admin.listTopics().names().get(WAIT_S, TimeUnit.SECONDS).containsAll(Set.of("orders")));
        }
    }

    /** alice writes one record to {@code orders}: allowed. */
    static void aliceWritesOrders(KafkaNode node) throws Exception {
        try (KafkaProducer<String, String> producer = node.producer("alice")) {
            assertEquals("orders", producer.send(new ProducerRecord<>("orders", "a", "alice's order"))
                    .get(WAIT_S, TimeUnit.SECONDS).topic());
        }
    }

    /** bob writes to {@code orders} (a producer that is not idempotent reaches the topic check): refused. */
    static void bobIsRefusedOrders(KafkaNode node) {
        Properties plain = new Properties();
        plain.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        plain.put(ProducerConfig.RETRIES_CONFIG, "0");
        try (KafkaProducer<String, String> producer = node.producer("bob", plain)) {
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> producer.send(new ProducerRecord<>("orders", "b", "bob's order")).get(WAIT_S, TimeUnit.SECONDS));
            assertInstanceOf(TopicAuthorizationException.class, e.getCause(), "bob's produce to orders: " + e.getCause());
        }
    }
}
