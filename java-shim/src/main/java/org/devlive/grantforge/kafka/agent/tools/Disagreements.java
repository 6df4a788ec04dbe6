package org.devlive.grantforge.kafka.agent.tools;

import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.management.JMException;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanInfo;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

/**
 * {@code explain --disagreements --jmx HOST:PORT}: what shadow or compare mode has seen on one node, read from its
 * agent's MBean (the metrics {@code shadow-*}): the counters, then the most frequent disagreements by principal,
 * resource and operation, each with its count and the GrantForge policy and the Kafka ACL behind the two answers.
 * Exit code 1 while the table holds any disagreement (they age out once the two sides agree), 0 when it holds none,
 * 2 on a usage error, 3 when the node cannot be read:
 * "shadow until the counters stay at zero" can be scripted.
 */
public final class Disagreements {
    static final String OPTION = "--disagreements";
    static final String USAGE = "usage: explain " + OPTION + " --jmx HOST:PORT\n"
        + "  what shadow or compare mode counted on the node whose JMX listens at HOST:PORT (the agent's MBean\n"
        + "  org.devlive.grantforge.kafka:type=Agent): agreements, disagreements by kind, and the most frequent\n"
        + "  disagreements with the policy and the ACL behind them. Exit code 1 while the table holds any.";
    /** The native metrics' attributes of shadow and compare modes start so (crates/grantforge-agent/src/metrics.rs). */
    private static final String SHADOW = "Shadow";
    /** ...and their descriptions so: the rest says what each counts. */
    private static final String SHADOW_WORDS = "Shadow and compare modes: ";
    private static final String TABLE = "ShadowDisagreements";

    private Disagreements() {
    }

    static boolean asked(String[] args) {
        return java.util.Arrays.asList(args).contains(OPTION);
    }

    /** @param args the arguments after {@code explain} */
    static int run(String[] args, PrintStream out, PrintStream err) {
        String jmx = null;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--jmx") && i + 1 < args.length) {
                jmx = args[++i];
            } else if (args[i].equals("--help") || args[i].equals("-h")) {
                out.println(USAGE);
                return 0;
            } else if (!args[i].equals(OPTION)) {
                err.println("explain: " + OPTION + " does not take `" + args[i] + "`\n" + USAGE);
                return 2;
            }
        }
        if (jmx == null) {
            err.println("explain: " + OPTION + " needs --jmx HOST:PORT, the node's JMX (Kafka's JMX_PORT)\n" + USAGE);
            return 2;
        }
        try {
            return print(read(jmx), jmx, out, err);
        } catch (IOException | JMException | RuntimeException e) {
            err.println("explain: cannot read the agent's MBean at " + jmx + ": " + e);
            return 3;
        }
    }

    /** Each agent's attributes (the broker's and the controller's MBeans of one node read one agent: shown once). */
    private static Map<String, Map<String, Object>> read(String jmx) throws IOException, JMException {
        JMXServiceURL url = new JMXServiceURL("service:jmx:rmi:///jndi/rmi://" + jmx + "/jmxrmi");
        Map<String, Map<String, Object>> agents = new LinkedHashMap<String, Map<String, Object>>();
        try (JMXConnector connector = JMXConnectorFactory.connect(url)) {
            MBeanServerConnection connection = connector.getMBeanServerConnection();
            for (ObjectName name : connection.queryNames(new ObjectName("org.devlive.grantforge.kafka:type=Agent,*"), null)) {
                String instance = name.getKeyProperty("instance");
                instance = instance != null && instance.startsWith("\"") ? ObjectName.unquote(instance) : instance;
                if (agents.containsKey(instance)) {
                    continue;
                }
                Map<String, Object> values = new LinkedHashMap<String, Object>();
                for (MBeanAttributeInfo counter : counters(connection.getMBeanInfo(name))) {
                    values.put(counterLine(counter), connection.getAttribute(name, counter.getName()));
                }
                values.put(TABLE, connection.getAttribute(name, TABLE));
                agents.put(instance, values);
            }
        }
        return agents;
    }

    /**
     * The counters of shadow and compare modes as the native library lists them (numbers named {@code Shadow*}): no
     * name is written here, so a counter the agent adds is shown, and one renamed is never asked for in vain.
     */
    public static List<MBeanAttributeInfo> counters(MBeanInfo info) {
        List<MBeanAttributeInfo> counters = new ArrayList<MBeanAttributeInfo>();
        for (MBeanAttributeInfo attribute : info.getAttributes()) {
            if (attribute.getName().startsWith(SHADOW) && "long".equals(attribute.getType())) {
                counters.add(attribute);
            }
        }
        return counters;
    }

    /** How a counter's value is introduced: its attribute, and what it counts in the native description's words. */
    static String counterLine(MBeanAttributeInfo counter) {
        String words = counter.getDescription() == null ? "" : counter.getDescription();
        words = words.startsWith(SHADOW_WORDS) ? words.substring(SHADOW_WORDS.length()) : words;
        return counter.getName() + " (" + words + ")";
    }

    private static int print(Map<String, Map<String, Object>> agents, String jmx, PrintStream out, PrintStream err) {
        if (agents.isEmpty()) {
            err.println("explain: no GrantForge agent at " + jmx + " (no MBean org.devlive.grantforge.kafka:type=Agent)");
            return 3;
        }
        boolean any = false;
        for (Map.Entry<String, Map<String, Object>> agent : agents.entrySet()) {
            Map<String, Object> values = agent.getValue();
            out.println("agent " + agent.getKey() + ":");
            for (Map.Entry<String, Object> counter : values.entrySet()) {
                if (!counter.getKey().equals(TABLE)) {
                    out.println("  " + counter.getValue() + " " + counter.getKey());
                }
            }
            String table = String.valueOf(values.get(TABLE));
            // the table, not the counters since start: its disagreements age out once the two sides agree
            any |= !table.isEmpty();
            if (!table.isEmpty()) {
                out.print(aligned(table));
            }
        }
        return any ? 1 : 0;
    }

    /** The tab-separated table, its columns padded (the last one, the Kafka ACL, as it is). */
    static String aligned(String table) {
        List<String[]> rows = new ArrayList<String[]>();
        int columns = 0;
        for (String line : table.split("\n")) {
            String[] cells = line.split("\t", -1);
            rows.add(cells);
            columns = Math.max(columns, cells.length);
        }
        int[] widths = new int[columns];
        for (String[] row : rows) {
            for (int i = 0; i < row.length - 1; i++) {
                widths[i] = Math.max(widths[i], row[i].length());
            }
        }
        StringBuilder out = new StringBuilder();
        for (String[] row : rows) {
            for (int i = 0; i < row.length; i++) {
                String cell = row[i];
                out.append(cell);
                if (i < row.length - 1) {
                    for (int pad = cell.length(); pad < widths[i] + 2; pad++) {
                        out.append(' ');
                    }
                }
            }
            out.append('\n');
        }
        return out.toString();
    }
}
