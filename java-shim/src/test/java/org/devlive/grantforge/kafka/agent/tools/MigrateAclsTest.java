package org.devlive.grantforge.kafka.agent.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** {@code migrate-acls} refuses incomplete command lines before it loads anything or connects anywhere. */
class MigrateAclsTest {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) {
        return MigrateAcls.run(args, new PrintStream(out, true), new PrintStream(err, true));
    }

    private String err() {
        return new String(err.toByteArray(), StandardCharsets.UTF_8);
    }

    @Test
    void helpPrintsTheUsageAndHowToPutKafkasJarsOnTheClasspath() {
        assertEquals(0, run("--help"));
        String usage = new String(out.toByteArray(), StandardCharsets.UTF_8);
        assertTrue(usage.contains("--bootstrap-server") && usage.contains("$KAFKA_HOME/libs/*"), usage);
    }

    @Test
    void aCommandLineWithoutBootstrapServerOrOutputIsAUsageError() {
        assertEquals(2, run("--out", "dir"));
        assertTrue(err().contains("give --bootstrap-server"), err());
        assertEquals(2, run("--bootstrap-server", "b:9092"));
        assertEquals(2, run("--bootstrap-server", "b:9092", "--verify"), "verify without a snapshot to verify");
    }

    @Test
    void unknownOptionsAndBadNumbersAreUsageErrors() {
        assertEquals(2, run("--bootstrap-server", "b:9092", "--out", "dir", "--frobnicate"));
        assertTrue(err().contains("unknown or incomplete option `--frobnicate`"), err());
        assertEquals(2, run("--bootstrap-server", "b:9092", "--out", "dir", "--max-questions", "many"));
        assertTrue(err().contains("--max-questions takes a number"), err());
        assertEquals(2, run("--bootstrap-server"), "an option without its value");
    }
}
