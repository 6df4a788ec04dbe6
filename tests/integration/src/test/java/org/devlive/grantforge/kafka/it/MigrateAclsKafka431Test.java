package org.devlive.grantforge.kafka.it;

/** {@link MigratedAcls} on Kafka 4.3.1. */
class MigrateAclsKafka431Test extends MigratedAcls {
    MigrateAclsKafka431Test() {
        super("4.3.1");
    }
}
