package org.devlive.grantforge.kafka.it;

/** {@link WalkingSkeleton} on Kafka 4.3.1, with the agent class that also publishes Kafka plugin metrics. */
class WalkingSkeletonKafka431Test extends WalkingSkeleton {
    WalkingSkeletonKafka431Test() {
        super("4.3.1", KafkaNode.MONITORABLE_AUTHORIZER_CLASS);
    }
}
