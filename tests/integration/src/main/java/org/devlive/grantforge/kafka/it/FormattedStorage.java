package org.devlive.grantforge.kafka.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.apache.kafka.common.Uuid;

/**
 * A node's storage, formatted by the release's own {@code StorageTool} once per test JVM for each
 * release, set of roles and feature settings, and copied for every further node of that kind.
 *
 * <p>{@code StorageTool format} is a JVM of its own (about two seconds of a core), and what it writes
 * depends only on those: {@code bootstrap.checkpoint} (the release's default feature levels) and
 * {@code meta.properties}, whose node id, cluster id and directory id are this node's own in every
 * copy (a new directory id each time, as a format would make).
 */
final class FormattedStorage {

    /** Settings that change what a format writes: feature levels and the versions that set them. */
    private static final Pattern FEATURE_SETTING = Pattern.compile(".*(version|feature|unstable|kraft).*");
    private static final Set<String> IDENTITY = Set.of("node.id", "cluster.id", "directory.id");

    /** Formatted storage to copy, by {@link #kind}. */
    private static final Map<String, Path> TEMPLATES = new HashMap<>();

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
     * copy of the first storage of this kind, or, for the first, what {@code storageTool} formats there.
     */
    static synchronized void prepare(String kind, Path dataDir, int nodeId, String clusterId, Path templatesRoot,
                                     Runnable storageTool) {
        try {
            Path template = TEMPLATES.get(kind);
            if (template == null) {
                storageTool.run();
                template = Files.createTempDirectory(Files.createDirectories(templatesRoot), "storage-");
                copy(dataDir, template);
                Files.writeString(templatesRoot.resolve(template.getFileName() + ".kind"), kind + "\n",
                        StandardCharsets.UTF_8);
                TEMPLATES.put(kind, template);
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
