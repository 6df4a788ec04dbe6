package org.devlive.grantforge.plugin.api.model;

import java.util.Map;

public record ConditionDefinition(String name, String label, String evaluator, Map<String, String> options) {

    public ConditionDefinition {
        Names.name(name, "condition name");
        label = Names.label(label, "condition label");
        Names.name(evaluator, "condition evaluator");
        options = Map.copyOf(options);
    }

    public static ConditionDefinition of(String name, String label, String evaluator) {
        return new ConditionDefinition(name, label, evaluator, Map.of());
    }
}
