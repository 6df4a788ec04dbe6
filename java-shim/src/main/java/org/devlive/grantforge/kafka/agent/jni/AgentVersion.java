package org.devlive.grantforge.kafka.agent.jni;

/** The agent's version, from the JAR manifest ("dev" when run from classes). */
public final class AgentVersion {
    public static final String VERSION = version();

    private AgentVersion() {
    }

    private static String version() {
        String version = AgentVersion.class.getPackage().getImplementationVersion();
        return version == null ? "dev" : version;
    }
}
