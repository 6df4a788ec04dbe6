package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.jar.JarFile;

import org.devlive.grantforge.plugin.api.ApiVersion;
import org.devlive.grantforge.plugin.api.ConnectionResult;
import org.devlive.grantforge.plugin.api.LookupException;
import org.devlive.grantforge.plugin.api.LookupRequest;
import org.devlive.grantforge.plugin.api.ServiceConfig;
import org.devlive.grantforge.plugin.api.ServiceTypeProvider;
import org.devlive.grantforge.standin.host.PluginHost;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The plugin jar as a GrantForge host loads it (no Kafka node): the descriptor at its root passes the host's rules,
 * the named provider is made in an isolated class loader and answers {@code definition()} within the call limit,
 * the API's classes are the host's, and every other class the plugin needs comes from the jar itself or the JDK,
 * even with a different kafka-clients on the host's class path, as this test JVM has.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class GrantForgePluginLoadingTest {
    private PluginHost plugin;

    @BeforeAll
    void load() throws Exception {
        plugin = PluginHost.load(PluginJar.path());
    }

    @AfterAll
    void unload() {
        PluginHost.closeQuietly(plugin);
    }

    @Test
    void theDescriptorNamesTheKafkaPluginForApi11() {
        assertEquals("kafka", plugin.descriptor().id());
        assertEquals("Apache Kafka", plugin.descriptor().name());
        assertEquals(new ApiVersion(1, 1, 0), plugin.descriptor().apiVersion());
        assertEquals(List.of("org.devlive.grantforge.kafka.plugin.KafkaProvider"), plugin.descriptor().providers());
        assertEquals("kafka", plugin.definition().name());
    }

    @Test
    void thePluginHoldsItsOwnKafkaClientsAndBorrowsOnlyTheApi() throws Exception {
        ClassLoader loader = plugin.loader();
        assertSame(loader, Class.forName("org.devlive.grantforge.kafka.plugin.KafkaProvider", false, loader).getClassLoader());
        assertSame(loader, Class.forName("org.apache.kafka.clients.admin.Admin", false, loader).getClassLoader());
        assertSame(ServiceTypeProvider.class, Class.forName(ServiceTypeProvider.class.getName(), false, loader));
    }

    @Test
    void theJarCarriesNoApiClassesAndNoNestedJars() throws Exception {
        try (JarFile jar = new JarFile(PluginJar.path().toFile())) {
            List<String> strays = jar.stream().map(e -> e.getName())
                    .filter(n -> n.startsWith("org/devlive/grantforge/plugin/api/") || n.startsWith("org/jspecify/") || n.endsWith(".jar"))
                    .toList();
            assertEquals(List.of(), strays);
        }
    }

    /** An Admin client made and closed inside the isolated loader: no class is missing from the jar. */
    @Test
    void aConnectionTestToAnUnusedPortFailsAsUnreachableInsideTheIsolatedLoader() throws Exception {
        ServiceConfig config = new ServiceConfig("kafka-it", plugin.definition().withDefaults(Map.of(
                "bootstrap.servers", "127.0.0.1:" + Ports.free(), "request.timeout.ms", "1000")));
        ConnectionResult result = plugin.call(p -> p.testConnection(config));
        assertEquals(ConnectionResult.Status.FAILED, result.status());
        assertTrue(result.message().startsWith("cannot reach 127.0.0.1:"), result.message());
        LookupException thrown = org.junit.jupiter.api.Assertions.assertThrows(LookupException.class,
                () -> plugin.call(p -> p.lookup(new LookupRequest(config, "group", "", Map.of(), 5))));
        assertEquals(LookupException.Reason.UNREACHABLE, thrown.getReason(), thrown.getMessage());
    }

    @Test
    void levelsWithoutLookupAreRefusedAsInvalidInput() {
        ServiceConfig config = new ServiceConfig("kafka-it", Map.of("bootstrap.servers", "127.0.0.1:9"));
        LookupException thrown = org.junit.jupiter.api.Assertions.assertThrows(LookupException.class,
                () -> plugin.call(p -> p.lookup(new LookupRequest(config, "user", "al", Map.of(), 5))));
        assertEquals(LookupException.Reason.INVALID_INPUT, thrown.getReason());
    }
}
