package org.devlive.grantforge.kafka.it;

/** {@link WalkingSkeleton} on Kafka 4.1.2, with the agent class that also publishes Kafka plugin metrics. */
class WalkingSkeletonKafka412Test extends WalkingSkeleton {
    WalkingSkeletonKafka412Test() {
        super("4.1.2", KafkaNode.MONITORABLE_AUTHORIZER_CLASS);
    }
}
