package org.devlive.grantforge.kafka.it;

/** {@link ShadowMode} on Kafka 4.1.2, one node that is broker and controller. */
class ShadowModeKafka412Test extends ShadowMode {
    ShadowModeKafka412Test() {
        super("4.1.2", false);
    }
}
