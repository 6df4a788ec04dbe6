package org.devlive.grantforge.kafka.it;

/** {@link ThreeBrokerCluster} on Kafka 3.7.2. */
class ThreeBrokerClusterKafka372Test extends ThreeBrokerCluster {
    ThreeBrokerClusterKafka372Test() {
        super("3.7.2");
    }
}
