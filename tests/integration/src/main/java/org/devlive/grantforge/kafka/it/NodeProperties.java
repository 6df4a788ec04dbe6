package org.devlive.grantforge.kafka.it;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The {@code server.properties} of a {@link KafkaNode}: its KRaft role and listeners on its own ports, the SASL/PLAIN
 * logins nodes use among themselves, the authorizer with the nodes' principals as super users (as the guide tells
 * operators), and the sizes of a small test node; then the test's overrides. A node of documented properties runs
 * them as written, on its own ports and data directory.
 */
final class NodeProperties {
    private static final String PLAIN_LOGIN = "org.apache.kafka.common.security.plain.PlainLoginModule required";

    /**
     * Written in a {@link KafkaNode.Builder#property} value, the address of the node's SASL_PLAINTEXT client listener (its port
     * is chosen when the node is built): the audit topic's producer of the node's own agent reaches it there.
     */
    public static final String BROKER_ADDRESS = "{broker.address}";
    private final KafkaNode.Builder config;
    private final int brokerPort;
    private final int controllerPort;
    private final Map<String, Integer> listenerPorts;
    private final Path dataDir;

    NodeProperties(KafkaNode.Builder config, int brokerPort, int controllerPort, Map<String, Integer> listenerPorts,
                   Path dataDir) {
        this.config = config;
        this.brokerPort = brokerPort;
        this.controllerPort = controllerPort;
        this.listenerPorts = listenerPorts;
        this.dataDir = dataDir;
    }

    Map<String, String> compose() {
        if (config.documentedProperties != null) {
            return onThisNode(config.documentedProperties);
        }
        Map<String, String> p = new LinkedHashMap<>();
        roleAndListeners(p);
        logins(p);
        authorizer(p);
        if (config.role != KafkaNode.Role.CONTROLLER) {
            config.listeners.forEach(listener -> p.putAll(listener.settings()));
        }
        p.put("log.dirs", dataDir.toString());
        smallNode(p);
        for (Map.Entry<String, String> e : config.overrides.entrySet()) {
            if (e.getValue() == null) {
                p.remove(e.getKey());
            } else {
                p.put(e.getKey(), e.getValue().replace(BROKER_ADDRESS, "127.0.0.1:" + brokerPort));
            }
        }
        return p;
    }

    /**
     * A documented {@code server.properties} as this node runs it: its own ports for the documented
     * {@code localhost:9092} and {@code localhost:9093}, and its own data directory for {@code log.dirs}; nothing else
     * changed, nothing of the harness's added.
     */
    private Map<String, String> onThisNode(Map<String, String> documented) {
        Map<String, String> p = new LinkedHashMap<>();
        documented.forEach((key, value) -> p.put(key, value.replace("localhost:9092", "localhost:" + brokerPort)
                .replace("localhost:9093", "localhost:" + controllerPort)));
        p.put("log.dirs", dataDir.toString());
        return p;
    }

    private void roleAndListeners(Map<String, String> p) {
        KafkaNode.Role role = config.role;
        StringBuilder clientListeners = new StringBuilder("SASL_PLAINTEXT://127.0.0.1:" + brokerPort);
        StringBuilder protocols = new StringBuilder("SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:SASL_PLAINTEXT");
        for (Listener listener : config.listeners) {
            clientListeners.append(',').append(listener.name()).append("://127.0.0.1:").append(listenerPorts.get(listener.name()));
            protocols.append(',').append(listener.name()).append(':').append(listener.securityProtocol());
        }
        String brokerListener = clientListeners.toString();
        String controllerListener = "CONTROLLER://127.0.0.1:" + controllerPort;
        p.put("process.roles", role.processRoles());
        p.put("node.id", String.valueOf(config.nodeId));
        p.put("controller.quorum.voters", config.controllerQuorumVoters != null ? config.controllerQuorumVoters
                : config.nodeId + "@127.0.0.1:" + controllerPort);
        p.put("controller.listener.names", "CONTROLLER");
        if (role == KafkaNode.Role.COMBINED) {
            p.put("listeners", brokerListener + "," + controllerListener);
        } else {
            p.put("listeners", role == KafkaNode.Role.BROKER ? brokerListener : controllerListener);
        }
        // a controller-only node has neither (3.7 refuses advertised.listeners on one)
        if (role != KafkaNode.Role.CONTROLLER) {
            p.put("advertised.listeners", brokerListener);
            p.put("inter.broker.listener.name", "SASL_PLAINTEXT");
        }
        p.put("listener.security.protocol.map", protocols.toString());
    }

    /** Each listener's own login (what this node sends to the others) and the users it accepts. */
    private void logins(Map<String, String> p) {
        p.put("sasl.enabled.mechanisms", "PLAIN");
        p.put("sasl.mechanism.inter.broker.protocol", "PLAIN");
        p.put("sasl.mechanism.controller.protocol", "PLAIN");
        Map<String, String> clientUsers = new LinkedHashMap<>(KafkaNode.USERS);
        clientUsers.put(config.interBrokerUser, interNodePassword(config.interBrokerUser));
        p.put("listener.name.sasl_plaintext.plain.sasl.jaas.config", jaas(config.interBrokerUser, clientUsers));
        Map<String, String> controllerUsers = new LinkedHashMap<>();
        controllerUsers.put(KafkaNode.SUPER_USER, KafkaNode.USERS.get(KafkaNode.SUPER_USER));
        controllerUsers.put(config.controllerUser, interNodePassword(config.controllerUser));
        p.put("listener.name.controller.plain.sasl.jaas.config", jaas(config.controllerUser, controllerUsers));
    }

    /** A PLAIN login as {@code user} that accepts {@code accepted}. */
    private static String jaas(String user, Map<String, String> accepted) {
        StringBuilder users = new StringBuilder();
        accepted.forEach((u, pw) -> users.append(" user_").append(u).append("=\"").append(pw).append('"'));
        return PLAIN_LOGIN + " username=\"" + user + "\" password=\"" + interNodePassword(user) + "\"" + users + ";";
    }

    /** The password of a user: that of {@link KafkaNode#USERS}, or {@code <user>-secret} for an inter-node user. */
    private static String interNodePassword(String user) {
        return KafkaNode.USERS.getOrDefault(user, user + "-secret");
    }

    private void authorizer(Map<String, String> p) {
        if (config.authorizer == null) {
            return;
        }
        p.put("authorizer.class.name", config.authorizer);
        // as the guide tells operators: the principals nodes use among themselves are super users
        Set<String> superUsers = new LinkedHashSet<>(List.of(KafkaNode.SUPER_USER, config.interBrokerUser, config.controllerUser));
        p.put("super.users", superUsers.stream().map(u -> "User:" + u).collect(Collectors.joining(";")));
        if (config.policyFile != null) {
            p.put("grantforge.policy.file", config.policyFile.toAbsolutePath().toString());
        }
    }

    /** One partition, one replica and few threads: a node that starts fast on a small machine. */
    private static void smallNode(Map<String, String> p) {
        p.put("num.partitions", "1");
        p.put("default.replication.factor", "1");
        p.put("offsets.topic.replication.factor", "1");
        p.put("offsets.topic.num.partitions", "1");
        p.put("transaction.state.log.replication.factor", "1");
        p.put("transaction.state.log.min.isr", "1");
        p.put("transaction.state.log.num.partitions", "1");
        p.put("group.initial.rebalance.delay.ms", "0");
        p.put("log.segment.bytes", String.valueOf(1024 * 1024));
        p.put("log.index.size.max.bytes", String.valueOf(64 * 1024));
        p.put("num.network.threads", "2");
        p.put("num.io.threads", "2");
        p.put("background.threads", "2");
        p.put("num.recovery.threads.per.data.dir", "1");
        p.put("log.cleaner.threads", "1");
        p.put("log.cleaner.dedupe.buffer.size", String.valueOf(2 * 1024 * 1024));
        p.put("auto.create.topics.enable", "false");
        // 4.x only (3.7.2 and 3.9.2 ignore them silently: no warning, not in the logged KafkaConfig)
        p.put("share.coordinator.state.topic.replication.factor", "1");
        p.put("share.coordinator.state.topic.min.isr", "1");
        p.put("share.coordinator.state.topic.num.partitions", "1");
    }
}
