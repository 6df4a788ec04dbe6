package org.devlive.grantforge.kafka.it;

/** {@link ShadowMode} on Kafka 3.9.2, one node that is broker and controller. */
class ShadowModeKafka392Test extends ShadowMode {
    ShadowModeKafka392Test() {
        super("3.9.2", false);
    }
}
