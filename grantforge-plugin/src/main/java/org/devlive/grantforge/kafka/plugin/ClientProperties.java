package org.devlive.grantforge.kafka.plugin;

import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/** The {@code client.properties} field: {@code key=value} per line; blank lines and {@code #} comments are skipped. */
final class ClientProperties {

    private ClientProperties() {
    }

    static Map<String, String> parse(@Nullable String text) {
        Map<String, String> properties = new LinkedHashMap<>();
        if (text == null) {
            return properties;
        }
        for (String line : text.split("\\R")) {
            String stripped = line.strip();
            int equals = stripped.indexOf('=');
            if (stripped.isEmpty() || stripped.startsWith("#") || equals < 1) {
                continue; // validateConfig reports malformed lines; the server saves nothing it refused
            }
            properties.put(stripped.substring(0, equals).strip(), stripped.substring(equals + 1).strip());
        }
        return properties;
    }
}
