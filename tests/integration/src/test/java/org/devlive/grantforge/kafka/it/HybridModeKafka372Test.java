package org.devlive.grantforge.kafka.it;

/** {@link HybridMode} on Kafka 3.7.2, one node that is broker and controller. */
class HybridModeKafka372Test extends HybridMode {
    HybridModeKafka372Test() {
        super("3.7.2");
    }
}
