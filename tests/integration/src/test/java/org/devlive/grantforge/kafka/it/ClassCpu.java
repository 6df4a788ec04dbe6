package org.devlive.grantforge.kafka.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The CPU each test class cost, its Kafka nodes, tools and test server included: a test JVM runs one class at a time
 * and waits for every process it starts, so the kernel adds their CPU to its own (the children's times of
 * {@code /proc/self/stat}). Written to {@code target/class-cpu/<class>.txt} as {@code seconds-of-CPU seconds-of-wall
 * seconds-of-CPU-in-the-test-JVM} (the rest is its nodes', tools' and servers'), which {@code scripts/slowest} lists
 * beside the surefire times. Registered for every class by
 * {@code META-INF/services}.
 */
public final class ClassCpu implements BeforeAllCallback, AfterAllCallback {
    /** Linux's clock ticks per second for {@code /proc} times (USER_HZ, 100 on every Linux ABI). */
    private static final double TICKS_PER_SECOND = 100.0;
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(ClassCpu.class);

    private record Start(double cpuSeconds, double ownCpuSeconds, long nanos) {
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        context.getStore(NAMESPACE).put("start", new Start(cpuSeconds(), ownCpuSeconds(), System.nanoTime()));
    }

    @Override
    public void afterAll(ExtensionContext context) throws IOException {
        Start start = context.getStore(NAMESPACE).get("start", Start.class);
        if (start == null) {
            return;
        }
        double cpu = cpuSeconds() - start.cpuSeconds();
        double own = ownCpuSeconds() - start.ownCpuSeconds();
        double wall = (System.nanoTime() - start.nanos()) / 1e9;
        Path dir = Path.of(System.getProperty("grantforge.class.cpu.dir", "target/class-cpu"));
        Files.createDirectories(dir);
        String name = context.getRequiredTestClass().getSimpleName();
        Files.writeString(dir.resolve(name + ".txt"), String.format(Locale.ROOT, "%.1f %.1f %.1f%n", cpu, wall, own), StandardCharsets.UTF_8);
    }

    /** This JVM's user and system time and that of the children it waited for, in seconds. */
    static double cpuSeconds() {
        return statTicks(14, 17) / TICKS_PER_SECOND;
    }

    /** This JVM's own user and system time, in seconds. */
    static double ownCpuSeconds() {
        return statTicks(14, 15) / TICKS_PER_SECOND;
    }

    /** The sum of fields {@code first} to {@code last} of {@code /proc/self/stat} (utime 14, stime 15, cutime 16, cstime 17). */
    private static long statTicks(int first, int last) {
        try {
            String stat = Files.readString(Path.of("/proc/self/stat"));
            // after the command's name, which may hold spaces: state is field 3
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            long ticks = 0;
            for (int field = first; field <= last; field++) {
                ticks += Long.parseLong(fields[field - 3]);
            }
            return ticks;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
