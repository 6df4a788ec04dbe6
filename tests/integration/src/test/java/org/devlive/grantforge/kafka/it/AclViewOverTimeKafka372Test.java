package org.devlive.grantforge.kafka.it;

/** {@link AclViewOverTime} on Kafka 3.7.2. */
class AclViewOverTimeKafka372Test extends AclViewOverTime {
    AclViewOverTimeKafka372Test() {
        super("3.7.2");
    }
}
