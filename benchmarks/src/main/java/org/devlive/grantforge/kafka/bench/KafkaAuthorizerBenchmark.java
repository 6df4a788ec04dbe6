package org.devlive.grantforge.kafka.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.metadata.authorizer.StandardAuthorizer;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizationResult;
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
 * Kafka's {@code AuthorizerBenchmark} questions, asked of StandardAuthorizer (the anchor) and of the GrantForge
 * agent, on the same generated ACL set ({@link KafkaAclSet}) in the same JMH run:
 *
 * <ul>
 *   <li>{@code testAuthorizer}: WRITE on Topic {@code foo-bar35_resource-95} by {@code User:test-user} from
 *       127.0.0.1, a PRODUCE request (Kafka's deliberate worst case: every candidate ACL is READ; DENIED);</li>
 *   <li>{@code testAuthorizeByResourceType}: READ on some TOPIC by {@code User:test-user} from 127.0.0.2
 *       (ALLOWED).</li>
 * </ul>
 *
 * The agent runs with its decision cache off (every call decides: "uncached") and on (the same question
 * again: "cache hit"). Each (benchmark, parameters) pair runs in its own JVM, so a fork builds only the side
 * it measures; set-up time and memory of each side are printed as {@code GF-BENCH load ...} lines.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx14g"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class KafkaAuthorizerBenchmark {
    static final String TOPIC = KafkaAclSet.PREFIX + 95;

    /** The requests of Kafka's benchmark. */
    static final RequestContext AUTHORIZE_CONTEXT = Bench.context(KafkaAclSet.USER, "127.0.0.1", ApiKeys.PRODUCE);
    static final RequestContext BY_TYPE_CONTEXT = Bench.context(KafkaAclSet.USER, KafkaAclSet.BY_TYPE_HOST,
        ApiKeys.PRODUCE);
    static final List<Action> WRITE_TOPIC = Bench.literal(AclOperation.WRITE, ResourceType.TOPIC, TOPIC, true, true);
    /** The same question with Kafka's audit hints off (logIfAllowed, logIfDenied false): no audit work. */
    static final List<Action> WRITE_TOPIC_UNAUDITED = Bench.literal(AclOperation.WRITE, ResourceType.TOPIC, TOPIC,
        false, false);

    @State(Scope.Benchmark)
    public static class StandardSet {
        @Param({"10000", "50000", "200000"})
        public int resourceCount;
        @Param({"10", "50"})
        public int aclCount;
        @Param({"20"})
        public double denyPercentage;

        StandardAuthorizer authorizer;

        @Setup(Level.Trial)
        public void setup() {
            long heapBefore = Bench.heapUsedMiB();
            long start = System.nanoTime();
            authorizer = Bench.standardAuthorizer();
            long entries = StandardAcls.load(authorizer, resourceCount, aclCount, denyPercentage);
            authorizer.completeInitialLoad();
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            Bench.check("StandardAuthorizer testAuthorizer", AuthorizationResult.DENIED,
                authorizer.authorize(AUTHORIZE_CONTEXT, WRITE_TOPIC).get(0));
            Bench.check("StandardAuthorizer testAuthorizeByResourceType", AuthorizationResult.ALLOWED,
                authorizer.authorizeByResourceType(BY_TYPE_CONTEXT, AclOperation.READ, ResourceType.TOPIC));
            Bench.report("load side=standard resources=" + resourceCount + " acls=" + aclCount + " entries=" + entries
                + " millis=" + millis + " heapMiB=" + (Bench.heapUsedMiB() - heapBefore));
        }

        @TearDown(Level.Trial)
        public void tearDown() throws IOException {
            authorizer.close();
        }
    }

    /** The agent on the snapshot of the same set; subclasses choose the decision cache. */
    @State(Scope.Benchmark)
    public abstract static class GrantForgeSet {
        @Param({"10000", "50000", "200000"})
        public int resourceCount;
        @Param({"10", "50"})
        public int aclCount;
        @Param({"20"})
        public double denyPercentage;

        GrantForgeKafkaAuthorizer authorizer;
        Path file;

        abstract boolean cache();

        @Setup(Level.Trial)
        public void setup() throws IOException {
            file = Files.createTempFile("gf-bench-kafka-set-", ".json");
            long start = System.nanoTime();
            long bytes = GrantForgeSnapshot.write(file, resourceCount, aclCount, denyPercentage);
            long written = System.nanoTime();
            long rssBefore = Bench.rssMiB();
            authorizer = Bench.grantforge(file, cache());
            long loaded = System.nanoTime();
            long rssAfter = Bench.rssMiB();
            Bench.check("GrantForge testAuthorizer", AuthorizationResult.DENIED,
                authorizer.authorize(AUTHORIZE_CONTEXT, WRITE_TOPIC).get(0));
            Bench.check("GrantForge testAuthorizeByResourceType", AuthorizationResult.ALLOWED,
                authorizer.authorizeByResourceType(BY_TYPE_CONTEXT, AclOperation.READ, ResourceType.TOPIC));
            Bench.report("load side=grantforge cache=" + cache() + " resources=" + resourceCount + " acls=" + aclCount
                + " snapshotBytes=" + bytes + " writeMillis=" + TimeUnit.NANOSECONDS.toMillis(written - start)
                + " millis=" + TimeUnit.NANOSECONDS.toMillis(loaded - written) + " rssBeforeMiB=" + rssBefore
                + " rssAfterMiB=" + rssAfter);
        }

        @TearDown(Level.Trial)
        public void tearDown() throws IOException {
            authorizer.close();
            Files.deleteIfExists(file);
        }
    }

    @State(Scope.Benchmark)
    public static class GrantForgeUncached extends GrantForgeSet {
        @Override
        boolean cache() {
            return false;
        }
    }

    @State(Scope.Benchmark)
    public static class GrantForgeCached extends GrantForgeSet {
        @Override
        boolean cache() {
            return true;
        }
    }

    // --- testAuthorizer -------------------------------------------------------------------------------

    @Benchmark
    public List<AuthorizationResult> authorize_standard(StandardSet set) {
        return set.authorizer.authorize(AUTHORIZE_CONTEXT, WRITE_TOPIC);
    }

    @Benchmark
    public List<AuthorizationResult> authorize_grantforge_uncached(GrantForgeUncached set) {
        return set.authorizer.authorize(AUTHORIZE_CONTEXT, WRITE_TOPIC);
    }

    @Benchmark
    public List<AuthorizationResult> authorize_grantforge_cached(GrantForgeCached set) {
        return set.authorizer.authorize(AUTHORIZE_CONTEXT, WRITE_TOPIC);
    }

    /** Diagnostic: the cache hit without the audit of the denial (logIfDenied false). */
    @Benchmark
    public List<AuthorizationResult> authorize_grantforge_cached_unaudited(GrantForgeCached set) {
        return set.authorizer.authorize(AUTHORIZE_CONTEXT, WRITE_TOPIC_UNAUDITED);
    }

    // --- testAuthorizeByResourceType ------------------------------------------------------------------

    @Benchmark
    public AuthorizationResult byResourceType_standard(StandardSet set) {
        return set.authorizer.authorizeByResourceType(BY_TYPE_CONTEXT, AclOperation.READ, ResourceType.TOPIC);
    }

    @Benchmark
    public AuthorizationResult byResourceType_grantforge(GrantForgeUncached set) {
        return set.authorizer.authorizeByResourceType(BY_TYPE_CONTEXT, AclOperation.READ, ResourceType.TOPIC);
    }
}
