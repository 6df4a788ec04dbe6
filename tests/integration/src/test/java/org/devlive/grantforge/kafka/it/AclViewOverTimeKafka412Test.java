package org.devlive.grantforge.kafka.it;

/** {@link AclViewOverTime} on Kafka 4.1.2. */
class AclViewOverTimeKafka412Test extends AclViewOverTime {
    AclViewOverTimeKafka412Test() {
        super("4.1.2");
    }
}
