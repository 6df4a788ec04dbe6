package org.devlive.grantforge.kafka.it;

/** {@link AuditTopicCluster} on Kafka 4.3.1: a controller and two brokers, each in server mode with the topic sink. */
class AuditTopicClusterKafka431Test extends AuditTopicCluster {
    AuditTopicClusterKafka431Test() {
        super("4.3.1");
    }
}
