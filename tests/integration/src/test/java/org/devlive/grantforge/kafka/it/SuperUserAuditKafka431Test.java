package org.devlive.grantforge.kafka.it;

/** {@link SuperUserAudit} on Kafka 4.3.1. */
class SuperUserAuditKafka431Test extends SuperUserAudit {
    SuperUserAuditKafka431Test() {
        super("4.3.1");
    }
}
