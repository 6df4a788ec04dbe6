package org.devlive.grantforge.kafka.it;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * The child JVM of one Kafka node: started with its output appended to the node's console log, stopped as an
 * operator stops a broker (SIGTERM, then SIGKILL after a timeout, its own children too), and killed when the test
 * JVM exits, so that no node outlives the suite.
 */
final class NodeProcess {
    private static final Set<NodeProcess> LIVE = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> LIVE.forEach(NodeProcess::destroyNow),
                "grantforge-it-kill-nodes"));
    }

    private final Process process;
    private final long startMillis;

    private NodeProcess(Process process, long startMillis) {
        this.process = process;
        this.startMillis = startMillis;
    }

    /** Starts {@code command} in {@code dir}, without Kafka's environment variables that would change it. */
    static NodeProcess start(List<String> command, Path dir, Path consoleLog) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(command)
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(consoleLog.toFile()));
        builder.environment().remove("KAFKA_OPTS");
        builder.environment().remove("CLASSPATH");
        long startMillis = System.currentTimeMillis();
        NodeProcess started = new NodeProcess(builder.start(), startMillis);
        LIVE.add(started);
        return started;
    }

    /** When the JVM was started (wall clock, ms). */
    long startMillis() {
        return startMillis;
    }

    boolean isAlive() {
        return process.isAlive();
    }

    int exitValue() {
        return process.exitValue();
    }

    long pid() {
        return process.pid();
    }

    /** Waits for the JVM to exit by itself; false if it still runs after {@code timeout}. */
    boolean awaitExit(Duration timeout) throws InterruptedException {
        boolean exited = process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        if (exited) {
            LIVE.remove(this);
        }
        return exited;
    }

    /**
     * Stops the JVM: SIGTERM, SIGKILL after {@code timeout}, and its children. Prints the CPU it used first, named
     * {@code name}: what the suite's minutes are made of ({@code docs/testing.md}).
     */
    void stop(Duration timeout, String name) {
        if (process.isAlive()) {
            process.info().totalCpuDuration().ifPresent(cpu -> System.out.printf("%s used %.1f s of CPU in %.1f s%n",
                    name, cpu.toMillis() / 1000.0, (System.currentTimeMillis() - startMillis) / 1000.0));
            List<ProcessHandle> descendants = process.descendants().collect(Collectors.toList());
            process.destroy();
            try {
                if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                    process.destroyForcibly();
                    process.waitFor(30, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
            descendants.forEach(ProcessHandle::destroyForcibly);
        }
        LIVE.remove(this);
    }

    private void destroyNow() {
        if (process.isAlive()) {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
