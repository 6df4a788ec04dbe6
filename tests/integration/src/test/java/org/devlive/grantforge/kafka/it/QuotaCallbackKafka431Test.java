package org.devlive.grantforge.kafka.it;

/** {@link MonitorableQuotaCallback} on Kafka 4.3.1. */
class QuotaCallbackKafka431Test extends MonitorableQuotaCallback {
    QuotaCallbackKafka431Test() {
        super("4.3.1");
    }
}
