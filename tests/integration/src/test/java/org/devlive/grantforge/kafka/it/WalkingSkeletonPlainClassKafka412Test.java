package org.devlive.grantforge.kafka.it;

/** {@link PlainClassWalkingSkeleton} on Kafka 4.1.2. */
class WalkingSkeletonPlainClassKafka412Test extends PlainClassWalkingSkeleton {
    WalkingSkeletonPlainClassKafka412Test() {
        super("4.1.2");
    }
}
