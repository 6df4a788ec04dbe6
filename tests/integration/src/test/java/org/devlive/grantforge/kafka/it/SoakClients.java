package org.devlive.grantforge.kafka.it;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.TransactionalIdAuthorizationException;

/**
 * The soak's real Kafka clients, one thread each, every attempt recorded as an {@link SoakOracle.Outcome}: allowed,
 * refused with Kafka's authorization error, or neither (a timeout while a broker restarts: counted, not judged).
 *
 * <ul>
 *   <li>{@code alice}: an idempotent producer on {@value #STEADY}, always allowed;
 *   <li>{@code bob}: a producer on {@value #CHURNED}, whose right to write the churn grants and revokes, and on
 *       {@value #TIMED}, where validity periods begin and end during the run;
 *   <li>{@code carol}: a consumer in group {@code carol-soak} on {@value #STEADY}, always allowed;
 *   <li>{@code dave}: a transactional producer on {@value #STEADY}, always allowed;
 *   <li>{@code erin}: an admin describing the topics, always allowed;
 *   <li>{@code frank}: a producer on {@value #ROLE}, allowed while he holds the role that may write it, which the soak
 *       grants and ends without a new policy version;
 *   <li>{@code mallory}: a principal with no rights that probes, always refused.
 * </ul>
 */
final class SoakClients implements AutoCloseable {
    static final String STEADY = "soak-steady";
    static final String CHURNED = "soak-churned";
    static final String TIMED = "soak-timed";
    static final String ROLE = "soak-role";
    /** dave's transactional id, as the oracle names the resource of its outcomes. */
    static final String TRANSACTIONAL_ID = "transactional_id:dave-soak";
    static final String QUOTA = "soak-quota";
    /** quinn's producer_byte_rate (entity {@code <quinn>}). */
    static final long QUINN_BYTES_PER_S = 64 * 1024;
    /** The sub-quota reserved out of it for quinn's client {@code quinn-reserved} (entity {@code <quinn, quinn-reserved>}). */
    static final long RESERVED_BYTES_PER_S = 16 * 1024;

    /** A quota-limited producer: its client id and the limit its group is held to. */
    record Limited(String clientId, long limit) {
    }

    /**
     * quinn's two producers. With the agent's callback (KIP-55) the reserved one is held to its sub-quota and the other
     * shares what remains of quinn's quota; the anchor gives Kafka's own callback these same two limits as its own rules
     * read them ({@code <quinn, quinn-reserved>} and {@code <quinn>}).
     */
    static final List<Limited> LIMITED = List.of(new Limited("quinn-reserved", RESERVED_BYTES_PER_S),
        new Limited("quinn-shared", QUINN_BYTES_PER_S - RESERVED_BYTES_PER_S));

    static {
        // mallory's refusals are judged, not logged: the producer's metadata logs each one at ERROR (read by
        // slf4j-simple when the logger is made, so before any producer of this JVM)
        System.setProperty("org.slf4j.simpleLogger.log.org.apache.kafka.clients.Metadata", "off");
    }

    private final KafkaCluster cluster;
    /** A node with Kafka's built-in quota callback and the same limits for quinn: what quinn's rates are held to. */
    private final KafkaNode anchor;
    /** Bytes of quinn's records acknowledged per second of the run (epoch seconds), by client id, on the cluster and on the anchor. */
    final Map<String, Map<Long, AtomicLong>> limitedOnCluster = new ConcurrentHashMap<>();
    final Map<String, Map<Long, AtomicLong>> limitedOnAnchor = new ConcurrentHashMap<>();
    private final Consumer<SoakOracle.Outcome> record;
    private final List<Thread> threads = new ArrayList<>();
    private final Map<String, AtomicLong> unavailable = new ConcurrentHashMap<>();
    /** The first failure of each principal's client as a whole. */
    private final Map<String, String> failures = new ConcurrentHashMap<>();
    private volatile boolean running = true;

    SoakClients(KafkaCluster cluster, KafkaNode anchor, Consumer<SoakOracle.Outcome> record) {
        this.cluster = cluster;
        this.anchor = anchor;
        this.record = record;
    }

    /** Attempts that ended neither allowed nor refused, per principal (timeouts, a broker away). */
    Map<String, AtomicLong> unavailable() {
        return unavailable;
    }

    void start() {
        loop("alice", this::alice);
        loop("bob", this::bob);
        loop("carol", this::carol);
        loop("dave", this::dave);
        loop("erin", this::erin);
        loop("frank", this::frank);
        loop("mallory", this::mallory);
        for (Limited limited : LIMITED) {
            String id = limited.clientId();
            Map<Long, AtomicLong> onCluster = limitedOnCluster.computeIfAbsent(id, k -> new ConcurrentHashMap<>());
            Map<Long, AtomicLong> onAnchor = limitedOnAnchor.computeIfAbsent(id, k -> new ConcurrentHashMap<>());
            loop(id, () -> quinn(limited, id, cluster.producer("quinn", quinnSettings(id)), onCluster));
            loop(id + "-anchor", () -> quinn(limited, id + " on the anchor", anchor.producer("quinn", quinnSettings(id)), onAnchor));
        }
    }

    private interface Work {
        void run() throws Exception;
    }

    private void loop(String principal, Work work) {
        Thread thread = new Thread(() -> {
            while (running) {
                try {
                    work.run();
                } catch (InterruptedException e) {
                    return;
                } catch (Exception e) {
                    // a client that failed as a whole is made again: counted, and the loop goes on
                    unavailable.computeIfAbsent(principal, p -> new AtomicLong()).incrementAndGet();
                    if (failures.putIfAbsent(principal, e.toString()) == null) {
                        System.out.println("soak: " + principal + "'s client failed (made again): " + e);
                    }
                    pause(500);
                }
            }
        }, "grantforge-it-soak-" + principal);
        thread.setDaemon(true);
        threads.add(thread);
        thread.start();
    }

    private static Properties timeouts() {
        Properties p = new Properties();
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "10000");
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "10000");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        return p;
    }

    /** Sends one record and records the outcome of WRITE on {@code topic}. */
    private void produce(KafkaProducer<String, String> producer, String principal, String topic) throws InterruptedException {
        long start = System.currentTimeMillis();
        try {
            producer.send(new ProducerRecord<>(topic, principal, "v" + start)).get(15, TimeUnit.SECONDS);
            record.accept(new SoakOracle.Outcome(principal, "WRITE", topic, start, System.currentTimeMillis(), true));
        } catch (ExecutionException e) {
            outcomeOfFailure(principal, "WRITE", topic, start, e.getCause());
        } catch (java.util.concurrent.TimeoutException | KafkaException e) {
            outcomeOfFailure(principal, "WRITE", topic, start, e);
        }
    }

    private void outcomeOfFailure(String principal, String operation, String resource, long start, Throwable failure) {
        if (failure instanceof AuthorizationException) {
            record.accept(new SoakOracle.Outcome(principal, operation, resource, start, System.currentTimeMillis(), false));
        } else {
            unavailable.computeIfAbsent(principal, p -> new AtomicLong()).incrementAndGet();
        }
    }

    /** One record at a time to each of {@code topics} in turn, with a pause after each round. */
    private void producing(String principal, Properties settings, long pauseMs, String... topics) throws Exception {
        try (KafkaProducer<String, String> producer = cluster.producer(principal, settings)) {
            while (running) {
                for (String topic : topics) {
                    produce(producer, principal, topic);
                }
                pause(pauseMs);
            }
        }
    }

    private void alice() throws Exception {
        Properties p = timeouts();
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        producing("alice", p, 50, STEADY);
    }

    private void bob() throws Exception {
        Properties p = timeouts();
        // bob may not write at times: an idempotent producer would need a right it does not always have to start
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.RETRIES_CONFIG, "3");
        producing("bob", p, 50, CHURNED, TIMED);
    }

    private void frank() throws Exception {
        Properties p = timeouts();
        // as bob: frank may not write at times
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.RETRIES_CONFIG, "3");
        producing("frank", p, 100, ROLE);
    }

    private void carol() throws Exception {
        Properties p = new Properties();
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "latest");
        p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "10000");
        p.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000");
        try (KafkaConsumer<String, String> consumer = cluster.consumer("carol", "carol-soak", p)) {
            consumer.subscribe(List.of(STEADY));
            while (running) {
                long start = System.currentTimeMillis();
                try {
                    consumer.poll(Duration.ofMillis(500));
                    consumer.commitSync(Duration.ofSeconds(10));
                    record.accept(new SoakOracle.Outcome("carol", "READ", STEADY, start, System.currentTimeMillis(), true));
                } catch (AuthorizationException e) {
                    record.accept(new SoakOracle.Outcome("carol", "READ", STEADY, start, System.currentTimeMillis(), false));
                } catch (KafkaException e) {
                    unavailable.computeIfAbsent("carol", x -> new AtomicLong()).incrementAndGet();
                }
            }
        }
    }

    private void dave() throws Exception {
        Properties p = timeouts();
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "dave-soak");
        p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "20000");
        try (KafkaProducer<String, String> producer = cluster.producer("dave", p)) {
            long start = System.currentTimeMillis();
            try {
                producer.initTransactions();
                record.accept(new SoakOracle.Outcome("dave", "WRITE", TRANSACTIONAL_ID, start, System.currentTimeMillis(), true));
            } catch (TransactionalIdAuthorizationException e) {
                record.accept(new SoakOracle.Outcome("dave", "WRITE", TRANSACTIONAL_ID, start, System.currentTimeMillis(), false));
                throw e;
            }
            while (running) {
                start = System.currentTimeMillis();
                try {
                    producer.beginTransaction();
                    for (int i = 0; i < 3; i++) {
                        producer.send(new ProducerRecord<>(STEADY, "dave", "t" + start + "-" + i));
                    }
                    producer.commitTransaction();
                    record.accept(new SoakOracle.Outcome("dave", "WRITE", STEADY, start, System.currentTimeMillis(), true));
                } catch (AuthorizationException e) {
                    record.accept(new SoakOracle.Outcome("dave", "WRITE", STEADY, start, System.currentTimeMillis(), false));
                    throw e;
                }
                pause(200);
            }
        }
    }

    private void erin() throws Exception {
        Properties p = new Properties();
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "10000");
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000");
        try (Admin admin = cluster.admin("erin", p)) {
            while (running) {
                long start = System.currentTimeMillis();
                try {
                    admin.describeTopics(List.of(STEADY)).allTopicNames().get(15, TimeUnit.SECONDS);
                    record.accept(new SoakOracle.Outcome("erin", "DESCRIBE", STEADY, start, System.currentTimeMillis(), true));
                } catch (ExecutionException e) {
                    outcomeOfFailure("erin", "DESCRIBE", STEADY, start, e.getCause());
                } catch (java.util.concurrent.TimeoutException e) {
                    outcomeOfFailure("erin", "DESCRIBE", STEADY, start, e);
                }
                pause(250);
            }
        }
    }

    private void mallory() throws Exception {
        Properties p = timeouts();
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "3000");
        producing("mallory", p, 100, STEADY);
    }

    private static Properties quinnSettings(String clientId) {
        Properties p = timeouts();
        p.put(ProducerConfig.CLIENT_ID_CONFIG, clientId);
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        p.put(ProducerConfig.ACKS_CONFIG, "1");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        return p;
    }

    /**
     * As fast as the quota lets quinn: 1 KiB records sent without waiting, at most a second of the limit's worth
     * unacknowledged (so none waits out its delivery timeout behind a throttle); each acknowledged record's bytes
     * counted in the second it was acknowledged, each failure as unavailable by its kind.
     */
    private void quinn(Limited limited, String who, KafkaProducer<String, String> producer, Map<Long, AtomicLong> acked)
        throws Exception {
        String value = "q".repeat(1024);
        Semaphore inFlight = new Semaphore((int) Math.max(8, limited.limit() / value.length()));
        try (producer) {
            while (running) {
                if (!inFlight.tryAcquire(1, TimeUnit.SECONDS)) {
                    continue;
                }
                producer.send(new ProducerRecord<>(QUOTA, "quinn", value), (metadata, failure) -> {
                    inFlight.release();
                    if (failure == null) {
                        acked.computeIfAbsent(System.currentTimeMillis() / 1000, k -> new AtomicLong()).addAndGet(value.length());
                    } else {
                        unavailable.computeIfAbsent(who + ": " + failure.getClass().getSimpleName(), k -> new AtomicLong())
                            .incrementAndGet();
                    }
                });
            }
        }
    }

    private static void pause(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        for (Thread thread : threads) {
            thread.join(TimeUnit.SECONDS.toMillis(30));
        }
    }
}
