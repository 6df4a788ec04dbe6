package org.devlive.grantforge.kafka.it;

/** {@link ShadowMode} on Kafka 4.3.1, one node that is broker and controller. */
class ShadowModeKafka431Test extends ShadowMode implements DisagreementFlood {
    ShadowModeKafka431Test() {
        super("4.3.1", false);
    }
}
