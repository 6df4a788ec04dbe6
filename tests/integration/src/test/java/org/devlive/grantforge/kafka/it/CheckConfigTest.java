package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A {@code Monitorable…} class of the JAR named in {@code server.properties} of a Kafka without plugin metrics
 * (3.7.2): Kafka's own {@code kafka-storage format} stops with a bare {@code NoClassDefFoundError} that names no key,
 * as {@code docs/operations.md} says, and the JAR's {@code check-config}, run before it with the same jars, names
 * the key and the class to name instead; on Kafka 4.3.1 the same file passes. {@code check-config} also has the agent
 * check its own settings as the node's start would: {@code super.users} written with commas is named with its fix.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class CheckConfigTest {
    private static final String MONITORABLE_CALLBACK = "org.devlive.grantforge.kafka.agent.MonitorableGrantForgeClientQuotaCallback";
    private static final String PLAIN_CALLBACK = "org.devlive.grantforge.kafka.agent.GrantForgeClientQuotaCallback";
    private static final String MISSING = "java.lang.NoClassDefFoundError: org/apache/kafka/common/metrics/Monitorable";

    @TempDir
    Path work;

    private record Run(int exitCode, String stdout, String stderr) {
        String all() {
            return "exit code " + exitCode + "\nstdout:\n" + stdout + "\nstderr:\n" + stderr;
        }
    }

    /** {@code mainClass} with the agent JAR and {@code kafkaVersion}'s jars on the class path, as in a node's libs/. */
    private Run java(String kafkaVersion, String mainClass, String... args) throws IOException, InterruptedException {
        Path java = Paths.get(System.getProperty("java.home"), "bin", "java");
        String classpath = ItPaths.agentJar().toAbsolutePath() + File.pathSeparator + KafkaDist.of(kafkaVersion).classpath();
        List<String> command = new ArrayList<>(List.of(java.toString(), "-cp", classpath, mainClass));
        command.addAll(List.of(args));
        Path out = Files.createTempFile(work, "out", ".txt");
        Path err = Files.createTempFile(work, "err", ".txt");
        Process process = new ProcessBuilder(command).directory(work.toFile())
                .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        process.getOutputStream().close();
        assertTrue(process.waitFor(90, TimeUnit.SECONDS), "ends: " + command);
        return new Run(process.exitValue(), Files.readString(out, StandardCharsets.UTF_8), Files.readString(err, StandardCharsets.UTF_8));
    }

    /** A single KRaft node's settings with the agent, naming the Kafka 4.1 quota callback. */
    private Path serverProperties(String... more) throws IOException {
        Path file = work.resolve("server.properties");
        Files.writeString(file, String.join("\n",
                "process.roles=broker,controller",
                "node.id=1",
                "controller.quorum.voters=1@127.0.0.1:" + Ports.free(),
                "listeners=PLAINTEXT://127.0.0.1:" + Ports.free() + ",CONTROLLER://127.0.0.1:" + Ports.free(),
                "controller.listener.names=CONTROLLER",
                "log.dirs=" + work.resolve("data"),
                "authorizer.class.name=org.devlive.grantforge.kafka.agent.GrantForgeKafkaAuthorizer",
                "super.users=User:admin",
                "grantforge.policy.file=" + ItPaths.snapshot("e2e.json").toAbsolutePath(),
                "client.quota.callback.class=" + MONITORABLE_CALLBACK,
                String.join("\n", more),
                ""), StandardCharsets.UTF_8);
        return file;
    }

    @Test
    void kafkasStorageToolDiesWithABareErrorWhereCheckConfigNamesTheKeyAndTheFix() throws Exception {
        Path server = serverProperties();

        Run format = java("3.7.2", "kafka.tools.StorageTool", "format", "-t", "p8fFEbKGQ22B6M_Da_vCBw", "-c", server.toString());
        assertNotEquals(0, format.exitCode(), format.all());
        assertTrue(format.all().contains(MISSING), "Kafka's error: " + format.all());
        assertFalse(format.all().contains("client.quota.callback.class"), "Kafka's error names no key: " + format.all());

        Run check = java("3.7.2", "org.devlive.grantforge.kafka.agent.tools.Main", "check-config", server.toString());
        assertEquals(1, check.exitCode(), check.all());
        assertTrue(check.stderr().contains("client.quota.callback.class = " + MONITORABLE_CALLBACK + " cannot load on this Kafka ("
                + MISSING + "): it needs Kafka 4.1's plugin metrics, which Kafka 3.7 to 4.0 lack; name " + PLAIN_CALLBACK
                + " there"), check.all());
    }

    @Test
    void theSameSettingsPassOnKafka431() throws Exception {
        Run check = java("4.3.1", "org.devlive.grantforge.kafka.agent.tools.Main", "check-config", serverProperties().toString());
        assertEquals(0, check.exitCode(), check.all());
        assertTrue(check.stdout().contains("authorizer.class.name and client.quota.callback.class load on this Kafka, and the"
                + " agent accepts its settings"), check.all());
    }

    @Test
    void theAgentsOwnSettingsAreCheckedAsTheNodesStartWould() throws Exception {
        Run check = java("4.3.1", "org.devlive.grantforge.kafka.agent.tools.Main", "check-config",
                serverProperties("super.users=User:admin,User:kafka", "grantforge.token=whatever").toString());
        assertEquals(1, check.exitCode(), check.all());
        assertTrue(check.stderr().contains("the agent would not start: "), check.all());
        // the agent names the first problem it meets, as the node's start would
        assertTrue(check.stderr().contains("grantforge.token: is not a setting of the GrantForge agent (did you mean"
                + " grantforge.token.file?)"), check.all());
        assertFalse(check.all().contains("whatever"), "a value is never shown: " + check.all());

        Run commas = java("4.3.1", "org.devlive.grantforge.kafka.agent.tools.Main", "check-config",
                serverProperties("super.users=User:admin,User:kafka").toString());
        assertEquals(1, commas.exitCode(), commas.all());
        assertTrue(commas.stderr().contains("super.users: ") && commas.stderr().contains("super.users=User:admin;User:kafka"),
                commas.all());
    }
}
