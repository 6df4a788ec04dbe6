package org.devlive.grantforge.kafka.agent;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test class during which the JVM's {@code -Xcheck:jni} reported a misuse of JNI: the checks only
 * print ({@code WARNING in native method: ...}), so without this a misuse would pass every test.
 *
 * <p>The shim's tests run with {@code -Xcheck:jni -XX:+LogVMOutput -XX:LogFile=<dir>/jni-check-vm-%p.log}
 * ({@code java-shim/pom.xml}), which copies what the JVM prints, JNI warnings included, into a file that is
 * flushed at each line; {@code grantforge.jni.check.dir} names the directory. Each test class reads what
 * the log gained while it ran (a warning from a background thread, the agent's or the log drain's, that
 * lands after a class ended is blamed on the class that runs next). Registered for every test class through the service loader
 * ({@code junit.jupiter.extensions.autodetection.enabled}).
 */
public final class JniCheckWarnings implements BeforeAllCallback, AfterAllCallback {
    static final String DIRECTORY_PROPERTY = "grantforge.jni.check.dir";
    /** What HotSpot's JNI checks print (jniCheck.cpp): a warning, a fatal error, a local-reference overflow. */
    private static final String[] MARKS = {"WARNING in native method", "FATAL ERROR in native method",
        "JNI local refs:"};
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(JniCheckWarnings.class);

    @Override
    public void beforeAll(ExtensionContext context) throws IOException {
        Path log = log();
        if (log != null) {
            context.getStore(NAMESPACE).put("offset", Files.size(log));
        }
    }

    @Override
    public void afterAll(ExtensionContext context) throws IOException {
        Path log = log();
        if (log == null) {
            return;
        }
        long offset = context.getStore(NAMESPACE).getOrDefault("offset", Long.class, 0L);
        List<String> found = marked(log, offset);
        if (!found.isEmpty()) {
            throw new AssertionError("-Xcheck:jni reported a misuse of JNI " + found.size() + " times while "
                + context.getDisplayName() + " ran (" + log + "); the first:\n"
                + String.join("\n", found.subList(0, Math.min(found.size(), 10))));
        }
    }

    /** The JVM's log, or null when the check is not configured (a run outside Maven). */
    static Path log() {
        String directory = System.getProperty(DIRECTORY_PROPERTY);
        if (directory == null) {
            return null;
        }
        if (!ManagementFactory.getRuntimeMXBean().getInputArguments().contains("-Xcheck:jni")) {
            throw new AssertionError(DIRECTORY_PROPERTY + " is set but the JVM runs without -Xcheck:jni");
        }
        Path log = Paths.get(directory, "jni-check-vm-pid" + ProcessHandle.current().pid() + ".log");
        if (!Files.isRegularFile(log)) {
            throw new AssertionError("no JVM log at " + log + ": the tests' argLine must give -XX:+LogVMOutput "
                + "-XX:LogFile=" + directory + "/jni-check-vm-%p.log, or JNI warnings go unnoticed");
        }
        return log;
    }

    /** The lines past {@code offset} that carry one of the JNI checks' marks. */
    static List<String> marked(Path log, long offset) throws IOException {
        List<String> found = new ArrayList<>();
        try (RandomAccessFile file = new RandomAccessFile(log.toFile(), "r")) {
            long length = file.length();
            byte[] tail = new byte[(int) Math.max(0, length - offset)];
            file.seek(Math.min(offset, length));
            file.readFully(tail);
            String[] lines = new String(tail, StandardCharsets.UTF_8).split("\n");
            for (int i = 0; i < lines.length; i++) {
                for (String mark : MARKS) {
                    if (lines[i].contains(mark)) {
                        // the warning and the Java frames the JVM prints after it: where the call came from
                        StringBuilder warning = new StringBuilder(lines[i]);
                        for (int j = i + 1; j < lines.length && j <= i + 8 && lines[j].trim().startsWith("at "); j++) {
                            warning.append('\n').append(lines[j]);
                        }
                        found.add(warning.toString());
                        break;
                    }
                }
            }
        }
        return found;
    }
}
