package org.devlive.grantforge.kafka.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;

/**
 * One Kafka release the tests can run: its server classpath (written by the Maven module
 * {@code tests/kafka-dists/kafka-<version>}) and the logging flavour its server uses
 * (reload4j with {@code -Dlog4j.configuration} for 3.x, Log4j2 with {@code -Dlog4j2.configurationFile}
 * for 4.x).
 */
public final class KafkaDist {

    /** System property naming the directory that holds the {@code kafka-<version>} modules. */
    public static final String DISTS_PROPERTY = "grantforge.kafka.dists";
    /** System property naming the Kafka version to run when a test does not choose one. */
    public static final String VERSION_PROPERTY = "grantforge.kafka.version";
    /** The releases the agent supports, oldest first (each has a module under {@code tests/kafka-dists}). */
    public static final List<String> RELEASES = List.of("3.7.2", "3.9.2", "4.1.2", "4.3.1", "4.4.0");
    /** The newest release, which runs when a test does not choose one. */
    public static final String DEFAULT_VERSION = RELEASES.get(RELEASES.size() - 1);

    private final String version;
    private final int major;
    private final Path classpathFile;

    private KafkaDist(String version, Path classpathFile) {
        this.version = version;
        this.major = parseMajor(version);
        this.classpathFile = classpathFile;
    }

    /** The version the run asks for ({@value #VERSION_PROPERTY}, default {@value #DEFAULT_VERSION}). */
    public static KafkaDist defaultDist() {
        return of(System.getProperty(VERSION_PROPERTY, DEFAULT_VERSION));
    }

    public static KafkaDist of(String version) {
        return new KafkaDist(version, distsDir().resolve("kafka-" + version).resolve("target").resolve("kafka.classpath"));
    }

    /** {@value #DISTS_PROPERTY}, or {@code tests/kafka-dists} found from the working directory. */
    public static Path distsDir() {
        String configured = System.getProperty(DISTS_PROPERTY);
        if (configured != null && !configured.isBlank()) {
            return Paths.get(configured).toAbsolutePath().normalize();
        }
        return ItPaths.findFromWorkingDir(Paths.get("tests", "kafka-dists"), Paths.get("..", "kafka-dists"));
    }

    public String version() {
        return version;
    }

    /**
     * The class {@code bin/kafka-acls.sh} of this release runs: Scala's {@code kafka.admin.AclCommand} in the
     * core jar of 3.x, {@code org.apache.kafka.tools.AclCommand} of kafka-tools from 4.0 (KIP-906's move of the
     * tools to Java).
     */
    public String aclCommandClass() {
        return major >= 4 ? "org.apache.kafka.tools.AclCommand" : "kafka.admin.AclCommand";
    }

    /** The class {@code bin/kafka-console-producer.sh} of this release runs: moved to kafka-tools in 4.0. */
    public String consoleProducerClass() {
        return major >= 4 ? "org.apache.kafka.tools.ConsoleProducer" : "kafka.tools.ConsoleProducer";
    }

    /**
     * The class {@code bin/kafka-configs.sh} of this release runs: Scala's {@code kafka.admin.ConfigCommand} in the
     * core jar up to 4.3, {@code org.apache.kafka.tools.ConfigCommand} of kafka-tools from 4.4.
     */
    public String configCommandClass() {
        return isAtLeast(4, 4) ? "org.apache.kafka.tools.ConfigCommand" : "kafka.admin.ConfigCommand";
    }

    /** Whether this release is {@code major.minor} or later. */
    private boolean isAtLeast(int wantedMajor, int wantedMinor) {
        String[] parts = version.split("\\.");
        int minor = parts.length > 1 ? Integer.parseInt(parts[1]) : 0;
        return major > wantedMajor || (major == wantedMajor && minor >= wantedMinor);
    }

    /** Kafka 4.0 moved the server to Log4j2. */
    public boolean usesLog4j2() {
        return major >= 4;
    }

    public Path classpathFile() {
        return classpathFile;
    }

    /** The server classpath (jars separated by the platform path separator). */
    public String classpath() {
        if (!Files.isRegularFile(classpathFile)) {
            throw new IllegalStateException("No Kafka " + version + " classpath at " + classpathFile
                    + "; build it first: mvn -B -q -pl tests/kafka-dists/kafka-" + version
                    + " install (or -f tests/kafka-dists/kafka-" + version + "/pom.xml install)");
        }
        try {
            String cp = Files.readString(classpathFile, StandardCharsets.UTF_8).trim();
            if (cp.isEmpty()) {
                throw new IllegalStateException("Kafka classpath file " + classpathFile + " is empty");
            }
            return cp;
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot read " + classpathFile, e);
        }
    }

    private static int parseMajor(String version) {
        int dot = version.indexOf('.');
        try {
            return Integer.parseInt(dot < 0 ? version : version.substring(0, dot));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("Not a Kafka version: " + version, e);
        }
    }

    @Override
    public String toString() {
        return "Kafka " + version;
    }
}
