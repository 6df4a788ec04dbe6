package org.devlive.grantforge.plugin.api.model;

import java.util.Objects;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/** One level of a service type's resources. An empty {@code accessTypes} allows every declared access type. */
public record ResourceDefinition(String name, String label, @Nullable String parent, MatcherType matcher, boolean caseSensitive,
        boolean mandatory, boolean excludesSupported, boolean recursiveSupported, boolean lookupSupported, boolean validLeaf,
        Set<String> accessTypes, boolean browseSupported) {

    public ResourceDefinition {
        Names.name(name, "resource name");
        label = Names.label(label, "resource label");
        if (parent != null) {
            Names.name(parent, "resource parent");
            if (parent.equals(name)) {
                throw new IllegalArgumentException("resource " + name + " is its own parent");
            }
        }
        Objects.requireNonNull(matcher, "matcher");
        if (recursiveSupported && matcher != MatcherType.PATH) {
            throw new IllegalArgumentException("resource " + name + " can only be recursive with the PATH matcher");
        }
        if (browseSupported && matcher != MatcherType.PATH) {
            throw new IllegalArgumentException("resource " + name + " can only be browsed with the PATH matcher");
        }
        accessTypes = Set.copyOf(accessTypes);
        for (String accessType : accessTypes) {
            Names.name(accessType, "access type of resource " + name);
        }
    }

    /** The API 1.0 shape, kept for plugins built against it. */
    @Deprecated(since = "1.1.0")
    public ResourceDefinition(String name, String label, @Nullable String parent, MatcherType matcher, boolean caseSensitive,
            boolean mandatory, boolean excludesSupported, boolean recursiveSupported, boolean lookupSupported, boolean validLeaf,
            Set<String> accessTypes) {
        this(name, label, parent, matcher, caseSensitive, mandatory, excludesSupported, recursiveSupported, lookupSupported,
                validLeaf, accessTypes, false);
    }

    public static Builder builder(String name) {
        return new Builder(Objects.requireNonNull(name, "name"));
    }

    /** Defaults: label = name, a root, WILDCARD, case-sensitive, mandatory, excludes, no recursion, lookup or browse. */
    public static final class Builder {
        private final String name;
        private String label;
        private @Nullable String parent;
        private MatcherType matcher = MatcherType.WILDCARD;
        private boolean caseSensitive = true;
        private boolean mandatory = true;
        private boolean excludesSupported = true;
        private boolean recursiveSupported;
        private boolean lookupSupported;
        private boolean validLeaf;
        private boolean browseSupported;
        private Set<String> accessTypes = Set.of();

        private Builder(String name) {
            this.name = name;
            this.label = name;
        }

        public Builder label(String label) {
            this.label = label;
            return this;
        }

        public Builder parent(String parent) {
            this.parent = parent;
            return this;
        }

        public Builder matcher(MatcherType matcher) {
            this.matcher = matcher;
            return this;
        }

        public Builder caseSensitive(boolean caseSensitive) {
            this.caseSensitive = caseSensitive;
            return this;
        }

        public Builder mandatory(boolean mandatory) {
            this.mandatory = mandatory;
            return this;
        }

        public Builder excludesSupported(boolean excludesSupported) {
            this.excludesSupported = excludesSupported;
            return this;
        }

        public Builder recursiveSupported(boolean recursiveSupported) {
            this.recursiveSupported = recursiveSupported;
            return this;
        }

        public Builder lookupSupported(boolean lookupSupported) {
            this.lookupSupported = lookupSupported;
            return this;
        }

        public Builder validLeaf(boolean validLeaf) {
            this.validLeaf = validLeaf;
            return this;
        }

        public Builder browseSupported(boolean browseSupported) {
            this.browseSupported = browseSupported;
            return this;
        }

        /** {@code Set.of}: a name repeated in one call is an IAE. */
        public Builder accessTypes(String... names) {
            this.accessTypes = Set.of(names);
            return this;
        }

        public ResourceDefinition build() {
            return new ResourceDefinition(name, label, parent, matcher, caseSensitive, mandatory, excludesSupported,
                    recursiveSupported, lookupSupported, validLeaf, accessTypes, browseSupported);
        }
    }
}
