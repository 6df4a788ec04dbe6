package org.devlive.grantforge.kafka.it;

/** {@link MonitorableWalkingSkeleton} on Kafka 4.3.1. */
class WalkingSkeletonKafka431Test extends MonitorableWalkingSkeleton {
    WalkingSkeletonKafka431Test() {
        super("4.3.1");
    }
}
