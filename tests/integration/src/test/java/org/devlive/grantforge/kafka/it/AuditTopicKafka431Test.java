package org.devlive.grantforge.kafka.it;

/** {@link AuditTopic} on Kafka 4.3.1, the records in CloudEvents. */
class AuditTopicKafka431Test extends AuditTopic {
    AuditTopicKafka431Test() {
        super("4.3.1", "cloudevents");
    }
}
