package org.devlive.grantforge.kafka.it;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourceType;

/**
 * Kafka's benchmark ACL set as a GrantForge snapshot (format 1) of the {@code kafka} service type, in the
 * shape of {@code crates/grantforge-engine/benches/kafka_authorizer.rs} plus the deny entries:
 *
 * <ul>
 *   <li>one ACCESS policy per Kafka resource pattern, on level {@code topic} or {@code group}; a PREFIXED
 *       name {@code n} is the value {@code n*}, LITERAL {@code *} is the value {@code *};</li>
 *   <li>one allow item {@code read} naming the allowed users, one deny item {@code read} naming the users
 *       whose deny coin fired (none when no coin fired);</li>
 *   <li>host-specific entries: the same items with an {@code ip-range} condition listing the hosts (allow:
 *       every host, deny: the hosts whose coin fired).</li>
 * </ul>
 *
 * Kafka's wildcard-section hosts {@code "127.0.0" + i} are not IP addresses (Kafka compares host strings, so
 * they never match a client); {@code ip-range} refuses such values, so each becomes the distinct address
 * {@code 127.1.(i / 256).(i % 256)}, which never matches the benchmark's clients 127.0.0.1 and 127.0.0.2
 * either. The definition is {@code crates/grantforge-kafka/kafka-service-type.json}, verbatim. Further policies (a benchmark's own
 * user, say) may be given as JSON objects; they come after the set's.
 */
public final class GrantForgeSnapshot {
    private GrantForgeSnapshot() {
    }

    /** Writes the snapshot with these further policies (JSON objects) after the set's; returns its size in bytes. */
    public static long write(Path file, int resourceCount, int aclCount, double denyPercentage, String... furtherPolicies) {
        String definition = serviceDefinition();
        try (Writer out = new BufferedWriter(Files.newBufferedWriter(file, StandardCharsets.UTF_8), 1 << 20)) {
            out.write("{\"format\":1,\"service\":\"kafka-bench\",\"serviceType\":\"kafka\",\"typeVersion\":1,"
                + "\"serviceEnabled\":true,\"policyVersion\":1,\"definition\":");
            out.write(definition);
            out.write(",\"policies\":[");
            final int[] id = {0};
            KafkaAclSet.generate(resourceCount, aclCount, denyPercentage, new KafkaAclSet.Sink() {
                @Override
                public void pattern(ResourceType type, String name, PatternType patternType, List<String> allowUsers,
                                    List<String> denyUsers, List<String> allowHosts, List<String> denyHosts) {
                    try {
                        id[0]++;
                        if (id[0] > 1) {
                            out.write(',');
                        }
                        policy(out, id[0], type, name, patternType, allowUsers, denyUsers, allowHosts, denyHosts);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                }
            });
            for (String policy : furtherPolicies) {
                if (++id[0] > 1) {
                    out.write(',');
                }
                out.write(policy);
            }
            out.write("],\"roles\":{},\"groups\":{}}");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        try {
            return Files.size(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Writes a snapshot (format 1, policy version 1, unsigned as offline files may be) of these policies alone. */
    public static void writePolicies(Path file, String service, List<String> policies) {
        String snapshot = "{\"format\":1,\"service\":\"" + service + "\",\"serviceType\":\"kafka\",\"typeVersion\":1,"
            + "\"serviceEnabled\":true,\"policyVersion\":1,\"definition\":" + serviceDefinition() + ",\"policies\":["
            + String.join(",", policies) + "],\"roles\":{},\"groups\":{}}";
        try {
            Files.writeString(file, snapshot, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code crates/grantforge-kafka/kafka-service-type.json}, which the build puts in the harness JAR. */
    private static String serviceDefinition() {
        try (InputStream in = GrantForgeSnapshot.class.getResourceAsStream("/grantforge-it/kafka-service-type.json")) {
            if (in == null) {
                throw new IllegalStateException("resource grantforge-it/kafka-service-type.json is missing from the harness");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void policy(Writer out, int id, ResourceType type, String name, PatternType patternType,
                               List<String> allowUsers, List<String> denyUsers, List<String> allowHosts,
                               List<String> denyHosts) throws IOException {
        String level = type == ResourceType.GROUP ? "group" : "topic";
        String value = patternType == PatternType.PREFIXED ? name + "*" : name;
        out.write("{\"id\":\"" + id + "\",\"name\":\"acl-" + id + "\",\"type\":\"ACCESS\",\"priority\":\"NORMAL\","
            + "\"document\":{\"resources\":{\"" + level + "\":{\"values\":[\"" + value + "\"],\"excludes\":false,"
            + "\"recursive\":false}},\"allow\":[");
        boolean hostSpecific = allowHosts != null;
        item(out, allowUsers, hostSpecific ? addresses(allowHosts) : null);
        out.write("],\"allowExceptions\":[],\"deny\":[");
        boolean anyDeny = hostSpecific ? !denyHosts.isEmpty() : !denyUsers.isEmpty();
        if (anyDeny) {
            item(out, denyUsers, hostSpecific ? addresses(denyHosts) : null);
        }
        out.write("],\"denyExceptions\":[],\"validity\":[]}}");
    }

    private static void item(Writer out, List<String> users, List<String> ipRange) throws IOException {
        out.write("{\"users\":");
        strings(out, users);
        out.write(",\"groups\":[],\"roles\":[],\"accessTypes\":[\"read\"],\"conditions\":[");
        if (ipRange != null) {
            out.write("{\"type\":\"ip-range\",\"values\":");
            strings(out, ipRange);
            out.write('}');
        }
        out.write("],\"maskType\":null,\"maskValue\":null,\"rowFilter\":null}");
    }

    private static void strings(Writer out, List<String> values) throws IOException {
        out.write('[');
        for (int i = 0; i < values.size(); i++) {
            if (i > 0) {
                out.write(',');
            }
            out.write('"');
            out.write(values.get(i));
            out.write('"');
        }
        out.write(']');
    }

    /** Kafka host strings as {@code ip-range} values (see the class comment). */
    static List<String> addresses(List<String> hosts) {
        List<String> out = new ArrayList<String>(hosts.size());
        for (String host : hosts) {
            out.add(address(host));
        }
        return out;
    }

    static String address(String host) {
        if (host.chars().filter(c -> c == '.').count() == 3) {
            return host;
        }
        int i = Integer.parseInt(host.substring("127.0.0".length()));
        return "127.1." + (i >> 8) + "." + (i & 255);
    }
}
