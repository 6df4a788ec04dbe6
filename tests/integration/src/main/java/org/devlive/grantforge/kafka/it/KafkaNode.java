package org.devlive.grantforge.kafka.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.SaslConfigs;

/**
 * A real Kafka KRaft node, by default broker and controller at once ({@link Role}; {@link KafkaCluster}
 * starts split roles), run as a child JVM from a plain
 * classpath (the Kafka server jars of {@link KafkaDist} plus, unless disabled, the agent JAR) in its
 * own directory. Listeners are SASL_PLAINTEXT with PLAIN users {@code admin} (super user, also the
 * inter-node and controller principal), {@code alice}, {@code bob}, {@code carol}, {@code dave}, {@code erin},
 * {@code mallory} and {@code quinn}; passwords are {@code <user>-secret}.
 *
 * <pre>{@code
 * try (KafkaNode node = KafkaNode.builder().policyFile(snapshot).start();
 *      Admin admin = node.admin("admin")) { ... }
 * }</pre>
 *
 * Nodes that must die at start: {@code build()}, {@link #launch()}, then {@link #awaitExit(Duration)}.
 * A restart on the same storage: {@link #stop()}, then {@link #start()}.
 */
public final class KafkaNode implements AutoCloseable {

    /** What a node is in KRaft ({@code process.roles}). */
    public enum Role {
        /** Broker and controller in one JVM (the default). */
        COMBINED("broker,controller"),
        /** A broker only: its controllers are named by {@link Builder#controllerQuorumVoters(String)}. */
        BROKER("broker"),
        /** A controller only: no client listener; clients reach it with {@code bootstrap.controllers}. */
        CONTROLLER("controller");

        private final String processRoles;

        Role(String processRoles) {
            this.processRoles = processRoles;
        }

        public String processRoles() {
            return processRoles;
        }
    }

    public static final String AUTHORIZER_CLASS = "org.devlive.grantforge.kafka.agent.GrantForgeKafkaAuthorizer";
    /** The agent class for Kafka 4.1 and later, which also publishes Kafka plugin metrics. */
    public static final String MONITORABLE_AUTHORIZER_CLASS =
            "org.devlive.grantforge.kafka.agent.MonitorableGrantForgeKafkaAuthorizer";
    /** Shadow mode: Kafka's StandardAuthorizer decides, the agent is asked beside it. */
    public static final String SHADOW_AUTHORIZER_CLASS = "org.devlive.grantforge.kafka.agent.GrantForgeShadowAuthorizer";
    /** Hybrid mode: GrantForge's policies decide what they speak of, Kafka's ACLs the rest. */
    public static final String HYBRID_AUTHORIZER_CLASS = "org.devlive.grantforge.kafka.agent.GrantForgeHybridAuthorizer";
    public static final String SUPER_USER = "admin";
    /** The PLAIN users every node knows, with their passwords. */
    public static final Map<String, String> USERS;
    /** The line Kafka logs when the node (broker and controller) has started. */
    public static final String STARTED_MESSAGE = "Kafka Server started";
    /** System property: JDK home the nodes run on (default: this JVM's {@code java.home}). */
    public static final String JAVA_HOME_PROPERTY = "grantforge.it.java.home";
    /** System property: directory for node directories (default: a fresh temp directory). */
    public static final String WORK_PROPERTY = "grantforge.it.work";

    static {
        Map<String, String> users = new LinkedHashMap<>();
        users.put("admin", "admin-secret");
        users.put("alice", "alice-secret");
        users.put("bob", "bob-secret");
        users.put("carol", "carol-secret");
        // the soak's further principals: a transactional producer, an admin, a role's holder, one with no rights, a
        // quota-limited one, the audit topic's producer (SoakAuditTopic)
        users.put("dave", "dave-secret");
        users.put("erin", "erin-secret");
        users.put("frank", "frank-secret");
        users.put("mallory", "mallory-secret");
        users.put("quinn", "quinn-secret");
        users.put("soak-audit", "soak-audit-secret");
        USERS = Collections.unmodifiableMap(users);
    }

    private final Builder config;
    private final KafkaDist dist;
    private final Path dir;
    private final Path dataDir;
    private final Path serverLog;
    private final Path consoleLog;
    private final Path propertiesFile;
    private final int brokerPort;
    private final int controllerPort;
    /** The port of each of {@link Builder#listener(Listener)}, by listener name. */
    private final Map<String, Integer> listenerPorts = new LinkedHashMap<>();
    private final String clusterId;
    private final Map<String, String> serverProperties;
    private final boolean deleteWholeDir;
    private volatile NodeProcess process;
    private volatile long startedAfterMillis = -1;
    /** Whether the storage is formatted: a node started again after {@link #stop()} keeps it. */
    private boolean formatted;
    /** Length of the log when the JVM was launched: a restart looks for its own start message. */
    private volatile int logLengthAtLaunch;
    private volatile Exception lastProbeError;
    private final NodeTools tools = new NodeTools(this);

    private KafkaNode(Builder config) {
        this.config = config;
        this.dist = config.dist != null ? config.dist : KafkaDist.defaultDist();
        try {
            Path root;
            String work = System.getProperty(WORK_PROPERTY);
            if (work != null && !work.isBlank()) {
                root = Paths.get(work).toAbsolutePath();
                Files.createDirectories(root);
                deleteWholeDir = false;
            } else {
                root = Paths.get(System.getProperty("java.io.tmpdir"));
                deleteWholeDir = !Boolean.getBoolean("grantforge.it.keep");
            }
            this.dir = Files.createTempDirectory(root, config.name + "-");
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot create the node directory", e);
        }
        this.dataDir = dir.resolve("data");
        this.serverLog = dir.resolve("server.log");
        this.consoleLog = dir.resolve("console.log");
        this.propertiesFile = dir.resolve("server.properties");
        int[] ports = Ports.free(2 + config.listeners.size());
        this.brokerPort = ports[0];
        this.controllerPort = ports[1];
        for (int i = 0; i < config.listeners.size(); i++) {
            listenerPorts.put(config.listeners.get(i).name(), ports[2 + i]);
        }
        this.clusterId = config.clusterId != null ? config.clusterId : Uuid.randomUuid().toString();
        this.serverProperties = new NodeProperties(config, brokerPort, controllerPort, listenerPorts, dataDir).compose();
    }

    public static Builder builder() {
        return new Builder();
    }

    // ---- configuration ------------------------------------------------------------------------

    private void writeFiles() throws IOException {
        Files.createDirectories(dataDir);
        NodeFiles.writeProperties(propertiesFile, "written by " + KafkaNode.class.getName() + " for " + dist, serverProperties);
        Map<String, String> levels = new LinkedHashMap<>();
        levels.put("org.devlive.grantforge", "INFO");
        levels.put("grantforge.audit", "INFO");
        levels.put("kafka.authorizer.logger", "INFO");
        levels.putAll(config.logLevels);
        NodeFiles.writeLogConfig(logConfigFile("server"), dist, serverLog, levels, config.rootLevel);
        NodeFiles.writeLogConfig(logConfigFile("storage"), dist, dir.resolve("storage.log"), levels, config.rootLevel);
        NodeFiles.writeLogConfig(logConfigFile("tool"), dist, dir.resolve("tool.log"), levels, config.rootLevel);
        NodeFiles.installLauncher(launcherDir());
    }

    private Path logConfigFile(String role) {
        return dir.resolve(dist.usesLog4j2() ? "log4j2-" + role + ".xml" : "log4j-" + role + ".properties");
    }

    /** The classpath directory of {@link NodeLauncher}, last on every JVM the node's directory runs. */
    Path launcherDir() {
        return dir.resolve("launcher");
    }

    /** The release's jars first, as the archive of {@link SharedClasses} holds them; the launcher last. */
    private String nodeClasspath() {
        StringBuilder cp = new StringBuilder(dist.classpath());
        if (config.authorizer != null && config.agentJar != null) {
            Path jar = config.agentJar;
            if (Files.isRegularFile(jar)) {
                cp.append(java.io.File.pathSeparatorChar).append(jar.toAbsolutePath());
            } else if (config.authorizer.startsWith("org.devlive.grantforge.")) {
                throw new IllegalStateException("The agent JAR " + jar + " does not exist; build it first (mvn -B -pl java-shim -am install)");
            }
        }
        for (Path extra : config.extraClasspath) {
            cp.append(java.io.File.pathSeparatorChar).append(extra.toAbsolutePath());
        }
        return cp.append(java.io.File.pathSeparatorChar).append(launcherDir()).toString();
    }

    List<String> javaCommand(String role, String classpath, List<String> jvmArgs) {
        return javaCommand(config.javaHome, role, classpath, jvmArgs);
    }

    private List<String> javaCommand(Path javaHome, String role, String classpath, List<String> jvmArgs) {
        List<String> cmd = new ArrayList<>();
        cmd.add(javaHome.resolve("bin").resolve("java").toString());
        if (classpath.startsWith(dist.classpath())) {
            cmd.addAll(SharedClasses.jvmOptions(dist, javaHome, role.equals("server")));
        }
        cmd.addAll(jvmArgs);
        cmd.add("-Djava.awt.headless=true");
        cmd.add("-Dgrantforge.it.node=" + dir.getFileName());
        Path logConfig = logConfigFile(role);
        if (role.equals("server") && config.serverLogConfig != null) {
            // an operator's file, as bin/kafka-run-class.sh runs it: its paths under kafka.logs.dir
            logConfig = config.serverLogConfig.toAbsolutePath();
            cmd.add("-Dkafka.logs.dir=" + dir);
        }
        if (dist.usesLog4j2()) {
            cmd.add("-Dlog4j2.configurationFile=" + logConfig);
        } else {
            cmd.add("-Dlog4j.configuration=" + logConfig.toUri());
        }
        cmd.add("-cp");
        cmd.add(classpath);
        cmd.add(NodeLauncher.class.getName());
        cmd.add(String.valueOf(ProcessHandle.current().pid()));
        return cmd;
    }

    // ---- lifecycle ----------------------------------------------------------------------------

    /** Formats the storage and starts the node's JVM without waiting for it to be ready. */
    public synchronized KafkaNode launch() {
        if (process != null) {
            throw new IllegalStateException("Node already launched");
        }
        try {
            String cp = nodeClasspath();
            if (!formatted) {
                writeFiles();
                // on the test's own JVM, whatever the node's (emulated, another JDK): a format depends on the release alone
                List<String> storageTool = javaCommand(NodeTools.HOST_JAVA_HOME, "storage", cp, NodeTools.SHORT_LIVED_JVM);
                FormattedStorage.prepare(FormattedStorage.kind(dist, serverProperties), dataDir, config.nodeId, clusterId,
                        FormattedStorage.templatesRoot(dir.getParent()), () -> FormattedStorage.format(storageTool, clusterId,
                                propertiesFile, dir));
                formatted = true;
            }
            logLengthAtLaunch = logText().length();
            List<String> jvmArgs = new ArrayList<>();
            jvmArgs.add("-Xms64m");
            jvmArgs.add("-Xmx" + config.maxHeap);
            jvmArgs.addAll(NodeTools.C1_AND_SERIAL_GC);
            jvmArgs.addAll(config.jvmArgs);
            List<String> cmd = javaCommand("server", cp, jvmArgs);
            cmd.add("kafka.Kafka");
            cmd.add(propertiesFile.toString());
            Files.writeString(dir.resolve("command.txt"), String.join(" ", cmd) + "\n", StandardCharsets.UTF_8);
            process = NodeProcess.start(cmd, dir, consoleLog);
            return this;
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot launch the node in " + dir, e);
        }
    }

    /**
     * Launches the node (unless already launched) and waits until it has logged
     * {@value #STARTED_MESSAGE} and answers {@code describeCluster} as the super user.
     */
    public KafkaNode start() {
        if (process == null) {
            launch();
        }
        long deadline = System.nanoTime() + config.startTimeout.toNanos();
        Admin probe = null;
        try {
            while (true) {
                NodeProcess p = process;
                if (!p.isAlive()) {
                    throw new IllegalStateException("Kafka node exited with code " + p.exitValue() + " while starting ("
                            + dist + ", " + dir + ")\n" + diagnostics());
                }
                if (logText().indexOf(STARTED_MESSAGE, logLengthAtLaunch) >= 0) {
                    if (probe == null) {
                        // a controller-only node has no client listener: ask it over its controller listener
                        Properties props = config.role == Role.CONTROLLER ? controllerClientProps(SUPER_USER) : clientProps(SUPER_USER);
                        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000");
                        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "10000");
                        probe = Admin.create(props);
                    }
                    try {
                        probe.describeCluster().nodes().get(5, TimeUnit.SECONDS);
                        startedAfterMillis = System.currentTimeMillis() - process.startMillis();
                        SharedClasses.nodeStarted(dist);
                        return this;
                    } catch (Exception e) {
                        lastProbeError = e;
                    }
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("Kafka node did not start within " + config.startTimeout.toSeconds() + " s ("
                            + dist + ", " + dir + ")"
                            + (lastProbeError != null ? "; last describeCluster error: " + lastProbeError : "")
                            + "\n" + diagnostics());
                }
                Thread.sleep(200);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            close();
            throw new IllegalStateException("Interrupted while waiting for the node to start", e);
        } catch (RuntimeException e) {
            close();
            throw e;
        } finally {
            if (probe != null) {
                probe.close(Duration.ofSeconds(5));
            }
        }
    }

    /** Milliseconds from launching the node's JVM until it answered, or -1. */
    public long startedAfterMillis() {
        return startedAfterMillis;
    }

    /**
     * Waits for a node that is expected to die (for example at start) and returns its exit code.
     *
     * @throws IllegalStateException if it is still running after {@code timeout}
     */
    public int awaitExit(Duration timeout) {
        if (process == null) {
            throw new IllegalStateException("Node not launched");
        }
        try {
            if (!process.awaitExit(timeout)) {
                throw new IllegalStateException("Kafka node still running after " + timeout.toSeconds() + " s ("
                        + dir + ")\n" + diagnostics());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted", e);
        }
        return process.exitValue();
    }

    public boolean isAlive() {
        NodeProcess p = process;
        return p != null && p.isAlive();
    }

    /** Stops the node (SIGTERM, then SIGKILL after {@code stopTimeout}) and removes its data. */
    @Override
    public synchronized void close() {
        stopProcess();
        try {
            ItPaths.deleteRecursively(deleteWholeDir ? dir : dataDir);
        } catch (IOException e) {
            // leave it; it is under a temp or target directory
        }
    }

    /**
     * Stops the node's JVM as {@link #close()} does but keeps its storage, its directory and its log:
     * {@link #start()} then runs it again on the same storage (a restart; the node is not formatted again).
     */
    public synchronized void stop() {
        stopProcess();
        process = null;
    }

    private void stopProcess() {
        NodeProcess p = process;
        if (p != null) {
            p.stop(config.stopTimeout, toString());
        }
    }

    // ---- what the node says -------------------------------------------------------------------

    /** The node's log (Kafka's and the agent's loggers), as written so far. */
    public String logText() {
        return read(serverLog);
    }

    /** Lines of {@link #logText()}. */
    public List<String> logLines() {
        return Arrays.asList(logText().split("\\R"));
    }

    /** What the node's JVM wrote to stdout and stderr (JVM errors, native code, log4j status). */
    public String consoleText() {
        return read(consoleLog);
    }

    /** The last lines of the log and the console, for failure messages. */
    public String diagnostics() {
        return "--- tail of " + serverLog + " ---\n" + tail(serverLog, 60)
                + "\n--- tail of " + consoleLog + " ---\n" + tail(consoleLog, 30);
    }

    static String read(Path file) {
        try {
            return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            try {
                return new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1);
            } catch (IOException e2) {
                return "<cannot read " + file + ": " + e2 + ">";
            }
        }
    }

    static String tail(Path file, int lines) {
        String[] all = read(file).split("\\R");
        return String.join("\n", Arrays.asList(all).subList(Math.max(0, all.length - lines), all.length));
    }

    // ---- the release's command-line tools (NodeTools) -----------------------------------------

    /** Runs one of the release's command-line tools against this node as {@code user} ({@link NodeTools#runTool}). */
    public ToolRun runTool(String user, String mainClass, List<String> args) {
        return tools.runTool(user, mainClass, args);
    }

    /** Writes {@code user}'s client settings ({@link #clientProps(String)}) to a file in the node's directory. */
    public Path clientConfigFile(String user) {
        return tools.clientConfigFile(user);
    }

    /** Runs {@code mainClass} of the release in a JVM of its own ({@link NodeTools#runJava}). */
    public ToolRun runJava(String mainClass, List<String> jvmOptions, List<String> args, Duration timeout) {
        return tools.runJava(mainClass, jvmOptions, args, timeout);
    }

    /** Runs one of the agent's commands with the release's jars ({@link NodeTools#runAgentCommand}). */
    public ToolRun runAgentCommand(List<String> jvmOptions, List<String> args) {
        return tools.runAgentCommand(jvmOptions, args);
    }

    /** The node's process id (for its CPU time in {@code /proc}); -1 before it is launched. */
    public long pid() {
        NodeProcess p = process;
        return p == null ? -1 : p.pid();
    }

    // ---- clients ------------------------------------------------------------------------------

    public String bootstrapServers() {
        return "127.0.0.1:" + brokerPort;
    }

    /** The address of one of the node's {@link Builder#listener(Listener) further listeners}. */
    public String bootstrapServers(String listenerName) {
        Integer port = listenerPorts.get(listenerName);
        if (port == null) {
            throw new IllegalArgumentException("No listener " + listenerName + "; this node has " + listenerPorts.keySet());
        }
        return "127.0.0.1:" + port;
    }

    public int brokerPort() {
        return brokerPort;
    }

    public int controllerPort() {
        return controllerPort;
    }

    public String clusterId() {
        return clusterId;
    }

    public Path dir() {
        return dir;
    }

    public Path serverLogFile() {
        return serverLog;
    }

    public KafkaDist dist() {
        return dist;
    }

    /** The agent JAR the node runs with. */
    Path agentJar() {
        return config.agentJar;
    }

    /** The server.properties the node runs with. */
    public Map<String, String> serverProperties() {
        return Collections.unmodifiableMap(serverProperties);
    }

    /** Client settings for a SASL/PLAIN user of this node. */
    public Properties clientProps(String user, String password) {
        Properties props = new Properties();
        props.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        props.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_PLAINTEXT");
        props.put(SaslConfigs.SASL_MECHANISM, "PLAIN");
        props.put(SaslConfigs.SASL_JAAS_CONFIG, "org.apache.kafka.common.security.plain.PlainLoginModule required username=\""
                + user + "\" password=\"" + password + "\";");
        props.put(CommonClientConfigs.CLIENT_ID_CONFIG, "it-" + user);
        return props;
    }

    /**
     * Client settings that reach this node's controller listener ({@code bootstrap.controllers}, KIP-919,
     * Kafka 3.7 and later): only an {@link Admin} speaks to controllers.
     */
    public Properties controllerClientProps(String user) {
        Properties props = clientProps(user);
        props.remove(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG);
        props.put(AdminClientConfig.BOOTSTRAP_CONTROLLERS_CONFIG, "127.0.0.1:" + controllerPort);
        return props;
    }

    /** Client settings of a login over one of the node's further listeners (its address, then the login's settings). */
    public Properties clientProps(ClientLogin login) {
        Properties props = new Properties();
        props.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers(login.listener()));
        props.put(CommonClientConfigs.CLIENT_ID_CONFIG, "it-" + login.listener().toLowerCase(java.util.Locale.ROOT));
        props.putAll(login.settings());
        return props;
    }

    /** Client settings for one of {@link #USERS}. */
    public Properties clientProps(String user) {
        String password = USERS.get(user);
        if (password == null) {
            throw new IllegalArgumentException("Unknown user " + user + "; known: " + USERS.keySet());
        }
        return clientProps(user, password);
    }

    public Admin admin(String user) {
        return admin(user, new Properties());
    }

    /** An admin client for {@code user}; {@code extra} overrides the defaults (e.g. bootstrap.servers). */
    public Admin admin(String user, Properties extra) {
        return KafkaClients.admin(clientProps(user), extra);
    }

    /** An admin client of a login over a further listener. */
    public Admin admin(ClientLogin login) {
        return KafkaClients.admin(clientProps(login), new Properties());
    }

    public KafkaProducer<String, String> producer(String user) {
        return producer(user, new Properties());
    }

    /** A String producer for {@code user}; {@code extra} overrides the defaults (e.g. enable.idempotence). */
    public KafkaProducer<String, String> producer(String user, Properties extra) {
        return KafkaClients.producer(clientProps(user), extra);
    }

    /** A String producer of a login over a further listener; as {@link #producer(String, Properties)}. */
    public KafkaProducer<String, String> producer(ClientLogin login, Properties extra) {
        return KafkaClients.producer(clientProps(login), extra);
    }

    public KafkaConsumer<String, String> consumer(String user, String group) {
        return consumer(user, group, new Properties());
    }

    /** A String consumer for {@code user} in {@code group} (null: no group), reading from the earliest offset. */
    public KafkaConsumer<String, String> consumer(String user, String group, Properties extra) {
        return KafkaClients.consumer(clientProps(user), group, extra);
    }

    /** A String consumer of a login over a further listener; as {@link #consumer(String, String, Properties)}. */
    public KafkaConsumer<String, String> consumer(ClientLogin login, String group, Properties extra) {
        return KafkaClients.consumer(clientProps(login), group, extra);
    }

    @Override
    public String toString() {
        return "KafkaNode[" + dist + ", " + bootstrapServers() + ", " + dir + "]";
    }

    /** How to run a node. Defaults: {@link KafkaDist#defaultDist()}, the agent as authorizer, this JVM's JDK. */
    public static final class Builder {
        private KafkaDist dist;
        private String name = "kafka-node";
        private Path javaHome = Paths.get(System.getProperty(JAVA_HOME_PROPERTY, System.getProperty("java.home")));
        String authorizer = AUTHORIZER_CLASS;
        Role role = Role.COMBINED;
        int nodeId = 1;
        String controllerQuorumVoters;
        private String clusterId;
        String interBrokerUser = SUPER_USER;
        String controllerUser = SUPER_USER;
        private Path agentJar = ItPaths.agentJar();
        Path policyFile;
        final Map<String, String> overrides = new LinkedHashMap<>();
        Map<String, String> documentedProperties;
        private final List<String> jvmArgs = new ArrayList<>();
        private final List<Path> extraClasspath = new ArrayList<>();
        final List<Listener> listeners = new ArrayList<>();
        private final Map<String, String> logLevels = new LinkedHashMap<>();
        private String rootLevel = "INFO";
        private Path serverLogConfig;
        private String maxHeap = "512m";
        private Duration startTimeout = Duration.ofSeconds(Long.getLong("grantforge.it.start.timeout.s", 180));
        private Duration stopTimeout = Duration.ofSeconds(20);

        private Builder() {
        }

        public Builder kafkaVersion(String version) {
            this.dist = KafkaDist.of(version);
            return this;
        }

        public Builder dist(KafkaDist dist) {
            this.dist = dist;
            return this;
        }

        /** Names the node directory (a prefix; a random suffix is added). */
        public Builder name(String name) {
            this.name = name;
            return this;
        }

        /** The JDK the node runs on (e.g. /usr/lib/jvm/temurin-25-jdk-amd64). */
        public Builder javaHome(Path javaHome) {
            this.javaHome = javaHome;
            return this;
        }

        /** Broker, controller or both (the default). */
        public Builder role(Role role) {
            this.role = role;
            return this;
        }

        /** {@code node.id} (default 1). */
        public Builder nodeId(int nodeId) {
            this.nodeId = nodeId;
            return this;
        }

        /** {@code controller.quorum.voters} (default: this node, {@code <node.id>@127.0.0.1:<its controller port>}). */
        public Builder controllerQuorumVoters(String voters) {
            this.controllerQuorumVoters = voters;
            return this;
        }

        /** The cluster id the storage is formatted with (default: a new one); every node of a cluster shares it. */
        public Builder clusterId(String clusterId) {
            this.clusterId = clusterId;
            return this;
        }

        /**
         * The principals nodes use among themselves: {@code interBrokerUser} on the inter-broker listener,
         * {@code controllerUser} towards controllers (default {@value KafkaNode#SUPER_USER} for both). Each
         * logs in with the password {@code <user>-secret} and is named in {@code super.users}.
         */
        public Builder interNodeUsers(String interBrokerUser, String controllerUser) {
            this.interBrokerUser = interBrokerUser;
            this.controllerUser = controllerUser;
            return this;
        }

        /** No authorizer at all (and no agent JAR on the classpath): the harness alone. */
        public Builder noAuthorizer() {
            this.authorizer = null;
            return this;
        }

        /** Another authorizer class (the agent JAR stays on the classpath). */
        public Builder authorizer(String className) {
            this.authorizer = className;
            return this;
        }

        public Builder agentJar(Path agentJar) {
            this.agentJar = agentJar;
            return this;
        }

        /** Offline mode: {@code grantforge.policy.file}. */
        public Builder policyFile(Path policyFile) {
            this.policyFile = policyFile;
            return this;
        }

        /** Adds or overrides a server property; a null value removes it. */
        /**
         * Runs the node on exactly a documented {@code server.properties} (listeners on {@code localhost:9092} and
         * {@code localhost:9093}), given this node's ports and data directory; the other settings of this builder
         * that write properties do not apply.
         */
        public Builder documentedProperties(Map<String, String> properties) {
            this.documentedProperties = new LinkedHashMap<>(properties);
            return this;
        }

        public Builder property(String key, String value) {
            overrides.put(key, value);
            return this;
        }

        /**
         * A further client listener beside the SASL_PLAINTEXT one the harness's own clients use (a broker's; a
         * controller-only node has none): its address is {@link KafkaNode#bootstrapServers(String)}.
         */
        public Builder listener(Listener listener) {
            listeners.add(listener);
            return this;
        }

        public Builder withoutProperty(String key) {
            overrides.put(key, null);
            return this;
        }

        public Builder jvmArg(String arg) {
            jvmArgs.add(arg);
            return this;
        }

        public Builder extraClasspath(Path entry) {
            extraClasspath.add(entry);
            return this;
        }

        /** Level of one logger in the node's log (default INFO for the agent's loggers and the root). */
        public Builder logLevel(String logger, String level) {
            logLevels.put(logger, level);
            return this;
        }

        public Builder rootLogLevel(String level) {
            this.rootLevel = level;
            return this;
        }

        /**
         * The log configuration of the node's server JVM, in the release's flavour, instead of the one the harness
         * writes: run with {@code -Dkafka.logs.dir=<node directory>} as Kafka's scripts pass it, so a file that logs
         * Kafka to {@code ${kafka.logs.dir}/server.log} gives {@link KafkaNode#logText()} its log ({@link #logLevel(String, String)} does not
         * apply to it).
         */
        public Builder serverLogConfig(Path file) {
            this.serverLogConfig = file;
            return this;
        }

        public Builder maxHeap(String maxHeap) {
            this.maxHeap = maxHeap;
            return this;
        }

        public Builder startTimeout(Duration timeout) {
            this.startTimeout = timeout;
            return this;
        }

        public Builder stopTimeout(Duration timeout) {
            this.stopTimeout = timeout;
            return this;
        }

        /** A node that is configured but not launched. */
        public KafkaNode build() {
            return new KafkaNode(this);
        }

        /** Builds, launches and waits until the node is ready. */
        public KafkaNode start() {
            return build().start();
        }
    }
}
