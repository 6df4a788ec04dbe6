package org.devlive.grantforge.kafka.it;

/** {@link ThreeBrokerCluster} on Kafka 4.3.1. */
class ThreeBrokerClusterKafka431Test extends ThreeBrokerCluster {
    ThreeBrokerClusterKafka431Test() {
        super("4.3.1");
    }
}
