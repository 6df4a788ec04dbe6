package org.devlive.grantforge.kafka.it;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.stream.Collectors;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.Uuid;

/**
 * A KRaft cluster of split roles, as production runs them: one controller-only node and broker-only
 * nodes (three by default), each a {@link KafkaNode} in its own JVM with the agent as its authorizer,
 * one cluster id formatted on every node. Brokers replicate to each other over the inter-broker
 * listener as {@value #INTER_BROKER_USER} and reach the controller as {@value #CONTROLLER_USER}; both
 * are super users, as {@code docs/operations.md} tells operators, so that traffic passes the agent
 * like every other request without a policy.
 *
 * <pre>{@code
 * try (KafkaCluster cluster = KafkaCluster.builder().kafkaVersion("3.7.2")
 *         .eachNode((name, node) -> server.agentOf(node, cacheDir.resolve(name), name)).start();
 *      Admin admin = cluster.admin("admin")) { ... }
 * }</pre>
 */
public final class KafkaCluster implements AutoCloseable {
    /** {@code node.id} of the controller (brokers are 1, 2, 3 …). */
    public static final int CONTROLLER_ID = 100;
    /** The principal brokers replicate as. */
    public static final String INTER_BROKER_USER = "broker";
    /** The principal brokers reach the controller as. */
    public static final String CONTROLLER_USER = "controller";

    private final KafkaNode controller;
    private final List<KafkaNode> brokers;

    private KafkaCluster(KafkaNode controller, List<KafkaNode> brokers) {
        this.controller = controller;
        this.brokers = brokers;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The name of the controller node: its directory prefix and, by convention, its {@code grantforge.instance}. */
    public static String controllerName() {
        return "controller-" + CONTROLLER_ID;
    }

    /** The name of broker {@code id}. */
    public static String brokerName(int id) {
        return "broker-" + id;
    }

    public KafkaNode controller() {
        return controller;
    }

    /** The brokers, broker 1 first. */
    public List<KafkaNode> brokers() {
        return brokers;
    }

    /** The broker of {@code node.id} {@code id} (1-based). */
    public KafkaNode broker(int id) {
        return brokers.get(id - 1);
    }

    /** The controller, then the brokers. */
    public List<KafkaNode> nodes() {
        List<KafkaNode> all = new ArrayList<>();
        all.add(controller);
        all.addAll(brokers);
        return Collections.unmodifiableList(all);
    }

    /** The name of each of {@link #nodes()}, in the same order. */
    public List<String> nodeNames() {
        List<String> names = new ArrayList<>();
        names.add(controllerName());
        for (int id = 1; id <= brokers.size(); id++) {
            names.add(brokerName(id));
        }
        return names;
    }

    /** Every broker's client listener. */
    public String bootstrapServers() {
        return brokers.stream().map(KafkaNode::bootstrapServers).collect(Collectors.joining(","));
    }

    private Properties everyBroker() {
        Properties props = new Properties();
        props.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        return props;
    }

    /** An admin client for {@code user} bootstrapped to every broker. */
    public Admin admin(String user) {
        return admin(user, new Properties());
    }

    /** An admin client for {@code user} bootstrapped to every broker, with {@code extra} settings. */
    public Admin admin(String user, Properties extra) {
        Properties props = everyBroker();
        props.putAll(extra);
        return broker(1).admin(user, props);
    }

    /** A producer for {@code user} bootstrapped to every broker; {@code extra} as in {@link KafkaNode#producer(String, Properties)}. */
    public KafkaProducer<String, String> producer(String user, Properties extra) {
        Properties props = everyBroker();
        props.putAll(extra);
        return broker(1).producer(user, props);
    }

    /** A consumer for {@code user} bootstrapped to every broker; as {@link KafkaNode#consumer(String, String, Properties)}. */
    public KafkaConsumer<String, String> consumer(String user, String group, Properties extra) {
        Properties props = everyBroker();
        props.putAll(extra);
        return broker(1).consumer(user, group, props);
    }

    /** Stops the brokers (at once, each with its controlled shutdown), then the controller; removes their data. */
    @Override
    public void close() {
        try {
            atOnce(brokers, KafkaNode::close);
        } finally {
            controller.close();
        }
    }

    @Override
    public String toString() {
        return "KafkaCluster[" + controller.dist() + ", controller " + controller.dir() + ", brokers " + bootstrapServers() + "]";
    }

    /**
     * How to run a cluster. Defaults: {@link KafkaDist#defaultDist()}, three brokers, the agent as every
     * node's authorizer, small heaps (brokers 320 MiB, the controller 256 MiB), internal topics
     * replicated to every broker (the transaction log with {@code min.insync.replicas} 2).
     */
    public static final class Builder {
        private KafkaDist dist;
        private int brokers = 3;
        private String name = "cluster";
        private BiConsumer<String, KafkaNode.Builder> eachNode = (nodeName, node) -> { };

        private Builder() {
        }

        public Builder kafkaVersion(String version) {
            this.dist = KafkaDist.of(version);
            return this;
        }

        public Builder brokers(int brokers) {
            if (brokers < 1) {
                throw new IllegalArgumentException("A cluster needs a broker");
            }
            this.brokers = brokers;
            return this;
        }

        /** Prefix of the node directories ({@code <name>-broker-1-…}). */
        public Builder name(String name) {
            this.name = name;
            return this;
        }

        /**
         * Settings of each node, given its name ({@link #controllerName()}, {@link #brokerName(int)}), applied
         * after the cluster's own: e.g. its {@code grantforge.instance} and cache directory.
         */
        public Builder eachNode(BiConsumer<String, KafkaNode.Builder> eachNode) {
            this.eachNode = eachNode;
            return this;
        }

        private KafkaNode.Builder node(String nodeName, KafkaNode.Role role, int nodeId, String clusterId) {
            KafkaNode.Builder node = KafkaNode.builder().dist(dist != null ? dist : KafkaDist.defaultDist())
                    .name(name + "-" + nodeName).role(role).nodeId(nodeId).clusterId(clusterId)
                    .interNodeUsers(INTER_BROKER_USER, CONTROLLER_USER);
            eachNode.accept(nodeName, node);
            return node;
        }

        /** Starts the controller, then the brokers side by side, and waits until every broker is registered. */
        public KafkaCluster start() {
            String clusterId = Uuid.randomUuid().toString();
            KafkaNode controller = node(controllerName(), KafkaNode.Role.CONTROLLER, CONTROLLER_ID, clusterId)
                    .maxHeap("256m").start();
            List<KafkaNode> started = new ArrayList<>();
            try {
                String voters = CONTROLLER_ID + "@127.0.0.1:" + controller.controllerPort();
                String replicas = String.valueOf(brokers);
                String minIsr = String.valueOf(Math.min(2, brokers));
                for (int id = 1; id <= brokers; id++) {
                    started.add(node(brokerName(id), KafkaNode.Role.BROKER, id, clusterId)
                            .controllerQuorumVoters(voters).maxHeap("320m")
                            .property("default.replication.factor", replicas)
                            .property("offsets.topic.replication.factor", replicas)
                            .property("transaction.state.log.replication.factor", replicas)
                            .property("transaction.state.log.min.isr", minIsr)
                            .property("share.coordinator.state.topic.replication.factor", replicas)
                            .property("share.coordinator.state.topic.min.isr", minIsr)
                            .build());
                }
                // formatting and the JVMs' start take most of the time: all brokers at once
                atOnce(started, KafkaNode::start);
                KafkaCluster cluster = new KafkaCluster(controller, List.copyOf(started));
                cluster.awaitBrokers();
                return cluster;
            } catch (RuntimeException e) {
                started.forEach(KafkaNode::close);
                controller.close();
                throw e;
            }
        }
    }

    /** Runs {@code action} on every node, each in a thread of its own, and rethrows the first failure. */
    private static void atOnce(List<KafkaNode> nodes, Consumer<KafkaNode> action) {
        ExecutorService threads = Executors.newFixedThreadPool(nodes.size());
        try {
            List<Future<?>> done = new ArrayList<>();
            for (KafkaNode node : nodes) {
                done.add(threads.submit(() -> action.accept(node)));
            }
            for (Future<?> each : done) {
                each.get();
            }
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException ? (RuntimeException) e.getCause() : new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted", e);
        } finally {
            threads.shutdown();
        }
    }

    /** Waits until the controller has every broker registered (a broker answers before the others joined). */
    private void awaitBrokers() {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        try (Admin admin = admin(KafkaNode.SUPER_USER)) {
            while (true) {
                int registered;
                try {
                    registered = admin.describeCluster().nodes().get(10, TimeUnit.SECONDS).size();
                } catch (Exception e) {
                    registered = -1;
                }
                if (registered == brokers.size()) {
                    return;
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("Only " + registered + " of " + brokers.size()
                            + " brokers registered within 60 s: " + this);
                }
                Thread.sleep(200);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while waiting for the brokers", e);
        }
    }
}
