package org.devlive.grantforge.kafka.it;

/** {@link MonitorableQuotaCallback} on Kafka 4.1.2. */
class QuotaCallbackKafka412Test extends MonitorableQuotaCallback {
    QuotaCallbackKafka412Test() {
        super("4.1.2");
    }
}
