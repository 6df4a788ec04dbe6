package org.devlive.grantforge.kafka.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import org.junit.jupiter.api.Test;

/** {@code java -jar <agent jar> explain} goes through this native call. */
class ExplainTest {
    private static final String FIXTURE = Paths.get(System.getProperty("grantforge.fixtures", "../tests/fixtures"),
        "snapshots", "e2e.json").toString();

    private static String[] explain(String... args) {
        NativeLibraryLoader.load(null);
        byte[] answer = NativeAgent.explain(String.join("\0", args).getBytes(StandardCharsets.UTF_8), new byte[0]);
        return new String[] {String.valueOf(answer[0]), new String(answer, 1, answer.length - 1, StandardCharsets.UTF_8)};
    }

    @Test
    void explainsADecisionThroughTheNativeLibrary() {
        String[] answer = explain("--snapshot", FIXTURE, "--principal", "User:alice", "--operation", "WRITE", "--topic", "payments");
        assertEquals("0", answer[0]);
        assertTrue(answer[1].contains("decision: DENIED by policy 5 \"no payments for alice\" (NORMAL)"), answer[1]);
    }

    @Test
    void usageErrorsExitWithTwo() {
        assertEquals("2", explain("--snapshot", FIXTURE)[0]);
    }
}
