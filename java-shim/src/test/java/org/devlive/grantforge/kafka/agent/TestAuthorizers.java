package org.devlive.grantforge.kafka.agent;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/** The shim's authorizer as a broker configures it in offline mode, for the tests against the real library. */
public final class TestAuthorizers {
    private TestAuthorizers() {
    }

    /** Configured on {@code policies}, super user {@code User:admin}, node 1, plus {@code extra} settings. */
    public static GrantForgeKafkaAuthorizer offline(Path policies, Map<String, ?> extra) {
        Map<String, Object> configs = new HashMap<>();
        configs.put("grantforge.policy.file", policies.toString());
        configs.put("super.users", "User:admin");
        configs.put("node.id", 1);
        configs.putAll(extra);
        GrantForgeKafkaAuthorizer authorizer = new GrantForgeKafkaAuthorizer();
        authorizer.configure(configs);
        return authorizer;
    }
}
