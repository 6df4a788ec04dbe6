package org.devlive.grantforge.plugin.api;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/** The descriptor {@value #FILE_NAME} at the root of a plugin package, as the host reads it. */
public record PluginDescriptor(String id, String version, String name, @Nullable String description, ApiVersion apiVersion,
        List<String> providers) {

    public static final String FILE_NAME = "grantforge-plugin.yaml";
    public static final Pattern ID = Pattern.compile("[a-z][a-z0-9-]{1,63}");

    private static final Pattern VERSION = Pattern.compile("\\d{1,6}\\.\\d{1,6}\\.\\d{1,6}([-+][0-9A-Za-z.-]{1,64})?");
    private static final Pattern CLASS_NAME = Pattern.compile("[A-Za-z_$][A-Za-z0-9_$]*(\\.[A-Za-z_$][A-Za-z0-9_$]*)*");

    public PluginDescriptor {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(version, "version");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(apiVersion, "apiVersion");
        providers = List.copyOf(providers);
    }

    /** Reads a parsed YAML document (a mapping); a missing or malformed key fails with an IAE naming it. */
    public static PluginDescriptor fromMap(Map<String, ?> document) {
        String id = scalar(document, "id");
        if (id == null || !ID.matcher(id).matches()) {
            throw new IllegalArgumentException("plugin id must be 2-64 lowercase letters, digits or '-': " + id);
        }
        String version = scalar(document, "version");
        if (version == null || !VERSION.matcher(version).matches()) {
            throw new IllegalArgumentException("plugin " + id + ": version must be major.minor.patch: " + version);
        }
        String name = scalar(document, "name");
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("plugin " + id + ": name is required");
        }
        String description = scalar(document, "description");
        String api = scalar(document, "apiVersion");
        if (api == null) {
            throw new IllegalArgumentException("plugin descriptor: apiVersion is required");
        }
        return new PluginDescriptor(id, version, name.strip(), description == null || description.isBlank() ? null : description.strip(),
                ApiVersion.parse(api), providers(document, id));
    }

    public boolean isCompatible() {
        return ApiVersion.CURRENT.supports(apiVersion);
    }

    private static @Nullable String scalar(Map<String, ?> document, String key) {
        Object value = document.get(key);
        if (value instanceof List<?> || value instanceof Map<?, ?>) {
            throw new IllegalArgumentException("plugin descriptor: " + key + " must be a single value");
        }
        return value == null ? null : value.toString();
    }

    private static List<String> providers(Map<String, ?> document, String id) {
        Object value = document.get("providers");
        List<String> names = new ArrayList<>();
        if (value instanceof List<?> list) {
            list.forEach(entry -> names.add(String.valueOf(entry)));
        } else if (value != null) {
            names.add(value.toString());
        }
        if (names.isEmpty()) {
            throw new IllegalArgumentException("plugin " + id + ": at least one provider is required");
        }
        for (String name : names) {
            if (!CLASS_NAME.matcher(name).matches()) {
                throw new IllegalArgumentException("plugin " + id + ": not a class name: " + name);
            }
        }
        return names;
    }
}
