package org.devlive.grantforge.kafka.it;

/** {@link HybridMode} on Kafka 4.3.1, one node that is broker and controller. */
class HybridModeKafka431Test extends HybridMode {
    HybridModeKafka431Test() {
        super("4.3.1");
    }
}
