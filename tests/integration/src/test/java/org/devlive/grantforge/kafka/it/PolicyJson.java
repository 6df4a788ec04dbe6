package org.devlive.grantforge.kafka.it;

import java.util.List;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/** Policies of a snapshot (format 1) written by the tests that change one on a running node. */
final class PolicyJson {
    private PolicyJson() {
    }

    /** Policy {@code id}, NORMAL, giving {@code user} {@code access} on {@code value} of {@code level}. */
    static ObjectNode allowing(String id, String name, String level, String value, String user, String access) {
        ObjectNode policy = new ObjectMapper().createObjectNode();
        policy.put("id", id).put("name", name).put("type", "ACCESS").put("priority", "NORMAL");
        ObjectNode document = policy.putObject("document");
        ObjectNode resources = document.putObject("resources").putObject(level);
        resources.putArray("values").add(value);
        resources.put("excludes", false).put("recursive", false);
        ObjectNode item = document.putArray("allow").addObject();
        item.putArray("users").add(user);
        item.putArray("groups");
        item.putArray("roles");
        item.putArray("accessTypes").add(access);
        item.putArray("conditions");
        for (String none : List.of("allowExceptions", "deny", "denyExceptions", "validity")) {
            document.putArray(none);
        }
        return policy;
    }
}
