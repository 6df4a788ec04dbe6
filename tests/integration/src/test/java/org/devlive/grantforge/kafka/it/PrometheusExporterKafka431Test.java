package org.devlive.grantforge.kafka.it;

/** {@link PrometheusExporter} on Kafka 4.3.1. */
class PrometheusExporterKafka431Test extends PrometheusExporter {
    PrometheusExporterKafka431Test() {
        super("4.3.1");
    }
}
