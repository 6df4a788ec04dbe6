package org.devlive.grantforge.kafka.it;

/** {@link ShadowMode} on Kafka 4.3.1, one controller and three brokers, every node in the mode under test. */
class ShadowModeClusterKafka431Test extends ShadowMode {
    ShadowModeClusterKafka431Test() {
        super("4.3.1", true);
    }
}
