package org.devlive.grantforge.kafka.it;

/** {@link GrantForgePluginAgainstKafka} on Kafka 3.7.2, the oldest release the agent supports. */
class GrantForgePluginKafka372Test extends GrantForgePluginAgainstKafka {
    GrantForgePluginKafka372Test() {
        super("3.7.2");
    }
}
