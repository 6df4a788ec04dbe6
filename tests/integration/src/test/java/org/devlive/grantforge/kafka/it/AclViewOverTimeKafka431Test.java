package org.devlive.grantforge.kafka.it;

/** {@link AclViewOverTime} on Kafka 4.3.1. */
class AclViewOverTimeKafka431Test extends AclViewOverTime {
    AclViewOverTimeKafka431Test() {
        super("4.3.1");
    }
}
