package org.devlive.grantforge.kafka.agent;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import javax.management.Attribute;
import javax.management.AttributeList;
import javax.management.AttributeNotFoundException;
import javax.management.DynamicMBean;
import javax.management.JMException;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanInfo;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import javax.management.ReflectionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.devlive.grantforge.kafka.agent.jni.NativeAgent;
import org.devlive.grantforge.kafka.agent.jni.Wire;

/**
 * The native agent's metrics in JMX, under
 * {@code org.devlive.grantforge.kafka:type=Agent,instance=<instance>,role=<broker|controller>}: one read-only
 * attribute per metric the native library lists ({@link NativeAgent#stats} describes itself: name, attribute,
 * description, value), so this class knows no metric by name. Every read asks the native library (one JNI call),
 * so JMX always shows the live values. Works on every Kafka version (plain JMX, nothing of Kafka's metrics API);
 * {@code MonitorableGrantForgeKafkaAuthorizer} publishes the same list as Kafka plugin metrics.
 *
 * <p>The payload's layout and golden bytes: {@code crates/grantforge-jni/src/agent_metrics.rs}; the list of
 * metrics: {@code crates/grantforge-agent/src/metrics.rs}.
 */
final class AgentMetrics implements DynamicMBean {
    static final String DOMAIN = "org.devlive.grantforge.kafka";
    private static final Logger LOG = LoggerFactory.getLogger(AgentMetrics.class);
    private static final byte NUMBER = 0;
    private static final byte TEXT = 1;

    /** One metric as the native library lists it, with its value in one reading. */
    static final class Metric {
        /** Kafka's plugin metric name, in kebab case ({@code decisions-allowed}). */
        final String name;
        /** The MBean attribute, in camel case ({@code DecisionsAllowed}). */
        final String attribute;
        final String description;
        /** A String (JMX type {@code java.lang.String}), else a Long (JMX type {@code long}). */
        final boolean text;
        final Object value;

        Metric(String name, String attribute, String description, boolean text, Object value) {
            this.name = name;
            this.attribute = attribute;
            this.description = description;
            this.text = text;
            this.value = value;
        }

        /** What the metric shows when the native library answers nothing (a closed agent): -1, or empty. */
        Object absent() {
            return text ? (Object) "" : (Object) (-1L);
        }
    }

    /** One reading of the metrics payload. */
    static final class Reading {
        /** The agent's instance name: it names the MBean, and is no metric. */
        final String instance;
        final List<Metric> metrics;

        Reading(String instance, List<Metric> metrics) {
            this.instance = instance;
            this.metrics = metrics;
        }
    }

    /** Decodes a metrics payload: {@code str instance, u32 count, then per metric str name, str attribute, str description, u8 kind, value}. */
    static Reading decode(byte[] payload) {
        ByteBuffer in = ByteBuffer.wrap(payload).order(ByteOrder.LITTLE_ENDIAN);
        String instance = Wire.readString(in);
        int count = in.getInt();
        List<Metric> metrics = new ArrayList<Metric>();
        for (int i = 0; i < count; i++) {
            String name = Wire.readString(in);
            String attribute = Wire.readString(in);
            String description = Wire.readString(in);
            byte kind = in.get();
            if (kind == NUMBER) {
                metrics.add(new Metric(name, attribute, description, false, in.getLong()));
            } else if (kind == TEXT) {
                metrics.add(new Metric(name, attribute, description, true, Wire.readString(in)));
            } else {
                throw new IllegalArgumentException("metric " + name + " is of unknown kind " + kind);
            }
        }
        return new Reading(instance, Collections.unmodifiableList(metrics));
    }

    /** The payload of {@link NativeAgent#stats}, null when the native library answers nothing. */
    private final Supplier<byte[]> source;
    /** The metrics as the first reading listed them (the list never changes while the library is loaded). */
    private final List<Metric> listed;
    private final String instance;
    private final MBeanInfo info;
    private ObjectName name;

    /** Reads the payloads {@code source} gives: the native agent's, or (tests) fixed bytes. */
    AgentMetrics(Supplier<byte[]> source) {
        this(source, "The GrantForge agent's metrics. Counters count since the broker started; the snapshot attributes "
            + "are -1 while there is none.");
    }

    /** Reads the payloads {@code source} gives; {@code description} is the MBean's. */
    AgentMetrics(Supplier<byte[]> source, String description) {
        this.source = source;
        Reading first = read();
        this.listed = first == null ? Collections.<Metric>emptyList() : first.metrics;
        this.instance = first == null ? "" : first.instance;
        MBeanAttributeInfo[] attributes = new MBeanAttributeInfo[listed.size()];
        for (int i = 0; i < attributes.length; i++) {
            Metric metric = listed.get(i);
            attributes[i] = new MBeanAttributeInfo(metric.attribute, metric.text ? String.class.getName() : "long",
                metric.description, true, false, false);
        }
        this.info = new MBeanInfo(AgentMetrics.class.getName(), description, attributes, null, null, null);
    }

    /** Reads the metrics of an agent without registering an MBean. */
    static AgentMetrics reader(long handle) {
        return new AgentMetrics(payloadOf(handle));
    }

    private static Supplier<byte[]> payloadOf(final long handle) {
        return new Supplier<byte[]>() {
            @Override
            public byte[] get() {
                return NativeAgent.stats(handle);
            }
        };
    }

    /** The metrics the native library lists, with their values when this reader was made. */
    List<Metric> listed() {
        return listed;
    }

    /** The live value of the metric named {@code name} (kebab case): a Long or a String; null if none is so named. */
    Object value(String name) {
        Reading reading = read();
        for (int i = 0; i < listed.size(); i++) {
            if (listed.get(i).name.equals(name)) {
                return valueIn(reading, listed.get(i));
            }
        }
        return null;
    }

    private static Object valueIn(Reading reading, Metric metric) {
        if (reading != null) {
            for (Metric now : reading.metrics) {
                if (now.name.equals(metric.name)) {
                    return now.value;
                }
            }
        }
        return metric.absent();
    }

    /** Registers the metrics of one authorizer (role broker or controller); null if JMX refuses. */
    static AgentMetrics register(long handle, String role) {
        return register(new AgentMetrics(payloadOf(handle)), role);
    }

    /** Registers {@code metrics} under the role; null if JMX refuses. */
    static AgentMetrics register(AgentMetrics metrics, String role) {
        return registerAs(metrics, "type=Agent,instance=" + ObjectName.quote(metrics.instance) + ",role=" + role);
    }

    /**
     * Registers {@code metrics} as {@code org.devlive.grantforge.kafka:<keys>} (replacing an MBean of that name); null
     * if JMX refuses.
     */
    static AgentMetrics registerAs(AgentMetrics metrics, String keys) {
        synchronized (REGISTERED) {
            try {
                ObjectName name = new ObjectName(DOMAIN + ":" + keys);
                MBeanServer server = ManagementFactory.getPlatformMBeanServer();
                if (server.isRegistered(name)) {
                    server.unregisterMBean(name);
                }
                server.registerMBean(metrics, name);
                metrics.name = name;
                REGISTERED.put(name, metrics);
                return metrics;
            } catch (JMException | RuntimeException e) {
                LOG.warn("GrantForge agent metrics are not in JMX: {}", e.toString());
                return null;
            }
        }
    }

    /** Unregisters this MBean, unless another has taken its name since (two authorizers of one name in a JVM). */
    void unregister() {
        synchronized (REGISTERED) {
            if (name == null || !REGISTERED.remove(name, this)) {
                return;
            }
            try {
                if (ManagementFactory.getPlatformMBeanServer().isRegistered(name)) {
                    ManagementFactory.getPlatformMBeanServer().unregisterMBean(name);
                }
            } catch (JMException e) {
                LOG.debug("unregistering {} failed: {}", name, e.toString());
            }
        }
    }

    /** Which metrics each name of this class loader's MBeans stands for: only its owner unregisters it. */
    private static final Map<ObjectName, AgentMetrics> REGISTERED = new HashMap<ObjectName, AgentMetrics>();

    /** One reading, or null when the native library answers nothing. */
    private Reading read() {
        byte[] payload = source.get();
        return payload == null ? null : decode(payload);
    }

    private Metric attribute(String attribute) throws AttributeNotFoundException {
        for (Metric metric : listed) {
            if (metric.attribute.equals(attribute)) {
                return metric;
            }
        }
        throw new AttributeNotFoundException("no attribute " + attribute);
    }

    @Override
    public Object getAttribute(String attribute) throws AttributeNotFoundException {
        Metric metric = attribute(attribute);
        return valueIn(read(), metric);
    }

    /** All in one reading. */
    @Override
    public AttributeList getAttributes(String[] attributes) {
        Reading reading = read();
        AttributeList values = new AttributeList();
        for (String attribute : attributes) {
            try {
                values.add(new Attribute(attribute, valueIn(reading, attribute(attribute))));
            } catch (AttributeNotFoundException e) {
                // As a standard MBean: an unknown attribute is left out of the list.
            }
        }
        return values;
    }

    @Override
    public void setAttribute(Attribute attribute) throws AttributeNotFoundException {
        throw new AttributeNotFoundException("the metrics are read-only: " + attribute.getName());
    }

    @Override
    public AttributeList setAttributes(AttributeList attributes) {
        return new AttributeList();
    }

    @Override
    public Object invoke(String actionName, Object[] params, String[] signature) throws ReflectionException {
        throw new ReflectionException(new NoSuchMethodException(actionName), "the metrics have no operation");
    }

    @Override
    public MBeanInfo getMBeanInfo() {
        return info;
    }
}
