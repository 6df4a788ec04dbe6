package org.devlive.grantforge.kafka.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.devlive.grantforge.plugin.api.ServiceConfig;
import org.devlive.grantforge.plugin.api.model.ConfigProblem;
import org.devlive.grantforge.plugin.api.model.ServiceTypeDefinition;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code validateConfig}: every rule beyond the fields' own checks, on configurations as the server hands them over
 * (the field checks passed, defaults filled in). Each problem is INVALID on the field to change.
 */
class ConfigValidationTest {

    private static final ServiceTypeDefinition DEFINITION = new KafkaProvider().definition();

    private static Map<String, String> scram() {
        Map<String, String> values = new HashMap<>(Map.of("bootstrap.servers", "broker-1:9093, broker-2:9093",
                "security.protocol", "SASL_SSL", "sasl.mechanism", "SCRAM-SHA-512", "sasl.username", "grantforge",
                "sasl.password", "s3cret", "ssl.truststore.location", "/etc/grantforge/kafka-ca.p12",
                "ssl.truststore.type", "PKCS12", "ssl.truststore.password", "store-pass"));
        return values;
    }

    private static Map<String, String> with(Map<String, String> base, String... keysAndValues) {
        Map<String, String> values = new HashMap<>(base);
        for (int i = 0; i < keysAndValues.length; i += 2) {
            if (keysAndValues[i + 1] == null) {
                values.remove(keysAndValues[i]);
            } else {
                values.put(keysAndValues[i], keysAndValues[i + 1]);
            }
        }
        return values;
    }

    private static List<ConfigProblem> problems(Map<String, String> values) {
        Map<String, String> effective = DEFINITION.withDefaults(values);
        assertEquals(List.of(), DEFINITION.checkConfig(effective), "the fields' own checks pass first");
        return new KafkaProvider().validateConfig(new ServiceConfig("kafka-prod", effective));
    }

    static Stream<Arguments> accepted() {
        Map<String, String> pemMtls = Map.of("bootstrap.servers", "[::1]:9093", "security.protocol", "SSL",
                "ssl.truststore.type", "PEM", "ssl.truststore.certificates", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
                "ssl.keystore.type", "PEM", "ssl.keystore.certificate.chain", "-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----",
                "ssl.keystore.key", "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----");
        return Stream.of(
                Arguments.of("plaintext with one broker", Map.of("bootstrap.servers", "localhost:9092")),
                Arguments.of("SASL_SSL with SCRAM and a trust store", scram()),
                Arguments.of("mutual TLS from PEM text", pemMtls),
                Arguments.of("a stored SASL password after switching to SSL",
                        with(scram(), "security.protocol", "SSL", "sasl.username", null)),
                Arguments.of("a stored PEM key after switching to a JKS key store",
                        with(scram(), "ssl.keystore.key", "-----BEGIN PRIVATE KEY-----", "ssl.keystore.location", "/k.jks",
                                "ssl.keystore.password", "kp")),
                Arguments.of("a whole JAAS line instead of user name and password",
                        with(scram(), "sasl.username", null, "sasl.password", null, "sasl.jaas.config",
                                "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"a\" password=\"b\";")),
                Arguments.of("GSSAPI with a keytab", Map.of("bootstrap.servers", "kafka:9094", "security.protocol", "SASL_PLAINTEXT",
                        "sasl.mechanism", "GSSAPI", "kerberos.principal", "grantforge@EXAMPLE.COM", "kerberos.keytab", "/etc/gf.keytab")),
                Arguments.of("client properties with comments and blank lines",
                        with(scram(), "client.properties", "# tuning\n\nclient.dns.lookup=use_all_dns_ips\nretries = 3")),
                Arguments.of("the shortest timeout", with(scram(), "request.timeout.ms", "1000")),
                Arguments.of("the longest timeout", with(scram(), "request.timeout.ms", "8000")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("accepted")
    void aSoundConfigurationHasNoProblems(String what, Map<String, String> values) {
        assertEquals(List.of(), problems(values));
    }

    static Stream<Arguments> refused() {
        return Stream.of(
                Arguments.of("a port out of range", with(scram(), "bootstrap.servers", "broker-1:70000"), "bootstrap.servers", "70000"),
                Arguments.of("a port of zero", with(scram(), "bootstrap.servers", "broker-1:0"), "bootstrap.servers", "broker-1:0"),
                Arguments.of("SCRAM without a password", with(scram(), "sasl.password", null), "sasl.password", "needs a password"),
                Arguments.of("PLAIN without a user name", with(scram(), "sasl.mechanism", "PLAIN", "sasl.username", null),
                        "sasl.username", "needs a user name"),
                Arguments.of("GSSAPI without a keytab", with(scram(), "sasl.mechanism", "GSSAPI", "kerberos.principal", "gf@R"),
                        "kerberos.principal", "kerberos.keytab"),
                Arguments.of("OAUTHBEARER without a JAAS line", with(scram(), "sasl.mechanism", "OAUTHBEARER"),
                        "sasl.jaas.config", "OAUTHBEARER needs"),
                Arguments.of("a trust store given twice", with(scram(), "ssl.truststore.type", "PEM", "ssl.truststore.certificates", "-----BEGIN"),
                        "ssl.truststore.certificates", "not both"),
                Arguments.of("a PEM trust store without certificates", with(scram(), "ssl.truststore.type", "PEM", "ssl.truststore.location", null),
                        "ssl.truststore.certificates", "PEM"),
                Arguments.of("PEM certificates in a JKS trust store",
                        with(scram(), "ssl.truststore.location", null, "ssl.truststore.certificates", "-----BEGIN"),
                        "ssl.truststore.type", "trust store type PEM"),
                Arguments.of("a PEM key store without its key",
                        with(scram(), "ssl.keystore.type", "PEM", "ssl.keystore.certificate.chain", "-----BEGIN"),
                        "ssl.keystore.key", "both"),
                Arguments.of("a timeout the host's limit cannot hold", with(scram(), "request.timeout.ms", "9000"),
                        "request.timeout.ms", "10 s"),
                Arguments.of("a timeout too short to connect", with(scram(), "request.timeout.ms", "999"), "request.timeout.ms", "1000"),
                Arguments.of("a client property line without '='", with(scram(), "client.properties", "retries 3"),
                        "client.properties", "line 1 is not key=value"),
                Arguments.of("a client property with a field of its own",
                        with(scram(), "client.properties", "retries=3\nsasl.mechanism=PLAIN"), "client.properties", "line 2 sets sasl.mechanism"),
                Arguments.of("a client property the plugin sets", with(scram(), "client.properties", "client.id=x"),
                        "client.properties", "client.id"),
                Arguments.of("a secret client property", with(scram(), "client.properties", "ssl.keystore.key.extra=x"),
                        "client.properties", "looks secret"),
                Arguments.of("a password-like client property", with(scram(), "client.properties", "my.Password=x"),
                        "client.properties", "looks secret"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refused")
    void aBrokenRuleIsAnInvalidProblemOnTheFieldToChange(String what, Map<String, String> values, String field, String detail) {
        List<ConfigProblem> problems = problems(values);
        assertEquals(1, problems.size(), problems.toString());
        ConfigProblem problem = problems.get(0);
        assertEquals(field, problem.field());
        assertEquals(ConfigProblem.Reason.INVALID, problem.reason());
        assertTrue(problem.detail().contains(detail), problem.detail());
        for (String secret : List.of("s3cret", "store-pass")) {
            assertTrue(!problem.detail().contains(secret), "no secret in " + problem.detail());
        }
    }
}
