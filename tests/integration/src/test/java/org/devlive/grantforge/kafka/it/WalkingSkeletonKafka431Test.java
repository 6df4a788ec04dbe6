package org.devlive.grantforge.kafka.it;

/** {@link WalkingSkeleton} on Kafka 4.3.1. */
class WalkingSkeletonKafka431Test extends WalkingSkeleton {
    WalkingSkeletonKafka431Test() {
        super("4.3.1");
    }
}
