package org.devlive.grantforge.kafka.it;

/** {@link MonitorableQuotaCallback} on Kafka 4.4.0. */
class QuotaCallbackKafka440Test extends MonitorableQuotaCallback implements QuotaRates {
    QuotaCallbackKafka440Test() {
        super("4.4.0");
    }
}
