package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A client cannot grow a broker's memory through the names it asks about: Kafka hands the
 * authorizer group ids, transactional ids and topic names before it validates them, up to
 * {@code socket.request.max.bytes}. A principal with no rights asks about 2,000 unique 1 MiB
 * group names from 8 threads, through Kafka's {@code Authorizer} API in a JVM of its own (heap
 * fixed and touched up front, so what grows is native memory); every answer is DENIED and the
 * process's resident memory grows by less than 256 MiB (docs/benchmarks.md has the figures).
 */
class AuthorizerMemoryBoundTest {
    private static final long BOUND_BYTES = 256L << 20;

    @TempDir
    Path tmp;

    @Test
    void uniqueMegabyteGroupNamesFromEightThreadsAreRefusedWithinTheMemoryBound() throws Exception {
        Path policies = tmp.resolve("policies.json");
        Files.copy(ItPaths.snapshot("e2e.json"), policies);
        Path classes = tmp.resolve("flood");
        Path classFile = classes.resolve(AuthorizerFlood.class.getName().replace('.', '/') + ".class");
        Files.createDirectories(classFile.getParent());
        for (String name : new String[] {"AuthorizerFlood", "AuthorizerFlood$Work", "AuthorizerFlood$1"}) {
            try (InputStream in = AuthorizerFlood.class.getResourceAsStream(name + ".class")) {
                if (in != null) {
                    Files.copy(in, classFile.resolveSibling(name + ".class"));
                }
            }
        }
        String classpath = classes + File.pathSeparator + KafkaDist.defaultDist().classpath()
                + File.pathSeparator + ItPaths.agentJar().toAbsolutePath();
        List<String> command = new ArrayList<>();
        command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xms512m");
        command.add("-Xmx512m");
        command.add("-XX:+AlwaysPreTouch");
        command.add("-cp");
        command.add(classpath);
        command.add(AuthorizerFlood.class.getName());
        command.add(policies.toString());
        command.add("8");
        command.add("250");
        command.add(String.valueOf(1 << 20));
        Path output = tmp.resolve("flood.out");
        Process flood = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile()).start();
        assertTrue(flood.waitFor(5, TimeUnit.MINUTES), "the flood did not finish in 5 minutes");
        String text = new String(Files.readAllBytes(output), StandardCharsets.UTF_8);
        assertEquals(0, flood.exitValue(), text);
        Matcher m = Pattern.compile("flood questions=(\\d+) nameBytes=\\d+ denied=(\\d+) other=(\\d+) rssBefore=(\\d+) rssAfter=(\\d+)")
                .matcher(text);
        assertTrue(m.find(), text);
        assertEquals(2000, Long.parseLong(m.group(2)), "every question refused: " + text);
        assertEquals(0, Long.parseLong(m.group(3)), text);
        long grown = Long.parseLong(m.group(5)) - Long.parseLong(m.group(4));
        System.out.println("AuthorizerMemoryBoundTest: resident memory grew by " + (grown >> 20) + " MiB: " + m.group());
        assertTrue(grown < BOUND_BYTES, "resident memory grew by " + (grown >> 20) + " MiB (bound 256 MiB): " + text);
    }
}
