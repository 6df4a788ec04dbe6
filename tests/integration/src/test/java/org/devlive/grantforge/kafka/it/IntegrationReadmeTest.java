package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** {@code tests/integration/README.md} names every class of the module, so a reader finds each test and helper there. */
class IntegrationReadmeTest {
    private static final String PACKAGE = "org/devlive/grantforge/kafka/it";

    @Test
    void theReadmeNamesEveryClassOfTheModule() throws Exception {
        Path module = ItPaths.inRepo("tests/integration");
        String readme = Files.readString(module.resolve("README.md"));
        List<String> unnamed = Stream.of("src/test/java/", "src/main/java/")
                .flatMap(root -> classes(module.resolve(root + PACKAGE)))
                .filter(name -> !readme.contains("`" + name + "`"))
                .sorted()
                .toList();
        assertEquals(List.of(), unnamed, "classes README.md does not name (in backquotes)");
    }

    private static Stream<String> classes(Path dir) {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(f -> f.getFileName().toString()).filter(n -> n.endsWith(".java"))
                    .map(n -> n.substring(0, n.length() - ".java".length())).toList().stream();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
