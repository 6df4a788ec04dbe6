package org.devlive.grantforge.kafka.it;

/** {@link QuotaCallback} on Kafka 3.7.2. */
class QuotaCallbackKafka372Test extends QuotaCallback implements QuotaRates {
    QuotaCallbackKafka372Test() {
        super("3.7.2");
    }
}
