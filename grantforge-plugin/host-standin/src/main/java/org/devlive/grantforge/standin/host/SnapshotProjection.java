package org.devlive.grantforge.standin.host;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.devlive.grantforge.plugin.api.model.AccessTypeDefinition;
import org.devlive.grantforge.plugin.api.model.ConditionDefinition;
import org.devlive.grantforge.plugin.api.model.MaskTypeDefinition;
import org.devlive.grantforge.plugin.api.model.ResourceDefinition;
import org.devlive.grantforge.plugin.api.model.ServiceTypeDefinition;

/**
 * The GrantForge server's projection of a service type definition into the {@code definition} of the snapshot
 * agents download (service-plugin specification §3.1): per level its name, parent, matcher and case; per access
 * type its name and its implied grants, sorted; per condition its name, evaluator and options; the data mask's
 * mask types, or none. Arrays keep the declaration order; everything else (labels, per-level access types, lookup
 * flags, config fields) never reaches agents. Written as {@code kafka-service-type.json} is laid out: two-space
 * indents, {@code "key": value}, keys in the order of §3.1's table (the server sorts keys; content and array
 * order, which is what agents read, are the same).
 */
public final class SnapshotProjection {

    private SnapshotProjection() {
    }

    public static Map<String, Object> of(ServiceTypeDefinition definition) {
        Map<String, Object> projected = new LinkedHashMap<>();
        projected.put("resources", definition.resources().stream().map(SnapshotProjection::level).toList());
        projected.put("accessTypes", definition.accessTypes().stream().map(SnapshotProjection::accessType).toList());
        projected.put("conditions", definition.conditions().stream().map(SnapshotProjection::condition).toList());
        List<MaskTypeDefinition> maskTypes = definition.dataMask() == null ? List.of() : definition.dataMask().maskTypes();
        projected.put("maskTypes", maskTypes.stream().map(SnapshotProjection::maskType).toList());
        return projected;
    }

    private static Map<String, Object> level(ResourceDefinition level) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("name", level.name());
        json.put("parent", level.parent());
        json.put("matcher", level.matcher().name());
        json.put("caseSensitive", level.caseSensitive());
        return json;
    }

    private static Map<String, Object> accessType(AccessTypeDefinition accessType) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("name", accessType.name());
        json.put("impliedGrants", accessType.impliedGrants().stream().sorted().toList());
        return json;
    }

    private static Map<String, Object> condition(ConditionDefinition condition) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("name", condition.name());
        json.put("evaluator", condition.evaluator());
        json.put("options", new java.util.TreeMap<>(condition.options()));
        return json;
    }

    private static Map<String, Object> maskType(MaskTypeDefinition maskType) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("name", maskType.name());
        json.put("transformer", maskType.transformer());
        return json;
    }

    /** Pretty JSON as the file has it; no trailing newline. */
    public static String toJson(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, "", out);
        return out.toString();
    }

    private static void write(Object value, String indent, StringBuilder out) {
        if (value instanceof Map<?, ?> map) {
            writeEntries(new ArrayList<>(map.entrySet()), "{", "}", indent, out);
        } else if (value instanceof List<?> list) {
            writeEntries(new ArrayList<>(list), "[", "]", indent, out);
        } else if (value instanceof String text) {
            out.append('"').append(text.replace("\\", "\\\\").replace("\"", "\\\"")).append('"');
        } else {
            out.append(value); // booleans, numbers and null
        }
    }

    private static void writeEntries(List<?> entries, String open, String close, String indent, StringBuilder out) {
        if (entries.isEmpty()) {
            out.append(open).append(close);
            return;
        }
        String inner = indent + "  ";
        out.append(open).append('\n');
        for (int i = 0; i < entries.size(); i++) {
            out.append(inner);
            Object entry = entries.get(i);
            if (entry instanceof Map.Entry<?, ?> keyed) {
                write(keyed.getKey().toString(), inner, out);
                out.append(": ");
                write(keyed.getValue(), inner, out);
            } else {
                write(entry, inner, out);
            }
            out.append(i + 1 < entries.size() ? ",\n" : "\n");
        }
        out.append(indent).append(close);
    }
}
