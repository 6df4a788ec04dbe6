package org.devlive.grantforge.kafka.it;

/** {@link WalkingSkeleton} on Kafka 3.7.2. */
class WalkingSkeletonKafka372Test extends WalkingSkeleton {
    WalkingSkeletonKafka372Test() {
        super("3.7.2", KafkaNode.AUTHORIZER_CLASS);
    }
}
