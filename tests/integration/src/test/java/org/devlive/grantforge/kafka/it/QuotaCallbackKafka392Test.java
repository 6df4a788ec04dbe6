package org.devlive.grantforge.kafka.it;

/** {@link QuotaCallback} on Kafka 3.9.2. */
class QuotaCallbackKafka392Test extends QuotaCallback {
    QuotaCallbackKafka392Test() {
        super("3.9.2");
    }
}
