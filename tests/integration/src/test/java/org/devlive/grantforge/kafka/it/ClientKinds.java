package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.UpdateFeaturesOptions;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.Repartitioned;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Kafka 4's client kinds against one node of a release, each allowed where its policies grant what it asks and
 * refused where they do not: a Kafka Streams application on the streams rebalance protocol (KIP-1071), a KIP-848
 * consumer, a share-group consumer (KIP-932) and the share-group offsets admin calls, and {@code kafka-groups}
 * listing groups of one type. The policies are {@code tests/fixtures/snapshots/client-kinds.json}, which
 * {@code docs/explain.md} asks what each client kind needs; {@code docs/kafka-service-type.md} ("What each client
 * kind needs") names the same grants.
 *
 * <p>Principals: alice runs the streams application {@code st-app} with every grant it needs; bob runs
 * {@code st-bob} with the same grants but {@code create} on its internal topics; dave consumes with the consumer
 * protocol; carol consumes from a share group; erin is the operator's tool (describe on every group, the share
 * group's offsets); mallory has nothing. One node per release, shared by every test of the class.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
// the listing joins carol's share group again: after the share test, which counts what she reads
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
abstract class ClientKinds {
    /** The policies, which {@code docs/explain.md}'s examples of what each client kind needs ask too. */
    private static final String POLICIES = "client-kinds.json";
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String IN = "in";
    private static final String OUT = "out";
    /** The one internal topic of the streams topology below: {@code <application.id>-by-key-repartition}. */
    private static final String REPARTITION = "by-key";

    private final String kafkaVersion;
    private Path work;
    private KafkaNode node;
    private Admin admin;
    private final List<KafkaStreams> apps = new ArrayList<>();

    ClientKinds(String kafkaVersion) {
        this.kafkaVersion = kafkaVersion;
    }

    /** Broker settings the release needs before it serves streams and share groups (none once they are Kafka's default). */
    abstract Map<String, String> previewSettings();

    /** Feature levels the release needs raised after it starts (none once they are Kafka's default). */
    abstract Map<String, Short> previewFeatures();

    @BeforeAll
    void startNode() throws Exception {
        work = Files.createTempDirectory("client-kinds");
        Path policyFile = work.resolve("policies.json");
        Files.copy(ItPaths.fixtures().resolve("snapshots").resolve(POLICIES), policyFile);
        KafkaNode.Builder builder = KafkaNode.builder().name("client-kinds-" + kafkaVersion).kafkaVersion(kafkaVersion)
                .policyFile(policyFile);
        previewSettings().forEach(builder::property);
        node = builder.start();
        admin = node.admin(KafkaNode.SUPER_USER);
        if (!previewFeatures().isEmpty()) {
            Map<String, FeatureUpdate> updates = new java.util.HashMap<>();
            previewFeatures().forEach((feature, level) ->
                    updates.put(feature, new FeatureUpdate(level, FeatureUpdate.UpgradeType.UPGRADE)));
            admin.updateFeatures(updates, new UpdateFeaturesOptions()).all().get();
        }
        admin.createTopics(List.of(new NewTopic(IN, 1, (short) 1), new NewTopic(OUT, 1, (short) 1))).all().get();
        try (KafkaProducer<String, String> producer = node.producer(KafkaNode.SUPER_USER)) {
            for (int i = 0; i < 3; i++) {
                producer.send(new ProducerRecord<>(IN, "key-" + i, "order-" + i)).get();
            }
        }
    }

    @AfterAll
    void stopNode() throws IOException {
        apps.forEach(app -> app.close(Duration.ofSeconds(10)));
        if (admin != null) {
            admin.close();
        }
        if (node != null) {
            node.close();
        }
        if (work != null) {
            ItPaths.deleteRecursively(work);
        }
    }

    @Test
    @Order(1)
    void aStreamsApplicationOnTheStreamsProtocolIsServedWithCreateOnItsInternalTopics() throws Exception {
        KafkaStreams app = streamsApp("alice", "st-app");
        try (KafkaConsumer<String, String> out = node.consumer(KafkaNode.SUPER_USER, null)) {
            out.assign(List.of(new TopicPartition(OUT, 0)));
            Await.until("st-app's records in " + OUT, WAIT, () -> !out.poll(Duration.ofMillis(200)).isEmpty());
        }
        assertTrue(topicExists("st-app-" + REPARTITION + "-repartition"), "the broker made st-app's internal topic");
        Await.until("st-app stable", WAIT, () -> streamsGroupState("st-app") == GroupState.STABLE);
        assertEquals(KafkaStreams.State.RUNNING, app.state());
    }

    @Test
    @Order(2)
    void aStreamsApplicationWithoutCreateWaitsAsNotReadyAndSeesNoError() throws Exception {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        KafkaStreams app = streamsApp("bob", "st-bob", failure);
        // the broker asks CREATE of bob for the internal topic, is refused, and answers the heartbeat with the status
        // MISSING_INTERNAL_TOPICS: the group stays NOT_READY and the application waits, without any error
        String refusal = "User:bob is Denied operation = CREATE from host = 127.0.0.1 on resource = topic:st-bob-"
                + REPARTITION + "-repartition for request = STREAMS_GROUP_HEARTBEAT";
        Await.until("the audit of st-bob's refused CREATE of its internal topic", WAIT,
                () -> node.logText().contains(refusal));
        Await.until("st-bob NOT_READY", WAIT, () -> streamsGroupState("st-bob") == GroupState.NOT_READY);
        assertFalse(topicExists("st-bob-" + REPARTITION + "-repartition"), "no internal topic without CREATE");
        assertEquals(GroupState.NOT_READY, streamsGroupState("st-bob"));
        assertNull(failure.get(), "the application saw no error");
        assertFalse(app.state() == KafkaStreams.State.ERROR || app.state() == KafkaStreams.State.PENDING_ERROR,
                "state " + app.state());
    }

    @Test
    @Order(3)
    void aConsumerOnTheConsumerProtocolReadsWithReadOnItsGroupAndIsRefusedWithout() {
        try (KafkaConsumer<String, String> dave = node.consumer("dave", "c848-dave", consumerProtocol())) {
            dave.subscribe(List.of(IN));
            assertEquals(3, pollAtLeast(dave, 3), "dave reads the three records");
            dave.commitSync();
        }
        // dave again, in a group that is not his: he may read the topic, so the only refusal the client can meet
        // is the group's (a principal with no grant at all races the metadata's topic refusal against it)
        try (KafkaConsumer<String, String> notHis = node.consumer("dave", "c848-not-daves", consumerProtocol())) {
            notHis.subscribe(List.of(IN));
            Exception refused = assertThrows(Exception.class, () -> pollAtLeast(notHis, 1));
            assertEquals("refused: GROUP_AUTHORIZATION_FAILED (30)", Refusals.of(refused));
        }
    }

    @Test
    @Order(4)
    void aShareConsumerAndTheShareGroupOffsetsCallsAreServedWhereGrantedOnly() throws Exception {
        // a share group starts at the latest offset unless its configuration says otherwise
        ConfigResource group = new ConfigResource(ConfigResource.Type.GROUP, "sh-carol");
        admin.incrementalAlterConfigs(Map.of(group, List.of(new AlterConfigOp(
                new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET)))).all().get();
        try (KafkaShareConsumer<String, String> carol = shareConsumer("carol", "sh-carol")) {
            carol.subscribe(List.of(IN));
            int read = 0;
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (read < 3 && System.nanoTime() < deadline) {
                read += carol.poll(Duration.ofMillis(200)).count();
                carol.commitSync();
            }
            assertEquals(3, read, "carol reads the three records from her share group");
        }
        // dave may read the topic, but not in a share group of his
        try (KafkaShareConsumer<String, String> dave = shareConsumer("dave", "sh-dave")) {
            dave.subscribe(List.of(IN));
            Exception refused = assertThrows(Exception.class, () -> {
                long deadline = System.nanoTime() + WAIT.toNanos();
                while (System.nanoTime() < deadline) {
                    dave.poll(Duration.ofMillis(200));
                }
            });
            assertEquals("refused: GROUP_AUTHORIZATION_FAILED (30)", Refusals.of(refused));
        }

        TopicPartition in0 = new TopicPartition(IN, 0);
        try (Admin erin = node.admin("erin"); Admin mallory = node.admin("mallory")) {
            Await.until("sh-carol's offsets of " + in0, WAIT, () -> erin.listShareGroupOffsets(
                    Map.of("sh-carol", new ListShareGroupOffsetsSpec())).partitionsToOffsetInfo("sh-carol").get().get(in0) != null);
            erin.alterShareGroupOffsets("sh-carol", Map.of(in0, 0L)).all().get();
            assertEquals(0, erin.listShareGroupOffsets(Map.of("sh-carol", new ListShareGroupOffsetsSpec()))
                    .partitionsToOffsetInfo("sh-carol").get().get(in0).startOffset());
            erin.deleteShareGroupOffsets("sh-carol", Set.of(IN)).all().get();

            ExecutionException refused = assertThrows(ExecutionException.class, () -> mallory
                    .listShareGroupOffsets(Map.of("sh-carol", new ListShareGroupOffsetsSpec())).all().get());
            assertEquals("refused: GROUP_AUTHORIZATION_FAILED (30)", Refusals.of(refused));
            ExecutionException refusedReset = assertThrows(ExecutionException.class,
                    () -> mallory.alterShareGroupOffsets("sh-carol", Map.of(in0, 0L)).all().get());
            assertEquals("refused: GROUP_AUTHORIZATION_FAILED (30)", Refusals.of(refusedReset));
        }
    }

    @Test
    @Order(5)
    void kafkaGroupsListsTheGroupsOfOneTypeThatThePrincipalMayDescribe() throws Exception {
        try (KafkaConsumer<String, String> dave = node.consumer("dave", "c848-dave", consumerProtocol());
             KafkaShareConsumer<String, String> carol = shareConsumer("carol", "sh-carol")) {
            dave.subscribe(List.of(IN));
            carol.subscribe(List.of(IN));
            Await.until("both groups known to the broker", WAIT, () -> {
                dave.poll(Duration.ofMillis(100));
                carol.poll(Duration.ofMillis(100));
                return admin.listGroups().all().get().stream().map(g -> g.groupId()).toList()
                        .containsAll(List.of("c848-dave", "sh-carol"));
            });
            ToolRun share = listGroups("erin", "share");
            assertTrue(share.stdout().contains("sh-carol") && !share.stdout().contains("c848-dave"), share.toString());
            ToolRun consumer = listGroups("erin", "consumer");
            assertTrue(consumer.stdout().contains("c848-dave") && !consumer.stdout().contains("sh-carol"),
                    consumer.toString());
            ToolRun none = listGroups("mallory", "share");
            assertFalse(none.stdout().contains("sh-carol"), "mallory may describe no group: " + none);
        }
    }

    private ToolRun listGroups(String user, String type) {
        ToolRun run = node.runTool(user, "org.apache.kafka.tools.GroupsCommand", List.of("--list", "--group-type", type));
        assertEquals(0, run.exitCode(), "kafka-groups --list --group-type " + type + " as " + user + ": " + run);
        return run;
    }

    private KafkaStreams streamsApp(String user, String applicationId) {
        return streamsApp(user, applicationId, new AtomicReference<>());
    }

    /** A Kafka Streams application on the streams protocol: {@code in}, repartitioned by key, to {@code out}. */
    private KafkaStreams streamsApp(String user, String applicationId, AtomicReference<Throwable> failure) {
        StreamsBuilder topology = new StreamsBuilder();
        topology.stream(IN, Consumed.with(Serdes.String(), Serdes.String()))
                .repartition(Repartitioned.<String, String>as(REPARTITION).withKeySerde(Serdes.String())
                        .withValueSerde(Serdes.String()))
                .to(OUT, Produced.with(Serdes.String(), Serdes.String()));
        Properties props = node.clientProps(user);
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
        props.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, "streams");
        props.put(StreamsConfig.STATE_DIR_CONFIG, work.resolve("state-" + applicationId).toString());
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, "100");
        props.put(StreamsConfig.consumerPrefix("auto.offset.reset"), "earliest");
        KafkaStreams app = new KafkaStreams(topology.build(), props);
        app.setUncaughtExceptionHandler(e -> {
            failure.set(e);
            return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse
                    .SHUTDOWN_CLIENT;
        });
        apps.add(app);
        app.start();
        return app;
    }

    private KafkaShareConsumer<String, String> shareConsumer(String user, String group) {
        Properties props = node.clientProps(user);
        props.put("group.id", group);
        props.put("key.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
        props.put("value.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
        return new KafkaShareConsumer<>(props);
    }

    private static Properties consumerProtocol() {
        Properties props = new Properties();
        props.put("group.protocol", "consumer");
        return props;
    }

    /** Polls until {@code count} records came, or {@link #WAIT} passed; a refusal is thrown by the poll. */
    private static int pollAtLeast(KafkaConsumer<String, String> consumer, int count) {
        int read = 0;
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (read < count && System.nanoTime() < deadline) {
            ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
            read += records.count();
        }
        return read;
    }

    private boolean topicExists(String topic) throws Exception {
        return admin.listTopics().names().get().contains(topic);
    }

    /**
     * The state of a streams group as {@code kafka-groups --list} reads it: describing a group that has no topology yet
     * fails in a 4.4 client against a 4.1 node ("Topology information is missing").
     */
    private GroupState streamsGroupState(String groupId) throws Exception {
        return admin.listGroups(ListGroupsOptions.forStreamsGroups()).all().get().stream()
                .filter(group -> group.groupId().equals(groupId))
                .findFirst().flatMap(GroupListing::groupState).orElse(GroupState.UNKNOWN);
    }
}
