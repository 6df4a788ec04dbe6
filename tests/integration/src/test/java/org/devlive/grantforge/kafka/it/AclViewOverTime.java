package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

/**
 * The ACL view ({@code Admin.describeAcls}, what {@code kafka-acls --list} shows) lists the policies that apply
 * now, on a node in offline mode: a policy file whose policies start and end at given instants shows each from
 * its start until its end without the file changing, and a snapshot of a disabled service lists nothing.
 * The policies are {@link WalkingSkeleton}'s ({@code e2e.json}); its expected bindings are reused.
 *
 * <p>One subclass per Kafka release ({@code AclViewOverTimeKafka<version>Test}).
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
abstract class AclViewOverTime {

    private static final long WAIT_S = 30;
    /** How far ahead the validity boundary lies: the node must apply the file and be seen before it. */
    private static final Duration AHEAD = Duration.ofSeconds(10);
    /** How long after the boundary the new listing may first be seen: a tick, a listing, a loaded machine. */
    private static final Duration LATE = Duration.ofSeconds(5);
    private final String kafkaVersion;
    private Path policyFile;
    private KafkaNode node;
    private Admin admin;

    AclViewOverTime(String kafkaVersion) {
        this.kafkaVersion = kafkaVersion;
    }

    @BeforeAll
    void startNode() throws Exception {
        String work = System.getProperty(KafkaNode.WORK_PROPERTY);
        Path parent = work == null ? Path.of(System.getProperty("java.io.tmpdir")) : Files.createDirectories(Path.of(work));
        policyFile = Files.createTempDirectory(parent, "acl-view-policies-").resolve("policies.json");
        Files.copy(ItPaths.snapshot("e2e.json"), policyFile);
        node = KafkaNode.builder().name("acl-view-" + kafkaVersion).kafkaVersion(kafkaVersion)
                .policyFile(policyFile)
                .property("grantforge.policy.file.poll.interval.ms", "200")
                .start();
        admin = node.admin("admin");
        assertEquals(WalkingSkeleton.expectedBindings(), describeAll(), "e2e.json as it is");
    }

    @AfterAll
    void stopNode() {
        if (admin != null) {
            admin.close(Duration.ofSeconds(10));
        }
        if (node != null) {
            node.close();
        }
    }

    @Test
    @Order(1)
    void aPolicyIsListedFromItsStartAndNoLongerFromItsEndWithTheFileUnchanged() throws Exception {
        Instant boundary = Instant.now().plus(AHEAD).truncatedTo(ChronoUnit.SECONDS);
        // Policy 1 (alice's orders) starts at the boundary, policy 2 (the analysts' orders*) ends there. The
        // instants are written with other offsets than UTC, as ISO-8601 allows: the same instant either way.
        String text = read(ItPaths.snapshot("e2e.json"));
        text = withValidity(text, 1, "[{\"from\":\"" + at(boundary, ZoneOffset.ofHoursMinutes(5, 30)) + "\"}]");
        text = withValidity(text, 2, "[{\"until\":\"" + at(boundary, ZoneOffset.ofHours(-8)) + "\"}]");
        replacePolicyFile(text);

        Set<AclBinding> before = without(binding -> binding.entry().principal().equals("User:alice")
                && binding.pattern().name().equals("orders"));
        Set<AclBinding> after = without(binding -> binding.entry().principal().equals("Role:analyst"));
        awaitListing("the file applied before the boundary", before, boundary);
        awaitListing("alice's policy started and the analysts' ended", after, null);
        Instant seen = Instant.now();
        assertTrue(seen.isAfter(boundary), "the listing changed at the boundary, not before");
        // the agent's thread recomputes the view within a tick (250 ms) of the boundary: seen within LATE, not 30 s on
        assertTrue(Duration.between(boundary, seen).compareTo(LATE) <= 0,
                "the listing changed " + Duration.between(boundary, seen).toMillis() + " ms after the boundary, more than " + LATE);
        // the log line is drained from the native side after the swap it reports
        awaitTrue("the agent's thread says it recomputed the view of the same snapshot in " + node.serverLogFile(),
                () -> node.logLines().stream().anyMatch(l -> l.contains("a validity period started or ended")));
    }

    @Test
    @Order(2)
    void aDisabledServiceListsNoAcl() throws Exception {
        replacePolicyFile(read(ItPaths.snapshot("e2e.json"))
                .replaceFirst("\"serviceEnabled\":true", "\"serviceEnabled\":false"));
        awaitTrue("the disabled service's snapshot is applied",
                () -> node.logLines().stream().anyMatch(l -> l.contains("the service is disabled, so Kafka is unchecked")));
        assertEquals(Set.of(), describeAll(), "a disabled service lists no ACL");
    }

    // ---------------------------------------------------------------------------------------------

    private Set<AclBinding> describeAll() throws Exception {
        return new HashSet<>(admin.describeAcls(AclBindingFilter.ANY).values().get(WAIT_S, TimeUnit.SECONDS));
    }

    private static Set<AclBinding> without(java.util.function.Predicate<AclBinding> left) {
        return WalkingSkeleton.expectedBindings().stream().filter(left.negate()).collect(Collectors.toSet());
    }

    /** Waits until the listing is {@code expected}; when {@code before} is given, it must be seen before then. */
    private void awaitListing(String what, Set<AclBinding> expected, Instant before) throws Exception {
        Set<AclBinding> listed = describeAll();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
        while (!listed.equals(expected)) {
            if (System.nanoTime() > deadline || (before != null && Instant.now().isAfter(before))) {
                assertEquals(expected, listed, what + (before != null ? " (before " + before + ")" : " within " + WAIT_S + " s"));
            }
            Thread.sleep(100);
            listed = describeAll();
        }
    }

    private static void awaitTrue(String what, Supplier<Boolean> condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
        while (!condition.get()) {
            assertTrue(System.nanoTime() < deadline, what + " within " + WAIT_S + " s");
            Thread.sleep(100);
        }
    }

    /** The policy file replaced in one step, so the agent never reads half of it. */
    private void replacePolicyFile(String text) throws Exception {
        Path next = policyFile.resolveSibling("policies.json.next");
        Files.writeString(next, text, StandardCharsets.UTF_8);
        Files.move(next, policyFile, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    /** The snapshot with the {@code validity} of its policy {@code id} set to {@code periods}. */
    private static String withValidity(String text, int id, String periods) {
        int policy = text.indexOf("{\"id\":\"" + id + "\"");
        int at = text.indexOf("\"validity\":[]", policy);
        assertTrue(policy >= 0 && at >= 0, "policy " + id + " of e2e.json");
        return text.substring(0, at) + "\"validity\":" + periods + text.substring(at + "\"validity\":[]".length());
    }

    private static String at(Instant instant, ZoneOffset offset) {
        return OffsetDateTime.ofInstant(instant, offset).format(DateTimeFormatter.ISO_OFFSET_DATE_TIME);
    }

    private static String read(Path file) throws Exception {
        return Files.readString(file, StandardCharsets.UTF_8);
    }
}
