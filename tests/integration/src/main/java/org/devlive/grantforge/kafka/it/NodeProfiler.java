package org.devlive.grantforge.kafka.it;

import com.sun.tools.attach.VirtualMachine;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * A CPU profile of a running node's JVM: async-profiler (the {@code tools.profiler:async-profiler} JAR on this
 * harness's classpath carries its native library) loaded into the node's process through the JVM's attach API, as its
 * own {@code asprof} does. It samples every thread of the process, Java and native alike (so the agent's Rust threads
 * and Kafka's request threads are seen the same way), keeps inlined Java frames (which a perf map would fold into
 * their caller), and names each stack's thread, so a profile can be split by what the time was spent on.
 */
public final class NodeProfiler {
    /**
     * The sampling interval asked for: a sample per millisecond of CPU time. With {@code itimer} the kernel's timer tick
     * bounds it (about one per 4 ms here); the samples are scaled to the process's measured CPU time anyway.
     */
    public static final long INTERVAL_NANOS = 1_000_000;

    private static Path library;

    private NodeProfiler() {
    }

    /**
     * Starts sampling CPU time in the process {@code pid}: {@code event} is {@code itimer} (a process-wide CPU timer
     * signal) or {@code cpu} (a perf_events clock per thread).
     */
    public static void start(long pid, String event) {
        command(pid, "start,event=" + event + ",interval=" + INTERVAL_NANOS + ",threads");
    }

    /** Stops the sampling started by {@link #start} and writes the stacks, one line each with its count, to {@code out}. */
    public static void stop(long pid, Path out) {
        command(pid, "stop,collapsed,file=" + out.toAbsolutePath());
    }

    private static void command(long pid, String arguments) {
        try {
            VirtualMachine vm = VirtualMachine.attach(String.valueOf(pid));
            try {
                vm.loadAgentPath(library().toString(), arguments);
            } finally {
                vm.detach();
            }
        } catch (Exception e) {
            throw new IllegalStateException("async-profiler '" + arguments + "' in process " + pid + " failed: " + e, e);
        }
    }

    private static synchronized Path library() throws IOException {
        if (library == null) {
            try (InputStream in = NodeProfiler.class.getResourceAsStream("/linux-x64/libasyncProfiler.so")) {
                if (in == null) {
                    throw new IllegalStateException("linux-x64/libasyncProfiler.so is not on the classpath: the harness's "
                            + "tools.profiler:async-profiler dependency is missing (mvn -pl tests/integration compile)");
                }
                Path file = Files.createTempFile("libasyncProfiler", ".so");
                Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
                file.toFile().deleteOnExit();
                library = file;
            }
        }
        return library;
    }
}
