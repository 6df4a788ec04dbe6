package org.devlive.grantforge.kafka.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.metadata.authorizer.StandardAuthorizer;
import org.devlive.grantforge.kafka.agent.GrantForgeKafkaAuthorizer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.devlive.grantforge.kafka.it.GrantForgeSnapshot;
import org.devlive.grantforge.kafka.it.KafkaAclSet;

/**
 * How one snapshot scales, from 10k to 1M resources of Kafka's {@code AuthorizerBenchmark} set ({@link KafkaAclSet},
 * one principal per resource, 20 % deny coins): the load, the memory it keeps and {@code acls(ANY)}, the agent
 * beside StandardAuthorizer holding the same entries.
 *
 * <ul>
 *   <li>load: StandardAuthorizer, every entry through {@code addAcl} and {@code completeInitialLoad}; the agent,
 *       {@code configure()} on a signed policy file: read, verify the Ed25519 signature, parse, compile and index,
 *       build the ACL view (one per fork, printed as a {@code GF-BENCH scale} line);</li>
 *   <li>memory: StandardAuthorizer, the heap it retains (after GC); the agent, the process's resident set growth
 *       a second after the load (its snapshot lives in native memory; its thread gives freed memory back within
 *       a tick) plus the heap of its decoded ACL view;</li>
 *   <li>{@code acls(ANY)}: every binding listed and counted, the benchmark's timed operation; the first listing
 *       of each fork is timed apart ({@code firstListMicros}): the agent decodes its view then, and lists the
 *       decoded bindings after that until the view changes.</li>
 * </ul>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 3, jvmArgsAppend = {"-Xms1g", "-Xmx14g"})
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 5, time = 2)
public class SnapshotScaleBenchmark {
    public static final int ACLS_PER_RESOURCE = 1;
    public static final double DENY_PERCENTAGE = 20;

    @State(Scope.Benchmark)
    public static class Standard {
        @Param({"10000", "50000", "200000", "1000000"})
        public int resourceCount;

        StandardAuthorizer authorizer;

        @Setup(Level.Trial)
        public void setup() {
            long heapBefore = Bench.heapUsedMiB();
            long rssBefore = Bench.rssMiB();
            long start = System.nanoTime();
            authorizer = Bench.standardAuthorizer();
            long entries = StandardAcls.load(authorizer, resourceCount, ACLS_PER_RESOURCE, DENY_PERCENTAGE);
            authorizer.completeInitialLoad();
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            long listStart = System.nanoTime();
            int listed = count(authorizer.acls(AclBindingFilter.ANY));
            long firstListMicros = TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - listStart);
            Bench.report("scale side=standard resources=" + resourceCount + " entries=" + entries + " loadMillis="
                + millis + " heapMiB=" + (Bench.heapUsedMiB() - heapBefore) + " rssGrowthMiB="
                + (Bench.rssMiB() - rssBefore) + " listed=" + listed + " firstListMicros=" + firstListMicros);
        }

        @TearDown(Level.Trial)
        public void tearDown() throws IOException {
            authorizer.close();
        }
    }

    @State(Scope.Benchmark)
    public static class GrantForge {
        @Param({"10000", "50000", "200000", "1000000"})
        public int resourceCount;

        GrantForgeKafkaAuthorizer authorizer;
        Path file;

        @Setup(Level.Trial)
        public void setup() throws IOException {
            file = Files.createTempFile("gf-bench-scale-", ".json");
            long bytes = GrantForgeSnapshot.write(file, resourceCount, ACLS_PER_RESOURCE, DENY_PERCENTAGE);
            Path key = SignedSnapshot.sign(file);
            long heapBefore = Bench.heapUsedMiB();
            long rssBefore = Bench.rssMiB();
            long start = System.nanoTime();
            authorizer = Bench.grantforge(file, true, key);
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            // The agent's thread gives the load's freed memory back on its next tick (250 ms): read after it.
            sleepQuietly(1000);
            long rssLoaded = Bench.rssMiB();
            // The first listing fetches and decodes the view; later ones, what the benchmark times, reuse it.
            long listStart = System.nanoTime();
            int listed = count(authorizer.acls(AclBindingFilter.ANY));
            long firstListMicros = TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - listStart);
            Bench.report("scale side=grantforge resources=" + resourceCount + " snapshotBytes=" + bytes
                + " loadMillis=" + millis + " heapMiB=" + (Bench.heapUsedMiB() - heapBefore) + " rssGrowthMiB="
                + (rssLoaded - rssBefore) + " aclCount=" + authorizer.aclCount() + " listed=" + listed
                + " firstListMicros=" + firstListMicros);
        }

        @TearDown(Level.Trial)
        public void tearDown() throws IOException {
            authorizer.close();
            SignedSnapshot.delete(file);
        }
    }

    static void sleepQuietly(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static int count(Iterable<AclBinding> bindings) {
        int count = 0;
        for (AclBinding ignored : bindings) {
            count++;
        }
        return count;
    }

    @Benchmark
    public int acls_standard(Standard set) {
        return count(set.authorizer.acls(AclBindingFilter.ANY));
    }

    @Benchmark
    public int acls_grantforge(GrantForge set) {
        return count(set.authorizer.acls(AclBindingFilter.ANY));
    }
}
