package org.devlive.grantforge.kafka.it;

/** {@link ProductionTransports} on Kafka 4.3.1, in server mode over HTTPS. */
class ProductionTransportsKafka431Test extends ProductionTransports {
    ProductionTransportsKafka431Test() {
        super("4.3.1", true);
    }
}
