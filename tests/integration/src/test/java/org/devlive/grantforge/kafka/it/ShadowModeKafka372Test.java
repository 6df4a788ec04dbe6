package org.devlive.grantforge.kafka.it;

/** {@link ShadowMode} on Kafka 3.7.2, one node that is broker and controller. */
class ShadowModeKafka372Test extends ShadowMode implements DisagreementFlood {
    ShadowModeKafka372Test() {
        super("3.7.2", false);
    }
}
