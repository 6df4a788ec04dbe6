package org.devlive.grantforge.kafka.it;

import java.nio.file.Files;
import java.nio.file.Path;

/** The plugin jar the build made ({@code grantforge-plugin/target}), named by the system property the pom sets. */
final class PluginJar {
    static final String PROPERTY = "grantforge.plugin.jar";

    private PluginJar() {
    }

    static Path path() {
        String jar = System.getProperty(PROPERTY);
        if (jar == null || !Files.isRegularFile(Path.of(jar))) {
            throw new IllegalStateException("no plugin jar at " + jar + " (system property " + PROPERTY
                    + "): build it first, mvn -B -pl grantforge-plugin -am package");
        }
        return Path.of(jar);
    }
}
