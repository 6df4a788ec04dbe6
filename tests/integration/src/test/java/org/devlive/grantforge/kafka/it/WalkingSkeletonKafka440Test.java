package org.devlive.grantforge.kafka.it;

/** {@link MonitorableWalkingSkeleton} on Kafka 4.4.0. */
class WalkingSkeletonKafka440Test extends MonitorableWalkingSkeleton {
    WalkingSkeletonKafka440Test() {
        super("4.4.0");
    }
}
