package org.devlive.grantforge.kafka.it;

/** {@link PrometheusExporter} on Kafka 3.7.2. */
class PrometheusExporterKafka372Test extends PrometheusExporter {
    PrometheusExporterKafka372Test() {
        super("3.7.2");
    }
}
