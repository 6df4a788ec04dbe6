package org.devlive.grantforge.kafka.it;

/** {@link ProductionTransports} on Kafka 3.7.2, in server mode over HTTPS. */
class ProductionTransportsKafka372Test extends ProductionTransports {
    ProductionTransportsKafka372Test() {
        super("3.7.2", true);
    }
}
