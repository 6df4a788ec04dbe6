package org.devlive.grantforge.kafka.it;

/** {@link MigratedAcls} on Kafka 3.7.2 (a StandardAuthorizer without plugin metrics). */
class MigrateAclsKafka372Test extends MigratedAcls {
    MigrateAclsKafka372Test() {
        super("3.7.2");
    }
}
