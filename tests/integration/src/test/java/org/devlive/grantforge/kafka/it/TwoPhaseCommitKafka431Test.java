package org.devlive.grantforge.kafka.it;

class TwoPhaseCommitKafka431Test extends TwoPhaseCommit {
    TwoPhaseCommitKafka431Test() {
        super("4.3.1");
    }
}
