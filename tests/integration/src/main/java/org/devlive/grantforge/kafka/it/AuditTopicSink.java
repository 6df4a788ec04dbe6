package org.devlive.grantforge.kafka.it;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;

/**
 * The agent's audit topic sink beside the server's ({@code grantforge.audit.sinks=grantforge,topic}), as the soak and
 * the sink's benchmark run it: the producer logs in as {@value #PRINCIPAL} (one of {@link KafkaNode#USERS}, whom a
 * policy must let create, describe and write {@value #TOPIC}) over the node's own client listener.
 */
public final class AuditTopicSink {
    public static final String TOPIC = "_grantforge_audit";
    public static final String PRINCIPAL = "soak-audit";
    public static final String SINKS = "grantforge,topic";

    private AuditTopicSink() {
    }

    /** The producer's login, in a file of its own in {@code dir} as an operator keeps it. */
    public static Path writeProducerConfig(Path dir) throws IOException {
        Path file = dir.resolve("audit-producer.properties");
        Properties login = new Properties();
        login.putAll(Map.of("security.protocol", "SASL_PLAINTEXT", "sasl.mechanism", "PLAIN", "sasl.jaas.config",
            "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"" + PRINCIPAL + "\" password=\""
                + KafkaNode.USERS.get(PRINCIPAL) + "\";"));
        try (OutputStream out = Files.newOutputStream(file)) {
            login.store(out, "the audit topic's producer");
        }
        return file;
    }

    /** An agent with the topic sink beside the server's, its topic of one partition on {@code replicas} brokers. */
    public static KafkaNode.Builder configure(KafkaNode.Builder node, Path producerConfig, int replicas) {
        return node.property("grantforge.audit.sinks", SINKS)
            .property("grantforge.audit.topic.bootstrap.servers", NodeProperties.BROKER_ADDRESS)
            .property("grantforge.audit.topic.producer.config", producerConfig.toString())
            .property("grantforge.audit.topic.principal", "User:" + PRINCIPAL)
            .property("grantforge.audit.topic.partitions", "1")
            .property("grantforge.audit.topic.replication.factor", String.valueOf(replicas));
    }
}
