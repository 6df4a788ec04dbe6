package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.devlive.grantforge.plugin.api.ConnectionResult;
import org.devlive.grantforge.plugin.api.LookupException;
import org.devlive.grantforge.plugin.api.LookupRequest;
import org.devlive.grantforge.plugin.api.ServiceConfig;
import org.devlive.grantforge.standin.host.PluginHost;
import org.devlive.grantforge.standin.host.SnapshotProjection;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The {@code kafka} service plugin, loaded from its shaded jar as a GrantForge host loads it ({@link PluginHost}),
 * against a real node whose authorizer is the agent, in server mode against the test server serving the plugin's
 * definition as GrantForge projects it ({@link SnapshotProjection}): {@code testConnection} and {@code lookup} over SASL_PLAINTEXT
 * (PLAIN), SASL_SSL with SCRAM-SHA-512, Kerberos (a KDC in this JVM, the plugin's keytab) or OAuth (tokens from a
 * token endpoint, client credentials) and mutual TLS (stores as files, and as PEM text in the fields), each as a principal a GrantForge policy lets DESCRIBE topics,
 * groups, transactional ids and the cluster. A principal without DESCRIBE sees no names (Kafka filters them). A wrong
 * password, an address nothing listens on and a broker certificate from an unknown CA each fail with their reason,
 * within the host's call limit, and with no secret in the text the console would show.
 *
 * <p>One subclass per release: the oldest and the newest the agent supports.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class GrantForgePluginAgainstKafka {
    private static final long WAIT_S = 30;
    private static final String LOOKUP_USER = "grantforge";
    private static final String SCRAM_PASSWORD = "grantforge-scram-secret";
    private static final String OAUTH_CLIENT_SECRET = "grantforge-oauth-secret";
    private static final String ALLOWED_URLS = "org.apache.kafka.sasl.oauthbearer.allowed.urls";
    /** What a lookup principal needs: DESCRIBE where names are listed (and on the cluster, for describeCluster). */
    private static final List<String> DESCRIBED_LEVELS = List.of("topic", "group", "transactional_id", "cluster");

    /** How the service reaches the node: its label and the fields an operator fills in. */
    record Transport(String label, Map<String, String> fields) {
        @Override
        public String toString() {
            return label;
        }
    }

    private final String kafkaVersion;
    private Path work;
    private Transports transports;
    private KafkaNode node;
    private TestServer server;
    private PluginHost plugin;
    private Map<String, String> plain;
    private Map<String, String> scram;
    private Map<String, String> mutualTls;
    private Map<String, String> mutualTlsFromPem;
    private Map<String, String> kerberos;
    private Map<String, String> oauth;
    private TokenEndpoint tokenEndpoint;
    private String allowedUrlsBefore;

    GrantForgePluginAgainstKafka(String kafkaVersion) {
        this.kafkaVersion = kafkaVersion;
    }

    @BeforeAll
    void startNodeAndLoadPlugin() throws Exception {
        work = Files.createTempDirectory("plugin-" + kafkaVersion + "-");
        plugin = PluginHost.load(PluginJar.path());
        transports = new Transports(TestPki.create(work.resolve("pki")));
        server = serverOfThePluginsDefinition();
        TestKdc kdc = TestKdc.shared();
        TestIdentityProvider idp = TestIdentityProvider.create(work.resolve("idp"));
        tokenEndpoint = TokenEndpoint.start(idp, LOOKUP_USER, OAUTH_CLIENT_SECRET);
        KafkaNode.Builder builder = KafkaNode.builder().name("plugin-" + kafkaVersion).kafkaVersion(kafkaVersion)
                .listener(transports.mutualTlsListener(ProductionTransports.MAPPING_RULES))
                .listener(transports.scramListener())
                .listener(transports.kerberosListener(kdc, ProductionTransports.KERBEROS_RULES))
                .listener(transports.oauthListener(idp));
        kdc.jvmArgs().forEach(builder::jvmArg);
        idp.jvmArgs().forEach(builder::jvmArg);
        server.agentOf(builder, work.resolve("cache"), "plugin-" + kafkaVersion);
        node = builder.start();
        try (Admin admin = node.admin(KafkaNode.SUPER_USER)) {
            createNamesToLookUp(admin);
        }
        fillInTheServices(kdc);
    }

    /** The fields an operator would fill in for each transport, as the plugin's principal of that transport. */
    private void fillInTheServices(TestKdc kdc) throws Exception {
        String truststore = transports.pki().truststore().toString();
        plain = Map.of("bootstrap.servers", node.bootstrapServers(), "security.protocol", "SASL_PLAINTEXT",
                "sasl.mechanism", "PLAIN", "sasl.username", "alice", "sasl.password", KafkaNode.USERS.get("alice"));
        scram = Map.of("bootstrap.servers", node.bootstrapServers(Transports.SCRAM), "security.protocol", "SASL_SSL",
                "sasl.mechanism", Transports.SCRAM_MECHANISM, "sasl.username", LOOKUP_USER, "sasl.password", SCRAM_PASSWORD,
                "ssl.truststore.type", "PKCS12", "ssl.truststore.location", truststore, "ssl.truststore.password", TestPki.PASSWORD);
        Path keystore = transports.pki().keystore("grantforge", "CN=GrantForge,OU=clients,O=GrantForge IT");
        mutualTls = Map.of("bootstrap.servers", node.bootstrapServers(Transports.MTLS), "security.protocol", "SSL",
                "ssl.truststore.type", "PKCS12", "ssl.truststore.location", truststore, "ssl.truststore.password", TestPki.PASSWORD,
                "ssl.keystore.type", "PKCS12", "ssl.keystore.location", keystore.toString(), "ssl.keystore.password",
                TestPki.PASSWORD, "ssl.key.password", TestPki.PASSWORD);
        String kerberosPrincipal = "GrantForge/localhost@" + TestKdc.REALM;
        kerberos = Map.of("bootstrap.servers", node.bootstrapServers(Transports.KERBEROS), "security.protocol", "SASL_SSL",
                "sasl.mechanism", "GSSAPI", "kerberos.principal", kerberosPrincipal,
                "kerberos.keytab", kdc.keytab(kerberosPrincipal).toString(), "ssl.truststore.type", "PKCS12",
                "ssl.truststore.location", truststore, "ssl.truststore.password", TestPki.PASSWORD);
        // Kafka 4 clients fetch tokens only from URLs this JVM-wide list allows; GrantForge's operators set it likewise
        allowedUrlsBefore = System.setProperty(ALLOWED_URLS, tokenEndpoint.url());
        oauth = Map.of("bootstrap.servers", node.bootstrapServers(Transports.OAUTH), "security.protocol", "SASL_SSL",
                "sasl.mechanism", "OAUTHBEARER", "sasl.oauthbearer.token.endpoint.url", tokenEndpoint.url(),
                "sasl.jaas.config", "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId=\""
                        + LOOKUP_USER + "\" clientSecret=\"" + OAUTH_CLIENT_SECRET + "\";",
                "ssl.truststore.type", "PKCS12", "ssl.truststore.location", truststore, "ssl.truststore.password", TestPki.PASSWORD);
        // the same login as PEM text in the service's fields: no file on the GrantForge server
        mutualTlsFromPem = Map.of("bootstrap.servers", node.bootstrapServers(Transports.MTLS), "security.protocol", "SSL",
                "ssl.truststore.type", "PEM", "ssl.truststore.certificates", Files.readString(work.resolve("pki/ca.pem")),
                "ssl.keystore.type", "PEM", "ssl.keystore.certificate.chain",
                Files.readString(transports.pki().certificatePem("grantforge")), "ssl.keystore.key", privateKeyPem(keystore));
    }

    /** The key of a PKCS12 key store of {@link TestPki}, as unencrypted PKCS#8 PEM text. */
    private static String privateKeyPem(Path keystore) throws Exception {
        java.security.KeyStore store = java.security.KeyStore.getInstance("PKCS12");
        try (java.io.InputStream in = Files.newInputStream(keystore)) {
            store.load(in, TestPki.PASSWORD.toCharArray());
        }
        byte[] key = store.getKey("key", TestPki.PASSWORD.toCharArray()).getEncoded();
        return "-----BEGIN PRIVATE KEY-----\n" + java.util.Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(key)
                + "\n-----END PRIVATE KEY-----\n";
    }

    /**
     * The test server, serving as the {@code kafka} type's definition what GrantForge's server would project from the
     * loaded plugin's definition, and policies that let the lookup principals DESCRIBE: the node's agent decides the
     * plugin's own requests with the plugin's definition, as in production.
     */
    private TestServer serverOfThePluginsDefinition() throws Exception {
        Path definition = work.resolve("projected-definition.json");
        Files.writeString(definition, SnapshotProjection.toJson(SnapshotProjection.of(plugin.definition())));
        Path policies = work.resolve("policies.json");
        Files.writeString(policies, "{\"service\":\"kafka-plugin-it\",\"serviceEnabled\":true,\"policies\":["
                + String.join(",", DESCRIBED_LEVELS.stream()
                        .map(level -> describePolicy(DESCRIBED_LEVELS.indexOf(level) + 1, level)).toList())
                + "],\"roles\":{},\"groups\":{}}");
        return TestServer.startWithDefinition(policies, work.resolve("server"), 1, definition);
    }

    /** Topics, groups (by committed offsets) and a transactional id, some starting with "orders". */
    private void createNamesToLookUp(Admin admin) throws Exception {
        admin.createTopics(Stream.of("orders", "orders-eu", "payments").map(t -> new NewTopic(t, 1, (short) 1)).toList())
                .all().get(WAIT_S, TimeUnit.SECONDS);
        admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion(LOOKUP_USER,
                new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192), SCRAM_PASSWORD))).all().get(WAIT_S, TimeUnit.SECONDS);
        for (String group : List.of("orders-app", "orders-audit", "payments-app")) {
            admin.alterConsumerGroupOffsets(group, Map.of(new TopicPartition("orders", 0), new OffsetAndMetadata(0)))
                    .all().get(WAIT_S, TimeUnit.SECONDS);
        }
        Properties transactional = new Properties();
        transactional.put("transactional.id", "orders-tx");
        try (KafkaProducer<String, String> producer = node.producer(KafkaNode.SUPER_USER, transactional)) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>("orders", "k", "v")).get(WAIT_S, TimeUnit.SECONDS);
            producer.commitTransaction();
        }
    }

    private static String describePolicy(int id, String level) {
        return "{\"id\":\"" + id + "\",\"name\":\"lookup " + level + "\",\"type\":\"ACCESS\",\"priority\":\"NORMAL\",\"document\":{"
                + "\"resources\":{\"" + level + "\":{\"values\":[\"*\"],\"excludes\":false,\"recursive\":false}},"
                + "\"allow\":[{\"users\":[\"" + LOOKUP_USER + "\",\"alice\"],\"groups\":[],\"roles\":[],"
                + "\"accessTypes\":[\"describe\"],\"conditions\":[],\"maskType\":null,\"maskValue\":null,\"rowFilter\":null}],"
                + "\"allowExceptions\":[],\"deny\":[],\"denyExceptions\":[],\"validity\":[]}}";
    }

    @AfterAll
    void stop() {
        PluginHost.closeQuietly(plugin);
        if (tokenEndpoint != null) {
            tokenEndpoint.close();
            if (allowedUrlsBefore == null) {
                System.clearProperty(ALLOWED_URLS);
            } else {
                System.setProperty(ALLOWED_URLS, allowedUrlsBefore);
            }
        }
        if (node != null) {
            node.close();
        }
        if (server != null) {
            server.close();
        }
    }

    Stream<Transport> transports() {
        return Stream.of(new Transport("SASL_PLAINTEXT with PLAIN", plain), new Transport("SASL_SSL with SCRAM-SHA-512", scram),
                new Transport("mutual TLS", mutualTls), new Transport("mutual TLS from PEM text", mutualTlsFromPem),
                new Transport("SASL_SSL with Kerberos from a keytab", kerberos),
                new Transport("SASL_SSL with OAuth tokens from a token endpoint", oauth));
    }

    KafkaNode node() {
        return node;
    }

    /** The service as SASL_PLAINTEXT with PLAIN: what tests of one release add look up with. */
    Map<String, String> plainService() {
        return plain;
    }

    private ServiceConfig service(Map<String, String> fields) {
        return new ServiceConfig("kafka-it", plugin.definition().withDefaults(fields));
    }

    List<String> lookup(Map<String, String> fields, String level, String typed, int limit) throws Exception {
        return plugin.call(p -> p.lookup(new LookupRequest(service(fields), level, typed, Map.of(), limit)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("transports")
    void theConnectionTestNamesTheClusterItReached(Transport transport) throws Exception {
        assertEquals(List.of(), plugin.call(p -> p.validateConfig(service(transport.fields()))));
        ConnectionResult result = plugin.call(p -> p.testConnection(service(transport.fields())));
        assertEquals(ConnectionResult.Status.SUCCEEDED, result.status(), result.message());
        assertEquals("cluster " + node.clusterId() + ": 1 broker(s), 3 topic(s) visible", result.message());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("transports")
    void lookupsOfferTheNamesStartingWithWhatWasTypedSortedAndBounded(Transport transport) throws Exception {
        Map<String, String> fields = transport.fields();
        assertEquals(List.of("orders", "orders-eu"), lookup(fields, "topic", "orders", 100));
        assertEquals(List.of("orders"), lookup(fields, "topic", "orders", 1));
        assertEquals(List.of("orders", "orders-eu", "payments"), lookup(fields, "topic", "", 100));
        assertEquals(List.of("orders-app", "orders-audit"), lookup(fields, "group", "orders", 100));
        assertEquals(List.of("orders-tx"), lookup(fields, "transactional_id", "ord", 100));
        assertEquals(List.of("kafka-cluster"), lookup(fields, "cluster", "kafka", 100));
        assertEquals(List.of(), lookup(fields, "cluster", "other", 100));
    }

    /**
     * GrantForge rescans its plugins folder and loads the plugin again in a new class loader. Kafka's OAUTHBEARER client
     * registers a JVM-wide security provider from the first class loader that logs in, so the new loader's login must
     * not be handed the old loader's classes; and the old loader, still serving until the rescan ends, keeps working.
     */
    @Test
    void aPluginLoadedAgainByARescanLogsInWithOAuthAsTheFirstDid() throws Exception {
        assertEquals(ConnectionResult.Status.SUCCEEDED, plugin.call(p -> p.testConnection(service(oauth))).status());
        PluginHost rescanned = PluginHost.load(PluginJar.path());
        try {
            ConnectionResult again = rescanned.call(p -> p.testConnection(service(oauth)));
            assertEquals(ConnectionResult.Status.SUCCEEDED, again.status(), again.message());
            ConnectionResult first = plugin.call(p -> p.testConnection(service(oauth)));
            assertEquals(ConnectionResult.Status.SUCCEEDED, first.status(), first.message());
        } finally {
            PluginHost.closeQuietly(rescanned);
        }
        ConnectionResult afterClose = plugin.call(p -> p.testConnection(service(oauth)));
        assertEquals(ConnectionResult.Status.SUCCEEDED, afterClose.status(), afterClose.message());
    }

    /** A rescan drops the plugin's class loader: a client left open would keep its thread and classes alive. */
    @Test
    void everyCallClosesItsAdminClientBeforeItReturns() throws Exception {
        // the plugin's clients are named grantforge-<service>-<uuid>: an open client of that form is seen
        Properties probe = node.clientProps("alice");
        probe.put("client.id", "grantforge-kafka-it-probe");
        try (Admin open = Admin.create(probe)) {
            assertEquals(List.of("kafka-admin-client-thread | grantforge-kafka-it-probe"), pluginAdminThreads());
        }
        plugin.call(p -> p.testConnection(service(scram)));
        lookup(scram, "group", "", 10);
        assertThrows(LookupException.class, () -> lookup(Map.of("bootstrap.servers", "127.0.0.1:" + Ports.free(),
                "request.timeout.ms", "1000"), "topic", "", 10));
        assertEquals(List.of(), pluginAdminThreads());
    }

    private static List<String> pluginAdminThreads() {
        return Thread.getAllStackTraces().keySet().stream().map(Thread::getName)
                .filter(name -> name.startsWith("kafka-admin-client-thread | grantforge-kafka-it-")).toList();
    }

    /**
     * The OAuth login happens while the Admin client is made, before any request's timeout runs: a token endpoint
     * that takes connections and never answers must still end the call within the service's timeout, its slack
     * and the close (Kafka's defaults read it without a timeout and retry for 10 s).
     */
    @Test
    void aTokenEndpointThatNeverAnswersFailsWithinTheServicesTimeout() throws Exception {
        try (java.net.ServerSocket silent = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            String url = "http://127.0.0.1:" + silent.getLocalPort() + "/token";
            String allowed = System.getProperty(ALLOWED_URLS);
            System.setProperty(ALLOWED_URLS, allowed == null ? url : allowed + "," + url);
            try {
                Map<String, String> silentEndpoint = new HashMap<>(oauth);
                silentEndpoint.put("sasl.oauthbearer.token.endpoint.url", url);
                silentEndpoint.put("request.timeout.ms", "2000");
                long start = System.nanoTime();
                ConnectionResult result = plugin.call(p -> p.testConnection(service(silentEndpoint)));
                long millis = (System.nanoTime() - start) / 1_000_000;
                assertEquals(ConnectionResult.Status.FAILED, result.status(), result.message());
                assertOneLineWithoutSecrets(result.message(), silentEndpoint);
                assertTrue(millis <= 2000 + 500 + 1000, "failed after " + millis + " ms: " + result.message());
            } finally {
                System.setProperty(ALLOWED_URLS, allowed == null ? "" : allowed);
                if (allowed == null) {
                    System.clearProperty(ALLOWED_URLS);
                }
            }
        }
    }

    @Test
    void internalTopicsAreOfferedOnlyWhenTheServiceAsksForThem() throws Exception {
        Map<String, String> internal = new HashMap<>(plain);
        internal.put("lookup.internal.topics", "true");
        // the transactions and the committed offsets above made both internal topics
        assertEquals(List.of("__consumer_offsets", "__transaction_state"), lookup(internal, "topic", "__", 100));
        assertEquals(List.of(), lookup(plain, "topic", "__", 100));
    }

    @Test
    void aPrincipalWithoutDescribeSeesNoNamesAndTheTestSaysWhy() throws Exception {
        Map<String, String> bob = new HashMap<>(plain);
        bob.put("sasl.username", "bob");
        bob.put("sasl.password", KafkaNode.USERS.get("bob"));
        assertEquals(List.of(), lookup(bob, "topic", "", 100));
        assertEquals(List.of(), lookup(bob, "transactional_id", "", 100));
        ConnectionResult result = plugin.call(p -> p.testConnection(service(bob)));
        assertEquals(ConnectionResult.Status.SUCCEEDED, result.status(), result.message());
        assertTrue(result.message().contains("0 topic(s) visible; Kafka hides topics the principal may not DESCRIBE"),
                result.message());
    }

    @Test
    void aWrongPasswordFailsAuthenticationWithoutShowingIt() throws Exception {
        Map<String, String> wrong = new HashMap<>(scram);
        wrong.put("sasl.password", "not-the-password-42");
        Failure failure = failure(wrong, "authentication failed: ", LookupException.Reason.AUTHENTICATION_FAILED);
        failure.assertWithin(Duration.ofSeconds(5));
    }

    @Test
    void anAddressNothingListensOnIsUnreachableWithinTheServicesTimeout() throws Exception {
        Map<String, String> nowhere = new HashMap<>(scram);
        nowhere.put("bootstrap.servers", "127.0.0.1:" + Ports.free());
        nowhere.put("request.timeout.ms", "2000");
        Failure failure = failure(nowhere, "cannot reach 127.0.0.1:", LookupException.Reason.UNREACHABLE);
        // the service's timeout, the wait's slack and the close: what KafkaAdminCalls allows a call
        failure.assertWithin(Duration.ofMillis(2000 + 500 + 1000));
    }

    @Test
    void aBrokerCertificateFromAnUnknownCaFailsTheTlsHandshake() throws Exception {
        Map<String, String> untrusting = new HashMap<>(scram);
        untrusting.put("ssl.truststore.location", TestPki.create(work.resolve("other-pki")).truststore().toString());
        Failure failure = failure(untrusting, "authentication failed: the TLS handshake with", LookupException.Reason.AUTHENTICATION_FAILED);
        failure.assertWithin(Duration.ofSeconds(5));
    }

    /** The slower of a failed connection test and a failed lookup, and that both said what they should. */
    record Failure(long slowestMillis) {
        void assertWithin(Duration limit) {
            assertTrue(slowestMillis <= limit.toMillis(), "failed after " + slowestMillis + " ms, more than " + limit);
        }
    }

    private Failure failure(Map<String, String> fields, String expected, LookupException.Reason reason) throws Exception {
        long start = System.nanoTime();
        ConnectionResult result = plugin.call(p -> p.testConnection(service(fields)));
        long testMillis = (System.nanoTime() - start) / 1_000_000;
        assertEquals(ConnectionResult.Status.FAILED, result.status());
        assertTrue(result.message().startsWith(expected), result.message());
        assertOneLineWithoutSecrets(result.message(), fields);

        start = System.nanoTime();
        LookupException thrown = assertThrows(LookupException.class, () -> lookup(fields, "topic", "", 10));
        long lookupMillis = (System.nanoTime() - start) / 1_000_000;
        assertEquals(reason, thrown.getReason(), thrown.getMessage());
        assertTrue(thrown.getMessage().startsWith("lookup of topic failed: " + expected), thrown.getMessage());
        assertOneLineWithoutSecrets(thrown.getMessage(), fields);
        return new Failure(Math.max(testMillis, lookupMillis));
    }

    private static void assertOneLineWithoutSecrets(String text, Map<String, String> fields) {
        assertFalse(text.contains("\n") || text.contains("\r"), text);
        assertTrue(text.length() <= 300, text);
        for (String secret : List.of("sasl.password", "ssl.truststore.password", "ssl.keystore.password", "ssl.key.password")) {
            String value = fields.get(secret);
            if (value != null) {
                assertFalse(text.contains(value), secret + " shown in: " + text);
            }
        }
    }
}
