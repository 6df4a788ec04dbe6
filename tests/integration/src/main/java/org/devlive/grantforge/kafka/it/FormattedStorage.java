package org.devlive.grantforge.kafka.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.apache.kafka.common.Uuid;

/**
 * A node's storage, formatted by the release's own {@code StorageTool} once per run of the suite for each
 * release, set of roles and feature settings, and copied for every further node of that kind, in every test JVM.
 *
 * <p>{@code StorageTool format} is a JVM of its own (about two seconds of a core), and what it writes
 * depends only on those: {@code bootstrap.checkpoint} (the release's default feature levels) and
 * {@code meta.properties}, whose node id, cluster id and directory id are this node's own in every
 * copy (a new directory id each time, as a format would make). The first format of a kind is moved into
 * the run's folder of templates whole (a rename), so a test JVM sees a template complete or not at all;
 * two JVMs formatting the same kind at once keep the first one's. The run's folder is the one
 * {@value #TEMPLATES_PROPERTY} names (Maven gives every test JVM of one build the same new folder), or
 * else one of this JVM's own: a template never outlives the run that formatted it.
 */
final class FormattedStorage {

    /** Settings that change what a format writes: feature levels and the versions that set them. */
    private static final Pattern FEATURE_SETTING = Pattern.compile(".*(version|feature|unstable|kraft).*");
    private static final Set<String> IDENTITY = Set.of("node.id", "cluster.id", "directory.id");
    /** JVM system property: the folder of templates the test JVMs of one run share. */
    static final String TEMPLATES_PROPERTY = "grantforge.it.storage.templates";
    /** Without {@link #TEMPLATES_PROPERTY}: this JVM's own folder under the nodes' work folder. */
    private static final String OWN_FOLDER = ".storage-" + Uuid.randomUuid();

    private FormattedStorage() {
    }

    /** What a format of this node writes, apart from its identity: the release, roles and feature settings. */
    static String kind(KafkaDist dist, Map<String, String> serverProperties) {
        Map<String, String> features = new TreeMap<>();
        serverProperties.forEach((key, value) -> {
            if (key.equals("process.roles") || FEATURE_SETTING.matcher(key).matches()) {
                features.put(key, value);
            }
        });
        return dist.version() + " " + features;
    }

    /**
     * Makes {@code dataDir} formatted storage of node {@code nodeId} in cluster {@code clusterId}: a
     * copy of the first storage of this kind in {@code templatesRoot}, or, for the first, what {@code storageTool}
     * formats there.
     */
    static synchronized void prepare(String kind, Path dataDir, int nodeId, String clusterId, Path templatesRoot,
                                     Runnable storageTool) {
        try {
            Path template = templatesRoot.resolve(folderName(kind));
            if (!Files.isDirectory(template)) {
                storageTool.run();
                keepAsTemplate(dataDir, template);
                return;
            }
            copy(template, dataDir);
            Path meta = dataDir.resolve("meta.properties");
            Map<String, String> identity = Map.of("node.id", String.valueOf(nodeId), "cluster.id", clusterId,
                    "directory.id", Uuid.randomUuid().toString());
            List<String> lines = Files.readAllLines(meta, StandardCharsets.UTF_8).stream().map(line -> {
                String key = line.contains("=") ? line.substring(0, line.indexOf('=')) : "";
                return IDENTITY.contains(key) ? key + "=" + identity.get(key) : line;
            }).collect(Collectors.toList());
            Files.write(meta, lines, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot prepare the storage in " + dataDir, e);
        }
    }

    /**
     * Runs the release's {@code StorageTool format} for cluster {@code clusterId} with the node's {@code propertiesFile},
     * in {@code dir}: {@code javaCommand} is the JVM and class path to run it with.
     */
    static void format(List<String> javaCommand, String clusterId, Path propertiesFile, Path dir) {
        List<String> cmd = new ArrayList<>(javaCommand);
        cmd.addAll(List.of("kafka.tools.StorageTool", "format", "-t", clusterId, "-c", propertiesFile.toString()));
        Path out = dir.resolve("format.out");
        Process p = null;
        try {
            p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
                    .redirectOutput(out.toFile()).start();
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("StorageTool format did not finish in 120 s in " + dir + ":\n"
                        + KafkaNode.read(out));
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException("StorageTool format failed with exit code " + p.exitValue() + " in " + dir
                        + ":\n" + KafkaNode.read(out) + "\n" + KafkaNode.tail(dir.resolve("storage.log"), 40));
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while formatting", e);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot run StorageTool in " + dir, e);
        }
    }

    /** The run's folder of templates: {@value #TEMPLATES_PROPERTY}, or this JVM's own in {@code work}. */
    static Path templatesRoot(Path work) {
        String shared = System.getProperty(TEMPLATES_PROPERTY);
        return shared != null ? Path.of(shared) : work.resolve(OWN_FOLDER);
    }

    /**
     * A folder's name for {@code kind}: its characters that are safe in a path, the rest as {@code _}, and a hash of
     * the whole, so that kinds that differ only where {@code _} stands keep folders of their own.
     */
    static String folderName(String kind) {
        return kind.replaceAll("[^A-Za-z0-9.,=-]", "_") + "-" + Integer.toHexString(kind.hashCode());
    }

    private static void keepAsTemplate(Path formatted, Path template) throws IOException {
        Path staging = Files.createTempDirectory(Files.createDirectories(template.getParent()), "staging-");
        try {
            copy(formatted, staging);
            Files.move(staging, template, StandardCopyOption.ATOMIC_MOVE);
        } catch (FileSystemException anotherJvmKeptOne) {
            if (!Files.isDirectory(template)) {
                throw anotherJvmKeptOne;
            }
        } finally {
            if (Files.exists(staging)) {
                deleteTree(staging);
            }
        }
    }

    private static void deleteTree(Path root) throws IOException {
        try (Stream<Path> files = Files.walk(root)) {
            for (Path path : (Iterable<Path>) files.sorted(Comparator.reverseOrder())::iterator) {
                Files.delete(path);
            }
        }
    }

    private static void copy(Path from, Path to) throws IOException {
        Files.createDirectories(to);
        try (Stream<Path> files = Files.walk(from)) {
            for (Path source : (Iterable<Path>) files::iterator) {
                Path target = to.resolve(from.relativize(source).toString());
                if (Files.isDirectory(source)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(source, target);
                }
            }
        }
    }
}
