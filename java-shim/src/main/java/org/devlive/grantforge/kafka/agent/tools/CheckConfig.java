package org.devlive.grantforge.kafka.agent.tools;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.devlive.grantforge.kafka.agent.OpenedAgent;
import org.devlive.grantforge.kafka.agent.jni.AgentVersion;
import org.devlive.grantforge.kafka.agent.jni.NativeLibraryLoader;

/**
 * {@code check-config server.properties}: loads each class a node's {@code server.properties} names for the agent
 * ({@code authorizer.class.name}, {@code client.quota.callback.class}) as Kafka will, with Kafka's jars on the class
 * path, and names the key and the fix of each that cannot load. Kafka loads these classes while it reads its
 * configuration ({@code kafka-storage format} too), before any of the agent's code runs: a class built for a newer
 * Kafka then fails with a bare {@code NoClassDefFoundError} that names no key. Then it has the agent check its own
 * settings ({@code grantforge.*}, {@code super.users}) as the node's start would, without opening it. Run this first.
 */
final class CheckConfig {
    static final String AUTHORIZER = "authorizer.class.name";
    static final String QUOTA_CALLBACK = "client.quota.callback.class";
    /** Kafka 4.1's interface for plugin metrics (KIP-877): the Monitorable classes of the JAR implement it. */
    static final String MONITORABLE = "org/apache/kafka/common/metrics/Monitorable";
    private static final String MONITORABLE_PREFIX = "Monitorable";
    /** A class every Kafka 3.7 to 4.3 has, to tell Kafka's jars are on the class path. */
    private static final String KAFKA_CLASS = "org.apache.kafka.common.config.ConfigDef";

    static final String USAGE = "usage: check-config SERVER.PROPERTIES\n"
        + "loads the classes server.properties names in " + AUTHORIZER + " and " + QUOTA_CALLBACK + " as Kafka will,\n"
        + "and names the key and the fix of each that cannot load, then checks the agent's own settings (grantforge.*,\n"
        + "super.users) as the node's start would; exits 1 on a problem. Run it with the node's\n"
        + "Kafka jars on the class path, before kafka-storage format and the node:\n"
        + "  java -cp \"grantforge-agent-kafka-" + AgentVersion.VERSION + ".jar:$KAFKA_HOME/libs/*\" " + Main.class.getName()
        + " check-config config/server.properties";

    private CheckConfig() {
    }

    /** Runs the command; returns the exit code (0 every class loads, 1 one does not, 2 usage). */
    static int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length == 1 && (args[0].equals("--help") || args[0].equals("-h"))) {
            out.println(USAGE);
            return 0;
        }
        if (args.length != 1) {
            err.println("check-config: name the node's server.properties\n" + USAGE);
            return 2;
        }
        if (!loads(KAFKA_CLASS)) {
            err.println("check-config: Kafka's jars are not on the class path, so nothing can be loaded as Kafka would:\n"
                + USAGE);
            return 2;
        }
        Properties server = new Properties();
        try (InputStream in = Files.newInputStream(Paths.get(args[0]))) {
            server.load(in);
        } catch (NoSuchFileException e) {
            err.println("check-config: " + args[0] + " does not exist; name the node's server.properties");
            return 2;
        } catch (IOException e) {
            err.println("check-config: " + args[0] + ": " + e.getMessage());
            return 2;
        }
        List<String> problems = new ArrayList<>();
        for (String key : new String[] {AUTHORIZER, QUOTA_CALLBACK}) {
            String problem = problemOf(key, server.getProperty(key));
            if (problem != null) {
                problems.add(problem);
            }
        }
        String settings = agentSettingsProblem(server);
        if (settings != null) {
            problems.add(settings);
        }
        for (String problem : problems) {
            err.println("check-config: " + args[0] + ": " + problem);
        }
        if (problems.isEmpty()) {
            out.println(args[0] + ": " + AUTHORIZER + " and " + QUOTA_CALLBACK + " load on this Kafka, and the agent"
                + " accepts its settings");
            return 0;
        }
        return 1;
    }

    /** What stops Kafka loading the class {@code key} names, or null when it loads (or the key is unset). */
    static String problemOf(String key, String value) {
        if (value == null || value.trim().isEmpty()) {
            return null;
        }
        String className = value.trim();
        try {
            Class.forName(className, false, CheckConfig.class.getClassLoader());
            return null;
        } catch (ClassNotFoundException e) {
            return key + " = " + className + ": no such class on this class path; check the spelling (docs/configuration.md"
                + " names the agent's classes)";
        } catch (LinkageError e) {
            return key + " = " + className + " cannot load on this Kafka (" + e + ")" + fixOf(className, e);
        }
    }

    /** Why the agent would stop the node at start for its own settings, in its words, or null. */
    private static String agentSettingsProblem(Properties server) {
        Map<String, String> settings = new TreeMap<>();
        for (String key : server.stringPropertyNames()) {
            settings.put(key, server.getProperty(key));
        }
        try {
            String problem = OpenedAgent.settingsProblem(settings);
            return problem == null ? null : "the agent would not start: " + problem;
        } catch (NativeLibraryLoader.NativeLoadException e) {
            return "the agent's native library does not load, so its settings were not checked: " + e.getMessage();
        }
    }

    /** For a Monitorable class on a Kafka without plugin metrics: the class to name instead. */
    private static String fixOf(String className, LinkageError e) {
        int dot = className.lastIndexOf('.');
        String simpleName = className.substring(dot + 1);
        if (!String.valueOf(e.getMessage()).contains(MONITORABLE) || !simpleName.startsWith(MONITORABLE_PREFIX)) {
            return "";
        }
        String plain = className.substring(0, dot + 1) + simpleName.substring(MONITORABLE_PREFIX.length());
        return ": it needs Kafka 4.1's plugin metrics, which Kafka 3.7 to 4.0 lack; name " + plain + " there. Kafka itself"
            + " would stop with a bare NoClassDefFoundError that names no key";
    }

    private static boolean loads(String className) {
        try {
            Class.forName(className, false, CheckConfig.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }
}
