package org.devlive.grantforge.kafka.it;

import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.apache.kafka.server.authorizer.AuthorizationResult;
import org.apache.kafka.server.authorizer.Authorizer;

/**
 * A hostile client's flood, through Kafka's {@code Authorizer} API in a JVM of its own (run by
 * {@code AuthorizerMemoryBoundTest}, with only this class, a Kafka server classpath and the agent
 * JAR): a principal with no rights asks about {@code threads × perThread} group names of
 * {@code nameBytes} each, all different, as Kafka would for JoinGroup requests before it validates
 * the group id. Prints the process's resident memory before and after, and the answers.
 *
 * <p>Usage: {@code AuthorizerFlood <policy file> <threads> <perThread> <nameBytes>}
 */
public final class AuthorizerFlood {
    private AuthorizerFlood() {
    }

    public static void main(String[] args) throws Exception {
        String policyFile = args[0];
        int threads = Integer.parseInt(args[1]);
        int perThread = Integer.parseInt(args[2]);
        int nameBytes = Integer.parseInt(args[3]);
        Authorizer authorizer = (Authorizer) Class.forName("org.devlive.grantforge.kafka.agent.GrantForgeKafkaAuthorizer")
                .getDeclaredConstructor().newInstance();
        Map<String, Object> configs = new HashMap<>();
        configs.put("grantforge.policy.file", policyFile);
        configs.put("super.users", "User:admin");
        configs.put("node.id", 1);
        authorizer.configure(configs);
        AuthorizableRequestContext mallory = context("mallory");
        // Warm up: the library loaded, the JIT done, every lane made.
        runThreads(threads, t -> {
            for (int i = 0; i < 200; i++) {
                ask(authorizer, mallory, "warm-" + t + "-" + i);
            }
        });
        System.gc();
        Thread.sleep(1000);
        long before = residentBytes();
        AtomicLong denied = new AtomicLong();
        AtomicLong other = new AtomicLong();
        long started = System.nanoTime();
        runThreads(threads, t -> {
            char[] name = new char[nameBytes];
            Arrays.fill(name, 'g');
            for (int i = 0; i < perThread; i++) {
                // A unique name: its first characters differ, so no prefix is shared.
                String unique = String.format("%08d-%04d-", i, t);
                unique.getChars(0, unique.length(), name, 0);
                AuthorizationResult result = ask(authorizer, mallory, new String(name));
                (result == AuthorizationResult.DENIED ? denied : other).incrementAndGet();
            }
        });
        long seconds = Math.max(1, (System.nanoTime() - started) / 1_000_000_000L);
        // Past the agent's next tick and its sweep of expired work.
        Thread.sleep(1500);
        System.gc();
        long after = residentBytes();
        System.out.println("flood questions=" + (long) threads * perThread + " nameBytes=" + nameBytes
                + " denied=" + denied.get() + " other=" + other.get()
                + " rssBefore=" + before + " rssAfter=" + after + " seconds=" + seconds);
        authorizer.close();
    }

    private static AuthorizationResult ask(Authorizer authorizer, AuthorizableRequestContext context, String group) {
        Action action = new Action(AclOperation.READ, new ResourcePattern(ResourceType.GROUP, group, PatternType.LITERAL), 1, true, true);
        List<AuthorizationResult> results = authorizer.authorize(context, Collections.singletonList(action));
        return results.get(0);
    }

    interface Work {
        void run(int thread) throws Exception;
    }

    private static void runThreads(int count, Work work) throws InterruptedException {
        List<Thread> started = new ArrayList<>();
        List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
        for (int t = 0; t < count; t++) {
            final int thread = t;
            Thread worker = new Thread(() -> {
                try {
                    work.run(thread);
                } catch (Throwable e) {
                    failures.add(e);
                }
            }, "flood-" + t);
            worker.start();
            started.add(worker);
        }
        for (Thread worker : started) {
            worker.join();
        }
        if (!failures.isEmpty()) {
            throw new IllegalStateException("a flood thread failed", failures.get(0));
        }
    }

    /** VmRSS of this process, in bytes. */
    private static long residentBytes() throws Exception {
        for (String line : Files.readAllLines(Paths.get("/proc/self/status"), StandardCharsets.UTF_8)) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024L;
            }
        }
        throw new IllegalStateException("no VmRSS in /proc/self/status");
    }

    private static AuthorizableRequestContext context(String user) throws Exception {
        final KafkaPrincipal principal = new KafkaPrincipal(KafkaPrincipal.USER_TYPE, user);
        final InetAddress client = InetAddress.getByName("10.9.8.7");
        return new AuthorizableRequestContext() {
            @Override public String listenerName() { return "SASL_PLAINTEXT"; }
            @Override public SecurityProtocol securityProtocol() { return SecurityProtocol.SASL_PLAINTEXT; }
            @Override public KafkaPrincipal principal() { return principal; }
            @Override public InetAddress clientAddress() { return client; }
            @Override public int requestType() { return 11; } // JoinGroup
            @Override public int requestVersion() { return 9; }
            @Override public String clientId() { return "flood"; }
            @Override public int correlationId() { return 1; }
        };
    }
}
