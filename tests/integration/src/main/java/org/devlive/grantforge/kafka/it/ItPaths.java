package org.devlive.grantforge.kafka.it;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Properties;

/** Where the agent JAR and the fixtures are: from system properties, else found from the working directory. */
public final class ItPaths {

    public static final String AGENT_JAR_PROPERTY = "grantforge.agent.jar";
    public static final String FIXTURES_PROPERTY = "grantforge.fixtures";
    /** The agent's version: the project's ({@code pom.xml}), which the build writes into the harness. */
    public static final String AGENT_VERSION = agentVersion();
    public static final String AGENT_JAR_NAME = "grantforge-agent-kafka-" + AGENT_VERSION + ".jar";

    private ItPaths() {
    }

    /** The agent JAR ({@value #AGENT_JAR_PROPERTY}, else {@code agents/kafka/grantforge-agent-kafka-<version>.jar}). */
    public static Path agentJar() {
        String configured = System.getProperty(AGENT_JAR_PROPERTY);
        if (configured != null && !configured.isBlank()) {
            return Paths.get(configured).toAbsolutePath().normalize();
        }
        return findFromWorkingDir(Paths.get("agents", "kafka", AGENT_JAR_NAME),
                Paths.get("..", "..", "agents", "kafka", AGENT_JAR_NAME));
    }

    private static String agentVersion() {
        try (InputStream in = ItPaths.class.getResourceAsStream("/grantforge-it/agent.properties")) {
            if (in == null) {
                throw new IllegalStateException("resource grantforge-it/agent.properties is missing from the harness");
            }
            Properties properties = new Properties();
            properties.load(in);
            return properties.getProperty("version");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static boolean agentJarExists() {
        return Files.isRegularFile(agentJar());
    }

    /** The fixtures directory ({@value #FIXTURES_PROPERTY}, else {@code tests/fixtures}). */
    public static Path fixtures() {
        String configured = System.getProperty(FIXTURES_PROPERTY);
        if (configured != null && !configured.isBlank()) {
            return Paths.get(configured).toAbsolutePath().normalize();
        }
        return findFromWorkingDir(Paths.get("tests", "fixtures"), Paths.get("..", "fixtures"));
    }

    /**
     * A directory that stands for an aarch64 JDK home on this machine: its {@code bin/java} runs Debian's arm64
     * JDK under qemu's user-mode emulation ({@code scripts/aarch64-java-home}).
     */
    public static Path aarch64JavaHome() {
        return findFromWorkingDir(Paths.get("scripts", "aarch64-java-home"), Paths.get("..", "..", "scripts", "aarch64-java-home"));
    }

    /** A file of the repository, by its path from the root ({@code deploy/...}, {@code docs/...}). */
    public static Path inRepo(String path) {
        return findFromWorkingDir(Paths.get(path), Paths.get("..", "..").resolve(path));
    }

    public static Path snapshot(String name) {
        return fixtures().resolve("snapshots").resolve(name);
    }

    /** Deletes {@code dir} and everything under it; nothing when it does not exist. */
    public static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (java.util.stream.Stream<Path> walk = Files.walk(dir)) {
            for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    /** The first candidate that exists relative to the working directory (repository root or module dir). */
    static Path findFromWorkingDir(Path fromRepoRoot, Path fromModuleDir) {
        Path cwd = Paths.get("").toAbsolutePath();
        Path a = cwd.resolve(fromRepoRoot).normalize();
        if (Files.exists(a)) {
            return a;
        }
        Path b = cwd.resolve(fromModuleDir).normalize();
        if (Files.exists(b)) {
            return b;
        }
        return a;
    }
}
