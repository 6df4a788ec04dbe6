package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent's native library loads where brokers run (JDK 17, 21 and 25, a library named by
 * {@code grantforge.native.library.path}) and, where it cannot, the broker refuses to start with one
 * ERROR line naming the cause and the key to set (noexec temp directory, another platform, a library
 * of another agent version).
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class NativeLibraryLoadingTest {
    /** The JDK 25 to start nodes with: {@code -Dgrantforge.it.jdk25=<java home>}; the tests skip when it is not there. */
    private static final Path JDK25 = Paths.get(System.getProperty("grantforge.it.jdk25", "/usr/lib/jvm/temurin-25-jdk-amd64"));
    /**
     * The JDK the official apache/kafka image runs, 21: {@code scripts/install-test-platforms} links a Temurin 21 runtime
     * as {@code jdk21} in the project's tools folder; {@code -Dgrantforge.it.jdk21=<java home>} names another.
     */
    private static final Path JDK21 = Paths.get(System.getProperty("grantforge.it.jdk21", toolsDir().resolve("jdk21").toString()));
    private static final String LIBRARY_IN_JAR = "org/devlive/grantforge/kafka/agent/jni/native/linux-x86_64/libgrantforge_kafka_jni.so";
    private static final String KEY = "grantforge.native.library.path";

    @TempDir
    Path tmp;

    private static KafkaNode.Builder node(String name) {
        return KafkaNode.builder().name(name).policyFile(ItPaths.snapshot("e2e.json"));
    }

    @Test
    void startsAndDecidesOnJdk25WithNativeAccessEnabled() throws Exception {
        assumeTrue(Files.isExecutable(JDK25.resolve("bin/java")), "a JDK 25 at " + JDK25 + " (set -Dgrantforge.it.jdk25)");
        try (KafkaNode node = node("jdk25").javaHome(JDK25).jvmArg("--enable-native-access=ALL-UNNAMED").start()) {
            assertTrue(node.logText().contains("GrantForge agent " + ItPaths.AGENT_VERSION + " configured on Java 25"), node.diagnostics());
            assertTrue(node.logText().contains("applied policy version 1 of service kafka-demo"), node.diagnostics());
            assertFalse(node.consoleText().contains("restricted method"), "the flag silences JEP 472's warning:\n" + node.consoleText());
            aliceProducesToOrders(node);
        }
    }

    @Test
    void startsAndDecidesOnJdk21AsTheOfficialImageRunsIt() throws Exception {
        assertTrue(Files.isExecutable(JDK21.resolve("bin/java")), "a JDK 21 at " + JDK21
                + ": run scripts/install-test-platforms, or set -Dgrantforge.it.jdk21");
        try (KafkaNode node = node("jdk21").javaHome(JDK21).start()) {
            assertTrue(node.logText().contains("GrantForge agent " + ItPaths.AGENT_VERSION + " configured on Java 21"), node.diagnostics());
            assertTrue(node.logText().contains("applied policy version 1 of service kafka-demo"), node.diagnostics());
            aliceProducesToOrders(node);
        }
    }

    /** Where scripts/ keep the tools they install: {@code GF_TOOLS_DIR}, else the user's cache. */
    private static Path toolsDir() {
        String tools = System.getenv("GF_TOOLS_DIR");
        if (tools != null) {
            return Paths.get(tools);
        }
        String cache = System.getenv("XDG_CACHE_HOME");
        return (cache != null ? Paths.get(cache) : Paths.get(System.getProperty("user.home"), ".cache")).resolve("grantforge-kafka/tools");
    }

    @Test
    void onJdk25WithoutTheFlagTheAgentLoadsAndTheJdkWarns() throws Exception {
        assumeTrue(Files.isExecutable(JDK25.resolve("bin/java")), "a JDK 25 at " + JDK25 + " (set -Dgrantforge.it.jdk25)");
        try (KafkaNode node = node("jdk25-no-flag").javaHome(JDK25).start()) {
            assertTrue(node.logText().contains("GrantForge agent " + ItPaths.AGENT_VERSION + " configured on Java 25"), node.diagnostics());
            assertTrue(node.consoleText().contains("--enable-native-access"), "JEP 472 warns:\n" + node.consoleText());
        }
    }

    @Test
    void theBundledLibraryLeavesNothingInTheTempDirectory() throws Exception {
        Path tempDir = Files.createDirectories(tmp.resolve("java-tmp"));
        try (KafkaNode node = node("temp-clean").jvmArg("-Djava.io.tmpdir=" + tempDir).start()) {
            assertTrue(node.logText().contains("(native library from the agent JAR, linux-x86_64)"), node.diagnostics());
            try (Stream<Path> left = Files.list(tempDir)) {
                List<Path> libraries = left.filter(p -> p.getFileName().toString().endsWith(".so")).collect(Collectors.toList());
                assertEquals(List.of(), libraries, "the extracted library is deleted right after loading");
            }
        }
    }

    @Test
    void anExplicitLibraryPathIsUsed() throws Exception {
        Path library = extractLibrary();
        try (KafkaNode node = node("explicit-path").property(KEY, library.toString()).start()) {
            assertTrue(node.logText().contains("(native library from " + KEY + "=" + library + ")"), node.diagnostics());
            aliceProducesToOrders(node);
        }
    }

    @Test
    void aNoexecTempDirectoryStopsTheBrokerNamingTheKey() throws Exception {
        Path mount = Files.createDirectories(tmp.resolve("noexec"));
        assumeTrue(run("mount", "-t", "tmpfs", "-o", "noexec,size=16m", "tmpfs", mount.toString()) == 0,
            "mounting a noexec tmpfs needs root");
        try {
            assertRefusesToStart(node("noexec").jvmArg("-Djava.io.tmpdir=" + mount), KEY, "noexec");
        } finally {
            run("umount", mount.toString());
        }
    }

    @Test
    void anUnsupportedPlatformStopsTheBrokerNamingTheKey() {
        assertRefusesToStart(node("other-arch").jvmArg("-Dos.arch=sparcv9"), KEY, "linux-sparcv9");
    }

    @Test
    void aLibraryOfAnotherAgentVersionStopsTheBrokerNamingTheKey() throws Exception {
        Path source = tmp.resolve("other_version.c");
        Files.writeString(source, "#include <jni.h>\n"
            + "JNIEXPORT jint JNICALL Java_org_devlive_grantforge_kafka_agent_jni_NativeAgent_abiVersion(JNIEnv *e, jclass c) { return 99; }\n");
        Path library = tmp.resolve("libother_version.so");
        Path jdk = Paths.get(System.getProperty("java.home"));
        assumeTrue(run("gcc", "-shared", "-fPIC", "-I" + jdk.resolve("include"), "-I" + jdk.resolve("include/linux"),
            "-o", library.toString(), source.toString()) == 0, "gcc and the JDK's JNI headers build a stand-in library");
        assertRefusesToStart(node("other-version").property(KEY, library.toString()), KEY, "ABI 99");
    }

    @Test
    void aLibraryOfAnotherProgramStopsTheBrokerNamingTheKey() throws Exception {
        Path source = tmp.resolve("another_program.c");
        Files.writeString(source, "int another_program(void) { return 1; }\n");
        Path library = tmp.resolve("libanother_program.so");
        assumeTrue(run("gcc", "-shared", "-fPIC", "-o", library.toString(), source.toString()) == 0,
            "gcc builds a stand-in library");
        assertRefusesToStart(node("another-program").property(KEY, library.toString()), KEY, "is not the GrantForge agent's");
    }

    @Test
    void aFileThatIsNoLibraryStopsTheBrokerNamingTheKey() {
        Path notALibrary = ItPaths.snapshot("e2e.json");
        assertRefusesToStart(node("not-a-library").property(KEY, notALibrary.toString()), KEY, notALibrary.toString());
    }

    private static void aliceProducesToOrders(KafkaNode node) throws Exception {
        try (var admin = node.admin(KafkaNode.SUPER_USER)) {
            admin.createTopics(List.of(new org.apache.kafka.clients.admin.NewTopic("orders", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        try (KafkaProducer<String, String> producer = node.producer("alice")) {
            producer.send(new ProducerRecord<>("orders", "k", "v")).get(30, TimeUnit.SECONDS);
        }
    }

    private Path extractLibrary() throws IOException {
        Path library = tmp.resolve("libgrantforge_kafka_jni.so");
        try (JarFile jar = new JarFile(ItPaths.agentJar().toFile());
             InputStream in = jar.getInputStream(jar.getEntry(LIBRARY_IN_JAR))) {
            Files.copy(in, library);
        }
        return library;
    }

    private static void assertRefusesToStart(KafkaNode.Builder builder, String... mustName) {
        try (KafkaNode node = builder.build()) {
            node.launch();
            int exitCode = node.awaitExit(Duration.ofSeconds(60));
            assertNotEquals(0, exitCode, node.diagnostics());
            assertFalse(node.logText().contains(KafkaNode.STARTED_MESSAGE), node.diagnostics());
            List<String> naming = node.logLines().stream()
                .filter(l -> l.contains(" ERROR ") && l.contains("[org.devlive.grantforge"))
                .filter(l -> Stream.of(mustName).allMatch(l::contains))
                .collect(Collectors.toList());
            assertEquals(1, naming.size(), "one ERROR line of the agent names " + List.of(mustName) + "\n" + node.diagnostics());
        }
    }

    /** Runs a tool; a tool that is not installed answers 127, as a shell would, so the test skips instead of erroring. */
    private static int run(String... command) throws IOException, InterruptedException {
        Process process;
        try {
            process = new ProcessBuilder(command).redirectErrorStream(true).start();
        } catch (IOException e) {
            System.err.println(String.join(" ", command) + " -> not run: " + e.getMessage());
            return 127;
        }
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        int code = process.waitFor();
        if (code != 0) {
            System.err.println(String.join(" ", command) + " -> " + code + ": " + output);
        }
        return code;
    }
}
