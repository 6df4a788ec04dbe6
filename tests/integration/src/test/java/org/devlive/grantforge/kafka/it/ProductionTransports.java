package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.SslAuthenticationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
// Kafka 4.4 moved it from common.utils (this JVM runs the newest kafka-clients)
import org.apache.kafka.common.utils.internals.Sanitizer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The principals production's transports give connections, in a real node with the agent as authorizer and
 * quota callback: SSL with client certificates mapped by {@code ssl.principal.mapping.rules} (and one no rule
 * maps, which keeps Kafka's whole {@code CN=…,OU=…} name), and SASL_SSL with SCRAM-SHA-512 (credentials made with
 * the Admin API), Kerberos (a KDC in this JVM, names shortened by {@code sasl.kerberos.principal.to.local.rules})
 * and OAuth bearer tokens (signed by a key made at test time, validated against its JWKS), each on a listener of its
 * own in the same node. For each login: a produce its policy allows, Kafka's own error for one no policy
 * allows and for one whose {@code ip-range} condition names other addresses than the TLS connection's, the
 * audit naming the principal as Kafka gave it, and a quota of that principal grouped under Kafka's sanitized name.
 *
 * <p>One subclass per release. Policies reach the node as production's do on 3.7.2 and 4.3.1 (server mode over
 * HTTPS, audit events at the server) and from a policy file on the others (audit lines in the log), so each
 * audit path is proven with certificate principals.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ProductionTransports {
    private static final long WAIT_S = 30;
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Client certificates of OU=clients are named by their CN in lower case; any other keeps its whole name. */
    static final String MAPPING_RULES = "RULE:^CN=([^,]+),OU=clients,.*$/$1/L,DEFAULT";
    /** Two-component Kerberos names of the realm become their first component in lower case. */
    static final String KERBEROS_RULES = "RULE:[2:$1@$0](.*@EXAMPLE\\.COM)s/@.*//L,DEFAULT";

    /**
     * A login, the principal name Kafka gives it (which the policies name), and what {@code explain --principal-of}
     * takes for it: its certificate file or Kerberos name (null for SCRAM and OAuth, whose names the client sends).
     */
    record Login(String label, ClientLogin login, String principal, String identity) {
        String topic() {
            return label;
        }

        /** A topic whose policy allows the principal only from 10.0.0.0/8. */
        String elsewhere() {
            return label + "-elsewhere";
        }

        @Override
        public String toString() {
            return label + " as " + principal;
        }
    }

    private final String kafkaVersion;
    private final boolean serverMode;
    private Path work;
    private Transports transports;
    private Path snapshot;
    private TestServer server;
    private KafkaNode node;
    private Admin admin;
    private Jmx jmx;
    private final List<Login> logins = new ArrayList<>();

    /** @param serverMode server mode over HTTPS (audit at the server) rather than a policy file (audit in the log) */
    ProductionTransports(String kafkaVersion, boolean serverMode) {
        this.kafkaVersion = kafkaVersion;
        this.serverMode = serverMode;
    }

    @BeforeAll
    void startNode() throws Exception {
        work = Files.createTempDirectory("transports-" + kafkaVersion + "-");
        transports = new Transports(TestPki.create(work.resolve("pki")));
        jmx = Jmx.onFreePort();
        KafkaNode.Builder builder = KafkaNode.builder().name("transports-" + kafkaVersion).kafkaVersion(kafkaVersion)
                .listener(transports.mutualTlsListener(MAPPING_RULES))
                .property("client.quota.callback.class", QuotaCallback.CALLBACK)
                .property("grantforge.audit.fold.window.ms", "1000");
        jmx.jvmArgs().forEach(builder::jvmArg);
        logins.add(new Login("tls-mapped", transports.certificateLogin("tess", "CN=Tess,OU=clients,O=GrantForge IT"), "tess",
                transports.pki().certificatePem("tess").toString()));
        String unmapped = "CN=Uma Example,OU=contractors,O=Example Corp";
        logins.add(new Login("tls-unmapped", transports.certificateLogin("uma", unmapped), unmapped,
                transports.pki().certificatePem("uma").toString()));
        TestKdc kdc = TestKdc.shared();
        kdc.jvmArgs().forEach(builder::jvmArg);
        TestIdentityProvider idp = TestIdentityProvider.create(work.resolve("idp"));
        idp.jvmArgs().forEach(builder::jvmArg);
        builder.listener(transports.scramListener()).listener(transports.kerberosListener(kdc, KERBEROS_RULES))
                .listener(transports.oauthListener(idp));
        logins.add(new Login("scram", transports.scramLogin("scarlet", "scarlet-secret"), "scarlet", null));
        String kate = "Kate/localhost@" + TestKdc.REALM;
        logins.add(new Login("kerberos", transports.kerberosLogin(kdc, kate), "kate", kate));
        logins.add(new Login("oauth", transports.oauthLogin(idp, "olivia"), "olivia", null));
        List<String> policies = new ArrayList<>();
        for (Login login : logins) {
            policies.add(policy(policies.size() + 1, login.topic(), login.principal(), "127.0.0.0/8"));
            policies.add(policy(policies.size() + 1, login.elsewhere(), login.principal(), "10.0.0.0/8"));
        }
        if (serverMode) {
            Path serverPolicies = work.resolve("policies.json");
            Files.writeString(serverPolicies, "{\"service\":\"kafka-transports\",\"serviceEnabled\":true,\"policies\":["
                    + String.join(",", policies) + "],\"roles\":{},\"groups\":{}}");
            server = TestServer.startHttps(serverPolicies, work.resolve("server"), 1);
            server.agentOf(builder, work.resolve("cache"), "transports-" + kafkaVersion)
                    .property("grantforge.ssl.ca.file", server.caFile().toString());
        } else {
            snapshot = work.resolve("snapshot.json");
            GrantForgeSnapshot.writePolicies(snapshot, "kafka-transports", policies);
            builder.policyFile(snapshot);
        }
        node = builder.start();
        admin = node.admin(KafkaNode.SUPER_USER);
        List<NewTopic> topics = new ArrayList<>(List.of(new NewTopic("payments", 1, (short) 1)));
        for (Login login : logins) {
            topics.add(new NewTopic(login.topic(), 1, (short) 1));
            topics.add(new NewTopic(login.elsewhere(), 1, (short) 1));
        }
        admin.createTopics(topics).all().get(WAIT_S, TimeUnit.SECONDS);
        admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion("scarlet",
                new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192), "scarlet-secret")))
                .all().get(WAIT_S, TimeUnit.SECONDS);
    }

    @AfterAll
    void stopNode() {
        if (admin != null) {
            admin.close(Duration.ofSeconds(10));
        }
        if (node != null) {
            node.close();
        }
        if (server != null) {
            server.close();
        }
    }

    Stream<Login> logins() {
        return logins.stream();
    }

    /** An allow item of write, read and describe on {@code topic} for {@code user}, from {@code addresses} only. */
    private static String policy(int id, String topic, String user, String addresses) throws Exception {
        return "{\"id\":\"" + id + "\",\"name\":\"" + topic + "\",\"type\":\"ACCESS\",\"priority\":\"NORMAL\",\"document\":{"
                + "\"resources\":{\"topic\":{\"values\":[\"" + topic + "\"],\"excludes\":false,\"recursive\":false}},"
                + "\"allow\":[{\"users\":[" + JSON.writeValueAsString(user) + "],\"groups\":[],\"roles\":[],"
                + "\"accessTypes\":[\"write\",\"read\",\"describe\"],"
                + "\"conditions\":[{\"type\":\"ip-range\",\"values\":[\"" + addresses + "\"]}],"
                + "\"maskType\":null,\"maskValue\":null,\"rowFilter\":null}],"
                + "\"allowExceptions\":[],\"deny\":[],\"denyExceptions\":[],\"validity\":[]}}";
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("logins")
    void thePrincipalKafkaGivesTheLoginIsWhatPoliciesName(Login login) throws Exception {
        // SCRAM credentials reach the broker through the metadata log a moment after alterUserScramCredentials
        Await.until(login + " produces to " + login.topic(), Duration.ofSeconds(WAIT_S), () -> {
            try (KafkaProducer<String, String> producer = node.producer(login.login(), new Properties())) {
                producer.send(new ProducerRecord<>(login.topic(), "k", "allowed")).get(WAIT_S, TimeUnit.SECONDS);
                return true;
            }
        });
        assertRefused(login, "payments");
        // the policy of the -elsewhere topic allows the same, but only from 10.0.0.0/8: the TLS client is 127.0.0.1
        assertRefused(login, login.elsewhere());

        // a producer first asks for the topic's metadata: Kafka refuses it there, as DESCRIBE
        awaitAudit(login, "write", true, login.topic());
        awaitAudit(login, "describe", false, "payments");
        awaitAudit(login, "describe", false, login.elsewhere());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("logins")
    void aQuotaOfThePrincipalIsGroupedUnderKafkasSanitizedName(Login login) throws Exception {
        ClientQuotaEntity user = new ClientQuotaEntity(Collections.singletonMap(ClientQuotaEntity.USER, login.principal()));
        admin.alterClientQuotas(List.of(new ClientQuotaAlteration(user,
                List.of(new ClientQuotaAlteration.Op("request_percentage", 200.0))))).all().get(WAIT_S, TimeUnit.SECONDS);
        String group = "kafka.server:type=Request,user=" + Sanitizer.sanitize(login.principal()) + ",*";
        // every request counts against request_percentage: the login's requests make its group once the quota is in
        Await.until("the quota group " + group, Duration.ofSeconds(WAIT_S), () -> {
            try (Admin client = node.admin(login.login())) {
                client.describeCluster().clusterId().get(WAIT_S, TimeUnit.SECONDS);
            }
            return !jmx.read(group).isEmpty();
        });
        // The agent's part: its callback tags the principal's requests with the principal alone, as Kafka's own does
        // for a user quota, so they make exactly one group, whose user tag reads back as the principal
        List<String> groups = new ArrayList<>();
        for (String name : jmx.read("kafka.server:type=Request,*").keySet()) {
            String tag = new javax.management.ObjectName(name).getKeyProperty("user");
            if (tag != null && Sanitizer.desanitize(tag).equals(login.principal())) {
                groups.add(name);
            }
        }
        assertEquals(1, groups.size(), "one request quota group of " + login.principal() + ": " + groups);
        assertEquals(null, new javax.management.ObjectName(groups.get(0)).getKeyProperty("client-id"), groups.get(0));
    }

    @Test
    void aClientCertificateTheListenerCannotVerifyIsRefusedAtTheHandshake() throws Exception {
        ClientLogin trusted = logins.get(0).login();
        Properties foreignCa = trusted.settings();
        TestPki stranger = TestPki.create(work.resolve("another-ca"));
        foreignCa.put("ssl.keystore.location", stranger.keystore("tess-elsewhere", "CN=Tess,OU=clients,O=GrantForge IT").toString());
        Properties noCertificate = trusted.settings();
        noCertificate.keySet().removeIf(key -> key.toString().startsWith("ssl.keystore.") || key.equals("ssl.key.password"));
        // the broker's TLS alert is the reason, and it reaches the client as the cause of Kafka's error. Without a
        // certificate, TLS 1.3 says certificate_required; Debian's JDK 17.0.15 still sends the older bad_certificate,
        // its later updates (which scripts/install-test-platforms may bring) the former: either names the refusal
        Map<Properties, List<String>> refusals = Map.of(foreignCa, List.of("certificate_unknown"), noCertificate,
                List.of("certificate_required", "bad_certificate"));
        for (Map.Entry<Properties, List<String>> refusal : refusals.entrySet()) {
            long decided = settledDecisions();
            try (Admin client = node.admin(new ClientLogin(Transports.MTLS, refusal.getKey()))) {
                ExecutionException e = assertThrows(ExecutionException.class,
                        () -> client.describeCluster().clusterId().get(WAIT_S, TimeUnit.SECONDS));
                assertInstanceOf(SslAuthenticationException.class, e.getCause(), "the handshake's refusal: " + e.getCause());
                Throwable reason = e.getCause().getCause();
                assertTrue(reason != null && refusal.getValue().stream()
                        .anyMatch(alert -> reason.getMessage().contains("Received fatal alert: " + alert)),
                        "expected the alert " + String.join(" or ", refusal.getValue()) + ", got " + reason);
            }
            // the agent's part: a connection Kafka did not authenticate never reaches a decision (Tess's certificate
            // from the trusted CA would be allowed her topic)
            assertEquals(decided, decisions(), "no decision was asked for a refused handshake");
        }
    }

    /** Every decision the agent made (from its cache or its policies), as its MBean counts them. */
    private long decisions() throws Exception {
        Map<String, Object> agent = jmx.read("org.devlive.grantforge.kafka:type=Agent,*", "CacheHits", "CacheMisses").values()
                .iterator().next();
        return ((Number) agent.get("CacheHits")).longValue() + ((Number) agent.get("CacheMisses")).longValue();
    }

    /** {@link #decisions()} once it has not moved for half a second: the clients of the tests before are done. */
    private long settledDecisions() throws Exception {
        long[] last = {decisions()};
        Await.until("the agent's decisions settle", Duration.ofSeconds(WAIT_S), () -> {
            Thread.sleep(500);
            long now = decisions();
            boolean settled = now == last[0];
            last[0] = now;
            return settled;
        });
        return last[0];
    }

    @Test
    void aTokenTheJwksDoesNotVerifyIsRefusedAtAuthentication() throws Exception {
        // the same subject and claims, signed by a key the brokers' JWKS does not hold
        TestIdentityProvider impostor = TestIdentityProvider.create(work.resolve("impostor-idp"));
        long decided = settledDecisions();
        try (Admin client = node.admin(transports.oauthLogin(impostor, "olivia"))) {
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> client.describeCluster().clusterId().get(WAIT_S, TimeUnit.SECONDS));
            assertInstanceOf(SaslAuthenticationException.class, e.getCause(), "the broker's refusal: " + e.getCause());
            // RFC 6750's error, as Kafka's validator answers a token whose signature no key of the JWKS verifies
            assertTrue(e.getCause().getMessage().contains("invalid_token"), e.getCause().getMessage());
        }
        // the agent's part: olivia's topic would be allowed her, but no decision was asked for the forged token
        assertEquals(decided, decisions(), "no decision was asked for a token the JWKS does not verify");
    }

    /**
     * {@code explain --principal-of} with the node's own server.properties and the release's Kafka classes names the
     * principal the node gave each login above, and decides for it.
     */
    @Test
    void explainNamesThePrincipalTheNodeGivesACertificateOrAKerberosName() throws Exception {
        Path serverProperties = node.dir().resolve("server.properties");
        for (Login login : logins) {
            if (login.identity() == null) {
                continue;
            }
            // a Kerberos name needs the JVM's krb5.conf for the default realm, as the broker has it
            List<String> jvm = login.login().listener().equals(Transports.KERBEROS) ? TestKdc.shared().jvmArgs() : List.of();
            List<String> args = new ArrayList<>(List.of("explain", "--principal-of", login.identity()));
            args.addAll(List.of("--server-properties", serverProperties.toString(), "--listener", login.login().listener()));
            if (serverMode) {
                args.addAll(List.of("--cache-dir", work.resolve("cache").toString(), "--signing-key", server.signingKeyFile().toString()));
            } else {
                args.addAll(List.of("--snapshot", snapshot.toString()));
            }
            args.addAll(List.of("--operation", "WRITE", "--topic", login.topic(), "--host", "127.0.0.1"));
            ToolRun run = node.runAgentCommand(jvm, args);
            assertEquals(0, run.exitCode(), run.toString());
            assertTrue(run.stdout().startsWith("principal: User:" + login.principal() + "\n"), run.toString());
            assertTrue(run.stdout().contains("decision: ALLOWED by policy "), run.toString());
        }
        // without the node's rules, Kafka's default keeps the certificate's whole name
        ToolRun unruled = node.runAgentCommand(List.of(),
                List.of("explain", "--principal-of", transports.pki().certificatePem("tess").toString()));
        assertEquals(0, unruled.exitCode(), unruled.toString());
        assertTrue(unruled.stdout().startsWith("principal: User:CN=Tess,OU=clients,O=GrantForge IT\n"), unruled.toString());
        assertTrue(unruled.stdout().contains("by ssl.principal.mapping.rules = DEFAULT (Kafka's default)"), unruled.toString());
    }

    private void assertRefused(Login login, String topic) {
        Properties plain = new Properties();
        plain.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        plain.put(ProducerConfig.RETRIES_CONFIG, "0");
        plain.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "15000");
        try (KafkaProducer<String, String> producer = node.producer(login.login(), plain)) {
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> producer.send(new ProducerRecord<>(topic, "k", "refused")).get(WAIT_S, TimeUnit.SECONDS));
            assertInstanceOf(TopicAuthorizationException.class, e.getCause(), login + " producing to " + topic + ": " + e.getCause());
        }
    }

    /**
     * Waits for the audit of the principal's {@code accessType} on {@code topic} from 127.0.0.1 over its listener:
     * an event at the server, or a line of the node's audit log.
     */
    private void awaitAudit(Login login, String accessType, boolean allowed, String topic) throws Exception {
        String outcome = allowed ? "ALLOWED" : "DENIED";
        try {
            Await.until("the audit of " + login + ": " + outcome + " " + accessType + " on " + topic, Duration.ofSeconds(WAIT_S),
                    () -> audit(login).stream().anyMatch(record -> serverMode
                            ? record.contains("\"accessType\":\"" + accessType + "\"") && record.contains("\"outcome\":\"" + outcome + "\"")
                                && record.contains("\"resource\":\"" + topic + "\"") && record.contains("\"clientIp\":\"127.0.0.1\"")
                            : record.contains(" is " + (allowed ? "Allowed" : "Denied") + " operation = "
                                + accessType.toUpperCase(java.util.Locale.ROOT) + " from host = 127.0.0.1 on resource = topic:" + topic
                                + " for request = ")));
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; the audit of " + login.principal() + " so far:\n"
                    + String.join("\n", audit(login)), e);
        }
    }

    /**
     * The audit records of the login's principal over its listener: the server's events (as JSON) whose user is the
     * principal, or the lines of the node's audit log that name {@code User:<principal>}.
     */
    private List<String> audit(Login login) throws Exception {
        String listener = "listener " + login.login().listener();
        if (serverMode) {
            List<String> records = new ArrayList<>();
            for (JsonNode event : JSON.readTree(server.events())) {
                if (event.path("user").asText().equals(login.principal()) && event.path("request").asText().contains(listener)) {
                    records.add(event.toString());
                }
            }
            return records;
        }
        return node.logLines().stream().filter(line -> line.contains("[grantforge.audit]")
                && line.contains("Principal = User:" + login.principal() + " is ") && line.contains(listener))
                .collect(Collectors.toList());
    }
}
