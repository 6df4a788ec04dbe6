package org.devlive.grantforge.kafka.agent;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.serialization.StringSerializer;
import org.devlive.grantforge.kafka.agent.jni.NativeAgent;
import org.devlive.grantforge.kafka.agent.jni.Wire;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The topic sink's producer: a daemon thread per opened agent that takes the agent's batches of formatted records
 * ({@link NativeAgent#auditTopicTake}), writes them to the audit topic (created if missing) and says what was written
 * ({@link NativeAgent#auditTopicAck}). Rust never calls Java: what this thread does not acknowledge as written in time
 * stays with the agent, which spools it and offers it again. The settings are the agent's (the native configuration
 * parsed them); the credentials come from the operator's properties file.
 */
final class AuditTopicWriter implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(AuditTopicWriter.class);
    private static final long TAKE_WAIT_MS = 1000;
    static final int WRITTEN = 0;
    static final int NOT_NOW = 1;
    static final int REFUSED = 2;

    private final long handle;
    private final Map<String, String> settings;
    private final String topic;
    private final long timeoutMs;
    private Producer<String, String> producer;
    private boolean topicReady;
    private String lastProblem;

    private AuditTopicWriter(long handle, Map<String, String> settings) {
        this.handle = handle;
        this.settings = settings;
        this.topic = settings.get("topic");
        this.timeoutMs = Long.parseLong(settings.get("timeout.ms"));
    }

    /** Starts the writer thread of {@code handle} when the topic is a sink of its agent. */
    static void startIfConfigured(long handle) {
        byte[] encoded = NativeAgent.auditTopicSettings(handle);
        if (encoded == null) {
            return;
        }
        Thread thread = new Thread(new AuditTopicWriter(handle, decodeSettings(encoded)), "grantforge-audit-topic");
        thread.setDaemon(true);
        thread.start();
    }

    /** The settings payload ({@code crates/grantforge-jni/src/audit_topic_writer.rs}). */
    static Map<String, String> decodeSettings(byte[] encoded) {
        ByteBuffer in = ByteBuffer.wrap(encoded).order(ByteOrder.LITTLE_ENDIAN);
        Map<String, String> settings = new LinkedHashMap<String, String>();
        while (in.hasRemaining()) {
            settings.put(Wire.readString(in), Wire.readString(in));
        }
        return settings;
    }

    /** One batch: its id and its records (key, value), in order. */
    static final class Batch {
        final long id;
        final List<String[]> records = new ArrayList<String[]>();

        Batch(long id) {
            this.id = id;
        }
    }

    /** The batch payload ({@code crates/grantforge-jni/src/audit_topic_writer.rs}). */
    static Batch decodeBatch(byte[] encoded) {
        ByteBuffer in = ByteBuffer.wrap(encoded).order(ByteOrder.LITTLE_ENDIAN);
        Batch batch = new Batch(in.getLong());
        while (in.hasRemaining()) {
            batch.records.add(new String[] {Wire.readString(in), Wire.readString(in)});
        }
        return batch;
    }

    @Override
    public void run() {
        try {
            while (true) {
                byte[] taken = NativeAgent.auditTopicTake(handle, TAKE_WAIT_MS);
                if (taken == null) {
                    return;
                }
                if (taken.length == 0) {
                    continue;
                }
                Batch batch = decodeBatch(taken);
                String[] outcome = write(batch);
                int code = Integer.parseInt(outcome[0]);
                NativeAgent.auditTopicAck(handle, batch.id, code, outcome[1].getBytes(StandardCharsets.UTF_8));
                problem(code == WRITTEN ? null : outcome[1]);
            }
        } catch (RuntimeException e) {
            LOG.error("the GrantForge audit topic's writer stopped: {}; the agent spools the audit for the topic until the node restarts", e.toString());
        } finally {
            closeProducer();
        }
    }

    /** Logs a problem writing the topic once, and once when it is over. */
    private void problem(String now) {
        if (now != null && !now.equals(lastProblem)) {
            LOG.warn("cannot write the GrantForge audit topic {}: {}; the agent spools its events and sends them again", topic, now);
        } else if (now == null && lastProblem != null) {
            LOG.info("the GrantForge audit topic {} is written again", topic);
        }
        lastProblem = now;
    }

    /** Writes a batch; the outcome code and why. */
    private String[] write(Batch batch) {
        try {
            if (!topicReady) {
                createTopicIfMissing();
                topicReady = true;
            }
            if (producer == null) {
                producer = new KafkaProducer<String, String>(producerProps(), new StringSerializer(), new StringSerializer());
            }
            List<Future<RecordMetadata>> sent = new ArrayList<Future<RecordMetadata>>();
            for (String[] record : batch.records) {
                sent.add(producer.send(new ProducerRecord<String, String>(topic, record[0], record[1])));
            }
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs * 9 / 10);
            for (Future<RecordMetadata> f : sent) {
                f.get(Math.max(0L, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            }
            return new String[] {String.valueOf(WRITTEN), ""};
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RecordTooLargeException || cause instanceof RecordBatchTooLargeException
                    || cause instanceof InvalidRecordException) {
                return new String[] {String.valueOf(REFUSED), cause.toString()};
            }
            if (cause instanceof UnknownTopicOrPartitionException) {
                topicReady = false;
            }
            closeProducer();
            return new String[] {String.valueOf(NOT_NOW), String.valueOf(cause)};
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } catch (TimeoutException | RuntimeException e) {
            // Kafka's own exceptions are runtime exceptions: the cluster away, a refusal, a timeout.
            closeProducer();
            return new String[] {String.valueOf(NOT_NOW), e.toString()};
        }
    }

    /** Creates the topic with the agent's settings, unless it exists. */
    private void createTopicIfMissing() throws ExecutionException, InterruptedException, TimeoutException {
        Properties props = clientProps();
        props.put("default.api.timeout.ms", String.valueOf(timeoutMs / 2));
        props.put("request.timeout.ms", String.valueOf(timeoutMs / 2));
        try (Admin admin = Admin.create(props)) {
            Map<String, String> configs = new HashMap<String, String>();
            configs.put("cleanup.policy", "delete");
            configs.put("retention.ms", settings.get("retention.ms"));
            NewTopic newTopic = new NewTopic(topic, Integer.parseInt(settings.get("partitions")),
                Short.parseShort(settings.get("replication.factor"))).configs(configs);
            try {
                admin.createTopics(Collections.singletonList(newTopic)).all().get(timeoutMs / 2, TimeUnit.MILLISECONDS);
                LOG.info("created the GrantForge audit topic {} ({})", topic, configs);
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof TopicExistsException)) {
                    throw e;
                }
            }
        }
    }

    private Properties producerProps() {
        Properties props = clientProps();
        props.put("acks", "all");
        props.put("enable.idempotence", "true");
        props.put("linger.ms", "0");
        props.put("max.block.ms", String.valueOf(timeoutMs / 5));
        props.put("request.timeout.ms", String.valueOf(timeoutMs * 2 / 5));
        props.put("delivery.timeout.ms", String.valueOf(timeoutMs * 4 / 5));
        return props;
    }

    /** The operator's client settings (credentials), then the agent's address and client id. */
    private Properties clientProps() {
        Properties props = new Properties();
        String file = settings.get("producer.config");
        if (file != null && !file.isEmpty()) {
            try (InputStream in = new FileInputStream(file)) {
                props.load(in);
            } catch (IOException e) {
                throw new IllegalStateException("cannot read " + file + ": " + e, e);
            }
        }
        props.put("bootstrap.servers", settings.get("bootstrap.servers"));
        props.put("client.id", settings.get("client.id"));
        return props;
    }

    private void closeProducer() {
        if (producer != null) {
            try {
                producer.close(java.time.Duration.ZERO);
            } catch (RuntimeException e) {
                LOG.debug("closing the audit topic's producer: {}", e.toString());
            }
            producer = null;
        }
    }
}
