package org.devlive.grantforge.kafka.agent.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Paths;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.Test;
import org.devlive.grantforge.kafka.agent.GrantForgeKafkaAuthorizer;
import org.devlive.grantforge.kafka.agent.jni.NativeLibraryLoader;

/** {@code java -jar <agent jar> explain} goes through this native call. */
class ExplainTest {
    private static final String FIXTURE = Paths.get(System.getProperty("grantforge.fixtures", "../tests/fixtures"),
        "snapshots", "e2e.json").toString();

    private static String[] explain(String... args) {
        NativeLibraryLoader.load(null);
        ExplainCodec.Answer answer = ExplainCodec.run(java.util.Arrays.asList(args), new byte[0]);
        return new String[] {String.valueOf(answer.exitCode), answer.output};
    }

    @Test
    void explainsADecisionThroughTheNativeLibrary() {
        String[] answer = explain("--snapshot", FIXTURE, "--principal", "User:alice", "--operation", "WRITE", "--topic", "payments");
        assertEquals("0", answer[0]);
        assertTrue(answer[1].contains("decision: DENIED by policy 5 \"no payments for alice\" (NORMAL)"), answer[1]);
    }

    /**
     * explain lists the ACL rows of a resource with the agent's Rust rule for Kafka's MATCH filter;
     * the broker answers {@code acls(filter)} with Kafka's own {@code AclBindingFilter}: for every
     * name, both list the same rows.
     */
    @Test
    void explainListsTheRowsKafkasMatchFilterListsForTheResource() {
        Map<String, Object> configs = new HashMap<>();
        configs.put("grantforge.policy.file", FIXTURE);
        configs.put("node.id", 1);
        GrantForgeKafkaAuthorizer authorizer = new GrantForgeKafkaAuthorizer();
        authorizer.configure(configs);
        try {
            Pattern row = Pattern.compile("\\{\"host\":\"\\*\",\"name\":\"([^\"]*)\",\"operation\":\"([A-Z_]+)\",\"patternType\":\"([A-Z]+)\",\"permission\":\"([A-Z]+)\",\"principal\":\"([^\"]*)\",\"resourceType\":\"topic\"\\}");
            for (String topic : new String[] {"orders", "orders-eu", "payments", "other", "*"}) {
                TreeSet<String> kafkas = new TreeSet<>();
                AclBindingFilter match = new AclBindingFilter(new ResourcePatternFilter(ResourceType.TOPIC, topic, PatternType.MATCH), AccessControlEntryFilter.ANY);
                for (AclBinding b : authorizer.acls(match)) {
                    kafkas.add(b.pattern().name() + " " + b.entry().operation() + " " + b.pattern().patternType() + " "
                        + b.entry().permissionType() + " " + b.entry().principal());
                }
                String[] answer = explain("--snapshot", FIXTURE, "--json", "--principal", "User:alice", "--operation", "READ", "--topic", topic);
                assertEquals("0", answer[0], answer[1]);
                TreeSet<String> explains = new TreeSet<>();
                Matcher m = row.matcher(answer[1]);
                while (m.find()) {
                    explains.add(m.group(1) + " " + m.group(2) + " " + m.group(3) + " " + m.group(4) + " " + m.group(5));
                }
                assertTrue(!kafkas.isEmpty() || topic.equals("other") || topic.equals("*"), "the fixture lists rows for " + topic);
                assertEquals(kafkas, explains, "topic " + topic + ": " + answer[1]);
            }
        } finally {
            authorizer.close();
        }
    }

    @Test
    void usageErrorsExitWithTwo() {
        assertEquals("2", explain("--snapshot", FIXTURE)[0]);
    }
}
