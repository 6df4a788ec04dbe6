package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.zip.ZipFile;

import org.junit.jupiter.api.Test;

/**
 * The files of {@code deploy/} that no container engine runs here (the apache/kafka and Strimzi images, the Strimzi
 * resource) held to what the build makes, so that they cannot drift silently: the JAR they copy is the one the build
 * names, every agent class they name is in it, every {@code grantforge.*} key is a documented setting, the image's
 * own code (Kafka's {@code KafkaDockerWrapper}, the class the apache/kafka image runs at start) turns the environment
 * file into the settings {@code docs/production.md} shows, and the alerts pass promtool's unit tests.
 */
class ProductionDeploymentFilesTest {
    private static final Pattern AGENT_CLASS = Pattern.compile("org\\.devlive\\.grantforge\\.kafka\\.agent\\.[A-Za-z0-9_.]*[A-Za-z0-9_]");
    /** A key {@code grantforge.…}, not inside a class name or a path ({@code org.devlive.grantforge.kafka}, {@code /grantforge.token}). */
    private static final Pattern SETTING = Pattern.compile("(?<![./\\w-])grantforge(?:\\.[a-z]+)+\\b");
    /** Kafka keys Strimzi refuses in spec.kafka.config (KafkaClusterSpec.FORBIDDEN_PREFIXES, Strimzi 0.4x). */
    private static final List<String> STRIMZI_FORBIDDEN_PREFIXES = List.of("listeners", "advertised.", "broker.", "listener.",
            "host.name", "port", "inter.broker.listener.name", "sasl.", "ssl.", "security.", "password.", "log.dir",
            "zookeeper.connect", "zookeeper.set.acl", "zookeeper.ssl", "zookeeper.clientCnxnSocket", "authorizer.",
            "super.user", "cruise.control.metrics.topic", "cruise.control.metrics.reporter.bootstrap.servers", "node.id",
            "process.roles", "controller.", "metadata.log.dir");

    @Test
    void bothDockerfilesCopyTheJarTheBuildMakesIntoKafkasLibs() throws IOException {
        for (String dockerfile : List.of("deploy/docker/Dockerfile", "deploy/strimzi/Dockerfile")) {
            String text = read(dockerfile);
            Matcher version = Pattern.compile("(?m)^ARG GRANTFORGE_VERSION=(\\S+)$").matcher(text);
            assertTrue(version.find(), dockerfile + " sets GRANTFORGE_VERSION");
            assertEquals(ItPaths.AGENT_VERSION, version.group(1), dockerfile + ": the agent's version (root pom.xml)");
            Matcher copy = Pattern.compile("(?m)^COPY (\\S+) (\\S+)$").matcher(text);
            assertTrue(copy.find(), dockerfile + " copies the JAR");
            assertEquals(ItPaths.AGENT_JAR_NAME, copy.group(1).replace("${GRANTFORGE_VERSION}", version.group(1)), dockerfile);
            assertEquals("/opt/kafka/libs/", copy.group(2), dockerfile + ": Kafka's classpath in the image");
            assertFalse(copy.find(), dockerfile + " copies one file");
        }
        assertEquals(ItPaths.AGENT_JAR_NAME, ItPaths.agentJar().getFileName().toString(), "the JAR the build writes");
        assertTrue(Files.isRegularFile(ItPaths.agentJar()), "the built JAR " + ItPaths.agentJar());
    }

    @Test
    void everyAgentClassTheDeploymentFilesAndThePageNameIsInTheJar() throws IOException {
        TreeSet<String> named = new TreeSet<>();
        for (Path file : deploymentFilesAndPage()) {
            Matcher m = AGENT_CLASS.matcher(Files.readString(file, StandardCharsets.UTF_8));
            while (m.find()) {
                named.add(m.group());
            }
        }
        assertTrue(named.size() >= 4, "the files name the authorizer and quota classes: " + named);
        List<String> missing = new ArrayList<>();
        try (ZipFile jar = new ZipFile(ItPaths.agentJar().toFile())) {
            for (String className : named) {
                if (jar.getEntry(className.replace('.', '/') + ".class") == null) {
                    missing.add(className);
                }
            }
        }
        assertEquals(List.of(), missing, "classes named in deploy/ or docs/production.md that the JAR lacks");
    }

    @Test
    void everyGrantforgeKeyTheDeploymentFilesAndThePageNameIsADocumentedSetting() throws IOException {
        TreeSet<String> documented = new TreeSet<>();
        Matcher row = Pattern.compile("(?m)^\\| `(grantforge\\.[a-z.]+)` \\|").matcher(read("docs/configuration.md"));
        while (row.find()) {
            documented.add(row.group(1));
        }
        assertTrue(documented.contains("grantforge.cache.dir"), "docs/configuration.md's table: " + documented);
        TreeSet<String> named = new TreeSet<>();
        for (Path file : deploymentFilesAndPage()) {
            Matcher m = SETTING.matcher(Files.readString(file, StandardCharsets.UTF_8));
            while (m.find()) {
                named.add(m.group());
            }
        }
        // the audit logger, the environment file and the example host are names, not settings
        named.removeAll(List.of("grantforge.audit", "grantforge.env", "grantforge.example.com"));
        assertTrue(named.contains("grantforge.server.url"), "the files name the agent's settings: " + named);
        named.removeAll(documented);
        assertEquals(new TreeSet<>(), named, "grantforge.* keys named in deploy/ or docs/production.md but not documented");
    }

    @Test
    void theStrimziResourceSetsNoKeyStrimziRefusesAndNamesTheSameImageAsItsDockerfile() throws IOException {
        String resource = read("deploy/strimzi/kafka.yaml");
        Matcher config = Pattern.compile("(?ms)^    config:\\n(.*?)^    \\S").matcher(resource);
        assertTrue(config.find(), "spec.kafka.config in deploy/strimzi/kafka.yaml");
        Matcher key = Pattern.compile("(?m)^      ([a-z][a-z.]*): ").matcher(config.group(1));
        List<String> keys = new ArrayList<>();
        while (key.find()) {
            keys.add(key.group(1));
        }
        assertTrue(keys.contains("client.quota.callback.class") && keys.contains("grantforge.server.url"), "config keys: " + keys);
        for (String k : keys) {
            assertTrue(STRIMZI_FORBIDDEN_PREFIXES.stream().noneMatch(k::startsWith), k + " is a key Strimzi refuses in spec.kafka.config");
        }
        assertTrue(resource.contains("      type: custom\n"), "authorization type custom");
        assertTrue(read("deploy/strimzi/Dockerfile").contains("-t registry.example.com/kafka-grantforge:0.1.0-kafka-4.1.0 "),
                "the Dockerfile's build command tags the image the resource names");
        assertTrue(resource.contains("image: registry.example.com/kafka-grantforge:0.1.0-kafka-4.1.0\n"), "spec.kafka.image");
    }

    @Test
    void theApacheKafkaImageTurnsTheEnvironmentFileIntoTheAgentsSettings() throws Exception {
        Map<String, String> env = new LinkedHashMap<>();
        for (String line : Files.readAllLines(ItPaths.inRepo("deploy/docker/grantforge.env"), StandardCharsets.UTF_8)) {
            if (!line.isBlank() && !line.startsWith("#")) {
                env.put(line.substring(0, line.indexOf('=')), line.substring(line.indexOf('=') + 1));
            }
        }
        env.put("KAFKA_GRANTFORGE_INSTANCE", "broker-1");
        // what the image's start does with its environment: Kafka's own KafkaDockerWrapper, of the release the image runs
        Path dir = Files.createTempDirectory("apache-kafka-image");
        try {
            imageRendersTheEnvironmentFile(env, dir);
        } finally {
            ItPaths.deleteRecursively(dir);
        }
    }

    private static void imageRendersTheEnvironmentFile(Map<String, String> env, Path dir) throws Exception {
        Path defaults = Files.createDirectories(dir.resolve("etc-kafka-docker"));
        Path mounted = Files.createDirectories(dir.resolve("mnt-shared-config"));
        Path finalConfigs = Files.createDirectories(dir.resolve("opt-kafka-config"));
        Files.writeString(defaults.resolve("server.properties"), "# the image's default\nprocess.roles=broker,controller\n");
        List<String> rendered = renderWithTheImagesWrapper("4.3.1", env, defaults, mounted, finalConfigs);

        Map<String, String> expected = new LinkedHashMap<>();
        expected.put("authorizer.class.name", "org.devlive.grantforge.kafka.agent.MonitorableGrantForgeKafkaAuthorizer");
        expected.put("super.users", "User:admin");
        expected.put("grantforge.server.url", "https://grantforge.example.com");
        expected.put("grantforge.token.file", "/etc/kafka/secrets/grantforge.token");
        expected.put("grantforge.cache.dir", "/var/lib/kafka/grantforge-cache");
        expected.put("client.quota.callback.class", "org.devlive.grantforge.kafka.agent.MonitorableGrantForgeClientQuotaCallback");
        expected.put("grantforge.instance", "broker-1");
        Map<String, String> got = new LinkedHashMap<>();
        for (String line : rendered) {
            if (!line.isBlank() && !line.startsWith("#")) {
                got.put(line.substring(0, line.indexOf('=')), line.substring(line.indexOf('=') + 1));
            }
        }
        assertEquals(new java.util.TreeMap<>(expected), new java.util.TreeMap<>(got),
                "server.properties the image writes from deploy/docker/grantforge.env (the environment alone, as docs/production.md says)");

        // with a server.properties mounted in /mnt/shared/config: that file, and the environment appended to it
        Files.writeString(mounted.resolve("server.properties"), "# the operator's own\nnode.id=7\n");
        Path appended = Files.createDirectories(dir.resolve("opt-kafka-config-mounted"));
        List<String> withMounted = renderWithTheImagesWrapper("4.3.1", env, defaults, mounted, appended);
        assertTrue(withMounted.contains("node.id=7"), "the mounted file kept: " + withMounted);
        assertTrue(withMounted.indexOf("node.id=7") < withMounted.indexOf("grantforge.cache.dir=/var/lib/kafka/grantforge-cache"),
                "the environment appended after it: " + withMounted);
        assertFalse(withMounted.contains("process.roles=broker,controller"), "not the image's default: " + withMounted);
    }

    @Test
    void whatThePageShowsOfTheFilesIsInTheFiles() throws IOException {
        String page = read("docs/production.md");
        List<String> envFile = Files.readAllLines(ItPaths.inRepo("deploy/docker/grantforge.env"), StandardCharsets.UTF_8);
        List<String> log4jFile = Files.readAllLines(ItPaths.inRepo("deploy/logging/log4j-kafka-3.properties"), StandardCharsets.UTF_8);
        List<String> strimziFile = Files.readAllLines(ItPaths.inRepo("deploy/strimzi/kafka.yaml"), StandardCharsets.UTF_8);
        List<String> notInFiles = new ArrayList<>();
        int shown = 0;
        for (String line : page.split("\n")) {
            String trimmed = line.trim();
            boolean inFile;
            if (trimmed.matches("KAFKA_[A-Z_]+=\\S+")) {
                inFile = envFile.contains(trimmed);
            } else if (trimmed.startsWith("log4j.")) {
                inFile = log4jFile.contains(trimmed);
            } else if (trimmed.matches("(authorizerClass|supportsAdminApi|type|image|- CN=admin|grantforge\\.[a-z.]+|client\\.quota\\.callback\\.class):? ?.*")
                    && line.startsWith("    ")) {
                inFile = strimziFile.stream().anyMatch(l -> l.trim().equals(trimmed));
            } else {
                continue;
            }
            shown++;
            if (!inFile) {
                notInFiles.add(trimmed);
            }
        }
        assertTrue(shown >= 20, "the page shows the environment file, the log4j lines and the Strimzi excerpt: " + shown + " lines");
        assertEquals(List.of(), notInFiles, "lines docs/production.md shows that its files do not have");
    }

    @Test
    void theAlertsPassPromtoolsUnitTests() throws Exception {
        Path dir = ItPaths.inRepo("deploy/prometheus");
        for (List<String> args : List.of(List.of("check", "rules", "grantforge-alerts.yaml"),
                List.of("test", "rules", "grantforge-alerts.test.yaml"))) {
            List<String> command = new ArrayList<>(List.of("promtool"));
            command.addAll(args);
            Process p;
            try {
                p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
            } catch (IOException e) {
                throw new AssertionError("promtool is not installed: scripts/install-test-platforms installs it (Debian's prometheus)", e);
            }
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), "promtool " + args + " finished");
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(0, p.exitValue(), "promtool " + String.join(" ", args) + ":\n" + out);
            assertTrue(out.contains("SUCCESS"), out);
        }
    }

    // ---------------------------------------------------------------------------------------------

    private static String read(String path) throws IOException {
        return Files.readString(ItPaths.inRepo(path), StandardCharsets.UTF_8);
    }

    private static List<Path> deploymentFilesAndPage() throws IOException {
        List<Path> files;
        try (Stream<Path> walk = Files.walk(ItPaths.inRepo("deploy"))) {
            files = walk.filter(Files::isRegularFile).sorted().collect(Collectors.toList());
        }
        assertTrue(files.size() >= 8, "deploy/ holds the images, the Strimzi resource, the logging and Prometheus files: " + files);
        files.add(ItPaths.inRepo("docs/production.md"));
        return files;
    }

    /**
     * Runs {@code KafkaDockerWrapper.prepareServerConfigs} of a release (the apache/kafka image's start: its default
     * configs, the files mounted in /mnt/shared/config, the environment) and returns the server.properties it wrote.
     */
    private static List<String> renderWithTheImagesWrapper(String release, Map<String, String> env, Path defaults, Path mounted,
            Path finalConfigs) throws Exception {
        List<URL> urls = new ArrayList<>();
        for (String entry : KafkaDist.of(release).classpath().split(File.pathSeparator)) {
            urls.add(Path.of(entry).toUri().toURL());
        }
        try (URLClassLoader kafka = new URLClassLoader(urls.toArray(new URL[0]), ClassLoader.getPlatformClassLoader())) {
            Object scalaMaps = kafka.loadClass("scala.collection.immutable.HashMap$").getField("MODULE$").get(null);
            Object scalaEnv = scalaMaps.getClass().getMethod("empty").invoke(scalaMaps);
            for (Map.Entry<String, String> e : env.entrySet()) {
                scalaEnv = scalaEnv.getClass().getMethod("updated", Object.class, Object.class).invoke(scalaEnv, e.getKey(), e.getValue());
            }
            Object wrapper = kafka.loadClass("kafka.docker.KafkaDockerWrapper$").getField("MODULE$").get(null);
            Method prepare = null;
            for (Method m : wrapper.getClass().getMethods()) {
                if (m.getName().equals("prepareServerConfigs")) {
                    prepare = m;
                }
            }
            assertTrue(prepare != null, "KafkaDockerWrapper.prepareServerConfigs in Kafka " + release);
            prepare.invoke(wrapper, defaults, mounted, finalConfigs, scalaEnv);
        }
        return Files.readAllLines(finalConfigs.resolve("server.properties"), StandardCharsets.UTF_8);
    }
}
