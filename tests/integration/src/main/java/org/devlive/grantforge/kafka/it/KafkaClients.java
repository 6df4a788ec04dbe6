package org.devlive.grantforge.kafka.it;

import java.util.Properties;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Real Kafka clients as the tests use them: an admin, a String producer ({@code acks=all}, no linger)
 * and a String consumer (from the earliest offset, commits by hand), with timeouts short enough that
 * a refusal fails a test in seconds. {@code props} says whom and where (a node's
 * {@link KafkaNode#clientProps(String)}); {@code extra} overrides any default.
 */
final class KafkaClients {

    private KafkaClients() {
    }

    static Admin admin(Properties props, Properties extra) {
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "15000");
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
        props.putAll(extra);
        return Admin.create(props);
    }

    static KafkaProducer<String, String> producer(Properties props, Properties extra) {
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "30000");
        props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "15000");
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "30000");
        props.putAll(extra);
        return new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
    }

    static KafkaConsumer<String, String> consumer(Properties props, String group, Properties extra) {
        if (group != null) {
            props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        }
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, "15000");
        props.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
        props.putAll(extra);
        return new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer());
    }
}
