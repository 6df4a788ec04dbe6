package org.devlive.grantforge.kafka.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.devlive.grantforge.plugin.api.ApiVersion;
import org.devlive.grantforge.plugin.api.PluginDescriptor;
import org.devlive.grantforge.plugin.api.ServiceTypeProvider;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/** The built descriptor, read as the host reads it (SnakeYAML's safe constructor, then the descriptor's rules). */
class DescriptorTest {

    private static final Path BUILT = Path.of("target/classes", PluginDescriptor.FILE_NAME);

    @Test
    void theBuiltDescriptorNamesTheKafkaPluginOfThisVersionForApi11() throws Exception {
        String text = Files.readString(BUILT);
        assertTrue(text.length() < 64 * 1024);
        // quoted: an unquoted 1.10 would be read as the number 1.1, and 1 would be refused
        assertTrue(text.contains("apiVersion: \"1.1\"\n"), text);
        Map<String, Object> document = new Yaml(new SafeConstructor(new LoaderOptions())).load(text);
        PluginDescriptor descriptor = PluginDescriptor.fromMap(document);
        assertEquals("kafka", descriptor.id());
        assertEquals(System.getProperty("project.version", "0.1.0"), descriptor.version());
        assertEquals("Apache Kafka", descriptor.name());
        assertEquals(new ApiVersion(1, 1, 0), descriptor.apiVersion());
        assertTrue(descriptor.isCompatible());
        assertEquals(List.of(KafkaProvider.class.getName()), descriptor.providers());
        assertTrue(ServiceTypeProvider.class.isAssignableFrom(Class.forName(descriptor.providers().get(0))));
    }

    @Test
    void aHostOfApi10OrOfTheNextMajorWouldNotLoadIt() {
        ApiVersion required = ApiVersion.parse("1.1");
        assertTrue(!new ApiVersion(1, 0, 0).supports(required));
        assertTrue(!new ApiVersion(2, 0, 0).supports(required));
        assertTrue(new ApiVersion(1, 2, 0).supports(required));
    }
}
