package org.devlive.grantforge.kafka.it;

/** {@link ProductionTransports} on Kafka 3.9.2, with policies from a file. */
class ProductionTransportsKafka392Test extends ProductionTransports {
    ProductionTransportsKafka392Test() {
        super("3.9.2", false);
    }
}
