package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The harness's formatted storage: one format per kind in a run, copied for every later node with its own identity. */
class FormattedStorageTest {
    private static final String KIND = "4.3.1 {process.roles=broker,controller}";

    @TempDir
    Path work;

    private final AtomicInteger formats = new AtomicInteger();

    @Test
    void theFirstNodeOfAKindIsFormattedAndTheNextIsACopyWithItsOwnIdentity() throws IOException {
        Path first = work.resolve("first");
        FormattedStorage.prepare(KIND, first, 1, "cluster-a", templates(), () -> format(first, 1, "cluster-a"));
        Path second = work.resolve("second");
        FormattedStorage.prepare(KIND, second, 2, "cluster-b", templates(), () -> format(second, 2, "cluster-b"));

        assertEquals(1, formats.get(), "one format for two nodes of one kind");
        assertEquals("the release's features", Files.readString(second.resolve("bootstrap.checkpoint")));
        Properties firstMeta = meta(first);
        Properties secondMeta = meta(second);
        assertEquals("2", secondMeta.getProperty("node.id"));
        assertEquals("cluster-b", secondMeta.getProperty("cluster.id"));
        assertEquals("1", secondMeta.getProperty("version"), "what the format wrote besides the identity stays");
        assertNotEquals(firstMeta.getProperty("directory.id"), secondMeta.getProperty("directory.id"),
            "each copy has a directory id of its own, as a format would give it");
    }

    @Test
    void aTemplateThatAnotherTestJvmKeptIsCopiedWithoutAFormat() throws IOException {
        Path another = work.resolve("another-jvm");
        format(another, 1, "cluster-a");
        Files.move(another, Files.createDirectories(templates()).resolve(FormattedStorage.folderName(KIND)));
        formats.set(0);

        Path node = work.resolve("node");
        FormattedStorage.prepare(KIND, node, 3, "cluster-c", templates(), () -> format(node, 3, "cluster-c"));

        assertEquals(0, formats.get(), "the run's template is used, whichever JVM formatted it");
        assertEquals("3", meta(node).getProperty("node.id"));
    }

    @Test
    void whenTwoJvmsFormatOneKindAtOnceTheFirstTemplateIsKept() throws IOException {
        Path template = templates().resolve(FormattedStorage.folderName(KIND));
        Path node = work.resolve("node");
        FormattedStorage.prepare(KIND, node, 4, "cluster-d", templates(), () -> {
            format(node, 4, "cluster-d");
            // another test JVM finishes its format of the same kind while this one still runs
            Path other = work.resolve("other-jvm");
            format(other, 9, "cluster-other");
            try {
                Files.move(other, Files.createDirectories(template.getParent()).resolve(template.getFileName()));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });

        assertEquals("9", meta(template).getProperty("node.id"), "the first template stays whole");
        assertEquals("4", meta(node).getProperty("node.id"), "the node keeps its own format");
        try (var left = Files.list(template.getParent())) {
            assertTrue(left.allMatch(path -> path.equals(template)), "no staging folder is left behind");
        }
    }

    private Path templates() {
        return work.resolve(".storage");
    }

    /** What StorageTool writes, in short: the identity in meta.properties and the release's features. */
    private void format(Path dataDir, int nodeId, String clusterId) {
        formats.incrementAndGet();
        try {
            Files.createDirectories(dataDir);
            Files.writeString(dataDir.resolve("meta.properties"), "version=1\nnode.id=" + nodeId + "\ncluster.id="
                + clusterId + "\ndirectory.id=dir-" + nodeId + "\n", StandardCharsets.UTF_8);
            Files.writeString(dataDir.resolve("bootstrap.checkpoint"), "the release's features", StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Properties meta(Path dataDir) throws IOException {
        Properties meta = new Properties();
        try (var in = Files.newBufferedReader(dataDir.resolve("meta.properties"), StandardCharsets.UTF_8)) {
            meta.load(in);
        }
        return meta;
    }
}
