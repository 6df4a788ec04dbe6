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
 * Shows the agent at work: a KRaft node (broker + controller) with the agent deciding from a policy
 * snapshot (default tests/fixtures/snapshots/e2e.json, or the path given as the first argument).
 * alice may produce to {@code orders}, bob may not, and the policies are listed as ACLs the way
 * {@code kafka-acls --list} shows them.
 *
 * <pre>
 * mvn -B -q -pl tests/integration exec:java            (after the modules are installed)
 * java -cp "tests/integration/target/classes:$(cat tests/integration/target/it.classpath)" \
 *      org.devlive.grantforge.kafka.it.Demo [snapshot.json]
 * </pre>
 */
public final class Demo {

    private static final PrintStream OUT = System.out;
    private static final long WAIT_S = 30;

    private Demo() {
    }

    public static void main(String[] args) throws Exception {
        Path snapshot = args.length > 0 ? Paths.get(args[0]).toAbsolutePath() : ItPaths.snapshot("e2e.json");
        if (!Files.isRegularFile(snapshot)) {
            System.err.println("No policy snapshot at " + snapshot);
            System.exit(2);
        }
        KafkaDist dist = KafkaDist.defaultDist();
        OUT.println("== GrantForge agent for Apache Kafka: demo ==");
        OUT.println("Kafka:     " + dist.version() + " (one KRaft node, broker + controller, SASL/PLAIN)");
        OUT.println("Agent:     " + ItPaths.agentJar());
        OUT.println("Policies:  " + snapshot + " (offline mode, grantforge.policy.file)");
        OUT.println();

        KafkaNode node = KafkaNode.builder().dist(dist).name("demo").policyFile(snapshot).build();
        OUT.println("Starting the node in " + node.dir() + " ...");
        try (node) {
            node.start();
            OUT.printf("Node ready at %s after %.1f s%n%n", node.bootstrapServers(), node.startedAfterMillis() / 1000.0);

            try (Admin admin = node.admin("admin")) {
                admin.createTopics(List.of(new NewTopic("orders", 1, (short) 1))).all().get(WAIT_S, TimeUnit.SECONDS);
                OUT.println("admin (super user) created topic orders");
                OUT.println();

                OUT.println("$ alice produces \"first order\" to orders");
                try (KafkaProducer<String, String> producer = node.producer("alice")) {
                    RecordMetadata md = producer.send(new ProducerRecord<>("orders", "o-1", "first order"))
                            .get(WAIT_S, TimeUnit.SECONDS);
                    OUT.printf("  OK       written to topic %s, partition %d, offset %d%n", md.topic(), md.partition(), md.offset());
                } catch (ExecutionException e) {
                    OUT.println("  REFUSED  " + describe(e.getCause()) + "   <-- unexpected");
                }
                OUT.println();

                OUT.println("$ bob produces \"bob's order\" to orders   (non-idempotent producer)");
                Properties plain = new Properties();
                plain.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
                plain.put(ProducerConfig.RETRIES_CONFIG, "0");
                try (KafkaProducer<String, String> producer = node.producer("bob", plain)) {
                    RecordMetadata md = producer.send(new ProducerRecord<>("orders", "o-2", "bob's order"))
                            .get(WAIT_S, TimeUnit.SECONDS);
                    OUT.printf("  OK       written to %s-%d@%d   <-- unexpected%n", md.topic(), md.partition(), md.offset());
                } catch (ExecutionException e) {
                    OUT.println("  REFUSED  " + describe(e.getCause()));
                }
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
                    OUT.println("  REFUSED  " + describe(e.getCause()));
                }
                OUT.println();
            }
            OUT.println("Stopping the node ...");
        } catch (RuntimeException e) {
            OUT.println("The node failed: " + e.getMessage());
            throw e;
        }
        OUT.println("Node stopped.");
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
