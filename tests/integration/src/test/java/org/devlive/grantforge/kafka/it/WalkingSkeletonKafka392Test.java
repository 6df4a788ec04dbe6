package org.devlive.grantforge.kafka.it;

/** {@link WalkingSkeleton} on Kafka 3.9.2. */
class WalkingSkeletonKafka392Test extends WalkingSkeleton {
    WalkingSkeletonKafka392Test() {
        super("3.9.2", KafkaNode.AUTHORIZER_CLASS);
    }
}
