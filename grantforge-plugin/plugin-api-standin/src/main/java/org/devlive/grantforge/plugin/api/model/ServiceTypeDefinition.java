package org.devlive.grantforge.plugin.api.model;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * A service type: its levels, access types, conditions and configuration fields. The canonical constructor checks
 * names and labels (IAE or NPE at once) and then gathers every structural problem into one
 * {@link DefinitionException}. Lists keep their declaration order, which the console and snapshots show.
 */
public record ServiceTypeDefinition(String name, String label, @Nullable String description, int version,
        List<ResourceDefinition> resources, List<AccessTypeDefinition> accessTypes, @Nullable DataMaskDefinition dataMask,
        @Nullable RowFilterDefinition rowFilter, List<ConditionDefinition> conditions, List<ConfigField> configFields,
        Set<String> capabilities) {

    public ServiceTypeDefinition {
        Names.name(name, "service type name");
        label = Names.label(label, "service type label");
        description = Names.optional(description);
        resources = List.copyOf(resources);
        accessTypes = List.copyOf(accessTypes);
        conditions = List.copyOf(conditions);
        configFields = List.copyOf(configFields);
        capabilities = Set.copyOf(capabilities);
        for (String capability : capabilities) {
            Names.name(capability, "capability");
        }
        List<String> problems = structuralProblems(version, resources, accessTypes, dataMask, rowFilter, conditions, configFields);
        if (!problems.isEmpty()) {
            throw new DefinitionException(name, problems);
        }
    }

    public static Builder builder(String name) {
        return new Builder(Objects.requireNonNull(name, "name"));
    }

    private static List<String> structuralProblems(int version, List<ResourceDefinition> resources,
            List<AccessTypeDefinition> accessTypes, @Nullable DataMaskDefinition dataMask, @Nullable RowFilterDefinition rowFilter,
            List<ConditionDefinition> conditions, List<ConfigField> configFields) {
        List<String> problems = new ArrayList<>();
        if (version < 1) {
            problems.add("version must be at least 1");
        }
        Map<String, ResourceDefinition> levels = new LinkedHashMap<>();
        if (resources.isEmpty()) {
            problems.add("at least one resource is required");
        }
        for (ResourceDefinition resource : resources) {
            if (levels.putIfAbsent(resource.name(), resource) != null) {
                problems.add("resource " + resource.name() + " declared twice");
            }
        }
        for (ResourceDefinition resource : resources) {
            if (resource.parent() != null && !levels.containsKey(resource.parent())) {
                problems.add("resource " + resource.name() + " has an unknown parent " + resource.parent());
            } else if (inParentCycle(resource, levels)) {
                problems.add("resource " + resource.name() + " is part of a parent cycle");
            }
        }
        Set<String> declared = new HashSet<>();
        if (accessTypes.isEmpty()) {
            problems.add("at least one access type is required");
        }
        for (AccessTypeDefinition accessType : accessTypes) {
            if (!declared.add(accessType.name())) {
                problems.add("access type " + accessType.name() + " declared twice");
            }
        }
        for (AccessTypeDefinition accessType : accessTypes) {
            for (String implied : accessType.impliedGrants()) {
                if (!declared.contains(implied)) {
                    problems.add("access type implied by " + accessType.name() + " " + implied + " is not declared");
                }
            }
        }
        for (ResourceDefinition resource : resources) {
            for (String accessType : resource.accessTypes()) {
                if (!declared.contains(accessType)) {
                    problems.add("access type of resource " + resource.name() + " " + accessType + " is not declared");
                }
            }
        }
        duplicates(conditions.stream().map(ConditionDefinition::name).toList(), "condition", problems);
        duplicates(configFields.stream().map(ConfigField::name).toList(), "config field", problems);
        if (dataMask != null) {
            for (String resource : dataMask.resources()) {
                if (!levels.containsKey(resource)) {
                    problems.add("data mask resource " + resource + " is not declared");
                }
            }
        }
        if (rowFilter != null) {
            for (String resource : rowFilter.resources()) {
                if (!levels.containsKey(resource)) {
                    problems.add("row filter resource " + resource + " is not declared");
                }
            }
        }
        return problems;
    }

    private static boolean inParentCycle(ResourceDefinition resource, Map<String, ResourceDefinition> levels) {
        Set<String> seen = new HashSet<>();
        ResourceDefinition current = resource;
        while (current != null && current.parent() != null) {
            if (!seen.add(current.name())) {
                return true;
            }
            current = levels.get(current.parent());
        }
        return false;
    }

    private static void duplicates(List<String> names, String what, List<String> problems) {
        Set<String> seen = new HashSet<>();
        for (String name : names) {
            if (!seen.add(name)) {
                problems.add(what + " " + name + " declared twice");
            }
        }
    }

    public Set<PolicyType> policyTypes() {
        Set<PolicyType> types = EnumSet.of(PolicyType.ACCESS);
        if (dataMask != null) {
            types.add(PolicyType.DATA_MASK);
        }
        if (rowFilter != null) {
            types.add(PolicyType.ROW_FILTER);
        }
        return types;
    }

    public Optional<ResourceDefinition> resource(String name) {
        return resources.stream().filter(r -> r.name().equals(name)).findFirst();
    }

    public Optional<AccessTypeDefinition> accessType(String name) {
        return accessTypes.stream().filter(a -> a.name().equals(name)).findFirst();
    }

    public List<ResourceDefinition> children(@Nullable String parent) {
        return resources.stream().filter(r -> Objects.equals(r.parent(), parent)).toList();
    }

    public List<List<String>> hierarchies() {
        List<List<String>> chains = new ArrayList<>();
        for (ResourceDefinition root : children(null)) {
            collect(new ArrayList<>(List.of(root.name())), chains);
        }
        return chains;
    }

    private void collect(List<String> chain, List<List<String>> chains) {
        chains.add(List.copyOf(chain));
        for (ResourceDefinition child : children(chain.get(chain.size() - 1))) {
            List<String> longer = new ArrayList<>(chain);
            longer.add(child.name());
            collect(longer, chains);
        }
    }

    public boolean isValidPolicyResource(List<String> levels) {
        if (!hierarchies().contains(levels)) {
            return false;
        }
        String last = levels.get(levels.size() - 1);
        return children(last).isEmpty() || resource(last).map(ResourceDefinition::validLeaf).orElse(false);
    }

    public Set<String> impliedAccessTypes(String name) {
        Set<String> result = new LinkedHashSet<>();
        if (accessType(name).isEmpty()) {
            return result;
        }
        List<String> pending = new ArrayList<>(List.of(name));
        while (!pending.isEmpty()) {
            String next = pending.remove(0);
            if (result.add(next)) {
                accessType(next).ifPresent(a -> pending.addAll(a.impliedGrants()));
            }
        }
        return result;
    }

    public List<String> accessTypesFor(String level) {
        Set<String> restriction = resource(level).map(ResourceDefinition::accessTypes).orElse(Set.of());
        return accessTypes.stream().map(AccessTypeDefinition::name)
                .filter(n -> restriction.isEmpty() || restriction.contains(n)).toList();
    }

    /** Unknown fields, missing mandatory fields and values of the wrong form; a blank value counts as absent. */
    public List<ConfigProblem> checkConfig(Map<String, String> values) {
        List<ConfigProblem> problems = new ArrayList<>();
        Map<String, ConfigField> fields = new HashMap<>();
        configFields.forEach(f -> fields.put(f.name(), f));
        values.keySet().stream().filter(k -> !fields.containsKey(k)).sorted()
                .forEach(k -> problems.add(ConfigProblem.of(k, ConfigProblem.Reason.UNKNOWN_FIELD)));
        for (ConfigField field : configFields) {
            String value = values.get(field.name());
            if (value == null || value.isBlank()) {
                if (field.mandatory() && field.defaultValue() == null) {
                    problems.add(ConfigProblem.of(field.name(), ConfigProblem.Reason.REQUIRED));
                }
            } else {
                field.check(value).ifPresent(reason -> problems.add(ConfigProblem.of(field.name(), reason)));
            }
        }
        return problems;
    }

    public Map<String, String> withDefaults(Map<String, String> values) {
        Map<String, String> result = new LinkedHashMap<>(values);
        for (ConfigField field : configFields) {
            String value = result.get(field.name());
            if ((value == null || value.isBlank()) && field.defaultValue() != null) {
                result.put(field.name(), field.defaultValue());
            }
        }
        return result;
    }

    /** Defaults: version 1, label = name; the varargs methods append. */
    public static final class Builder {
        private final String name;
        private String label;
        private @Nullable String description;
        private int version = 1;
        private final List<ResourceDefinition> resources = new ArrayList<>();
        private final List<AccessTypeDefinition> accessTypes = new ArrayList<>();
        private @Nullable DataMaskDefinition dataMask;
        private @Nullable RowFilterDefinition rowFilter;
        private final List<ConditionDefinition> conditions = new ArrayList<>();
        private final List<ConfigField> configFields = new ArrayList<>();
        private final Set<String> capabilities = new LinkedHashSet<>();

        private Builder(String name) {
            this.name = name;
            this.label = name;
        }

        public Builder label(String label) {
            this.label = label;
            return this;
        }

        public Builder description(String description) {
            this.description = description;
            return this;
        }

        public Builder version(int version) {
            this.version = version;
            return this;
        }

        public Builder resources(ResourceDefinition... resources) {
            this.resources.addAll(Arrays.asList(resources));
            return this;
        }

        public Builder accessTypes(AccessTypeDefinition... accessTypes) {
            this.accessTypes.addAll(Arrays.asList(accessTypes));
            return this;
        }

        public Builder dataMask(DataMaskDefinition dataMask) {
            this.dataMask = dataMask;
            return this;
        }

        public Builder rowFilter(RowFilterDefinition rowFilter) {
            this.rowFilter = rowFilter;
            return this;
        }

        public Builder conditions(ConditionDefinition... conditions) {
            this.conditions.addAll(Arrays.asList(conditions));
            return this;
        }

        public Builder configFields(ConfigField... configFields) {
            this.configFields.addAll(Arrays.asList(configFields));
            return this;
        }

        public Builder capabilities(String... capabilities) {
            this.capabilities.addAll(Arrays.asList(capabilities));
            return this;
        }

        public ServiceTypeDefinition build() {
            return new ServiceTypeDefinition(name, label, description, version, resources, accessTypes, dataMask, rowFilter,
                    conditions, configFields, capabilities);
        }
    }
}
