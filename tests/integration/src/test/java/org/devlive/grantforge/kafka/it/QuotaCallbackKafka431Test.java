package org.devlive.grantforge.kafka.it;

/** {@link QuotaCallback} on Kafka 4.3.1. */
class QuotaCallbackKafka431Test extends QuotaCallback {
    QuotaCallbackKafka431Test() {
        super("4.3.1");
    }
}
