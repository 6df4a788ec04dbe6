package org.devlive.grantforge.kafka.it;

/** {@link AclViewOverTime} on Kafka 3.9.2. */
class AclViewOverTimeKafka392Test extends AclViewOverTime {
    AclViewOverTimeKafka392Test() {
        super("3.9.2");
    }
}
