package org.devlive.grantforge.kafka.agent;

import org.devlive.grantforge.kafka.agent.jni.NativeAgent;
import org.devlive.grantforge.kafka.agent.jni.RequestEncoder;

import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizationResult;
import org.devlive.grantforge.kafka.bench.Bench;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Where the time of one cached {@code authorize()} goes, layer by layer (1 thread, e2e.json, alice WRITE orders).
 * This class sits in the shim's package to reach its package-private parts ({@link RequestEncoder},
 * {@link NativeAgent}); it is a profiling aid and must follow those classes when they change.
 *
 * <ul>
 *   <li>{@code crossing}: a JNI call that does nearly nothing ({@code generation}: jni-rs's with_env, handle
 *       check, one atomic load): a crossing with jni-rs's guards, which the request path no longer pays;</li>
 *   <li>{@code encode}: the Java encoding of the request into the thread's direct buffer, no crossing (the
 *       context is the previous call's, as on a request thread serving one connection);</li>
 *   <li>{@code nativeAuthorize[_unaudited]}: the crossing plus everything in Rust for a pre-encoded request
 *       (decode, super-user check, snapshot read lock, decision cache, audit), no Java encoding;</li>
 *   <li>{@code results}: the Java result list built from a bitmask, no crossing;</li>
 *   <li>{@code full}: {@code GrantForgeKafkaAuthorizer.authorize}, everything.</li>
 * </ul>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class JniLayersBenchmark {
    static final RequestContext ALICE = Bench.context("alice", "127.0.0.1", ApiKeys.PRODUCE);
    static final List<Action> WRITE_ORDERS = Bench.literal(AclOperation.WRITE, ResourceType.TOPIC, "orders", true,
        true);
    static final List<Action> WRITE_ORDERS_UNAUDITED = Bench.literal(AclOperation.WRITE, ResourceType.TOPIC, "orders",
        false, false);

    @State(Scope.Benchmark)
    public static class Agent {
        GrantForgeKafkaAuthorizer authorizer;
        long handle;
        Path file;

        @Setup(Level.Trial)
        public void setup() throws Exception {
            file = Files.createTempFile("gf-bench-layers-", ".json");
            Files.copy(JniLayersBenchmark.class.getResourceAsStream("/grantforge-bench/e2e.json"), file,
                java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            authorizer = new GrantForgeKafkaAuthorizer();
            java.util.Map<String, Object> configs = new java.util.HashMap<String, Object>();
            configs.put("grantforge.policy.file", file.toString());
            String nativeLibrary = System.getProperty("gf.bench.native");
            if (nativeLibrary != null && !nativeLibrary.isEmpty()) {
                configs.put("grantforge.native.library.path", nativeLibrary);
            }
            authorizer.configure(configs);
            Field field = GrantForgeKafkaAuthorizer.class.getDeclaredField("handle");
            field.setAccessible(true);
            handle = field.getLong(authorizer);
        }

        @TearDown(Level.Trial)
        public void tearDown() throws IOException {
            authorizer.close();
            Files.deleteIfExists(file);
        }
    }

    /** Pre-encoded requests in buffers of this thread. */
    @State(Scope.Thread)
    public static class Encoded {
        RequestEncoder audited;
        int auditedLength;
        RequestEncoder unaudited;
        int unauditedLength;
        RequestEncoder scratch;

        /** Takes the agent so that the native library is loaded (an encoder registers its buffer with it). */
        @Setup(Level.Trial)
        public void setup(Agent agent) {
            audited = new RequestEncoder();
            auditedLength = audited.encodeAuthorize(ALICE, WRITE_ORDERS);
            unaudited = new RequestEncoder();
            unauditedLength = unaudited.encodeAuthorize(ALICE, WRITE_ORDERS_UNAUDITED);
            scratch = new RequestEncoder();
        }
    }

    @Benchmark
    public long crossing(Agent agent) {
        return NativeAgent.generation(agent.handle);
    }

    @Benchmark
    public int encode(Encoded encoded) {
        return encoded.scratch.encodeAuthorize(ALICE, WRITE_ORDERS);
    }

    @Benchmark
    public long nativeAuthorize(Agent agent, Encoded encoded) {
        RequestEncoder audited = encoded.audited;
        return NativeAgent.authorize(agent.handle, audited.address(), audited.capacity(), encoded.auditedLength);
    }

    @Benchmark
    public long nativeAuthorize_unaudited(Agent agent, Encoded encoded) {
        RequestEncoder unaudited = encoded.unaudited;
        return NativeAgent.authorize(agent.handle, unaudited.address(), unaudited.capacity(),
            encoded.unauditedLength);
    }

    /** The shim's loop that turns the answer into Kafka's result list (copied from authorize()). */
    @Benchmark
    public List<AuthorizationResult> results(Agent agent) {
        long answer = agent.handle == 0 ? 0 : 1L;
        int count = WRITE_ORDERS.size();
        List<AuthorizationResult> results = new ArrayList<AuthorizationResult>(count);
        for (int i = 0; i < count; i++) {
            boolean allowed = i < 63 && (answer >= 0) && ((answer >>> i) & 1L) == 1L;
            results.add(allowed ? AuthorizationResult.ALLOWED : AuthorizationResult.DENIED);
        }
        return results;
    }

    @Benchmark
    public List<AuthorizationResult> full(Agent agent) {
        return agent.authorizer.authorize(ALICE, WRITE_ORDERS);
    }
}
