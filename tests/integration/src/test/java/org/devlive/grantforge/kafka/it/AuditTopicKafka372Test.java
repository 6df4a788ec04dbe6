package org.devlive.grantforge.kafka.it;

/** {@link AuditTopic} on Kafka 3.7.2, the records in OCSF. */
class AuditTopicKafka372Test extends AuditTopic {
    AuditTopicKafka372Test() {
        super("3.7.2", "ocsf");
    }
}
