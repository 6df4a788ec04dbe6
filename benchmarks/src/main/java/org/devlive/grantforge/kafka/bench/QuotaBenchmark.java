package org.devlive.grantforge.kafka.bench;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.internals.Plugin;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.Quota;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.network.Session;
import org.apache.kafka.server.config.ClientQuotaManagerConfig;
import org.apache.kafka.server.quota.ClientQuotaCallback;
import org.apache.kafka.server.quota.ClientQuotaEntity;
import org.apache.kafka.server.quota.ClientQuotaManager;
import org.apache.kafka.server.quota.ClientQuotaType;
import org.apache.kafka.server.quota.QuotaType;
import org.devlive.grantforge.kafka.agent.GrantForgeClientQuotaCallback;
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
import org.openjdk.jmh.infra.Blackhole;

/**
 * The quota callback ({@code GrantForgeClientQuotaCallback}) on 10,002 quota entities, next to Kafka's own
 * built-in callback (what {@code ClientQuotaManager} uses when {@code client.quota.callback.class} is unset), with
 * Kafka 4.3.1's {@code org.apache.kafka.server.quota.ClientQuotaManager} on the classpath:
 *
 * <ul>
 *   <li>{@code callback_*}: the callback alone on a warm view (the same user and client id asked again), one
 *       thread: {@code quotaMetricTags} + {@code quotaResetRequired} (what {@code getOrCreateQuotaSensors} asks on
 *       every request), and {@code quotaLimit} (what the fetch path asks). Targets: ≤ 100 ns and ≤ 50 ns.</li>
 *   <li>{@code manager_*}: Kafka's per-request path through a {@code ClientQuotaManager} built as
 *       {@code QuotaFactory.instantiate} builds it (one callback, wrapped in a {@code Plugin}, shared by the PRODUCE
 *       and FETCH managers; the built-in side passes {@code Optional.empty()}): {@code maybeRecordAndGetThrottleTimeMs}
 *       of 1 byte for produce and {@code maxValueInQuotaWindow} for fetch. Target: ours ≤ 1.2× the built-in.</li>
 *   <li>{@code replay_*}: the start-up replay of the 10,002 entities through {@code updateQuota} (single shot, an
 *       empty table each time), of the callback alone and through {@code ClientQuotaManager.updateQuota} for both
 *       sides. Target: ≤ 100 ms in all. With {@code -wi 0 -i 1 -f 10} each fork measures the first replay of a
 *       fresh JVM (the JIT cold, as at a broker's start).</li>
 *   <li>{@code threads_*}: Kafka's produce path through a {@code ClientQuotaManager} from several request threads at
 *       once, each thread a user of its own ({@code -t 1}, {@code 2}, {@code 4}, {@code 8}): users without a quota
 *       ({@code unthrottled}), users with one ({@code throttled}: a limit, never reached), or half of each
 *       ({@code mix}), on 10,000 users with a total each. Target: ours ≤ 1.2× the built-in at every thread
 *       count.</li>
 *   <li>{@code update_*}: one change of a quota through {@code ClientQuotaManager.updateQuota} with 10,000 live
 *       groups (one per user, each with a sensor): Kafka then re-reads the limit of every live group of a custom
 *       callback. A user's total ({@code user}), or the default client id's ({@code default}, which concerns every
 *       user's answer), against the built-in's same change.</li>
 *   <li>{@code flood_*}: one principal with ever new client ids, past its share of the view (every question crosses
 *       into Rust), next to a question the view keeps.</li>
 * </ul>
 *
 * <p>The entities ({@link QuotaSet}): 5,000 users with a total each; 2,500 of them (the even ones) with 2
 * sub-quotas ({@code <user, client-a>}, {@code <user, client-b>}); the default user and the default client id. Each
 * has a producer and a consumer byte rate. The connection asked about is user {@code user-01234} with client id
 * {@code client-a} ({@code reserved}: rule 1 of docs/quotas.md, group (user-01234, client-a)) or {@code app}
 * ({@code shared}: rule 3, group (user-01234, "")). Every {@code @Setup} checks the limit each side answers.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx2g"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class QuotaBenchmark {
    static final String USER = "user-01234";
    static final KafkaPrincipal PRINCIPAL = new KafkaPrincipal(KafkaPrincipal.USER_TYPE, USER);
    static final Session SESSION = new Session(PRINCIPAL, InetAddress.getLoopbackAddress());

    /** The client id asked about: a reserved sub-quota of the user, or one sharing the user's remainder. */
    static String clientOf(String client) {
        switch (client) {
            case "reserved":
                return "client-a";
            case "shared":
                return "app";
            default:
                throw new IllegalArgumentException("client: reserved or shared, not " + client);
        }
    }

    /** The 10,002 entities, each with a producer and a consumer byte rate, in a seeded shuffled order. */
    static final class QuotaSet {
        static final int USERS = 5_000;
        static final double USER_PRODUCE = 1e9;
        static final double SUB_PRODUCE = 1e8;
        static final double DEFAULT_USER_PRODUCE = 1e8;
        static final double DEFAULT_CLIENT_PRODUCE = 1e7;

        final List<ClientQuotaManager.KafkaQuotaEntity> entities = new ArrayList<>();
        final List<Double> produce = new ArrayList<>();

        QuotaSet() {
            for (int u = 0; u < USERS; u++) {
                ClientQuotaEntity.ConfigEntity user = new ClientQuotaManager.UserEntity(String.format("user-%05d", u));
                add(user, null, USER_PRODUCE);
                if (u % 2 == 0) {
                    add(user, new ClientQuotaManager.ClientIdEntity("client-a"), SUB_PRODUCE);
                    add(user, new ClientQuotaManager.ClientIdEntity("client-b"), SUB_PRODUCE);
                }
            }
            add(ClientQuotaManager.DEFAULT_USER_ENTITY, null, DEFAULT_USER_PRODUCE);
            add(null, ClientQuotaManager.DEFAULT_USER_CLIENT_ID, DEFAULT_CLIENT_PRODUCE);
            // Kafka replays the image in its own order; the answers must not depend on it.
            List<Integer> order = new ArrayList<>();
            for (int i = 0; i < entities.size(); i++) {
                order.add(i);
            }
            Collections.shuffle(order, new Random(55));
            List<ClientQuotaManager.KafkaQuotaEntity> e = new ArrayList<>();
            List<Double> p = new ArrayList<>();
            for (int i : order) {
                e.add(entities.get(i));
                p.add(produce.get(i));
            }
            entities.clear();
            entities.addAll(e);
            produce.clear();
            produce.addAll(p);
        }

        private void add(ClientQuotaEntity.ConfigEntity user, ClientQuotaEntity.ConfigEntity client, double value) {
            entities.add(new ClientQuotaManager.KafkaQuotaEntity(user, client));
            produce.add(value);
        }

        int size() {
            return entities.size();
        }

        /** The consumer byte rate: twice the producer's. */
        double fetch(int i) {
            return 2 * produce.get(i);
        }

        void updateCallback(ClientQuotaCallback callback, int quotaTypes) {
            for (int i = 0; i < size(); i++) {
                callback.updateQuota(ClientQuotaType.PRODUCE, entities.get(i), produce.get(i));
                if (quotaTypes > 1) {
                    callback.updateQuota(ClientQuotaType.FETCH, entities.get(i), fetch(i));
                }
            }
        }

        void removeFromCallback(ClientQuotaCallback callback) {
            for (ClientQuotaManager.KafkaQuotaEntity entity : entities) {
                callback.removeQuota(ClientQuotaType.PRODUCE, entity);
                callback.removeQuota(ClientQuotaType.FETCH, entity);
            }
        }

        void updateManagers(ClientQuotaManager produceManager, ClientQuotaManager fetchManager) {
            for (int i = 0; i < size(); i++) {
                ClientQuotaManager.KafkaQuotaEntity e = entities.get(i);
                Optional<ClientQuotaEntity.ConfigEntity> user = Optional.ofNullable(e.userEntity());
                Optional<ClientQuotaEntity.ConfigEntity> client = Optional.ofNullable(e.clientIdEntity());
                produceManager.updateQuota(user, client, Optional.of(new Quota(produce.get(i), true)));
                if (fetchManager != null) {
                    fetchManager.updateQuota(user, client, Optional.of(new Quota(fetch(i), true)));
                }
            }
        }

        /** The produce limit of docs/quotas.md (GrantForge) or of Kafka's built-in callback for USER + client. */
        static double expectedProduce(String client, boolean grantforge) {
            if ("reserved".equals(client)) {
                return SUB_PRODUCE;
            }
            return grantforge ? USER_PRODUCE - 2 * SUB_PRODUCE : USER_PRODUCE;
        }
    }

    static GrantForgeClientQuotaCallback grantforgeCallback() {
        Map<String, Object> configs = new HashMap<>();
        String nativeLibrary = System.getProperty(Bench.NATIVE_PROPERTY);
        if (nativeLibrary != null && !nativeLibrary.isEmpty()) {
            configs.put("grantforge.native.library.path", nativeLibrary);
        }
        GrantForgeClientQuotaCallback callback = new GrantForgeClientQuotaCallback();
        callback.configure(configs);
        return callback;
    }

    /** Our callback as {@code QuotaFactory.instantiate} hands it to the managers: wrapped once in a Plugin. */
    static Optional<Plugin<ClientQuotaCallback>> grantforgePlugin(Metrics metrics) {
        return Optional.of(Plugin.wrapInstance((ClientQuotaCallback) grantforgeCallback(), metrics,
            "client.quota.callback.class", "role", "broker"));
    }

    static void checkLimit(String what, double expected, Double actual) {
        if (actual == null || Double.compare(expected, actual) != 0) {
            throw new IllegalStateException(what + ": expected " + expected + " but got " + actual);
        }
    }

    static void checkEquals(String what, Object expected, Object actual) {
        if (!expected.equals(actual)) {
            throw new IllegalStateException(what + ": expected " + expected + " but got " + actual);
        }
    }

    // --- (a) the callback alone, warm view --------------------------------------------------------------

    @State(Scope.Benchmark)
    public static class CallbackSet {
        @Param({"reserved", "shared"})
        public String client;

        GrantForgeClientQuotaCallback callback;
        String clientId;
        Map<String, String> fetchTags;

        @Setup(Level.Trial)
        public void setup() {
            long start = System.nanoTime();
            QuotaSet set = new QuotaSet();
            callback = grantforgeCallback();
            long configured = System.nanoTime();
            set.updateCallback(callback, 2);
            long loaded = System.nanoTime();
            clientId = clientOf(client);
            Map<String, String> produceTags = callback.quotaMetricTags(ClientQuotaType.PRODUCE, PRINCIPAL, clientId);
            checkEquals("produce tags", "reserved".equals(client) ? Map.of("user", USER, "client-id", clientId)
                : Map.of("user", USER, "client-id", ""), produceTags);
            checkLimit("produce limit", QuotaSet.expectedProduce(client, true),
                callback.quotaLimit(ClientQuotaType.PRODUCE, produceTags));
            fetchTags = callback.quotaMetricTags(ClientQuotaType.FETCH, PRINCIPAL, clientId);
            checkLimit("fetch limit", 2 * QuotaSet.expectedProduce(client, true),
                callback.quotaLimit(ClientQuotaType.FETCH, fetchTags));
            checkEquals("reset after own changes", false, callback.quotaResetRequired(ClientQuotaType.PRODUCE));
            Bench.report("quota-load side=callback entities=" + set.size() + " updates=" + 2 * set.size()
                + " configureMillis=" + TimeUnit.NANOSECONDS.toMillis(configured - start) + " replayMillis="
                + TimeUnit.NANOSECONDS.toMillis(loaded - configured));
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            callback.close();
        }
    }

    /** What {@code getOrCreateQuotaSensors} asks of a custom callback on every request. */
    @Benchmark
    public boolean callback_metricTagsAndReset(CallbackSet s, Blackhole bh) {
        bh.consume(s.callback.quotaMetricTags(ClientQuotaType.PRODUCE, PRINCIPAL, s.clientId));
        return s.callback.quotaResetRequired(ClientQuotaType.PRODUCE);
    }

    /** What {@code maxValueInQuotaWindow} asks on every fetch, with the tags the callback gave. */
    @Benchmark
    public Double callback_quotaLimit(CallbackSet s) {
        return s.callback.quotaLimit(ClientQuotaType.FETCH, s.fetchTags);
    }

    // --- (b) Kafka's ClientQuotaManager, built-in callback versus ours ------------------------------------

    /** A PRODUCE and a FETCH manager sharing one callback and one Metrics, as QuotaFactory builds them. */
    @State(Scope.Benchmark)
    public abstract static class Managers {
        @Param({"reserved", "shared"})
        public String client;

        Metrics metrics;
        ClientQuotaManager produce;
        ClientQuotaManager fetch;
        String clientId;
        final Time time = Time.SYSTEM;

        abstract Optional<Plugin<ClientQuotaCallback>> plugin(Metrics metrics);

        abstract boolean grantforge();

        @Setup(Level.Trial)
        public void setup() {
            QuotaSet set = new QuotaSet();
            metrics = new Metrics();
            Optional<Plugin<ClientQuotaCallback>> plugin = plugin(metrics);
            ClientQuotaManagerConfig config = new ClientQuotaManagerConfig();
            produce = new ClientQuotaManager(config, metrics, QuotaType.PRODUCE, time, "bench-", plugin);
            fetch = new ClientQuotaManager(config, metrics, QuotaType.FETCH, time, "bench-", plugin);
            long start = System.nanoTime();
            set.updateManagers(produce, fetch);
            long loaded = System.nanoTime();
            clientId = clientOf(client);
            double expected = QuotaSet.expectedProduce(client, grantforge());
            checkLimit("produce quota", expected, produce.quota(PRINCIPAL, clientId).bound());
            checkLimit("fetch quota", 2 * expected, fetch.quota(PRINCIPAL, clientId).bound());
            checkLimit("fetch max value in window", 2 * expected * (config.numQuotaSamples() - 1)
                * config.quotaWindowSizeSeconds(), fetch.maxValueInQuotaWindow(SESSION, clientId));
            checkEquals("produce not throttled", 0,
                produce.maybeRecordAndGetThrottleTimeMs(SESSION, clientId, 1.0, time.milliseconds()));
            Bench.report("quota-load side=" + (grantforge() ? "grantforge" : "builtin") + " client=" + client
                + " entities=" + set.size() + " managerUpdates=" + 2 * set.size() + " replayMillis="
                + TimeUnit.NANOSECONDS.toMillis(loaded - start) + " quotaTypesEnabled=" + produce.quotaTypesEnabled());
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            checkEquals("produce never throttled in the run", 0,
                produce.maybeRecordAndGetThrottleTimeMs(SESSION, clientId, 1.0, time.milliseconds()));
            produce.shutdown();
            fetch.shutdown();
            metrics.close();
        }
    }

    @State(Scope.Benchmark)
    public static class BuiltinManagers extends Managers {
        @Override
        Optional<Plugin<ClientQuotaCallback>> plugin(Metrics metrics) {
            return Optional.empty();
        }

        @Override
        boolean grantforge() {
            return false;
        }
    }

    @State(Scope.Benchmark)
    public static class GrantForgeManagers extends Managers {
        @Override
        Optional<Plugin<ClientQuotaCallback>> plugin(Metrics metrics) {
            return grantforgePlugin(metrics);
        }

        @Override
        boolean grantforge() {
            return true;
        }
    }

    @Benchmark
    public int manager_produce_builtin(BuiltinManagers s) {
        return s.produce.maybeRecordAndGetThrottleTimeMs(SESSION, s.clientId, 1.0, s.time.milliseconds());
    }

    @Benchmark
    public int manager_produce_grantforge(GrantForgeManagers s) {
        return s.produce.maybeRecordAndGetThrottleTimeMs(SESSION, s.clientId, 1.0, s.time.milliseconds());
    }

    @Benchmark
    public double manager_fetch_builtin(BuiltinManagers s) {
        return s.fetch.maxValueInQuotaWindow(SESSION, s.clientId);
    }

    @Benchmark
    public double manager_fetch_grantforge(GrantForgeManagers s) {
        return s.fetch.maxValueInQuotaWindow(SESSION, s.clientId);
    }

    // --- (c) the start-up replay ----------------------------------------------------------------------

    /** The callback alone: {@code quotaTypes} updateQuota calls per entity into an empty table. */
    @State(Scope.Benchmark)
    public static class ReplayCallback {
        @Param({"1", "2"})
        public int quotaTypes;

        final QuotaSet set = new QuotaSet();
        GrantForgeClientQuotaCallback callback;
        /** Whether the table holds entities (not before the first iteration: a cold fork stays cold). */
        boolean filled;

        @Setup(Level.Trial)
        public void setup() {
            callback = grantforgeCallback();
        }

        @Setup(Level.Iteration)
        public void empty() {
            if (filled) {
                set.removeFromCallback(callback);
            }
        }

        @TearDown(Level.Iteration)
        public void verify() {
            filled = true;
            checkLimit("replayed limit", QuotaSet.SUB_PRODUCE, callback.quotaLimit(ClientQuotaType.PRODUCE,
                callback.quotaMetricTags(ClientQuotaType.PRODUCE, PRINCIPAL, "client-a")));
        }
    }

    /** Fresh managers (fresh Metrics) per iteration; the replay goes through ClientQuotaManager.updateQuota. */
    @State(Scope.Benchmark)
    public abstract static class ReplayManagers {
        @Param({"1", "2"})
        public int quotaTypes;

        final QuotaSet set = new QuotaSet();
        Metrics metrics;
        ClientQuotaManager produce;
        ClientQuotaManager fetch;
        /** Whether the JVM's table holds entities (not before the first iteration: a cold fork stays cold). */
        boolean filled;

        abstract Optional<Plugin<ClientQuotaCallback>> plugin(Metrics metrics);

        @Setup(Level.Iteration)
        public void fresh() {
            metrics = new Metrics();
            Optional<Plugin<ClientQuotaCallback>> plugin = plugin(metrics);
            if (filled) {
                plugin.ifPresent(p -> set.removeFromCallback(p.get()));
            }
            ClientQuotaManagerConfig config = new ClientQuotaManagerConfig();
            produce = new ClientQuotaManager(config, metrics, QuotaType.PRODUCE, Time.SYSTEM, "bench-", plugin);
            fetch = quotaTypes > 1
                ? new ClientQuotaManager(config, metrics, QuotaType.FETCH, Time.SYSTEM, "bench-", plugin) : null;
        }

        @TearDown(Level.Iteration)
        public void close() {
            filled = true;
            checkLimit("replayed quota", QuotaSet.SUB_PRODUCE, produce.quota(PRINCIPAL, "client-a").bound());
            produce.shutdown();
            if (fetch != null) {
                fetch.shutdown();
            }
            metrics.close();
        }
    }

    @State(Scope.Benchmark)
    public static class ReplayBuiltin extends ReplayManagers {
        @Override
        Optional<Plugin<ClientQuotaCallback>> plugin(Metrics metrics) {
            return Optional.empty();
        }
    }

    @State(Scope.Benchmark)
    public static class ReplayGrantForge extends ReplayManagers {
        @Override
        Optional<Plugin<ClientQuotaCallback>> plugin(Metrics metrics) {
            return grantforgePlugin(metrics);
        }
    }

    @Benchmark
    @BenchmarkMode(Mode.SingleShotTime)
    @OutputTimeUnit(TimeUnit.MILLISECONDS)
    @Warmup(iterations = 5)
    @Measurement(iterations = 20)
    public ClientQuotaCallback replay_callback_grantforge(ReplayCallback s) {
        s.set.updateCallback(s.callback, s.quotaTypes);
        return s.callback;
    }

    @Benchmark
    @BenchmarkMode(Mode.SingleShotTime)
    @OutputTimeUnit(TimeUnit.MILLISECONDS)
    @Warmup(iterations = 5)
    @Measurement(iterations = 20)
    public ClientQuotaManager replay_manager_builtin(ReplayBuiltin s) {
        s.set.updateManagers(s.produce, s.fetch);
        return s.produce;
    }

    @Benchmark
    @BenchmarkMode(Mode.SingleShotTime)
    @OutputTimeUnit(TimeUnit.MILLISECONDS)
    @Warmup(iterations = 5)
    @Measurement(iterations = 20)
    public ClientQuotaManager replay_manager_grantforge(ReplayGrantForge s) {
        s.set.updateManagers(s.produce, s.fetch);
        return s.produce;
    }

    // --- (d) many request threads, each a user of its own ----------------------------------------------

    /** 10,000 users with a produce total each (user-00000 ...), nothing else. */
    static List<String> usersWithTotals(int count) {
        List<String> users = new ArrayList<>();
        for (int u = 0; u < count; u++) {
            users.add(String.format("user-%05d", u));
        }
        return users;
    }

    static final int LIVE_USERS = 10_000;
    static final double TOTAL = 1e9;

    /** A PRODUCE manager on 10,000 users' totals, with the built-in callback or ours. */
    @State(Scope.Benchmark)
    public abstract static class UserManagers {
        @Param({"unthrottled", "throttled", "mix"})
        public String users;

        Metrics metrics;
        ClientQuotaManager produce;
        final Time time = Time.SYSTEM;
        final java.util.concurrent.atomic.AtomicInteger threads = new java.util.concurrent.atomic.AtomicInteger();

        abstract Optional<Plugin<ClientQuotaCallback>> plugin(Metrics metrics);

        @Setup(Level.Trial)
        public void setup() {
            metrics = new Metrics();
            produce = new ClientQuotaManager(new ClientQuotaManagerConfig(), metrics, QuotaType.PRODUCE, time, "bench-",
                plugin(metrics));
            for (String user : usersWithTotals(LIVE_USERS)) {
                produce.updateQuota(Optional.of(new ClientQuotaManager.UserEntity(user)), Optional.empty(),
                    Optional.of(new Quota(TOTAL, true)));
            }
        }

        /** The session of the {@code n}th thread: a user with a total, or one without a quota. */
        Session sessionOf(int n) {
            boolean throttled = "throttled".equals(users) || ("mix".equals(users) && n % 2 == 1);
            String user = throttled ? String.format("user-%05d", n) : "free-" + n;
            return new Session(new KafkaPrincipal(KafkaPrincipal.USER_TYPE, user), InetAddress.getLoopbackAddress());
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            produce.shutdown();
            metrics.close();
        }
    }

    @State(Scope.Benchmark)
    public static class BuiltinUserManagers extends UserManagers {
        @Override
        Optional<Plugin<ClientQuotaCallback>> plugin(Metrics metrics) {
            return Optional.empty();
        }
    }

    @State(Scope.Benchmark)
    public static class GrantForgeUserManagers extends UserManagers {
        @Override
        Optional<Plugin<ClientQuotaCallback>> plugin(Metrics metrics) {
            return grantforgePlugin(metrics);
        }
    }

    @Benchmark
    public int threads_produce_builtin(BuiltinUserManagers s, ThreadSession t) {
        return s.produce.maybeRecordAndGetThrottleTimeMs(t.of(s), "app", 1.0, s.time.milliseconds());
    }

    @Benchmark
    public int threads_produce_grantforge(GrantForgeUserManagers s, ThreadSession t) {
        return s.produce.maybeRecordAndGetThrottleTimeMs(t.of(s), "app", 1.0, s.time.milliseconds());
    }

    /** One request thread's user, chosen on its first request from the managers it measures. */
    @State(Scope.Thread)
    public static class ThreadSession {
        Session session;

        Session of(UserManagers managers) {
            if (session == null) {
                session = managers.sessionOf(managers.threads.getAndIncrement());
            }
            return session;
        }
    }

    // --- (e) one change with 10,000 live groups ---------------------------------------------------------

    @State(Scope.Benchmark)
    public abstract static class LiveGroups {
        @Param({"user", "default"})
        public String change;

        Metrics metrics;
        ClientQuotaManager produce;
        final Time time = Time.SYSTEM;
        boolean flip;

        abstract Optional<Plugin<ClientQuotaCallback>> plugin(Metrics metrics);

        @Setup(Level.Trial)
        public void setup() {
            metrics = new Metrics();
            produce = new ClientQuotaManager(new ClientQuotaManagerConfig(), metrics, QuotaType.PRODUCE, time, "bench-",
                plugin(metrics));
            List<String> users = usersWithTotals(LIVE_USERS);
            for (String user : users) {
                produce.updateQuota(Optional.of(new ClientQuotaManager.UserEntity(user)), Optional.empty(),
                    Optional.of(new Quota(TOTAL, true)));
            }
            for (String user : users) {
                Session session = new Session(new KafkaPrincipal(KafkaPrincipal.USER_TYPE, user),
                    InetAddress.getLoopbackAddress());
                checkEquals("live group of " + user, 0,
                    produce.maybeRecordAndGetThrottleTimeMs(session, "app", 1.0, time.milliseconds()));
            }
        }

        /** Changes one value (a new one each time, so that every call is a change). */
        void changeOnce() {
            flip = !flip;
            Optional<ClientQuotaEntity.ConfigEntity> user = "user".equals(change)
                ? Optional.of(new ClientQuotaManager.UserEntity("user-04242")) : Optional.empty();
            Optional<ClientQuotaEntity.ConfigEntity> client = "user".equals(change)
                ? Optional.empty() : Optional.of(ClientQuotaManager.DEFAULT_USER_CLIENT_ID);
            produce.updateQuota(user, client, Optional.of(new Quota(flip ? TOTAL / 2 : TOTAL / 3, true)));
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            checkLimit("user-04242's total", "user".equals(change) ? (flip ? TOTAL / 2 : TOTAL / 3) : TOTAL,
                produce.quota(new KafkaPrincipal(KafkaPrincipal.USER_TYPE, "user-04242"), "app").bound());
            produce.shutdown();
            metrics.close();
        }
    }

    @State(Scope.Benchmark)
    public static class BuiltinLiveGroups extends LiveGroups {
        @Override
        Optional<Plugin<ClientQuotaCallback>> plugin(Metrics metrics) {
            return Optional.empty();
        }
    }

    @State(Scope.Benchmark)
    public static class GrantForgeLiveGroups extends LiveGroups {
        @Override
        Optional<Plugin<ClientQuotaCallback>> plugin(Metrics metrics) {
            return grantforgePlugin(metrics);
        }
    }

    @Benchmark
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public ClientQuotaManager update_builtin(BuiltinLiveGroups s) {
        s.changeOnce();
        return s.produce;
    }

    @Benchmark
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public ClientQuotaManager update_grantforge(GrantForgeLiveGroups s) {
        s.changeOnce();
        return s.produce;
    }

    // --- (f) one principal past its share of the view ----------------------------------------------------

    @State(Scope.Benchmark)
    public static class Flood {
        GrantForgeClientQuotaCallback callback;
        final KafkaPrincipal flooder = new KafkaPrincipal(KafkaPrincipal.USER_TYPE, "flooder");
        long next;

        @Setup(Level.Trial)
        public void setup() {
            callback = grantforgeCallback();
            callback.updateQuota(ClientQuotaType.REQUEST, new ClientQuotaManager.KafkaQuotaEntity(
                new ClientQuotaManager.UserEntity("flooder"), null), 50.0);
            for (int i = 0; i < 2_000; i++) {
                callback.quotaMetricTags(ClientQuotaType.REQUEST, flooder, "c" + i);
            }
        }
    }

    /** A new client id of a principal past its share: crosses into Rust (and is counted). */
    @Benchmark
    public Map<String, String> flood_newClientId(Flood s) {
        return s.callback.quotaMetricTags(ClientQuotaType.REQUEST, s.flooder, "n" + (s.next++ % 100_000));
    }

    /** Another principal's question, kept by the view. */
    @Benchmark
    public Map<String, String> flood_otherPrincipal(Flood s) {
        return s.callback.quotaMetricTags(ClientQuotaType.REQUEST, PRINCIPAL, "app");
    }
}
