package org.devlive.grantforge.kafka.agent;

/** The agent's version, from the JAR manifest ("dev" when run from classes). */
final class AgentVersion {
    static final String VERSION = version();

    private AgentVersion() {
    }

    private static String version() {
        String version = AgentVersion.class.getPackage().getImplementationVersion();
        return version == null ? "dev" : version;
    }
}
