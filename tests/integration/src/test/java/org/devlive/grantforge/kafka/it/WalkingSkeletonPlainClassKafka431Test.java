package org.devlive.grantforge.kafka.it;

/** {@link PlainClassWalkingSkeleton} on Kafka 4.3.1. */
class WalkingSkeletonPlainClassKafka431Test extends PlainClassWalkingSkeleton {
    WalkingSkeletonPlainClassKafka431Test() {
        super("4.3.1");
    }
}
