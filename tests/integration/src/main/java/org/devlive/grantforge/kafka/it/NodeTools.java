package org.devlive.grantforge.kafka.it;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * The JVMs a test runs beside a node: the release's command-line tools ({@code kafka-acls},
 * {@code kafka-configs}, the performance tools) and the agent JAR's commands, each in a JVM of its own
 * on the release's classpath, its output in the node's directory ({@code tool-N.out}, {@code tool-N.err}).
 */
final class NodeTools {

    /**
     * C1's code and the serial collector: for the nodes, whose clients mostly wait, and every JVM that lives seconds,
     * C2's compiling and G1's threads would cost more CPU than they save.
     */
    static final List<String> C1_AND_SERIAL_GC = List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1");

    /** The JVM options of a JVM that lives seconds (a tool, a format, the agent's commands). */
    static final List<String> SHORT_LIVED_JVM = Stream.concat(Stream.of("-Xmx256m"), C1_AND_SERIAL_GC.stream()).toList();

    /** The JDK the test runs on, which runs the JVMs whose work does not depend on the node's (formats, commands). */
    static final Path HOST_JAVA_HOME = Paths.get(System.getProperty("java.home"));

    /** Numbers each tool run's output files in the node's directory. */
    private static final AtomicLong RUNS = new AtomicLong();

    private final KafkaNode node;

    NodeTools(KafkaNode node) {
        this.node = node;
    }

    /**
     * Runs one of the release's command-line tools as its {@code bin/} script does: {@code mainClass} in a JVM
     * of its own on the release's classpath, with {@code --bootstrap-server} of this node and
     * {@code --command-config} with {@code user}'s client settings before {@code args}. A tool ends by returning
     * from {@code main} or through Kafka's {@code Exit} (a {@code System.exit}), so the exit code is the JVM's.
     */
    ToolRun runTool(String user, String mainClass, List<String> args) {
        List<String> withConnection = new ArrayList<>(List.of("--bootstrap-server", node.bootstrapServers(),
                "--command-config", clientConfigFile(user).toString()));
        withConnection.addAll(args);
        return runJava(mainClass, SHORT_LIVED_JVM, withConnection, Duration.ofSeconds(120));
    }

    /**
     * The start of a command that runs a JVM of a few seconds on the test's own JDK ({@link #SHORT_LIVED_JVM}); the
     * caller adds the class path or JAR and the arguments.
     */
    static List<String> shortLivedJava() {
        List<String> command = new ArrayList<>();
        command.add(HOST_JAVA_HOME.resolve("bin").resolve("java").toString());
        command.addAll(SHORT_LIVED_JVM);
        return command;
    }

    /** Writes {@code user}'s client settings ({@link KafkaNode#clientProps(String)}) to a file in the node's directory. */
    Path clientConfigFile(String user) {
        try {
            Path file = node.dir().resolve("tool-" + user + ".properties");
            StringBuilder props = new StringBuilder();
            node.clientProps(user).forEach((k, v) -> props.append(k).append('=')
                    .append(NodeFiles.escapeProperty(v.toString())).append('\n'));
            Files.writeString(file, props.toString(), StandardCharsets.UTF_8);
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot write the client settings of " + user + " in " + node.dir(), e);
        }
    }

    /**
     * Runs {@code mainClass} of the release (a tool such as {@code ProducerPerformance}) in a JVM of its own on the
     * release's classpath with these JVM options and arguments, and waits for it at most {@code timeout}.
     */
    ToolRun runJava(String mainClass, List<String> jvmOptions, List<String> args, Duration timeout) {
        return runJava(node.dist().classpath(), mainClass, jvmOptions, args, timeout);
    }

    /**
     * Runs one of the agent's commands ({@code explain}, {@code migrate-acls}) as the docs do when it needs Kafka's
     * classes: the agent JAR's {@code Main} with the release's jars on the class path.
     */
    ToolRun runAgentCommand(List<String> jvmOptions, List<String> args) {
        List<String> options = new ArrayList<>(SHORT_LIVED_JVM);
        options.addAll(jvmOptions);
        return runJava(node.agentJar().toAbsolutePath() + File.pathSeparator + node.dist().classpath(),
                "org.devlive.grantforge.kafka.agent.tools.Main", options, args, Duration.ofSeconds(120));
    }

    private ToolRun runJava(String classpath, String mainClass, List<String> jvmOptions, List<String> args, Duration timeout) {
        Path dir = node.dir();
        try {
            String cp = classpath + File.pathSeparator + node.launcherDir();
            List<String> cmd = node.javaCommand("tool", cp, jvmOptions);
            cmd.add(mainClass);
            cmd.addAll(args);
            long run = RUNS.incrementAndGet();
            Path out = dir.resolve("tool-" + run + ".out");
            Path err = dir.resolve("tool-" + run + ".err");
            ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile())
                    .redirectOutput(out.toFile()).redirectError(err.toFile());
            pb.environment().remove("KAFKA_OPTS");
            pb.environment().remove("CLASSPATH");
            Process p = pb.start();
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(mainClass + " did not finish in " + timeout.toSeconds() + " s: "
                        + String.join(" ", cmd) + "\n" + KafkaNode.read(out) + "\n" + KafkaNode.read(err));
            }
            return new ToolRun(p.exitValue(), KafkaNode.read(out), KafkaNode.read(err));
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot run " + mainClass + " in " + dir, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while running " + mainClass, e);
        }
    }
}
