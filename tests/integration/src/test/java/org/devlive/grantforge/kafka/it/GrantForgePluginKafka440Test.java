package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link GrantForgePluginAgainstKafka} on Kafka 4.4.0, the newest release the agent supports, where groups also come
 * in the consumer protocol of KIP-848, as share groups (KIP-932) and as streams groups (KIP-1071): group lookups offer
 * them beside classic ones.
 */
class GrantForgePluginKafka440Test extends GrantForgePluginAgainstKafka {
    GrantForgePluginKafka440Test() {
        super("4.4.0");
    }

    @Test
    void groupLookupsOfferConsumerProtocolShareAndStreamsGroupsToo(@TempDir Path streamsState) throws Exception {
        Properties consumerProtocol = new Properties();
        consumerProtocol.put("group.protocol", "consumer");
        Properties share = node().clientProps(KafkaNode.SUPER_USER);
        share.put("group.id", "orders-share");
        share.put("key.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
        share.put("value.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
        try (KafkaConsumer<String, String> consumer = node().consumer(KafkaNode.SUPER_USER, "orders-next", consumerProtocol);
             KafkaShareConsumer<String, String> shareConsumer = new KafkaShareConsumer<>(share);
             KafkaStreams streams = streamsApp("orders-streams", streamsState)) {
            consumer.subscribe(List.of("orders"));
            shareConsumer.subscribe(List.of("orders"));
            streams.start();
            Await.until("the three groups are known to the broker", Duration.ofSeconds(30), () -> {
                consumer.poll(Duration.ofMillis(200));
                shareConsumer.poll(Duration.ofMillis(200));
                return lookup(plainService(), "group", "orders-", 100).size() == 5;
            });
            assertEquals(List.of("orders-app", "orders-audit", "orders-next", "orders-share", "orders-streams"),
                    lookup(plainService(), "group", "orders-", 100));
        }
    }

    /** A Kafka Streams application on the streams protocol that reads orders and writes nothing: no internal topic. */
    private KafkaStreams streamsApp(String applicationId, Path stateDir) {
        StreamsBuilder topology = new StreamsBuilder();
        topology.stream("orders", Consumed.with(Serdes.String(), Serdes.String())).foreach((key, value) -> { });
        Properties props = node().clientProps(KafkaNode.SUPER_USER);
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
        props.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, "streams");
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        return new KafkaStreams(topology.build(), props);
    }
}
