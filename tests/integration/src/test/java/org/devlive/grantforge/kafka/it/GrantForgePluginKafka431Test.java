package org.devlive.grantforge.kafka.it;

/** {@link GrantForgePluginAgainstKafka} on Kafka 4.3.1, the newest release the agent supports. */
class GrantForgePluginKafka431Test extends GrantForgePluginAgainstKafka {
    GrantForgePluginKafka431Test() {
        super("4.3.1");
    }
}
