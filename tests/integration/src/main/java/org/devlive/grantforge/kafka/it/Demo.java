package org.devlive.grantforge.kafka.it;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;

/**
 * Shows the agent at work: a KRaft node (broker + controller) whose agent keeps its policies from the
 * project's GrantForge test server (server mode: signed snapshots over HTTP, heartbeat every second,
 * downloads at once), with the policies in {@code .demo/policies.json}. alice may produce to
 * {@code orders}, bob may not; the policies are listed as ACLs the way {@code kafka-acls --list} shows
 * them; then the demo edits the policy file to let bob write, measures when bob's produce goes
 * through, puts the file back and shows bob refused again, so that what it printed last is what holds.
 * With {@code --keep-running} it then writes each user's client settings into {@code .demo/} and prints
 * the command lines of Kafka's console producer that connect with them. Every run starts from the same
 * state: the policies from the fixture, no agent cache and no server state of an earlier run (which would
 * still allow bob), so it shows the same thing each time.
 *
 * <pre>
 * scripts/demo                      the whole show, then the node stops
 * scripts/demo --keep-running       ... and the node keeps running: edit .demo/policies.json and watch;
 *                                   Enter stops it, or (started in the background) a kill of the process
 * scripts/demo --snapshot FILE      offline mode instead: the agent decides from a snapshot file
 * </pre>
 */
public final class Demo {

    private static final PrintStream OUT = System.out;
    private static final long WAIT_S = 30;

    private Demo() {
    }

    public static void main(String[] args) throws Exception {
        List<String> options = List.of(args);
        int snapshotAt = options.indexOf("--snapshot");
        Path snapshot = snapshotAt >= 0 && snapshotAt + 1 < args.length ? Paths.get(args[snapshotAt + 1]).toAbsolutePath() : null;
        run(ItPaths.findFromWorkingDir(Paths.get(".demo"), Paths.get("..", "..", ".demo")), snapshot,
                options.contains("--keep-running"));
    }

    /** The show in {@code demoDir} (its state is made anew), from {@code snapshot} when not null. */
    static void run(Path demoDir, Path snapshot, boolean keepRunning) throws Exception {
        KafkaDist dist = KafkaDist.defaultDist();
        Path policies = freshState(demoDir);

        OUT.println("== GrantForge agent for Apache Kafka: demo ==");
        OUT.println("Kafka:     " + dist.version() + " (one KRaft node, broker + controller, SASL/PLAIN)");
        OUT.println("Agent:     " + ItPaths.agentJar());
        TestServer server = null;
        KafkaNode.Builder builder = KafkaNode.builder().dist(dist).name("demo");
        if (snapshot != null) {
            OUT.println("Policies:  " + snapshot + " (offline mode, grantforge.policy.file)");
            builder.policyFile(snapshot);
        } else {
            server = TestServer.start(policies, demoDir.resolve("server"), 1);
            OUT.println("Policies:  " + policies + ", served by the GrantForge test server at " + server.url());
            builder.property("grantforge.server.url", server.url())
                .property("grantforge.token.file", server.tokenFile().toString())
                .property("grantforge.signing.key.file", server.signingKeyFile().toString())
                .property("grantforge.cache.dir", demoDir.resolve("cache").toString())
                .property("grantforge.instance", "demo-broker")
                // one broker: no fleet to spread downloads over, so a change is fetched at the next heartbeat
                .property("grantforge.download.jitter.ms", "0");
        }
        OUT.println();

        KafkaNode node = builder.build();
        OUT.println("Starting the node in " + node.dir() + " ...");
        try (node; TestServer ignored = server) {
            node.start();
            OUT.printf("Node ready at %s after %.1f s%n%n", node.bootstrapServers(), node.startedAfterMillis() / 1000.0);

            try (Admin admin = node.admin("admin")) {
                admin.createTopics(List.of(new NewTopic("orders", 1, (short) 1))).all().get(WAIT_S, TimeUnit.SECONDS);
                OUT.println("admin (super user) created topic orders");
                OUT.println();

                OUT.println("$ alice produces \"first order\" to orders");
                OUT.println("  " + produce(node, "alice", "first order"));
                OUT.println();

                OUT.println("$ bob produces \"bob's order\" to orders");
                OUT.println("  " + produce(node, "bob", "bob's order"));
                OUT.println();

                OUT.println("$ kafka-acls --list   (Admin.describeAcls(AclBindingFilter.ANY) as admin)");
                Collection<AclBinding> acls = admin.describeAcls(AclBindingFilter.ANY).values().get(WAIT_S, TimeUnit.SECONDS);
                printAcls(acls);
                OUT.println();

                OUT.println("$ admin creates an ACL (Admin.createAcls)");
                AclBinding bobWrites = new AclBinding(new ResourcePattern(ResourceType.TOPIC, "orders", PatternType.LITERAL),
                        new AccessControlEntry("User:bob", "*", AclOperation.WRITE, AclPermissionType.ALLOW));
                try {
                    admin.createAcls(List.of(bobWrites)).all().get(WAIT_S, TimeUnit.SECONDS);
                    OUT.println("  OK   <-- unexpected");
                } catch (ExecutionException e) {
                    OUT.println("  " + answerOf(e.getCause()));
                }
                OUT.println();
            }
            if (server != null) {
                showPolicyChange(node, policies);
            }
            if (keepRunning) {
                OUT.println("The node keeps running at " + node.bootstrapServers() + " (users alice, bob, carol; password <user>-secret).");
                printHowToConnect(node, demoDir);
                OUT.println("Edit " + policies + ": the broker follows within a heartbeat. Press Enter to stop"
                        + " (started in the background: kill " + ProcessHandle.current().pid() + ").");
                if (System.in.read() < 0) {
                    // no terminal (started in the background): run until the process is stopped
                    new java.util.concurrent.CountDownLatch(1).await();
                }
            }
            OUT.println("Stopping the node ...");
        } catch (RuntimeException e) {
            OUT.println("The node failed: " + e.getMessage());
            throw e;
        }
        OUT.println("Node stopped.");
    }

    /**
     * The demo's own state, made anew: the policies of the fixture in {@code policies.json}, and no agent cache or
     * test server state left by an earlier run. Returns the policy file.
     */
    private static Path freshState(Path demoDir) throws java.io.IOException {
        Files.createDirectories(demoDir);
        for (String leftover : List.of("cache", "server")) {
            ItPaths.deleteRecursively(demoDir.resolve(leftover));
        }
        Path policies = demoDir.resolve("policies.json");
        Files.copy(ItPaths.fixtures().resolve("server/policies.json"), policies, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        return policies;
    }

    /**
     * Writes each user's client settings and the classpath of this node's Kafka into {@code demoDir}, and prints the
     * console producer's command lines that use them: with the jars this node runs on, and with an installed Kafka's
     * script.
     */
    private static void printHowToConnect(KafkaNode node, Path demoDir) throws java.io.IOException {
        for (String user : List.of("admin", "alice", "bob", "carol")) {
            // as the demo's own producers: a producer allowed no WRITE anywhere is otherwise refused IDEMPOTENT_WRITE
            // on the cluster first, which hides that the topic is what it may not write
            StringBuilder settings = new StringBuilder("# a producer setting: a refused write then names the topic\n"
                    + ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG + "=false\n");
            new TreeMap<>(node.clientProps(user)).forEach((k, v) -> settings.append(k).append('=')
                    .append(NodeFiles.escapeProperty(v.toString())).append('\n'));
            Files.writeString(demoDir.resolve(user + ".properties"), settings.toString());
        }
        Path classpath = demoDir.resolve("kafka.classpath");
        Files.writeString(classpath, node.dist().classpath() + "\n");
        String alice = demoDir.resolve("alice.properties").toString();
        String connect = " --bootstrap-server " + node.bootstrapServers() + " --topic orders --producer.config ";
        OUT.println("Client settings (SASL/PLAIN) for each user: " + demoDir.resolve("<user>.properties")
                + " (admin, alice, bob, carol)");
        OUT.println("Kafka " + node.dist().version() + "'s jars, the ones this node runs on, are listed in " + classpath);
        OUT.println("alice writes to orders (as bob, with bob.properties, the write is refused):");
        OUT.println("  echo hello | java -cp \"$(cat " + classpath + ")\" " + node.dist().consoleProducerClass() + connect + alice);
        OUT.println("  or with Kafka installed: echo hello | $KAFKA_HOME/bin/kafka-console-producer.sh" + connect + alice);
    }

    /**
     * Lets bob write to orders by editing the policy file, and shows when the broker enforces it; then puts the file
     * back and shows bob refused again, so that the node goes on as the demo leaves it.
     */
    private static void showPolicyChange(KafkaNode node, Path policies) throws Exception {
        String before = Files.readString(policies);
        String alice = "\"users\": [\n       \"alice\"\n      ],";
        if (!before.contains(alice)) {
            return;
        }
        OUT.println("$ edit " + policies + ": policy 1 \"alice works with orders\" now names bob too");
        int at = before.indexOf(alice);
        Files.writeString(policies, before.substring(0, at) + "\"users\": [\n       \"alice\", \"bob\"\n      ],"
            + before.substring(at + alice.length()));
        long start = System.nanoTime();
        try {
            String outcome = awaitBob(node, "REFUSED", start);
            OUT.printf("$ bob produces again: %s %.1f s after the edit (the agent's heartbeat is 1 s)%n  %s%n%n",
                    said(outcome, "allowed", "still refused"), (System.nanoTime() - start) / 1e9, outcome);
        } finally {
            Files.writeString(policies, before);
        }
        OUT.println("$ edit " + policies + ": put back as it was, policy 1 names alice alone again");
        long putBack = System.nanoTime();
        String outcome = awaitBob(node, "OK", putBack);
        OUT.printf("$ bob produces again: %s %.1f s after putting it back%n  %s%n%n",
                said(outcome, "still allowed", "refused"), (System.nanoTime() - putBack) / 1e9, outcome);
    }

    /** What an outcome of {@link #produce} says, in the words of the line that shows it. */
    private static String said(String outcome, String ok, String refused) {
        return outcome.startsWith("OK") ? ok : outcome.startsWith("REFUSED") ? refused : "failed";
    }

    /**
     * Bob's produce, repeated while its outcome starts with {@code whileOutcome}, for at most WAIT_S from {@code start}.
     * One producer for all the tries: the time shown is the policy's way to the broker, not a client's login.
     */
    private static String awaitBob(KafkaNode node, String whileOutcome, long start) throws Exception {
        String outcome;
        try (KafkaProducer<String, String> producer = node.producer("bob", plain())) {
            do {
                Thread.sleep(100);
                outcome = produce(producer, "bob", "bob's next order");
            } while (outcome.startsWith(whileOutcome) && System.nanoTime() - start < TimeUnit.SECONDS.toNanos(WAIT_S));
        }
        return outcome;
    }

    /** One record from {@code user} to orders, by a producer of its own. */
    private static String produce(KafkaNode node, String user, String value) throws Exception {
        try (KafkaProducer<String, String> producer = node.producer(user, plain())) {
            return produce(producer, user, value);
        }
    }

    /** Idempotence off, so a refusal names the topic; no retries, so each try is one answer. */
    private static Properties plain() {
        Properties plain = new Properties();
        plain.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        plain.put(ProducerConfig.RETRIES_CONFIG, "0");
        return plain;
    }

    /** One record to orders: OK, REFUSED or FAILED ({@link #answerOf}: a timeout is no refusal). */
    private static String produce(KafkaProducer<String, String> producer, String user, String value) throws Exception {
        try {
            RecordMetadata md = producer.send(new ProducerRecord<>("orders", user, value)).get(WAIT_S, TimeUnit.SECONDS);
            return String.format("OK       written to topic %s, partition %d, offset %d", md.topic(), md.partition(), md.offset());
        } catch (ExecutionException e) {
            return answerOf(e.getCause());
        } catch (org.apache.kafka.common.KafkaException e) {
            // a refusal the producer already knows from metadata comes from send() itself
            return answerOf(e);
        }
    }

    /** REFUSED for an authorization error, or the agent's refusal to change ACLs; FAILED for any other. */
    private static String answerOf(Throwable failure) {
        boolean refused = failure instanceof org.apache.kafka.common.errors.AuthorizationException
                || failure instanceof org.apache.kafka.common.errors.PolicyViolationException;
        return (refused ? "REFUSED  " : "FAILED   ") + describe(failure);
    }

    private static String describe(Throwable t) {
        return t.getClass().getName() + ": " + t.getMessage();
    }

    /** Like kafka-acls --list: grouped by resource pattern, one line per binding. */
    private static void printAcls(Collection<AclBinding> acls) {
        if (acls.isEmpty()) {
            OUT.println("  (no ACLs)");
            return;
        }
        Map<String, List<AccessControlEntry>> byPattern = new TreeMap<>();
        for (AclBinding b : acls) {
            byPattern.computeIfAbsent(b.pattern().toString(), k -> new ArrayList<>()).add(b.entry());
        }
        byPattern.forEach((pattern, entries) -> {
            OUT.println("Current ACLs for resource `" + pattern + "`: ");
            entries.sort(Comparator.comparing(AccessControlEntry::toString));
            for (AccessControlEntry e : entries) {
                OUT.println(" \t(principal=" + e.principal() + ", host=" + e.host() + ", operation=" + e.operation()
                        + ", permissionType=" + e.permissionType() + ")");
            }
            OUT.println();
        });
        OUT.println("(" + acls.size() + " bindings)");
    }
}
