package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.junit.jupiter.api.Test;

/**
 * {@link GrantForgePluginAgainstKafka} on Kafka 4.4.0, the newest release the agent supports, where groups also come
 * in the consumer protocol of KIP-848 and as share groups (KIP-932): group lookups offer them beside classic ones.
 */
class GrantForgePluginKafka440Test extends GrantForgePluginAgainstKafka {
    GrantForgePluginKafka440Test() {
        super("4.4.0");
    }

    @Test
    void groupLookupsOfferConsumerProtocolAndShareGroupsToo() throws Exception {
        Properties consumerProtocol = new Properties();
        consumerProtocol.put("group.protocol", "consumer");
        Properties share = node().clientProps(KafkaNode.SUPER_USER);
        share.put("group.id", "orders-share");
        share.put("key.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
        share.put("value.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
        try (KafkaConsumer<String, String> consumer = node().consumer(KafkaNode.SUPER_USER, "orders-next", consumerProtocol);
             KafkaShareConsumer<String, String> shareConsumer = new KafkaShareConsumer<>(share)) {
            consumer.subscribe(List.of("orders"));
            shareConsumer.subscribe(List.of("orders"));
            Await.until("both groups are known to the broker", Duration.ofSeconds(30), () -> {
                consumer.poll(Duration.ofMillis(200));
                shareConsumer.poll(Duration.ofMillis(200));
                return lookup(plainService(), "group", "orders-", 100).size() == 4;
            });
            assertEquals(List.of("orders-app", "orders-audit", "orders-next", "orders-share"),
                    lookup(plainService(), "group", "orders-", 100));
        }
    }
}
