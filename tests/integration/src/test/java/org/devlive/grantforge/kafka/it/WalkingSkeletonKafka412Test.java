package org.devlive.grantforge.kafka.it;

/** {@link MonitorableWalkingSkeleton} on Kafka 4.1.2. */
class WalkingSkeletonKafka412Test extends MonitorableWalkingSkeleton {
    WalkingSkeletonKafka412Test() {
        super("4.1.2");
    }
}
