package org.devlive.grantforge.kafka.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.internals.PluginMetricsImpl;
import org.apache.kafka.common.network.ClientInformation;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.metadata.authorizer.StandardAuthorizer;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizationResult;
import org.devlive.grantforge.kafka.agent.GrantForgeKafkaAuthorizer;
import org.devlive.grantforge.kafka.agent.ComparingAuthorizer;
import org.devlive.grantforge.kafka.agent.GrantForgeShadowAuthorizer;

/** What the benchmarks share: request contexts as the broker builds them, authorizer set-up, reports. */
public final class Bench {
    /** JVM system property: load the native library from this file (for perf symbols); unset = from the JAR. */
    static final String NATIVE_PROPERTY = "gf.bench.native";

    private Bench() {
    }

    /** A broker's request context ({@code RequestContext}, as Kafka's AuthorizerBenchmark builds it). */
    public static RequestContext context(String user, String host, ApiKeys api) {
        try {
            return new RequestContext(new RequestHeader(api, (short) 1, "someclient", 1), "1",
                InetAddress.getByName(host), new KafkaPrincipal(KafkaPrincipal.USER_TYPE, user),
                ListenerName.normalised("listener"), SecurityProtocol.PLAINTEXT, ClientInformation.EMPTY, false);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static List<Action> literal(AclOperation op, ResourceType type, String name, boolean logIfAllowed,
                                       boolean logIfDenied) {
        return Collections.singletonList(new Action(op, new ResourcePattern(type, name, PatternType.LITERAL), 1,
            logIfAllowed, logIfDenied));
    }

    /** StandardAuthorizer as Kafka 4.x's benchmarks make it: configured, with plugin metrics. */
    static StandardAuthorizer standardAuthorizer() {
        StandardAuthorizer authorizer = new StandardAuthorizer();
        authorizer.configure(Collections.<String, Object>emptyMap());
        authorizer.withPluginMetrics(new PluginMetricsImpl(new Metrics(), new HashMap<String, String>()));
        return authorizer;
    }

    /**
     * Shadow mode: Kafka's StandardAuthorizer (its ACLs still to be added) with the agent asked beside it, in offline
     * mode on {@code snapshot}.
     */
    static GrantForgeShadowAuthorizer shadow(Path snapshot) {
        return beside(new GrantForgeShadowAuthorizer(), snapshot);
    }

    /** {@code authorizer} (a mode of Kafka's StandardAuthorizer with the agent beside it) in offline mode on {@code snapshot}. */
    static <A extends ComparingAuthorizer> A beside(A authorizer, Path snapshot) {
        Map<String, Object> configs = new HashMap<String, Object>();
        configs.put("grantforge.policy.file", snapshot.toString());
        String nativeLibrary = System.getProperty(NATIVE_PROPERTY);
        if (nativeLibrary != null && !nativeLibrary.isEmpty()) {
            configs.put("grantforge.native.library.path", nativeLibrary);
        }
        authorizer.configure(configs);
        authorizer.withPluginMetrics(new PluginMetricsImpl(new Metrics(), new HashMap<String, String>()));
        return authorizer;
    }

    /** The agent in offline mode on {@code snapshot}; {@code cache} false sets the decision cache to 0 entries. */
    public static GrantForgeKafkaAuthorizer grantforge(Path snapshot, boolean cache) {
        return grantforge(snapshot, cache, null);
    }

    /**
     * The agent in offline mode on {@code snapshot}, verified with the public key in {@code signingKey} (the
     * signature beside it, {@link SignedSnapshot}) unless that is null.
     */
    static GrantForgeKafkaAuthorizer grantforge(Path snapshot, boolean cache, Path signingKey) {
        Map<String, Object> configs = new HashMap<String, Object>();
        configs.put("grantforge.policy.file", snapshot.toString());
        if (signingKey != null) {
            configs.put("grantforge.signing.key.file", signingKey.toString());
            // A signed policy file needs a directory for the highest version applied (rollback guard).
            configs.put("grantforge.cache.dir", tempDirectory("grantforge-bench-cache").toString());
        }
        configs.put("grantforge.snapshot.max.bytes", String.valueOf(1L << 34));
        if (!cache) {
            configs.put("grantforge.decision.cache.max.entries", "0");
        }
        String nativeLibrary = System.getProperty(NATIVE_PROPERTY);
        if (nativeLibrary != null && !nativeLibrary.isEmpty()) {
            configs.put("grantforge.native.library.path", nativeLibrary);
        }
        GrantForgeKafkaAuthorizer authorizer = new GrantForgeKafkaAuthorizer();
        authorizer.configure(configs);
        return authorizer;
    }

    static Path tempDirectory(String prefix) {
        try {
            return Files.createTempDirectory(prefix);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String resource(String name) {
        try (InputStream in = Bench.class.getResourceAsStream("/grantforge-bench/" + name)) {
            if (in == null) {
                throw new IllegalStateException("resource grantforge-bench/" + name + " is missing from the JAR");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A copy of a bundled snapshot in a file of its own (the agent shares one agent per file). */
    static Path snapshotFile(String resourceName) {
        try {
            Path file = Files.createTempFile("gf-bench-", ".json");
            Files.write(file, resource(resourceName).getBytes(StandardCharsets.UTF_8));
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static void check(String what, AuthorizationResult expected, AuthorizationResult actual) {
        if (expected != actual) {
            throw new IllegalStateException(what + ": expected " + expected + " but got " + actual);
        }
    }

    static long heapUsedMiB() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed() >> 20;
    }

    /** Resident set size of this process in MiB (native memory of the agent included), or -1. */
    static long rssMiB() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) >> 10;
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return -1;
    }

    /** One line the run script collects into docs/benchmarks.md. */
    static void report(String line) {
        System.out.println();
        System.out.println("GF-BENCH " + line);
    }
}
