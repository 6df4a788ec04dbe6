package org.devlive.grantforge.kafka.agent;

import org.devlive.grantforge.kafka.agent.jni.NativeAgent;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.devlive.grantforge.kafka.bench.Bench;
import org.devlive.grantforge.kafka.bench.SnapshotScaleBenchmark;
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

/**
 * Where the time of {@code acls(ANY)} goes (SnapshotScaleBenchmark's set, one principal per resource):
 * {@code rows} is the native call alone (the rows encoded and copied into a Java array), {@code decode} the
 * Java decoding of rows already fetched, {@code full} {@code acls(ANY)} (for ANY, the decoded view kept from
 * the call before, returned as it is). In the shim's package to
 * reach {@link NativeAgent} and {@link AclView}; a profiling aid that follows those classes.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx8g"})
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 5, time = 2)
public class AclViewLayersBenchmark {
    @State(Scope.Benchmark)
    public static class View {
        @Param({"50000"})
        public int resourceCount;

        GrantForgeKafkaAuthorizer authorizer;
        long handle;
        byte[] rows;
        Path file;

        @Setup(Level.Trial)
        public void setup() throws Exception {
            file = Files.createTempFile("gf-bench-acl-layers-", ".json");
            GrantForgeSnapshot.write(file, resourceCount, SnapshotScaleBenchmark.ACLS_PER_RESOURCE,
                SnapshotScaleBenchmark.DENY_PERCENTAGE);
            authorizer = Bench.grantforge(file, true);
            handle = authorizer.nativeHandle();
            rows = NativeAgent.acls(handle);
        }

        @TearDown(Level.Trial)
        public void tearDown() throws Exception {
            authorizer.close();
            Files.deleteIfExists(file);
        }
    }

    @Benchmark
    public byte[] rows(View view) {
        return NativeAgent.acls(view.handle);
    }

    @Benchmark
    public List<AclBinding> decode(View view) {
        return AclView.decode(view.rows);
    }

    @Benchmark
    public Iterable<AclBinding> full(View view) {
        return view.authorizer.acls(AclBindingFilter.ANY);
    }
}
