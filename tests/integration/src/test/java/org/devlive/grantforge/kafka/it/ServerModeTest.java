package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Server mode against the project's protocol-faithful GrantForge test server over loopback HTTP and HTTPS, in
 * a real Kafka node: policy changes reach the broker, the disk cache carries a restart while the
 * server is away, and nothing unverified or unusable is ever applied (each fault leaves the applied
 * snapshot in force and is logged once).
 */
@Timeout(value = 8, unit = TimeUnit.MINUTES)
class ServerModeTest {
    @TempDir
    Path tmp;

    private static String basePolicies() throws Exception {
        return Files.readString(ItPaths.fixtures().resolve("server/policies.json"));
    }

    /** The base policies plus one that allows alice to read {@code topic}: it shows as an ACL. */
    private static String policiesWithMarker(String topic) throws Exception {
        return basePoliciesPlusAllow("900", "marker", topic, "\"users\":[\"alice\"],\"groups\":[],\"roles\":[]",
                "\"read\",\"write\"");
    }

    /**
     * The base policies plus one that allows {@code who} (the item's users, groups and roles, as JSON members) the
     * {@code accessTypes} (JSON strings) on {@code topic}.
     */
    private static String basePoliciesPlusAllow(String id, String name, String topic, String who, String accessTypes)
            throws Exception {
        String policy = "{\"id\":\"" + id + "\",\"name\":\"" + name + "\",\"type\":\"ACCESS\",\"priority\":\"NORMAL\",\"document\":{"
            + "\"resources\":{\"topic\":{\"values\":[\"" + topic + "\"],\"excludes\":false,\"recursive\":false}},"
            + "\"allow\":[{" + who + ",\"accessTypes\":[" + accessTypes + "],\"conditions\":[],"
            + "\"maskType\":null,\"maskValue\":null,\"rowFilter\":null}],\"allowExceptions\":[],\"deny\":[],\"denyExceptions\":[],\"validity\":[]}}";
        String base = basePolicies();
        int at = base.indexOf("\"policies\": [") + "\"policies\": [".length();
        return base.substring(0, at) + policy + "," + base.substring(at);
    }

    private TestServer server(String name) throws Exception {
        Path policies = tmp.resolve(name + "-policies.json");
        Files.writeString(policies, basePolicies());
        return TestServer.start(policies, tmp.resolve(name + "-server"), 1);
    }

    private static KafkaNode.Builder node(String name, TestServer server, Path cacheDir) {
        return KafkaNode.builder().name(name)
            .property("grantforge.server.url", server.url())
            .property("grantforge.token.file", server.tokenFile().toString())
            // the test server speaks plain HTTP, which is no trust anchor: its key is configured
            .property("grantforge.signing.key.file", server.signingKeyFile().toString())
            .property("grantforge.cache.dir", cacheDir.toString())
            .property("grantforge.instance", name)
            .property("grantforge.start.timeout.ms", "4000")
            // decisions are kept for 10 minutes: a policy change must still apply at once
            .property("grantforge.decision.cache.ttl.ms", "600000");
    }

    private static boolean hasAclFor(KafkaNode node, String topic) {
        try (Admin admin = node.admin(KafkaNode.SUPER_USER)) {
            return admin.describeAcls(AclBindingFilter.ANY).values().get(30, TimeUnit.SECONDS).stream()
                .map(AclBinding::pattern).anyMatch(p -> p.name().equals(topic));
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static long await(String what, Duration timeout, BooleanSupplier condition) throws InterruptedException {
        long start = System.nanoTime();
        long deadline = start + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within " + timeout + ": " + what);
            }
            Thread.sleep(50);
        }
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    }

    private static void createTopic(KafkaNode node, String topic) throws Exception {
        try (Admin admin = node.admin(KafkaNode.SUPER_USER)) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
    }

    /** Whether {@code user} may write to {@code topic}: a real produce, idempotence off. */
    private static boolean canWrite(KafkaNode node, String user, String topic) {
        Properties extra = new Properties();
        extra.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        extra.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "5000");
        extra.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "5000");
        extra.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "4000");
        try (KafkaProducer<String, String> producer = node.producer(user, extra)) {
            producer.send(new ProducerRecord<>(topic, "k", "v")).get(15, TimeUnit.SECONDS);
            return true;
        } catch (Exception e) {
            // the refusal comes in the future or, when metadata already said so, from send() itself
            for (Throwable t = e; t != null; t = t.getCause()) {
                if (t instanceof TopicAuthorizationException) {
                    return false;
                }
            }
            throw new AssertionError(e);
        }
    }

    /** The agent's lines containing {@code text}, once there is one (its log records reach log4j within ~200 ms). */
    private static long awaitLines(KafkaNode node, String text) throws InterruptedException {
        await("a log line with: " + text, Duration.ofSeconds(5), () -> agentLines(node, text) > 0);
        Thread.sleep(500);
        return agentLines(node, text);
    }

    /** The heartbeats the test server has answered (or refused), from its {@code /_test/state}. */
    private static long heartbeats(TestServer server) {
        try {
            Matcher count = Pattern.compile("\"heartbeat\"\\s*:\\s*(\\d+)").matcher(server.state());
            return count.find() ? Long.parseLong(count.group(1)) : 0;
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static long agentLines(KafkaNode node, String text) {
        return node.logLines().stream().filter(l -> l.contains("[org.devlive.grantforge") && l.contains(text)).count();
    }

    @Test
    void aPolicyChangeReachesTheBrokerAndTheCacheCarriesARestartWhileTheServerIsAway() throws Exception {
        Path cache = tmp.resolve("cache");
        try (TestServer server = server("change")) {
            try (KafkaNode node = node("server-change", server, cache).start()) {
                assertTrue(node.logText().contains("applied policy version 1 of service kafka-demo from " + server.url()), node.diagnostics());
                assertEquals(0, agentLines(node, "trusting the GrantForge server's signing key"), "over plain HTTP the configured key is used, never one trusted on first use");
                assertEquals(1, agentLines(node, "is plain HTTP: the agent token travels in clear"), "plain HTTP is a warning, once\n" + node.logText());
                createTopic(node, "reports");
                assertFalse(canWrite(node, "alice", "reports"));
                server.policies(policiesWithMarker("reports"));
                long changedAt = System.nanoTime();
                await("alice may write reports", Duration.ofSeconds(15), () -> canWrite(node, "alice", "reports"));
                System.out.printf("policy change to enforcement: %d ms (heartbeat every 1 s)%n",
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - changedAt));
            }
            assertTrue(Files.exists(cache.resolve("snapshot.json")), "the disk cache holds the snapshot");
            server.fault("{\"mode\":\"down\"}");
            long launched = System.nanoTime();
            try (KafkaNode node = node("server-down-cached", server, cache).start()) {
                long startedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - launched);
                assertTrue(node.logText().contains("from the disk cache"), node.diagnostics());
                createTopic(node, "reports");
                createTopic(node, "orders");
                assertFalse(node.logText().contains("has no policy snapshot after"), "listeners opened on the cached snapshot, not the timeout");
                assertTrue(canWrite(node, "alice", "reports"), "the cached snapshot (version 2) decides");
                assertFalse(canWrite(node, "bob", "orders"));
                assertEquals(1, agentLines(node, "cannot be reached"), "one line for the unreachable server, not one per round\n" + node.logText());
                System.out.printf("start from the disk cache with the server down: %d ms%n", startedMs);
            }
        }
    }

    /**
     * A node that is broker and controller at once configures an authorizer for each role, and both share one agent:
     * the server knows one instance, heartbeating once a second. (In a cluster of split roles each JVM has one
     * authorizer, so only a combined node can show the sharing.) Two agents under one name would send twice as many.
     * The heartbeat names the agent's version and the running Kafka's.
     */
    @Test
    void brokerAndControllerOfOneNodeShareOneAgentAndOneHeartbeat() throws Exception {
        try (TestServer server = server("shared");
             KafkaNode node = node("server-shared", server, tmp.resolve("shared-cache")).start()) {
            long before = heartbeatsOf(server, "server-shared");
            long waited = Await.until("eight more heartbeats", Duration.ofSeconds(30),
                () -> heartbeatsOf(server, "server-shared") - before >= 8);
            long sent = heartbeatsOf(server, "server-shared") - before;
            assertEquals(1, new com.fasterxml.jackson.databind.ObjectMapper().readTree(server.instances()).size(), server.instances());
            assertTrue(sent <= waited / 1000 + 2, sent + " heartbeats in " + waited + " ms: more than one agent");
            // As GrantForge's own agents identify themselves (<version>-hadoop-<Hadoop's version> for HDFS).
            String identity = ItPaths.AGENT_VERSION + "-kafka-" + node.dist().version();
            for (com.fasterxml.jackson.databind.JsonNode beat : new com.fasterxml.jackson.databind.ObjectMapper().readTree(server.heartbeats())) {
                assertEquals(identity, beat.get("body").get("agentVersion").asText(), server.heartbeats());
            }
        }
    }

    /**
     * GrantForge ends a role (an access request that expired) without moving the policy version: the node
     * revalidates its snapshot every {@code grantforge.revalidate.interval.ms} and refuses the user within that
     * interval and a heartbeat round, although decisions are kept for 10 minutes (a new snapshot starts a fresh
     * decision cache).
     */
    @Test
    void aUserWhoseRoleEndedAtTheSamePolicyVersionIsRefusedWithinTheRevalidationInterval() throws Exception {
        com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
        com.fasterxml.jackson.databind.node.ObjectNode granted =
            (com.fasterxml.jackson.databind.node.ObjectNode) json.readTree(policiesAnalystsWrite("reports"));
        Path policies = tmp.resolve("role-ended-policies.json");
        Files.writeString(policies, json.writeValueAsString(granted));
        try (TestServer server = TestServer.start(policies, tmp.resolve("role-ended-server"), 1);
             KafkaNode node = node("server-role-ended", server, tmp.resolve("role-ended-cache"))
                 .property("grantforge.revalidate.interval.ms", "2000").start()) {
            createTopic(node, "reports");
            assertTrue(canWrite(node, "alice", "reports"), "alice writes as an analyst\n" + node.diagnostics());
            String version = server.state().replaceAll("(?s).*\"policyVersion\"\\s*:\\s*(\\d+).*", "$1");
            ((com.fasterxml.jackson.databind.node.ObjectNode) granted.get("roles")).putArray("analyst");
            server.policiesAtSameVersion(json.writeValueAsString(granted));
            long refusedAfter = await("alice is refused", Duration.ofSeconds(30), () -> !canWrite(node, "alice", "reports"));
            assertTrue(refusedAfter <= 2000 + 1000 + 6000, "refused after " + refusedAfter + " ms");
            assertEquals(version, server.state().replaceAll("(?s).*\"policyVersion\"\\s*:\\s*(\\d+).*", "$1"),
                "the policy version did not move");
            assertEquals(1, awaitLines(node, "without a new version: roles analyst"), node.logText());
            System.out.printf("role ended at the same version to refusal: %d ms (revalidation every 2 s)%n", refusedAfter);
        }
    }

    /**
     * The staleness contract (grantforge.snapshot.max.age.ms) on a real node: with the server down the snapshot in
     * force degrades, then, past the limit, the node refuses alice while still serving the super user, and once the
     * server answers again it serves alice as before. JMX shows each state, whether the server is reachable, and the
     * requests refused without a usable snapshot.
     */
    @Test
    void pastTheStalenessLimitWithTheServerDownANodeRefusesAllButSuperUsersAndServesAgainWhenItReturns() throws Exception {
        Path policies = tmp.resolve("stale-policies.json");
        Files.writeString(policies, policiesWithMarker("stale"));
        Jmx jmx = Jmx.onFreePort();
        try (TestServer server = TestServer.start(policies, tmp.resolve("stale-server"), 1)) {
            KafkaNode.Builder builder = node("server-stale", server, tmp.resolve("stale-cache"))
                .property("grantforge.refresh.interval.ms", "1000")
                .property("grantforge.snapshot.max.age.ms", "8000");
            jmx.jvmArgs().forEach(builder::jvmArg);
            try (KafkaNode node = builder.start()) {
                createTopic(node, "stale");
                assertTrue(canWrite(node, "alice", "stale"), node.diagnostics());
                await("current and reachable", Duration.ofSeconds(10),
                    () -> staleness(jmx, "SnapshotState") == 0 && staleness(jmx, "ServerReachable") == 1);

                server.fault("{\"mode\":\"down\"}");
                long down = System.nanoTime();
                await("degraded", Duration.ofSeconds(10), () -> staleness(jmx, "SnapshotState") == 1);
                assertEquals(0, staleness(jmx, "ServerReachable"));
                assertTrue(canWrite(node, "alice", "stale"), "a degraded snapshot still decides");
                assertEquals(1, awaitLines(node, ": degraded;"), node.logText());

                await("refusing past the limit", Duration.ofSeconds(30), () -> staleness(jmx, "SnapshotState") == 2);
                long refusingAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - down);
                assertFalse(canWrite(node, "alice", "stale"), "alice is refused past the limit");
                assertTrue(canWrite(node, KafkaNode.SUPER_USER, "stale"), "the super user is still served");
                assertTrue(staleness(jmx, "RefusedWithoutSnapshot") >= 1);
                assertEquals(1, awaitLines(node, "longer than grantforge.snapshot.max.age.ms=8000 allows"), node.logText());

                server.fault("{\"mode\":\"none\"}");
                long back = System.nanoTime();
                await("current again", Duration.ofSeconds(15), () -> staleness(jmx, "SnapshotState") == 0);
                long currentAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - back);
                assertTrue(canWrite(node, "alice", "stale"), "alice is served again\n" + node.logText());
                assertEquals(1, awaitLines(node, "again: current, no longer refusing"), node.logText());
                System.out.printf("staleness: refusing %d ms after the server went down (limit 8000 ms), current %d ms after it returned%n",
                    refusingAfter, currentAfter);
            }
        }
    }

    /**
     * Break-glass on a real node: with the server lost, an operator hands the node a snapshot signed with the pinned
     * key through the JAR's {@code break-glass} command; the running node applies it (alice may write while it holds)
     * and names the file, its version and who asked in an ERROR; the same file again is refused naming why; and the
     * server's next version, once the server is back, lifts it.
     */
    @Test
    void aBreakGlassFileHandedInByTheJarCommandHoldsUntilTheServersNextVersion() throws Exception {
        Path glassDir = tmp.resolve("glass-dir");
        Path cache = tmp.resolve("glass-cache");
        try (TestServer server = server("glass");
             KafkaNode node = node("server-glass", server, cache)
                 .property("grantforge.break.glass.dir", glassDir.toString()).start()) {
            createTopic(node, "glass");
            assertFalse(canWrite(node, "alice", "glass"), node.diagnostics());
            server.fault("{\"mode\":\"down\"}");

            com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
            com.fasterxml.jackson.databind.node.ObjectNode snapshot =
                (com.fasterxml.jackson.databind.node.ObjectNode) json.readTree(Files.readAllBytes(cache.resolve("snapshot.json")));
            long inForce = snapshot.get("policyVersion").asLong();
            snapshot.put("policyVersion", inForce + 1);
            String until = java.time.Instant.now().plusSeconds(3600).toString();
            snapshot.set("policies", json.readTree("[{\"id\":\"7000000000000000001\",\"name\":\"incident\",\"type\":\"ACCESS\","
                + "\"priority\":\"NORMAL\",\"document\":{\"resources\":{\"topic\":{\"values\":[\"glass\"],\"excludes\":false,"
                + "\"recursive\":false}},\"allow\":[{\"users\":[\"alice\"],\"groups\":[],\"roles\":[],\"accessTypes\":[\"write\"],"
                + "\"conditions\":[]}],\"allowExceptions\":[],\"deny\":[],\"denyExceptions\":[],"
                + "\"validity\":[{\"from\":null,\"until\":\"" + until + "\"}]}}]"));
            Path file = tmp.resolve("incident.json");
            byte[] body = json.writeValueAsBytes(snapshot);
            Files.write(file, body);
            Files.writeString(tmp.resolve("incident.json.sig"), sign(tmp.resolve("glass-server").resolve("signing-key.pkcs8"), body));

            List<String> command = List.of("break-glass", "--dir", glassDir.toString(), "--file", file.toString(), "--wait-seconds", "60");
            ToolRun applied = node.runAgentCommand(List.of(), command);
            assertEquals(0, applied.exitCode(), applied.toString());
            assertTrue(applied.stdout().contains("policy version " + (inForce + 1)) && applied.stdout().contains(file.toString()),
                applied.toString());
            assertTrue(canWrite(node, "alice", "glass"), "the break-glass policy decides\n" + node.logText());
            assertEquals(1, awaitLines(node, "break-glass file " + file + " (policy version " + (inForce + 1)), node.logText());

            ToolRun again = node.runAgentCommand(List.of(), command);
            assertEquals(1, again.exitCode(), again.toString());
            assertTrue(again.stderr().contains("is the one in force"), again.toString());

            server.fault("{\"mode\":\"none\"}");
            // two edits: the server's version passes the break-glass one
            server.policies(policiesWithMarker("reports"));
            Thread.sleep(1000); // the server reads its policies file every 200 ms: two versions, not one
            server.policies(policiesWithMarker("orders"));
            await("the server's next version lifts it", Duration.ofSeconds(30), () -> !canWrite(node, "alice", "glass"));
            assertEquals(1, awaitLines(node, "the break-glass snapshot (policy version " + (inForce + 1) + ") is lifted"), node.logText());
        }
    }

    /** The Base64 Ed25519 signature of {@code body} under the PKCS#8 private key in {@code keyFile}. */
    private static String sign(Path keyFile, byte[] body) throws Exception {
        java.security.PrivateKey key = java.security.KeyFactory.getInstance("Ed25519")
            .generatePrivate(new java.security.spec.PKCS8EncodedKeySpec(Files.readAllBytes(keyFile)));
        java.security.Signature signature = java.security.Signature.getInstance("Ed25519");
        signature.initSign(key);
        signature.update(body);
        return java.util.Base64.getEncoder().encodeToString(signature.sign());
    }

    /** A staleness metric of the node's agent (broker and controller read the same agent). */
    private static long staleness(Jmx jmx, String attribute) {
        try {
            Map<String, Map<String, Object>> agents = jmx.read("org.devlive.grantforge.kafka:type=Agent,*", attribute);
            return agents.values().stream().map(v -> (Long) v.get(attribute)).findFirst().orElseThrow();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** The base policies plus one that lets the role {@code analyst} (alice) write {@code topic}. */
    private static String policiesAnalystsWrite(String topic) throws Exception {
        return basePoliciesPlusAllow("901", "analysts write", topic, "\"users\":[],\"groups\":[],\"roles\":[\"analyst\"]",
                "\"write\"");
    }

    private static long heartbeatsOf(TestServer server, String instance) throws Exception {
        for (com.fasterxml.jackson.databind.JsonNode known : new com.fasterxml.jackson.databind.ObjectMapper().readTree(server.instances())) {
            if (known.get("instance").asText().equals(instance)) {
                return known.get("heartbeats").asLong();
            }
        }
        return 0;
    }

    /**
     * Server mode over HTTPS, as production runs it: the server's certificate comes from a private CA that the
     * node trusts through {@code grantforge.ssl.ca.file}; the snapshot is applied, a change reaches the broker,
     * and no plain-HTTP warning is logged.
     */
    @Test
    void serverModeOverHttpsTrustsAPrivateCaAndFollowsChanges() throws Exception {
        Path policies = tmp.resolve("https-policies.json");
        Files.writeString(policies, basePolicies());
        try (TestServer server = TestServer.startHttps(policies, tmp.resolve("https-server"), 1);
             KafkaNode node = node("server-https", server, tmp.resolve("https-cache"))
                 .property("grantforge.ssl.ca.file", server.caFile().toString()).start()) {
            assertTrue(server.url().startsWith("https://127.0.0.1:"), server.url());
            assertTrue(node.logText().contains("applied policy version 1 of service kafka-demo from " + server.url()), node.diagnostics());
            assertEquals(0, agentLines(node, "is plain HTTP"), node.logText());
            createTopic(node, "reports");
            createTopic(node, "orders");
            assertFalse(canWrite(node, "alice", "reports"));
            assertFalse(canWrite(node, "bob", "orders"));
            server.policies(policiesWithMarker("reports"));
            await("alice may write reports", Duration.ofSeconds(15), () -> canWrite(node, "alice", "reports"));
        }
    }

    @Test
    void withoutServerAndCacheListenersOpenAfterTheTimeoutAndRefuseAllButSuperUsers() throws Exception {
        try (TestServer server = server("nothing")) {
            server.fault("{\"mode\":\"down\"}");
            try (KafkaNode node = node("server-down-empty", server, tmp.resolve("empty-cache")).start()) {
                assertEquals(1, awaitLines(node, "has no policy snapshot after 4000 ms"), node.diagnostics());
                createTopic(node, "orders");
                assertFalse(canWrite(node, "alice", "orders"), "no snapshot: refused");
                assertTrue(canWrite(node, KafkaNode.SUPER_USER, "orders"), "super users still work");
                server.fault("{\"mode\":\"none\"}");
                await("the server's snapshot is applied", Duration.ofSeconds(20), () -> canWrite(node, "alice", "orders"));
                assertEquals(1, awaitLines(node, "answers again"), node.logText());
            }
        }
    }

    @Test
    void nothingUnverifiedOrUnusableIsAppliedAndEachFaultIsLoggedOnce() throws Exception {
        try (TestServer server = server("faults");
             // back-offs held to a second and no download jitter (each of the eleven faults waited up to 5 s for
             // it): the rounds are counted here, their spacing and the jitter are unit-tested
             KafkaNode node = node("server-faults", server, tmp.resolve("faults-cache"))
                 .property("grantforge.refresh.interval.ms", "1000")
                 .property("grantforge.download.jitter.ms", "0").start()) {
            String[][] faults = {
                {"{\"mode\":\"wrong-signature\"}", "signature does not verify"},
                {"{\"mode\":\"other-key\"}", "is signed by key"},
                {"{\"mode\":\"old-version\"}", "but other content"},
                {"{\"mode\":\"other-service\"}", "but this agent serves `kafka-demo`"},
                {"{\"mode\":\"truncated\",\"endpoints\":[\"policies\"]}", "could not be read completely"},
                {"{\"mode\":\"huge\",\"endpoints\":[\"policies\"]}", "larger than grantforge.snapshot.max.bytes"},
                {"{\"mode\":\"status\",\"status\":401}", "answered 401"},
                {"{\"mode\":\"status\",\"status\":404}", "answered 404"},
                {"{\"mode\":\"status\",\"status\":409}", "answered 409"},
                {"{\"mode\":\"status\",\"status\":500}", "answered 500"},
            };
            int round = 0;
            for (String[] fault : faults) {
                round++;
                String marker = "marker-" + round;
                server.fault(fault[0]);
                server.policies(policiesWithMarker(marker));
                // The agent's line naming the fault shows it was served and refused; two more rounds
                // after it would log it again if it were logged per round.
                await(fault[0] + " is served and refused", Duration.ofSeconds(60), () -> agentLines(node, fault[1]) > 0);
                long heartbeats = heartbeats(server);
                await(fault[0] + ": two more rounds", Duration.ofSeconds(60), () -> heartbeats(server) >= heartbeats + 2);
                assertFalse(hasAclFor(node, marker), fault[0] + " must leave the applied snapshot in force");
                assertEquals(1, agentLines(node, fault[1]), fault[0] + ": one clear line, not one per round\n" + node.logText());
                server.fault("{\"mode\":\"none\"}");
                await(fault[0] + ": recovery applies the latest snapshot", Duration.ofSeconds(20), () -> hasAclFor(node, marker));
            }
            createTopic(node, "orders");
            assertTrue(canWrite(node, "alice", "orders"));
            server.fault("{\"mode\":\"other-type\"}");
            server.policies(policiesWithMarker("marker-type"));
            await("a snapshot of another type refuses everything", Duration.ofSeconds(20), () -> !canWrite(node, "alice", "orders"));
            String wrongType = "service type `hive`: the agent token belongs to a service that is not of type kafka";
            assertEquals(1, awaitLines(node, wrongType), node.logText());
            assertTrue(canWrite(node, KafkaNode.SUPER_USER, "orders"), "super users still work");
            server.fault("{\"mode\":\"none\"}");
            await("a kafka snapshot decides again", Duration.ofSeconds(20), () -> canWrite(node, "alice", "orders"));
        }
    }

    @Test
    void aBadServerSettingStopsTheBrokerNamingTheKey() throws Exception {
        Path token = tmp.resolve("empty-token");
        Files.write(token, new byte[0]);
        try (KafkaNode node = KafkaNode.builder().name("server-bad-token")
                .property("grantforge.server.url", "http://127.0.0.1:9")
                .property("grantforge.token.file", token.toString())
                .property("grantforge.cache.dir", tmp.resolve("c").toString()).build()) {
            node.launch();
            assertTrue(node.awaitExit(Duration.ofSeconds(60)) != 0, node.diagnostics());
            List<String> errors = node.logLines().stream()
                .filter(l -> l.contains(" ERROR ") && l.contains("grantforge.token.file") && l.contains(token.toString()))
                .collect(Collectors.toList());
            assertEquals(1, errors.size(), node.diagnostics());
        }
    }
}
