package org.devlive.grantforge.kafka.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.network.ClientInformation;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.metadata.authorizer.StandardAcl;
import org.apache.kafka.metadata.authorizer.StandardAuthorizer;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizationResult;
import org.devlive.grantforge.kafka.agent.GrantForgeKafkaAuthorizer;
import org.devlive.grantforge.kafka.agent.GrantForgeHybridAuthorizer;
import org.devlive.grantforge.kafka.agent.GrantForgeShadowAuthorizer;
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
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The produce path's common case on a small policy set ({@code tests/fixtures/snapshots/e2e.json}):
 * {@code authorize()} of WRITE on topic {@code orders} by {@code User:alice} (ALLOWED), asked again and again,
 * so the agent answers from its decision cache. One authorizer per JVM shared by the request threads, as in a
 * broker; 1 and 2 threads. The anchor is StandardAuthorizer with the same policies as ACLs (what the agent's
 * ACL view lists for e2e.json, roles and groups as their Kafka principals).
 *
 * <p>Project targets: agent median at most 150 ns with 1 thread and 300 ns with 2 threads (time per call and
 * thread). Diagnostics: the same call without audit (logIfAllowed false) and with the decision cache off, and
 * the call as a broker makes it: with a new request context, principal and client id per call.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class CacheHitBenchmark {
    static final RequestContext ALICE = Bench.context("alice", "127.0.0.1", ApiKeys.PRODUCE);
    /** As the broker asks on Produce: audit both ways. */
    static final List<Action> WRITE_ORDERS = Bench.literal(AclOperation.WRITE, ResourceType.TOPIC, "orders", true,
        true);
    static final List<Action> WRITE_ORDERS_UNAUDITED = Bench.literal(AclOperation.WRITE, ResourceType.TOPIC, "orders",
        false, false);

    public abstract static class GrantForgeSmall {
        GrantForgeKafkaAuthorizer authorizer;
        Path file;

        abstract boolean cache();

        @Setup(Level.Trial)
        public void setup() {
            file = Bench.snapshotFile("e2e.json");
            authorizer = Bench.grantforge(file, cache());
            Bench.check("GrantForge alice WRITE orders", AuthorizationResult.ALLOWED,
                authorizer.authorize(ALICE, WRITE_ORDERS).get(0));
        }

        @TearDown(Level.Trial)
        public void tearDown() throws IOException {
            authorizer.close();
            Files.deleteIfExists(file);
        }
    }

    @State(Scope.Benchmark)
    public static class GrantForgeE2e extends GrantForgeSmall {
        @Override
        boolean cache() {
            return true;
        }
    }

    @State(Scope.Benchmark)
    public static class GrantForgeE2eUncached extends GrantForgeSmall {
        @Override
        boolean cache() {
            return false;
        }
    }

    @State(Scope.Benchmark)
    public static class StandardE2e {
        StandardAuthorizer authorizer;

        @Setup(Level.Trial)
        public void setup() {
            authorizer = Bench.standardAuthorizer();
            addE2eAcls(authorizer);
            Bench.check("StandardAuthorizer alice WRITE orders", AuthorizationResult.ALLOWED,
                authorizer.authorize(ALICE, WRITE_ORDERS).get(0));
        }

        @TearDown(Level.Trial)
        public void tearDown() throws IOException {
            authorizer.close();
        }
    }

    /** e2e.json as ACLs, the initial load completed. */
    static void addE2eAcls(StandardAuthorizer authorizer) {
        // 1 alice read+write orders; 2 Role:analyst read orders*; 3 public (User:*) describe on *; 4 alice read group
        // alice-*; 5 alice denied write payments; 6 Group:ops alter_configs orders.
        long id = 0;
        addAcl(authorizer, ++id, ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:alice", AclOperation.READ, true);
        addAcl(authorizer, ++id, ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:alice", AclOperation.WRITE, true);
        addAcl(authorizer, ++id, ResourceType.TOPIC, "orders", PatternType.PREFIXED, "Role:analyst", AclOperation.READ, true);
        addAcl(authorizer, ++id, ResourceType.TOPIC, "*", PatternType.LITERAL, "User:*", AclOperation.DESCRIBE, true);
        addAcl(authorizer, ++id, ResourceType.GROUP, "alice-", PatternType.PREFIXED, "User:alice", AclOperation.READ, true);
        addAcl(authorizer, ++id, ResourceType.TOPIC, "payments", PatternType.LITERAL, "User:alice", AclOperation.WRITE, false);
        addAcl(authorizer, ++id, ResourceType.TOPIC, "orders", PatternType.LITERAL, "Group:ops", AclOperation.ALTER_CONFIGS,
            true);
        authorizer.completeInitialLoad();
    }

    private static void addAcl(StandardAuthorizer authorizer, long id, ResourceType type, String name,
                               PatternType patternType, String principal, AclOperation op, boolean allow) {
        authorizer.addAcl(new Uuid(2L, id), new StandardAcl(type, name, patternType, principal, "*", op,
            allow ? AclPermissionType.ALLOW : AclPermissionType.DENY));
    }

    /** Shadow mode: StandardE2e's ACLs decide, the agent on e2e.json is asked beside them (they agree). */
    @State(Scope.Benchmark)
    public static class ShadowE2e {
        GrantForgeShadowAuthorizer authorizer;
        Path file;

        @Setup(Level.Trial)
        public void setup() {
            file = Bench.snapshotFile("e2e.json");
            authorizer = Bench.shadow(file);
            addE2eAcls(authorizer);
            Bench.check("shadow alice WRITE orders", AuthorizationResult.ALLOWED,
                authorizer.authorize(ALICE, WRITE_ORDERS).get(0));
        }

        @TearDown(Level.Trial)
        public void tearDown() throws IOException {
            authorizer.close();
            Files.deleteIfExists(file);
        }
    }

    /**
     * Hybrid mode on e2e.json beside StandardE2e's ACLs and one more, alice's WRITE on {@code inventory}, which no policy
     * speaks of: a question about {@code orders} is the policies', one about {@code inventory} the ACLs'.
     */
    @State(Scope.Benchmark)
    public static class HybridE2e {
        GrantForgeHybridAuthorizer authorizer;
        Path file;

        @Setup(Level.Trial)
        public void setup() {
            file = Bench.snapshotFile("e2e.json");
            authorizer = Bench.beside(new GrantForgeHybridAuthorizer(), file);
            addAcl(authorizer, 100, ResourceType.TOPIC, "inventory", PatternType.LITERAL, "User:alice", AclOperation.WRITE,
                true);
            addE2eAcls(authorizer);
            Bench.check("hybrid alice WRITE orders", AuthorizationResult.ALLOWED,
                authorizer.authorize(ALICE, WRITE_ORDERS).get(0));
            Bench.check("hybrid alice WRITE inventory", AuthorizationResult.ALLOWED,
                authorizer.authorize(ALICE, WRITE_INVENTORY).get(0));
        }

        @TearDown(Level.Trial)
        public void tearDown() throws IOException {
            authorizer.close();
            Files.deleteIfExists(file);
        }
    }

    static final List<Action> WRITE_INVENTORY = Bench.literal(AclOperation.WRITE, ResourceType.TOPIC, "inventory",
        true, true);

    // --- the targets: cache hit, 1 and 2 threads --------------------------------------------------------

    @Benchmark
    @Threads(1)
    public List<AuthorizationResult> hit_1t_grantforge(GrantForgeE2e state) {
        return state.authorizer.authorize(ALICE, WRITE_ORDERS);
    }

    @Benchmark
    @Threads(2)
    public List<AuthorizationResult> hit_2t_grantforge(GrantForgeE2e state) {
        return state.authorizer.authorize(ALICE, WRITE_ORDERS);
    }

    @Benchmark
    @Threads(1)
    public List<AuthorizationResult> hit_1t_standard(StandardE2e state) {
        return state.authorizer.authorize(ALICE, WRITE_ORDERS);
    }

    @Benchmark
    @Threads(2)
    public List<AuthorizationResult> hit_2t_standard(StandardE2e state) {
        return state.authorizer.authorize(ALICE, WRITE_ORDERS);
    }

    // --- shadow mode: StandardAuthorizer, then the agent beside it ---------------------------------------

    @Benchmark
    @Threads(1)
    public List<AuthorizationResult> hit_1t_shadow(ShadowE2e state) {
        return state.authorizer.authorize(ALICE, WRITE_ORDERS);
    }

    @Benchmark
    @Threads(2)
    public List<AuthorizationResult> hit_2t_shadow(ShadowE2e state) {
        return state.authorizer.authorize(ALICE, WRITE_ORDERS);
    }

    @Benchmark
    @Threads(4)
    public List<AuthorizationResult> hit_4t_shadow(ShadowE2e state) {
        return state.authorizer.authorize(ALICE, WRITE_ORDERS);
    }

    @Benchmark
    @Threads(4)
    public List<AuthorizationResult> hit_4t_grantforge(GrantForgeE2e state) {
        return state.authorizer.authorize(ALICE, WRITE_ORDERS);
    }

    @Benchmark
    @Threads(4)
    public List<AuthorizationResult> hit_4t_standard(StandardE2e state) {
        return state.authorizer.authorize(ALICE, WRITE_ORDERS);
    }

    // --- hybrid mode: a question a policy decides, and one left to Kafka's ACLs --------------------------

    @Benchmark
    @Threads(1)
    public List<AuthorizationResult> hit_1t_hybrid(HybridE2e state) {
        return state.authorizer.authorize(ALICE, WRITE_ORDERS);
    }

    @Benchmark
    @Threads(2)
    public List<AuthorizationResult> hit_2t_hybrid(HybridE2e state) {
        return state.authorizer.authorize(ALICE, WRITE_ORDERS);
    }

    @Benchmark
    @Threads(4)
    public List<AuthorizationResult> hit_4t_hybrid(HybridE2e state) {
        return state.authorizer.authorize(ALICE, WRITE_ORDERS);
    }

    @Benchmark
    @Threads(1)
    public List<AuthorizationResult> hit_1t_hybrid_byAcl(HybridE2e state) {
        return state.authorizer.authorize(ALICE, WRITE_INVENTORY);
    }

    @Benchmark
    @Threads(2)
    public List<AuthorizationResult> hit_2t_hybrid_byAcl(HybridE2e state) {
        return state.authorizer.authorize(ALICE, WRITE_INVENTORY);
    }

    /** The anchor of shadow mode: StandardAuthorizer's call and then the agent's, two authorizers asked in turn. */
    @Benchmark
    @Threads(1)
    public List<AuthorizationResult> hit_1t_standard_then_grantforge(StandardE2e standard, GrantForgeE2e agent) {
        standard.authorizer.authorize(ALICE, WRITE_ORDERS);
        return agent.authorizer.authorize(ALICE, WRITE_ORDERS_UNAUDITED);
    }

    @Benchmark
    @Threads(1)
    public List<AuthorizationResult> hit_1t_shadow_newContext(ShadowE2e state) {
        return state.authorizer.authorize(aliceAsABrokerAsks(), WRITE_ORDERS);
    }

    // --- diagnostics -----------------------------------------------------------------------------------

    /**
     * alice's request as a broker hands it to the authorizer: Kafka builds a new {@code RequestContext} per request,
     * with a new {@code KafkaPrincipal} (its SASL and SSL authenticators run the principal builder each time) and the
     * client id parsed from the request's header; the address and listener are the connection's, the same objects.
     */
    static RequestContext aliceAsABrokerAsks() {
        return new RequestContext(new RequestHeader(ApiKeys.PRODUCE, (short) 1, new String("someclient"), 1), "1",
            ALICE.clientAddress, new KafkaPrincipal(KafkaPrincipal.USER_TYPE, "alice"), ALICE.listenerName, SecurityProtocol.PLAINTEXT,
            ClientInformation.EMPTY, false);
    }

    @Benchmark
    @Threads(1)
    public List<AuthorizationResult> hit_1t_grantforge_newContext(GrantForgeE2e state) {
        return state.authorizer.authorize(aliceAsABrokerAsks(), WRITE_ORDERS);
    }

    @Benchmark
    @Threads(1)
    public List<AuthorizationResult> hit_1t_standard_newContext(StandardE2e state) {
        return state.authorizer.authorize(aliceAsABrokerAsks(), WRITE_ORDERS);
    }

    @Benchmark
    @Threads(1)
    public List<AuthorizationResult> hit_1t_grantforge_unaudited(GrantForgeE2e state) {
        return state.authorizer.authorize(ALICE, WRITE_ORDERS_UNAUDITED);
    }

    @Benchmark
    @Threads(2)
    public List<AuthorizationResult> hit_2t_grantforge_unaudited(GrantForgeE2e state) {
        return state.authorizer.authorize(ALICE, WRITE_ORDERS_UNAUDITED);
    }

    @Benchmark
    @Threads(1)
    public List<AuthorizationResult> miss_1t_grantforge_uncached(GrantForgeE2eUncached state) {
        return state.authorizer.authorize(ALICE, WRITE_ORDERS);
    }
}
