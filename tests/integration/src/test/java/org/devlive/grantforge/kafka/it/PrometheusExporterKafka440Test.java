package org.devlive.grantforge.kafka.it;

/** {@link PrometheusExporter} on Kafka 4.4.0. */
class PrometheusExporterKafka440Test extends PrometheusExporter {
    PrometheusExporterKafka440Test() {
        super("4.4.0");
    }
}
