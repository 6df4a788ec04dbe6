package org.devlive.grantforge.kafka.it;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Class-data sharing for the nodes' JVMs: one archive per Kafka release and JDK of the classes a node loads as it
 * starts, which every later node of that release maps instead of loading, parsing and verifying them again (a node
 * start's CPU drops by about two fifths; docs/testing.md). A whole run starts about a hundred nodes.
 *
 * <p>The first node of a release whose archive is missing lists the classes it loads ({@code
 * -XX:DumpLoadedClassList}); once it has started, the archive is dumped from that list in the background ({@code java
 * -Xshare:dump}) and moved into place whole, and the nodes launched after that use it. The archive holds the release's
 * jars only, with which a node's class path begins (the agent JAR, the test classes and the launcher come after); the
 * JVM checks those jars against the archive and runs without it if any differs, so a stale archive costs time, never a
 * wrong class. Archives are kept between runs under {@code ~/.cache/grantforge-kafka/shared-classes}, one per
 * release, named by the JDK and the class path. Only in the test JVMs, for the JDK they run on (not, say, an emulated
 * arm64 one). {@code -Dgrantforge.it.sharedClasses=false} turns it off.
 */
final class SharedClasses {
    /** In the test JVMs only (surefire's forks): the demo leaves a user's home alone. */
    private static final boolean ENABLED = Boolean.parseBoolean(System.getProperty("grantforge.it.sharedClasses", "true"))
            && System.getProperty(Ports.FORK_PROPERTY) != null;
    private static final Path DIR = Paths.get(System.getProperty("user.home"), ".cache", "grantforge-kafka", "shared-classes");
    /** A claim older than this was left by a run that stopped before its dump ended. */
    private static final Duration STALE_CLAIM = Duration.ofMinutes(10);
    /** The archives this JVM's nodes are listing classes for, to dump once such a node has started. */
    private static final Set<String> LISTING = ConcurrentHashMap.newKeySet();

    private SharedClasses() {
    }

    /**
     * The JVM options of a JVM of {@code dist} on {@code javaHome} whose class path begins with the release's jars: use
     * the archive, or (a node's server JVM, {@code mayList}) list the classes it loads, or neither.
     */
    static List<String> jvmOptions(KafkaDist dist, Path javaHome, boolean mayList) {
        if (!ENABLED || !javaHome.equals(Paths.get(System.getProperty("java.home")))) {
            return List.of();
        }
        String name = name(dist);
        if (Files.isRegularFile(DIR.resolve(name + ".jsa"))) {
            return List.of("-XX:SharedArchiveFile=" + DIR.resolve(name + ".jsa"));
        }
        return mayList && claim(name) ? List.of("-XX:DumpLoadedClassList=" + DIR.resolve(name + ".classes")) : List.of();
    }

    /**
     * Called once a node of {@code dist} has started: if that node listed its classes, dumps the archive from what it
     * had loaded by then, in a process of its own that moves the archive into place whole when it is done (the test JVM
     * may end first).
     */
    static void nodeStarted(KafkaDist dist) {
        String name = name(dist);
        if (!LISTING.remove(name)) {
            return;
        }
        forgetOtherArchives(dist, name);
        Path listing = DIR.resolve(name + ".classes");
        Path list = DIR.resolve(name + ".classes.started");
        Path partial = DIR.resolve(name + ".jsa.partial");
        try {
            // the node goes on appending: what it had loaded when it started, up to the last whole line
            String loaded = Files.readString(listing, StandardCharsets.UTF_8);
            Files.writeString(list, loaded.substring(0, loaded.lastIndexOf('\n') + 1), StandardCharsets.UTF_8);
            String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
            String script = "\"$0\" -Xshare:dump -XX:SharedClassListFile=\"$1\" -XX:SharedArchiveFile=\"$2\" -cp \"$3\""
                    + " && mv -f \"$2\" \"$4\"; rm -f \"$1\" \"$2\" \"$5\" \"$6\"";
            new ProcessBuilder("sh", "-c", script, java, list.toString(), partial.toString(), dist.classpath(),
                    DIR.resolve(name + ".jsa").toString(), listing.toString(), DIR.resolve(name + ".claim").toString())
                    .redirectErrorStream(true).redirectOutput(DIR.resolve(name + ".log").toFile()).start();
        } catch (IOException e) {
            // no archive this time (the claim goes stale): the nodes start as they would without one
        }
    }

    /**
     * The release's archives of another JDK or class path: one archive a release at most, so that the cache does not
     * grow by an archive (tens of MB) with each new JDK or dependency. A JVM that maps one keeps it until it ends.
     */
    private static void forgetOtherArchives(KafkaDist dist, String name) {
        try (DirectoryStream<Path> archives = Files.newDirectoryStream(DIR, "kafka-" + dist.version() + "-*.{jsa,log}")) {
            for (Path archive : archives) {
                if (!archive.getFileName().toString().startsWith(name + ".")) {
                    Files.deleteIfExists(archive);
                }
            }
        } catch (IOException e) {
            // left for the next dump of the release
        }
    }

    private static boolean claim(String name) {
        Path claim = DIR.resolve(name + ".claim");
        try {
            Files.createDirectories(DIR);
            if (Files.exists(claim) && Files.getLastModifiedTime(claim).toInstant().isBefore(Instant.now().minus(STALE_CLAIM))) {
                Files.deleteIfExists(claim);
            }
            Files.createFile(claim);
            LISTING.add(name);
            return true;
        } catch (IOException e) {
            return false; // another JVM lists them (FileAlreadyExistsException), or no cache: no archive this time
        }
    }

    /** The release, the JDK and the class path, so that any change makes another archive. */
    private static String name(KafkaDist dist) {
        String identity = System.getProperty("java.home") + "\n" + System.getProperty("java.vm.version") + "\n" + dist.classpath();
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(identity.getBytes(StandardCharsets.UTF_8));
            return "kafka-" + dist.version() + "-" + HexFormat.of().formatHex(digest, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
