package org.devlive.grantforge.kafka.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.devlive.grantforge.kafka.agent.TestContexts.action;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.apache.kafka.server.authorizer.AuthorizationResult;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Many Kafka request threads calling the real library at once answer exactly as one thread does, and
 * across a swap of the snapshot every call is answered wholly by the old snapshot or wholly by the new
 * one, and only by the new one once it is seen in force.
 *
 * <p>What runs concurrently here is what a broker's request threads share: each thread's direct buffer
 * (grown for a huge name and let go again, answers of more than 63 actions written back into it), the
 * encoder's context memo on the Java side (compared by identity: contexts here share principal and
 * address objects but differ in address, listener or client id), the native context memo, each thread's
 * lane, and the snapshot's shared decision cache. The questions include answers that depend on the
 * client's address, listener and client id, so a cached or memoized answer served to the wrong context
 * shows as a difference.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ConcurrentAuthorizeTest {
    private static final Path FIXTURE = Paths.get(System.getProperty("grantforge.fixtures", "../tests/fixtures"),
        "snapshots", "e2e.json");
    private static final int THREADS = 8;
    private static final int PASSES = 10;
    /** Generous: only a change never applied reaches it; nothing here is timed. */
    private static final long PATIENCE_NANOS = TimeUnit.SECONDS.toNanos(90);

    @TempDir
    Path tmp;

    private final List<GrantForgeKafkaAuthorizer> opened = new ArrayList<>();
    private final ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();

    @AfterEach
    void closeAll() {
        opened.forEach(GrantForgeKafkaAuthorizer::close);
    }

    @Test
    void manyThreadsAtOnceAnswerAsOneThreadDoes() throws Exception {
        List<Question> questions = questions();
        List<List<AuthorizationResult>> oneThread = answers(open("one-thread.json", snapshotA()), questions);
        GrantForgeKafkaAuthorizer shared = open("shared.json", snapshotA());

        ConcurrentLinkedQueue<String> differences = new ConcurrentLinkedQueue<>();
        AtomicLong calls = new AtomicLong();
        runThreads(thread -> {
            Random order = new Random(thread);
            for (int pass = 0; pass < PASSES; pass++) {
                for (int i : shuffled(questions.size(), order)) {
                    List<AuthorizationResult> answer = questions.get(i).ask(shared);
                    calls.incrementAndGet();
                    if (!answer.equals(oneThread.get(i))) {
                        differences.add("thread " + thread + ", " + questions.get(i) + ": " + answer
                            + " where one thread got " + oneThread.get(i));
                    }
                }
            }
        });
        assertEquals(Collections.emptyList(), new ArrayList<>(differences));
        assertEquals((long) THREADS * PASSES * questions.size(), calls.get());
    }

    @Test
    void acrossASnapshotSwapEachCallIsAnsweredByTheOldOrTheNewSnapshotAndOnlyTheNewOnceItIsInForce()
        throws Exception {
        List<Question> questions = questions();
        List<List<AuthorizationResult>> byOld = answers(open("old.json", snapshotA()), questions);
        List<List<AuthorizationResult>> byNew = answers(open("new.json", snapshotB()), questions);
        int sentinel = firstDifference(byOld, byNew);
        Map<String, Object> fastPoll = new HashMap<>();
        fastPoll.put("grantforge.policy.file.poll.interval.ms", "20");
        GrantForgeKafkaAuthorizer live = open("live.json", snapshotA(), fastPoll);

        CountDownLatch everyThreadAnsweredOnce = new CountDownLatch(THREADS);
        CountDownLatch everyThreadAnsweredTwiceAfterTheSwap = new CountDownLatch(THREADS);
        // Set once a call that began after the swap got the new snapshot's answer: every call that
        // begins after that must be answered by the new snapshot.
        final boolean[] inForce = new boolean[1];
        final Object inForceLock = new Object();
        AtomicLong oldOnlyAnswers = new AtomicLong();
        AtomicLong newOnlyAnswers = new AtomicLong();
        ConcurrentLinkedQueue<String> wrong = new ConcurrentLinkedQueue<>();
        Thread[] workers = startThreads(thread -> {
            Random order = new Random(100 + thread);
            int passesInForce = 0;
            long deadline = System.nanoTime() + PATIENCE_NANOS;
            for (int pass = 0; passesInForce < 2 && System.nanoTime() < deadline; pass++) {
                boolean passBeganInForce;
                synchronized (inForceLock) {
                    passBeganInForce = inForce[0];
                }
                for (int i : shuffled(questions.size(), order)) {
                    boolean began;
                    synchronized (inForceLock) {
                        began = inForce[0];
                    }
                    List<AuthorizationResult> answer = questions.get(i).ask(live);
                    boolean old = answer.equals(byOld.get(i));
                    boolean fresh = answer.equals(byNew.get(i));
                    if (old && !fresh) {
                        oldOnlyAnswers.incrementAndGet();
                    } else if (fresh && !old) {
                        newOnlyAnswers.incrementAndGet();
                    }
                    if (began && !fresh) {
                        wrong.add("thread " + thread + ", " + questions.get(i) + ": " + answer
                            + " after the new snapshot was in force, which answers " + byNew.get(i));
                    } else if (!old && !fresh) {
                        wrong.add("thread " + thread + ", " + questions.get(i) + ": " + answer
                            + ", neither the old snapshot's " + byOld.get(i) + " nor the new one's " + byNew.get(i));
                    }
                }
                if (pass == 0) {
                    everyThreadAnsweredOnce.countDown();
                }
                if (passBeganInForce && ++passesInForce == 2) {
                    everyThreadAnsweredTwiceAfterTheSwap.countDown();
                }
            }
        });
        try {
            assertTrue(everyThreadAnsweredOnce.await(PATIENCE_NANOS, TimeUnit.NANOSECONDS),
                "the threads did not answer a first pass on the old snapshot");
            Path staged = tmp.resolve("live.json.new");
            Files.write(staged, snapshotB().getBytes(StandardCharsets.UTF_8));
            Files.move(staged, tmp.resolve("live.json"), StandardCopyOption.ATOMIC_MOVE,
                StandardCopyOption.REPLACE_EXISTING);
            long deadline = System.nanoTime() + PATIENCE_NANOS;
            while (!questions.get(sentinel).ask(live).equals(byNew.get(sentinel))) {
                assertTrue(System.nanoTime() < deadline, "the new snapshot was never applied");
                Thread.sleep(5);
            }
            synchronized (inForceLock) {
                inForce[0] = true;
            }
            assertTrue(everyThreadAnsweredTwiceAfterTheSwap.await(PATIENCE_NANOS, TimeUnit.NANOSECONDS),
                "the threads did not answer two passes after the swap");
        } finally {
            for (Thread worker : workers) {
                worker.join();
            }
        }
        assertNoFailures();
        assertEquals(Collections.emptyList(), new ArrayList<>(wrong));
        assertTrue(oldOnlyAnswers.get() >= (long) THREADS, "the threads asked the old snapshot: " + oldOnlyAnswers);
        assertTrue(newOnlyAnswers.get() >= 2L * THREADS, "the threads asked the new snapshot: " + newOnlyAnswers);
    }

    // ---------------------------------------------------------------------------------------------
    // the questions: principals, addresses, listeners and client ids that the policies tell apart

    /** One call to the authorizer: {@code authorize} with a list of actions, or {@code authorizeByResourceType}. */
    private static final class Question {
        final String name;
        final AuthorizableRequestContext context;
        final List<Action> actions;
        final AclOperation byTypeOperation;
        final ResourceType byTypeResource;

        Question(String name, AuthorizableRequestContext context, List<Action> actions) {
            this(name, context, actions, null, null);
        }

        Question(String name, AuthorizableRequestContext context, AclOperation op, ResourceType type) {
            this(name, context, null, op, type);
        }

        private Question(String name, AuthorizableRequestContext context, List<Action> actions, AclOperation op,
                         ResourceType type) {
            this.name = name;
            this.context = context;
            this.actions = actions;
            this.byTypeOperation = op;
            this.byTypeResource = type;
        }

        List<AuthorizationResult> ask(GrantForgeKafkaAuthorizer authorizer) {
            if (actions == null) {
                return Collections.singletonList(authorizer.authorizeByResourceType(context, byTypeOperation,
                    byTypeResource));
            }
            return authorizer.authorize(context, actions);
        }

        @Override
        public String toString() {
            return name;
        }
    }

    private static List<Question> questions() throws IOException {
        // Shared principal and address objects: the Java encoder compares a context's parts by identity.
        List<KafkaPrincipal> principals = new ArrayList<>();
        for (String user : new String[] {"alice", "bob", "carol", "dave", "admin"}) {
            principals.add(new KafkaPrincipal(KafkaPrincipal.USER_TYPE, user));
        }
        principals.add(new KafkaPrincipal("Group", "alice"));
        List<InetAddress> addresses = new ArrayList<>();
        for (String address : new String[] {"127.0.0.1", "10.1.2.3", "192.168.7.7", "::1", "fd00::17"}) {
            addresses.add(InetAddress.getByName(address));
        }
        String[][] listenersAndClients = {{"SASL_PLAINTEXT", "etl-1"}, {"INTERNAL", "etl-1"},
            {"SASL_PLAINTEXT", "console"}};

        List<Action> singles = new ArrayList<>();
        for (AclOperation op : new AclOperation[] {AclOperation.READ, AclOperation.WRITE, AclOperation.DESCRIBE,
            AclOperation.ALTER_CONFIGS, AclOperation.DESCRIBE_CONFIGS}) {
            for (String topic : new String[] {"orders", "orders-eu", "payments", "events-1", "metrics"}) {
                singles.add(action(op, ResourceType.TOPIC, topic));
            }
        }
        singles.add(action(AclOperation.READ, ResourceType.GROUP, "alice-1"));
        singles.add(action(AclOperation.READ, ResourceType.GROUP, "bob-1"));
        singles.add(action(AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER, "kafka-cluster"));
        List<Action> several = new ArrayList<>(singles.subList(0, 12));
        // More than 63 actions: the answers come back in the thread's buffer, not the return value.
        List<Action> many = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            many.add(singles.get(i % singles.size()));
        }
        // A name larger than the buffer a thread keeps: the buffer grows for one call and is let go.
        char[] huge = new char[300 * 1024];
        java.util.Arrays.fill(huge, 'x');
        List<Action> hugeName = List.of(action(AclOperation.READ, ResourceType.TOPIC, "orders" + new String(huge)),
            action(AclOperation.WRITE, ResourceType.TOPIC, "events-" + new String(huge)));

        List<Question> questions = new ArrayList<>();
        for (KafkaPrincipal principal : principals) {
            for (InetAddress address : addresses) {
                for (String[] lc : listenersAndClients) {
                    AuthorizableRequestContext context = TestContexts.of(principal, address, lc[0], lc[1]);
                    String who = principal + "@" + address.getHostAddress() + "/" + lc[0] + "/" + lc[1];
                    for (Action single : singles) {
                        questions.add(new Question(who + " " + describe(single), context,
                            Collections.singletonList(single)));
                    }
                    questions.add(new Question(who + " 12 actions", context, several));
                    questions.add(new Question(who + " WRITE on some TOPIC", context, AclOperation.WRITE,
                        ResourceType.TOPIC));
                    if (address == addresses.get(1) || address == addresses.get(3)) {
                        questions.add(new Question(who + " 100 actions", context, many));
                    }
                    if (address == addresses.get(3)) {
                        questions.add(new Question(who + " 300 KiB names", context, hugeName));
                    }
                }
            }
        }
        return questions;
    }

    private static String describe(Action action) {
        return action.operation() + " " + action.resourcePattern().resourceType() + " "
            + action.resourcePattern().name();
    }

    // ---------------------------------------------------------------------------------------------
    // the two snapshots: the e2e fixture with conditions on address, listener and client id, and a
    // second version that moves some of them

    /**
     * The e2e fixture (version 1) and: bob writes {@code events-*} from 10.0.0.0/8 and fd00::/8; carol
     * reads {@code events-*} on the listener {@code INTERNAL}; dave describes the configs of
     * {@code metrics} from clients {@code etl-*}.
     */
    private static String snapshotA() throws IOException {
        return withPolicies(1,
            policy("7", "events", "bob", "write", condition("ip-range", "10.0.0.0/8", "fd00::/8")),
            policy("8", "events", "carol", "read", condition("listener", "INTERNAL")),
            policy("9", "metrics", "dave", "describe_configs", condition("client-id", "etl-*")));
    }

    /** Version 2: bob's network is 192.168.0.0/16 and ::1, carol reads on every listener but INTERNAL's clients etl-*. */
    private static String snapshotB() throws IOException {
        return withPolicies(2,
            policy("7", "events", "bob", "write", condition("ip-range", "192.168.0.0/16", "::1/128")),
            policy("8", "events", "carol", "read", condition("client-id", "console")),
            policy("9", "metrics", "dave", "describe_configs", condition("listener", "INTERNAL")));
    }

    private static String withPolicies(int version, String... policies) throws IOException {
        String fixture = new String(Files.readAllBytes(FIXTURE), StandardCharsets.UTF_8);
        assertTrue(fixture.contains("\"policyVersion\":1,"), "the fixture's policyVersion was not found");
        String versioned = fixture.replace("\"policyVersion\":1,", "\"policyVersion\":" + version + ",");
        int policiesAt = versioned.indexOf("\"policies\"");
        int listAt = versioned.indexOf('[', policiesAt);
        assertTrue(policiesAt > 0 && listAt > 0, "the fixture's policies were not found");
        return versioned.substring(0, listAt + 1) + String.join(",", policies) + ","
            + versioned.substring(listAt + 1);
    }

    private static String policy(String id, String topicPrefix, String user, String accessType, String condition) {
        return "{\"id\":\"" + id + "\",\"name\":\"" + user + " " + accessType + " " + topicPrefix + "\","
            + "\"type\":\"ACCESS\",\"priority\":\"NORMAL\",\"document\":{\"resources\":{\"topic\":{\"values\":[\""
            + topicPrefix + "*\"],\"excludes\":false,\"recursive\":false}},\"allow\":[{\"users\":[\"" + user
            + "\"],\"groups\":[],\"roles\":[],\"accessTypes\":[\"" + accessType + "\"],\"conditions\":[" + condition
            + "],\"maskType\":null,\"maskValue\":null,\"rowFilter\":null}],\"allowExceptions\":[],\"deny\":[],"
            + "\"denyExceptions\":[],\"validity\":[]}}";
    }

    private static String condition(String type, String... values) {
        return "{\"type\":\"" + type + "\",\"values\":[\"" + String.join("\",\"", values) + "\"]}";
    }

    // ---------------------------------------------------------------------------------------------

    private GrantForgeKafkaAuthorizer open(String file, String snapshot) throws IOException {
        return open(file, snapshot, Collections.<String, Object>emptyMap());
    }

    private GrantForgeKafkaAuthorizer open(String file, String snapshot, Map<String, Object> extra)
        throws IOException {
        Path policies = tmp.resolve(file);
        Files.write(policies, snapshot.getBytes(StandardCharsets.UTF_8));
        GrantForgeKafkaAuthorizer authorizer = TestAuthorizers.offline(policies, extra);
        opened.add(authorizer);
        return authorizer;
    }

    /** Each question asked once, in order, on this thread. */
    private static List<List<AuthorizationResult>> answers(GrantForgeKafkaAuthorizer authorizer,
                                                           List<Question> questions) {
        List<List<AuthorizationResult>> answers = new ArrayList<>();
        for (Question question : questions) {
            answers.add(question.ask(authorizer));
        }
        assertTrue(answers.stream().anyMatch(a -> a.contains(AuthorizationResult.ALLOWED)), "something is allowed");
        assertTrue(answers.stream().anyMatch(a -> a.contains(AuthorizationResult.DENIED)), "something is refused");
        return answers;
    }

    /** The first question the two snapshots answer differently (the test is void without one). */
    private static int firstDifference(List<List<AuthorizationResult>> a, List<List<AuthorizationResult>> b) {
        int differing = 0;
        int first = -1;
        for (int i = 0; i < a.size(); i++) {
            if (!a.get(i).equals(b.get(i))) {
                differing++;
                first = first < 0 ? i : first;
            }
        }
        assertTrue(differing >= 20, "the two snapshots answer only " + differing + " questions differently");
        return first;
    }

    private static int[] shuffled(int size, Random random) {
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            order.add(i);
        }
        Collections.shuffle(order, random);
        return order.stream().mapToInt(Integer::intValue).toArray();
    }

    private interface Worker {
        void run(int thread) throws Exception;
    }

    /** Starts {@link #THREADS} threads running the worker; what one throws is kept for {@link #assertNoFailures}. */
    private Thread[] startThreads(Worker worker) {
        Thread[] threads = new Thread[THREADS];
        for (int t = 0; t < THREADS; t++) {
            final int thread = t;
            threads[t] = new Thread(() -> {
                try {
                    worker.run(thread);
                } catch (Throwable e) {
                    failures.add(e);
                }
            }, "request-thread-" + t);
            threads[t].start();
        }
        return threads;
    }

    private void runThreads(Worker worker) throws InterruptedException {
        for (Thread thread : startThreads(worker)) {
            thread.join();
        }
        assertNoFailures();
    }

    private void assertNoFailures() {
        Throwable first = failures.peek();
        if (first != null) {
            throw new AssertionError(failures.size() + " request threads failed; the first", first);
        }
    }
}
