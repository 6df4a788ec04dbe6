package org.devlive.grantforge.kafka.it;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

/** Remote JMX of a node: the JVM flags to open it on loopback, and a reader for MBean attributes. */
public final class Jmx {
    private final int port;

    private Jmx(int port) {
        this.port = port;
    }

    /** A free loopback port for a node's JMX. */
    public static Jmx onFreePort() {
        return new Jmx(Ports.free());
    }

    /** The port, as {@code explain --disagreements --jmx 127.0.0.1:PORT} takes it. */
    public int port() {
        return port;
    }

    /** The node's JVM flags: JMX without authentication on loopback (test equipment only). */
    public List<String> jvmArgs() {
        return List.of("-Dcom.sun.management.jmxremote.port=" + port, "-Dcom.sun.management.jmxremote.rmi.port=" + port,
            "-Dcom.sun.management.jmxremote.authenticate=false", "-Dcom.sun.management.jmxremote.ssl=false",
            "-Dcom.sun.management.jmxremote.host=127.0.0.1", "-Djava.rmi.server.hostname=127.0.0.1");
    }

    /** Every attribute of every MBean matching {@code pattern}: name → (attribute → value). */
    public Map<String, Map<String, Object>> read(String pattern, String... attributes) throws Exception {
        JMXServiceURL url = new JMXServiceURL("service:jmx:rmi:///jndi/rmi://127.0.0.1:" + port + "/jmxrmi");
        try (JMXConnector connector = JMXConnectorFactory.connect(url)) {
            MBeanServerConnection connection = connector.getMBeanServerConnection();
            Map<String, Map<String, Object>> result = new TreeMap<>();
            for (ObjectName name : connection.queryNames(new ObjectName(pattern), null)) {
                Map<String, Object> values = new TreeMap<>();
                for (String attribute : attributes) {
                    values.put(attribute, connection.getAttribute(name, attribute));
                }
                result.put(name.toString(), values);
            }
            return result;
        }
    }
}
