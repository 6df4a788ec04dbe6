package org.devlive.grantforge.kafka.it;

/** {@link ProductionTransports} on Kafka 4.1.2, with policies from a file. */
class ProductionTransportsKafka412Test extends ProductionTransports {
    ProductionTransportsKafka412Test() {
        super("4.1.2", false);
    }
}
