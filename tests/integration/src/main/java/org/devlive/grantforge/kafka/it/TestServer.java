package org.devlive.grantforge.kafka.it;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * The project's protocol-faithful GrantForge test server ({@code crates/grantforge-testserver}) as a
 * child process on loopback: real HTTP (or HTTPS with a test CA of its own), real signatures, and the {@code /_test/} controls to make it
 * fail on purpose.
 */
public final class TestServer implements AutoCloseable {
    public static final String BINARY_PROPERTY = "grantforge.testserver";

    private final Process process;
    private final String url;
    private final Path stateDir;
    private final HttpClient http;

    private TestServer(Process process, String url, Path stateDir, HttpClient http) {
        this.process = process;
        this.url = url;
        this.stateDir = stateDir;
        this.http = http;
    }

    /** Starts a server on a free loopback port serving {@code policies}, heartbeat interval {@code refreshSeconds}. */
    public static TestServer start(Path policies, Path stateDir, int refreshSeconds) throws IOException {
        return start(policies, stateDir, refreshSeconds, false, List.of());
    }

    /**
     * As {@link #start(Path, Path, int)}, serving {@code definition} (in the format of
     * {@code crates/grantforge-kafka/kafka-service-type.json}) as the service type's definition.
     */
    public static TestServer startWithDefinition(Path policies, Path stateDir, int refreshSeconds, Path definition)
            throws IOException {
        return start(policies, stateDir, refreshSeconds, false, List.of("--definition", definition.toString()));
    }

    /**
     * As {@link #start(Path, Path, int)}, over HTTPS: the server's certificate is signed by a test CA it makes in
     * {@code <state dir>/tls} ({@link #caFile()}), which agents then trust through {@code grantforge.ssl.ca.file}.
     */
    public static TestServer startHttps(Path policies, Path stateDir, int refreshSeconds) throws IOException {
        return start(policies, stateDir, refreshSeconds, true, List.of());
    }

    private static TestServer start(Path policies, Path stateDir, int refreshSeconds, boolean https, List<String> options)
            throws IOException {
        Files.createDirectories(stateDir);
        List<String> command = new ArrayList<>(List.of(binary().toString(), "--policies", policies.toString(),
            "--state-dir", stateDir.toString(), "--listen", "127.0.0.1:0", "--refresh-seconds", String.valueOf(refreshSeconds)));
        if (https) {
            command.addAll(List.of("--tls-dir", stateDir.resolve("tls").toString()));
        }
        command.addAll(options);
        ProcessBuilder builder = new ProcessBuilder(command)
            .redirectError(stateDir.resolve("server.err").toFile());
        Process process = builder.start();
        BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        String line = out.readLine();
        String marker = "listening on ";
        if (line == null || !line.contains(marker)) {
            process.destroyForcibly();
            throw new IOException("the test server did not start: " + line + "\n" + Files.readString(stateDir.resolve("server.err")));
        }
        Runtime.getRuntime().addShutdownHook(new Thread(process::destroyForcibly));
        HttpClient.Builder http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5));
        if (https) {
            http.sslContext(trusting(stateDir.resolve("tls").resolve("ca.pem")));
        }
        return new TestServer(process, line.substring(line.indexOf(marker) + marker.length()).trim(), stateDir, http.build());
    }

    /** A TLS context that trusts the one CA certificate of {@code caPem}, for the test controls over HTTPS. */
    private static SSLContext trusting(Path caPem) throws IOException {
        try (InputStream in = Files.newInputStream(caPem)) {
            KeyStore trusted = KeyStore.getInstance(KeyStore.getDefaultType());
            trusted.load(null, null);
            trusted.setCertificateEntry("test-ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
            TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trust.init(trusted);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, trust.getTrustManagers(), null);
            return context;
        } catch (GeneralSecurityException e) {
            throw new IOException("cannot trust " + caPem + ": " + e, e);
        }
    }

    /** The test CA's certificate (PEM) of a server started with {@link #startHttps}. */
    public Path caFile() {
        return stateDir.resolve("tls").resolve("ca.pem");
    }

    static Path binary() {
        String configured = System.getProperty(BINARY_PROPERTY);
        Path path = configured != null && !configured.isBlank() ? Paths.get(configured)
            : ItPaths.findFromWorkingDir(Paths.get("target", "debug", "grantforge-testserver"),
                Paths.get("..", "..", "target", "debug", "grantforge-testserver"));
        if (!Files.isExecutable(path)) {
            throw new IllegalStateException("no test server binary at " + path + "; build it with cargo build -p grantforge-testserver");
        }
        return path;
    }

    public String url() {
        return url;
    }

    public Path tokenFile() {
        return stateDir.resolve("token");
    }

    public Path signingKeyFile() {
        return stateDir.resolve("signing-key.pub");
    }

    /** Makes the server fail on purpose, e.g. {@code {"mode":"status","status":500}}; {@code {"mode":"none"}} heals it. */
    public void fault(String json) throws IOException, InterruptedException {
        post("/_test/fault", json);
    }

    /** Replaces the policies (the server bumps the policy version). */
    public void policies(String policiesJson) throws IOException, InterruptedException {
        post("/_test/policies", policiesJson);
    }

    /**
     * Replaces the policies <em>without</em> moving the policy version, as GrantForge does when role holders, group
     * members, {@code serviceEnabled} or the service name change.
     */
    public void policiesAtSameVersion(String policiesJson) throws IOException, InterruptedException {
        post("/_test/policies?sameVersion=true", policiesJson);
    }

    public String state() throws IOException, InterruptedException {
        return get("/_test/state");
    }

    /** The events the server answered as duplicates (kept once) since it started: what an agent sent twice. */
    public long duplicates() throws IOException, InterruptedException {
        java.util.regex.Matcher count = java.util.regex.Pattern.compile("\"duplicates\"\\s*:\\s*(\\d+)").matcher(state());
        if (!count.find()) {
            throw new IOException("the test server's state has no duplicates count: " + state());
        }
        return Long.parseLong(count.group(1));
    }

    public String events() throws IOException, InterruptedException {
        return get("/_test/events");
    }

    public String heartbeats() throws IOException, InterruptedException {
        return get("/_test/heartbeats");
    }

    /**
     * Per instance, the policy versions its heartbeats reported applying and when each was first reported
     * ({@code GET /_test/instances}; {@code policyVersionSince} of {@link #state()} says when the current
     * version was installed).
     */
    public String instances() throws IOException, InterruptedException {
        return get("/_test/instances");
    }

    /**
     * Server mode against this server for {@code node}: its URL and token, its signing key (plain HTTP is
     * no trust anchor, so the key is configured), the node's own cache directory and instance name.
     */
    public KafkaNode.Builder agentOf(KafkaNode.Builder node, Path cacheDir, String instance) {
        return node.property("grantforge.server.url", url)
            .property("grantforge.token.file", tokenFile().toString())
            .property("grantforge.signing.key.file", signingKeyFile().toString())
            .property("grantforge.cache.dir", cacheDir.toString())
            .property("grantforge.instance", instance);
    }

    private void post(String path, String json) throws IOException, InterruptedException {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(url + path))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(json)).build(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() / 100 != 2) {
            throw new IOException(path + " answered " + response.statusCode() + ": " + response.body());
        }
    }

    private String get(String path) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create(url + path)).GET().build(), HttpResponse.BodyHandlers.ofString()).body();
    }

    @Override
    public void close() {
        // as the nodes print theirs: what the suite's minutes are made of (docs/testing.md)
        process.info().totalCpuDuration().ifPresent(cpu -> System.out.printf("TestServer[%s] used %.1f s of CPU%n", url,
                cpu.toMillis() / 1000.0));
        process.destroy();
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
