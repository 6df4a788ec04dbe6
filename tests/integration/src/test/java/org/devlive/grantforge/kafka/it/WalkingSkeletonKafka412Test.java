package org.devlive.grantforge.kafka.it;

/** {@link WalkingSkeleton} on Kafka 4.1.2. */
class WalkingSkeletonKafka412Test extends WalkingSkeleton {
    WalkingSkeletonKafka412Test() {
        super("4.1.2");
    }
}
