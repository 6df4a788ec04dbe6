package org.devlive.grantforge.kafka.it;

/** {@link QuotaCallback} on Kafka 4.1.2. */
class QuotaCallbackKafka412Test extends QuotaCallback {
    QuotaCallbackKafka412Test() {
        super("4.1.2");
    }
}
