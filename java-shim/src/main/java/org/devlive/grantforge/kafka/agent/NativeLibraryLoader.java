package org.devlive.grantforge.kafka.agent;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Locale;
import java.util.Set;

/**
 * Loads the agent's native library once per class loader: from {@code grantforge.native.library.path}
 * when set (no fallback: an operator who names a file means that file), otherwise from the JAR,
 * copied into a new private temporary directory (mode 0700: no other account can replace the
 * library between its copy and its load) that is deleted with the copy right after loading. Every
 * failure names its cause and the key that fixes it; the broker then refuses to start rather than
 * run unchecked.
 */
final class NativeLibraryLoader {
    static final String PATH_KEY = "grantforge.native.library.path";
    private static final String LIBRARY = "libgrantforge_kafka_jni.so";
    /** rwx for the owner only. */
    static final Set<PosixFilePermission> PRIVATE = PosixFilePermissions.fromString("rwx------");

    /** Where the library was loaded from, once it is; null before. */
    private static String origin;

    private NativeLibraryLoader() {
    }

    /** The library cannot be loaded; the message names the cause and the key that fixes it. */
    static final class NativeLoadException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        NativeLoadException(String message) {
            super(message);
        }
    }

    /** Loads the library (once per class loader) and says where it came from. */
    static synchronized String load(String explicitPath) {
        if (origin != null) {
            return origin;
        }
        String from;
        if (explicitPath != null && !explicitPath.trim().isEmpty()) {
            loadFile(new File(explicitPath.trim()), PATH_KEY + " names " + explicitPath.trim());
            from = PATH_KEY + "=" + explicitPath.trim();
        } else {
            loadBundled();
            from = "the agent JAR";
        }
        int abi = NativeAgent.abiVersion();
        if (abi != NativeAgent.ABI_VERSION) {
            throw new NativeLoadException(PATH_KEY + ": the native library speaks ABI " + abi + " but this JAR needs "
                + NativeAgent.ABI_VERSION + "; use the library of the same agent version (or unset " + PATH_KEY + ")");
        }
        origin = from;
        return origin;
    }

    private static void loadBundled() {
        String platform = platform();
        String resource = "native/" + platform + "/" + LIBRARY;
        InputStream in = NativeLibraryLoader.class.getResourceAsStream(resource);
        if (in == null) {
            throw new NativeLoadException(PATH_KEY + ": this agent JAR has no native library for " + platform
                + " (it ships linux-x86_64); build one for this platform and set " + PATH_KEY + " to it");
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
    static void delete(Path copy) {
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

    private static String platform() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        String osName = os.startsWith("linux") ? "linux" : os.startsWith("mac") ? "osx" : os.replace(' ', '_');
        String archName = arch.equals("amd64") || arch.equals("x86_64") ? "x86_64"
            : arch.equals("aarch64") || arch.equals("arm64") ? "aarch_64" : arch;
        return osName + "-" + archName;
    }
}
