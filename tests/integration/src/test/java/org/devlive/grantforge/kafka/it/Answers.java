package org.devlive.grantforge.kafka.it;

import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;

/** A real client's request to a node, answered in words: what the tests that compare answers set side by side. */
final class Answers {
    private static final long WAIT_S = 30;

    private Answers() {
    }

    /** One record of {@code user} to {@code topic}, not idempotent, not retried: "produced" or the refusal. */
    static String produce(KafkaNode node, String user, String topic) {
        Properties plain = new Properties();
        plain.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        plain.put(ProducerConfig.RETRIES_CONFIG, "0");
        plain.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "15000");
        try (KafkaProducer<String, String> producer = node.producer(user, plain)) {
            producer.send(new ProducerRecord<>(topic, user, "from " + user)).get(WAIT_S, TimeUnit.SECONDS);
            return "produced";
        } catch (Exception e) {
            return Refusals.of(e);
        }
    }
}
