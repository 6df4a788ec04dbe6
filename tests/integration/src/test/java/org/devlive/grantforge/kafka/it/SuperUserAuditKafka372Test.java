package org.devlive.grantforge.kafka.it;

/** {@link SuperUserAudit} on Kafka 3.7.2. */
class SuperUserAuditKafka372Test extends SuperUserAudit {
    SuperUserAuditKafka372Test() {
        super("3.7.2");
    }
}
