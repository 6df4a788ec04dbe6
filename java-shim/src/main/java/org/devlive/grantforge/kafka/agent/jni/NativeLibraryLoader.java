package org.devlive.grantforge.kafka.agent.jni;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Loads the agent's native library once per class loader: from {@code grantforge.native.library.path}
 * when set (no fallback: an operator who names a file means that file), otherwise from the JAR, the
 * build for this host's architecture and C library ({@link #PLATFORMS}: glibc, or musl as on Alpine),
 * copied into a new private temporary directory (mode 0700: no other account can replace the
 * library between its copy and its load) that is deleted with the copy right after loading. Every
 * failure names its cause and the key that fixes it; the broker then refuses to start rather than
 * run unchecked.
 */
public final class NativeLibraryLoader {
    public static final String PATH_KEY = "grantforge.native.library.path";
    private static final String LIBRARY = "libgrantforge_kafka_jni.so";
    /**
     * The builds the JAR carries, one directory each under {@code native/} ({@code scripts/build-native.sh}
     * makes them): Linux on x86_64 and aarch64, against glibc (2.17 and newer) and against musl.
     */
    static final List<String> PLATFORMS = Arrays.asList(
        "linux-x86_64", "linux-aarch64", "linux-musl-x86_64", "linux-musl-aarch64");
    /** rwx for the owner only. */
    static final Set<PosixFilePermission> PRIVATE = PosixFilePermissions.fromString("rwx------");

    /** Where the library was loaded from, once it is; null before. */
    private static String origin;

    private NativeLibraryLoader() {
    }

    /** The library cannot be loaded; the message names the cause and the key that fixes it. */
    public static final class NativeLoadException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        NativeLoadException(String message) {
            super(message);
        }
    }

    /** Loads the library (once per class loader) and says where it came from. */
    public static synchronized String load(String explicitPath) {
        if (origin != null) {
            return origin;
        }
        String from;
        if (explicitPath != null && !explicitPath.trim().isEmpty()) {
            loadFile(new File(explicitPath.trim()), PATH_KEY + " names " + explicitPath.trim());
            from = PATH_KEY + "=" + explicitPath.trim();
        } else {
            String platform = platform(System.getProperty("os.name", ""), System.getProperty("os.arch", ""),
                runsOnMusl(Paths.get("/proc/self/maps")));
            loadBundled(platform);
            from = "the agent JAR, " + platform;
        }
        int abi;
        try {
            abi = NativeAgent.abiVersion();
        } catch (UnsatisfiedLinkError e) {
            // A library of another program, or of an agent older than the ABI check.
            throw new NativeLoadException(PATH_KEY + ": the native library loaded from " + from + " is not the GrantForge "
                + "agent's (" + e.getMessage() + "); use the library of the same agent version (or unset " + PATH_KEY + ")");
        }
        if (abi != NativeAgent.ABI_VERSION) {
            throw new NativeLoadException(PATH_KEY + ": the native library speaks ABI " + abi + " but this JAR needs "
                + NativeAgent.ABI_VERSION + "; use the library of the same agent version (or unset " + PATH_KEY + ")");
        }
        origin = from;
        return origin;
    }

    private static void loadBundled(String platform) {
        String resource = "native/" + platform + "/" + LIBRARY;
        InputStream in = NativeLibraryLoader.class.getResourceAsStream(resource);
        if (in == null) {
            throw new NativeLoadException(PATH_KEY + ": this agent JAR has no native library for " + platform
                + " (it ships " + String.join(", ", PLATFORMS) + "); build one for this platform and set " + PATH_KEY + " to it");
        }
        File tmpDir = new File(System.getProperty("java.io.tmpdir"));
        Path copy;
        try {
            try {
                copy = extract(in, tmpDir.toPath());
            } finally {
                in.close();
            }
        } catch (IOException | UnsupportedOperationException e) {
            throw new NativeLoadException(PATH_KEY + ": cannot copy the native library to a private directory in " + tmpDir
                + " (" + e + "); make java.io.tmpdir a writable POSIX directory or set " + PATH_KEY
                + " to an extracted copy");
        }
        try {
            loadFile(copy.toFile(), "the native library was copied to " + tmpDir);
        } finally {
            // The mapping outlives the file on Linux: nothing is left behind in the temp directory.
            delete(copy);
        }
    }

    /**
     * Copies the library into a new directory under {@code parent} created with mode 0700 (atomically, with
     * the permissions as its creation attribute); returns the copy.
     */
    static Path extract(InputStream library, Path parent) throws IOException {
        Path directory = Files.createTempDirectory(parent, "grantforge-kafka-" + AgentVersion.VERSION + "-",
            PosixFilePermissions.asFileAttribute(PRIVATE));
        Path copy = directory.resolve(LIBRARY);
        try {
            Files.copy(library, copy);
        } catch (IOException | RuntimeException e) {
            delete(copy);
            throw e;
        }
        return copy;
    }

    /** Deletes the copy and its private directory (at exit if they cannot be deleted now). */
    public static void delete(Path copy) {
        Path directory = copy.getParent();
        try {
            Files.deleteIfExists(copy);
        } catch (IOException e) {
            // deleteOnExit deletes in the reverse order of registration: the copy, then its directory.
            directory.toFile().deleteOnExit();
            copy.toFile().deleteOnExit();
            return;
        }
        try {
            Files.deleteIfExists(directory);
        } catch (IOException e) {
            directory.toFile().deleteOnExit();
        }
    }

    private static void loadFile(File file, String origin) {
        try {
            System.load(file.getAbsolutePath());
        } catch (UnsatisfiedLinkError e) {
            String message = String.valueOf(e.getMessage());
            String lower = message.toLowerCase(Locale.ROOT);
            if (lower.contains("failed to map segment") || lower.contains("operation not permitted")) {
                throw new NativeLoadException(PATH_KEY + ": " + origin + ", which does not allow executing it (mounted noexec?): "
                    + message + "; set " + PATH_KEY + " to a copy on an executable file system, or point -Djava.io.tmpdir there");
            }
            throw new NativeLoadException(PATH_KEY + ": cannot load the native library (" + origin + "): " + message
                + "; set " + PATH_KEY + " to the library of this agent version built for this host");
        }
    }

    /**
     * The JAR's directory for a host: {@code linux-<arch>} for glibc, {@code linux-musl-<arch>} for musl, with
     * Java's names of the architectures taken to the build's ({@code amd64} is x86_64, {@code arm64} is aarch64).
     */
    static String platform(String osName, String osArch, boolean musl) {
        String os = osName.toLowerCase(Locale.ROOT);
        String arch = osArch.toLowerCase(Locale.ROOT);
        String archName = arch.equals("amd64") || arch.equals("x86_64") ? "x86_64"
            : arch.equals("aarch64") || arch.equals("arm64") ? "aarch64" : arch;
        if (!os.startsWith("linux")) {
            return (os.startsWith("mac") ? "osx" : os.replace(' ', '_')) + "-" + archName;
        }
        return (musl ? "linux-musl-" : "linux-") + archName;
    }

    /**
     * Whether this JVM runs on musl (Alpine's JVMs do): its loader is mapped into the process. What the process
     * maps, not what the disk holds: a glibc host may have musl installed beside it, and a musl host glibc's
     * compatibility layer (gcompat, as the official Kafka image has).
     */
    static boolean runsOnMusl(Path maps) {
        try {
            for (String line : Files.readAllLines(maps, StandardCharsets.ISO_8859_1)) {
                if (line.contains("/ld-musl-") || line.contains("/libc.musl-")) {
                    return true;
                }
            }
            return false;
        } catch (IOException e) {
            return false;
        }
    }
}
