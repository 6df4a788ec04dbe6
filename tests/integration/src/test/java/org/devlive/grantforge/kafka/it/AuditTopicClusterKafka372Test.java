package org.devlive.grantforge.kafka.it;

/** {@link AuditTopicCluster} on Kafka 3.7.2: a controller and two brokers, each in server mode with the topic sink. */
class AuditTopicClusterKafka372Test extends AuditTopicCluster {
    AuditTopicClusterKafka372Test() {
        super("3.7.2");
    }
}
