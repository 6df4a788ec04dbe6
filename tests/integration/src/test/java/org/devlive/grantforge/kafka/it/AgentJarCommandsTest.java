package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/** {@code java -jar <agent jar>} as a newcomer types it: one usage finds every command, and help is no error. */
class AgentJarCommandsTest {
    /** One line of the usage per command. */
    private static final List<String> COMMANDS = List.of("  explain ...", "  explain --quota ...", "  explain --principal-of ...",
            "  explain --disagreements ...", "  migrate-acls ...", "  check-config ...", "  break-glass ...");

    private record Run(int exitCode, String stdout, String stderr) {
    }

    private static Run jar(String... args) throws IOException, InterruptedException {
        Path java = Paths.get(System.getProperty("java.home"), "bin", "java");
        List<String> command = new ArrayList<>(List.of(java.toString(), "-jar", ItPaths.agentJar().toString()));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).start();
        process.getOutputStream().close();
        byte[] out = process.getInputStream().readAllBytes();
        byte[] err = process.getErrorStream().readAllBytes();
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "java -jar ends");
        return new Run(process.exitValue(), new String(out, StandardCharsets.UTF_8), new String(err, StandardCharsets.UTF_8));
    }

    private static void assertListsEveryCommand(String usage) {
        for (String command : COMMANDS) {
            assertTrue(usage.contains("\n" + command), "the usage lists `" + command.trim() + "`:\n" + usage);
        }
    }

    @Test
    void helpAndHelpFlagPrintOneUsageListingEveryCommand() throws Exception {
        Run help = jar("help");
        assertEquals(0, help.exitCode(), help.toString());
        assertListsEveryCommand(help.stdout());
        Run flag = jar("--help");
        assertEquals(0, flag.exitCode(), flag.toString());
        assertEquals(help.stdout(), flag.stdout());
    }

    @Test
    void explainDisagreementsNamesWhatItNeedsAndSaysWhenNoNodeAnswers() throws Exception {
        Run noJmx = jar("explain", "--disagreements");
        assertEquals(2, noJmx.exitCode(), noJmx.toString());
        assertTrue(noJmx.stderr().contains("needs --jmx HOST:PORT"), noJmx.stderr());
        Run nobody = jar("explain", "--disagreements", "--jmx", "127.0.0.1:" + Ports.free());
        assertEquals(3, nobody.exitCode(), nobody.toString());
        assertTrue(nobody.stderr().contains("cannot read the agent's MBean at 127.0.0.1:"), nobody.stderr());
    }

    @Test
    void noCommandOrAnUnknownOnePrintsTheSameUsageAsAnError() throws Exception {
        Run none = jar();
        assertEquals(2, none.exitCode(), none.toString());
        assertListsEveryCommand(none.stderr());
        Run unknown = jar("explian");
        assertEquals(2, unknown.exitCode(), unknown.toString());
        assertTrue(unknown.stderr().startsWith("unknown command `explian`\n"), unknown.stderr());
    }

    /** The README states the JAR's size as built with the libraries of every platform: it must stay true. */
    @Test
    void theReadmeStatesTheSizeOfTheJarAsBuilt() throws Exception {
        Path jar = ItPaths.agentJar();
        try (java.util.jar.JarFile contents = new java.util.jar.JarFile(jar.toFile())) {
            for (String platform : List.of("linux-x86_64", "linux-aarch64", "linux-musl-x86_64", "linux-musl-aarch64")) {
                assertTrue(contents.stream().anyMatch(e -> e.getName().contains("/native/" + platform + "/")),
                        jar + " lacks the library of " + platform + ": build every platform (unset GF_NATIVE_PLATFORMS)");
            }
        }
        Path readme = ItPaths.fixtures().resolve("../../README.md").normalize();
        java.util.regex.Matcher stated = java.util.regex.Pattern.compile("grantforge-agent-kafka-<version>\\.jar` \\(([0-9.]+) MB")
                .matcher(java.nio.file.Files.readString(readme));
        assertTrue(stated.find(), "README.md states the JAR's size");
        double measured = java.nio.file.Files.size(jar) / 1e6;
        assertEquals(Double.parseDouble(stated.group(1)), measured, 0.1,
                "README.md says " + stated.group(1) + " MB; the JAR has " + String.format("%.2f", measured) + " MB");
    }

    /**
     * {@code docs/compatibility.md} shows the build's check of each library with its size: each stated size is that of
     * the library in the JAR, within 5 % (the figure is an example of the output, not a contract to the KiB).
     */
    @Test
    void theCompatibilityPageStatesTheSizeOfEachLibraryAsBuilt() throws Exception {
        Path jar = ItPaths.agentJar();
        Path page = ItPaths.fixtures().resolve("../../docs/compatibility.md").normalize();
        java.util.regex.Matcher stated = java.util.regex.Pattern.compile("/(linux-[a-z0-9_-]+)/libgrantforge_kafka_jni\\.so \\(\\1, ([0-9]+) KiB\\)")
                .matcher(java.nio.file.Files.readString(page));
        int checked = 0;
        try (java.util.jar.JarFile contents = new java.util.jar.JarFile(jar.toFile())) {
            while (stated.find()) {
                String platform = stated.group(1);
                java.util.jar.JarEntry library = contents.stream()
                        .filter(e -> e.getName().endsWith("/native/" + platform + "/libgrantforge_kafka_jni.so")).findFirst()
                        .orElseThrow(() -> new AssertionError(jar + " lacks the library of " + platform));
                long measuredKib = library.getSize() / 1024;
                long statedKib = Long.parseLong(stated.group(2));
                assertTrue(Math.abs(measuredKib - statedKib) <= statedKib / 20,
                        "docs/compatibility.md says " + statedKib + " KiB for " + platform + "; the JAR's is " + measuredKib + " KiB");
                checked++;
            }
        }
        assertEquals(4, checked, "docs/compatibility.md shows the check of the four libraries");
    }

    @Test
    void eachCommandsHelpIsItsUsageAndExitsZero() throws Exception {
        Run explain = jar("explain", "--help");
        assertEquals(0, explain.exitCode(), explain.toString());
        assertTrue(explain.stdout().startsWith("usage: explain"), explain.stdout());
        assertTrue(explain.stdout().contains("--quota") && explain.stdout().contains("--principal-of"), explain.stdout());
        Run migrate = jar("migrate-acls", "--help");
        assertEquals(0, migrate.exitCode(), migrate.toString());
        assertTrue(migrate.stdout().startsWith("usage: migrate-acls"), migrate.stdout());
        Run checkConfig = jar("check-config", "--help");
        assertEquals(0, checkConfig.exitCode(), checkConfig.toString());
        assertTrue(checkConfig.stdout().startsWith("usage: check-config"), checkConfig.stdout());
        Run breakGlass = jar("break-glass", "--help");
        assertEquals(0, breakGlass.exitCode(), breakGlass.toString());
        assertTrue(breakGlass.stdout().startsWith("usage: break-glass"), breakGlass.stdout());
    }

    /**
     * {@code break-glass} hands a file only to a running node: one that no node takes within the wait is withdrawn
     * (nothing stays in the directory for a later start to find), and the command says what to check.
     */
    @Test
    void breakGlassWithoutARunningNodeWithdrawsTheRequestAndSaysSo() throws Exception {
        Path dir = java.nio.file.Files.createTempDirectory("gf-break-glass-");
        Path file = dir.getParent().resolve(dir.getFileName() + "-incident.json");
        java.nio.file.Files.writeString(file, "{}");
        java.nio.file.Files.writeString(Path.of(file + ".sig"), "c2ln");
        try {
            Run nobody = jar("break-glass", "--dir", dir.toString(), "--file", file.toString(), "--wait-seconds", "1");
            assertEquals(3, nobody.exitCode(), nobody.toString());
            assertTrue(nobody.stderr().contains("no running node took the request within 1 s, so it is withdrawn")
                && nobody.stderr().contains("grantforge.break.glass.dir=" + dir), nobody.stderr());
            try (java.util.stream.Stream<Path> left = java.nio.file.Files.list(dir)) {
                assertEquals(List.of(), left.toList(), "nothing is left for a later start");
            }
            Run unsigned = jar("break-glass", "--dir", dir.toString(), "--file", dir.resolve("missing.json").toString());
            assertEquals(1, unsigned.exitCode(), unsigned.toString());
            assertTrue(unsigned.stderr().contains("missing.json does not exist"), unsigned.stderr());
        } finally {
            java.nio.file.Files.deleteIfExists(Path.of(file + ".sig"));
            java.nio.file.Files.deleteIfExists(file);
            java.nio.file.Files.deleteIfExists(dir);
        }
    }
}
