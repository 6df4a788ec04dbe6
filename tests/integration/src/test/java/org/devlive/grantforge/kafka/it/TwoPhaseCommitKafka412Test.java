package org.devlive.grantforge.kafka.it;

class TwoPhaseCommitKafka412Test extends TwoPhaseCommit {
    TwoPhaseCommitKafka412Test() {
        super("4.1.2");
    }
}
