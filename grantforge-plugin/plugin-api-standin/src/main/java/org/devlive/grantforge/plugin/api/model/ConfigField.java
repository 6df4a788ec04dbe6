package org.devlive.grantforge.plugin.api.model;

import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

import org.jspecify.annotations.Nullable;

/** A configuration field of a service type, checked by the host before the plugin's own checks. */
public record ConfigField(String name, String label, ConfigFieldType type, boolean mandatory, @Nullable String defaultValue,
        List<String> options, @Nullable String pattern, @Nullable String description) {

    public static final Pattern NAME = Pattern.compile("[A-Za-z][A-Za-z0-9._-]{0,127}");

    private static final Pattern INTEGER = Pattern.compile("[+-]?\\d{1,18}");

    public ConfigField {
        if (name == null || !NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("malformed config field name: " + name);
        }
        label = Names.label(label, "config field label");
        Objects.requireNonNull(type, "type");
        options = List.copyOf(options);
        if (options.isEmpty() == (type == ConfigFieldType.ENUM)) {
            throw new IllegalArgumentException("config field " + name + ": options are required for ENUM fields only");
        }
        if (new HashSet<>(options).size() != options.size()) {
            throw new IllegalArgumentException("config field " + name + ": an option is repeated");
        }
        pattern = Names.optional(pattern);
        if (pattern != null) {
            if (type != ConfigFieldType.STRING && type != ConfigFieldType.TEXT) {
                throw new IllegalArgumentException("config field " + name + ": a pattern needs a STRING or TEXT field");
            }
            try {
                Pattern.compile(pattern);
            } catch (PatternSyntaxException e) {
                throw new IllegalArgumentException("config field " + name + ": the pattern does not compile", e);
            }
        }
        description = Names.optional(description);
        if (type == ConfigFieldType.SECRET && defaultValue != null) {
            throw new IllegalArgumentException("config field " + name + ": a SECRET cannot have a default");
        }
        if (defaultValue != null && checkValue(type, options, pattern, defaultValue).isPresent()) {
            throw new IllegalArgumentException("config field " + name + ": the default does not pass the field's check");
        }
    }

    public static Builder builder(String name) {
        return new Builder(name);
    }

    public boolean sensitive() {
        return type == ConfigFieldType.SECRET;
    }

    /** Whether a value has the field's form; {@code mandatory} is not checked here. */
    public Optional<ConfigProblem.Reason> check(String value) {
        return checkValue(type, options, pattern, value);
    }

    private static Optional<ConfigProblem.Reason> checkValue(ConfigFieldType type, List<String> options, @Nullable String pattern,
            String value) {
        return switch (type) {
            case INTEGER -> INTEGER.matcher(value).matches() ? Optional.empty() : Optional.of(ConfigProblem.Reason.NOT_AN_INTEGER);
            case BOOLEAN -> "true".equals(value) || "false".equals(value)
                    ? Optional.empty() : Optional.of(ConfigProblem.Reason.NOT_A_BOOLEAN);
            case ENUM -> options.contains(value) ? Optional.empty() : Optional.of(ConfigProblem.Reason.NOT_AN_OPTION);
            case STRING, TEXT -> pattern == null || Pattern.compile(pattern).matcher(value).matches()
                    ? Optional.empty() : Optional.of(ConfigProblem.Reason.PATTERN_MISMATCH);
            case SECRET -> Optional.empty();
        };
    }

    /** Defaults: label = name, STRING, optional. */
    public static final class Builder {
        private final String name;
        private String label;
        private ConfigFieldType type = ConfigFieldType.STRING;
        private boolean mandatory;
        private @Nullable String defaultValue;
        private List<String> options = List.of();
        private @Nullable String pattern;
        private @Nullable String description;

        private Builder(String name) {
            this.name = name;
            this.label = name;
        }

        public Builder label(String label) {
            this.label = label;
            return this;
        }

        public Builder type(ConfigFieldType type) {
            this.type = type;
            return this;
        }

        public Builder mandatory() {
            this.mandatory = true;
            return this;
        }

        public Builder defaultValue(String defaultValue) {
            this.defaultValue = defaultValue;
            return this;
        }

        /** Also makes the field an ENUM. */
        public Builder options(String... options) {
            this.options = List.of(options);
            this.type = ConfigFieldType.ENUM;
            return this;
        }

        public Builder pattern(String pattern) {
            this.pattern = pattern;
            return this;
        }

        public Builder description(String description) {
            this.description = description;
            return this;
        }

        public ConfigField build() {
            return new ConfigField(name, label, type, mandatory, defaultValue, options, pattern, description);
        }
    }
}
