package org.devlive.grantforge.kafka.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.admin.AdminClientConfig;
import org.devlive.grantforge.plugin.api.ServiceConfig;
import org.junit.jupiter.api.Test;

/** The Admin client's properties: only what the protocol uses, timeouts inside the host's limit, Kafka's own keys. */
class AdminSettingsTest {

    private static Properties of(Map<String, String> values) {
        Properties props = AdminSettings.of(new ServiceConfig("kafka-prod", values));
        // every key is one Kafka's Admin client knows: an unknown one would only be logged and ignored
        for (String key : props.stringPropertyNames()) {
            assertTrue(AdminClientConfig.configNames().contains(key) || key.startsWith("retries"), key);
        }
        return props;
    }

    @Test
    void everyCallIsBoundedByTheServicesTimeoutAndHasAClientIdOfItsOwn() {
        Map<String, String> values = Map.of("bootstrap.servers", " a:9092 , b:9092", "request.timeout.ms", "4000");
        Properties props = of(values);
        assertEquals("a:9092,b:9092", props.get("bootstrap.servers"));
        for (String key : new String[] {"request.timeout.ms", "default.api.timeout.ms", "socket.connection.setup.timeout.ms",
                "socket.connection.setup.timeout.max.ms"}) {
            assertEquals("4000", props.get(key), key);
        }
        assertTrue(props.getProperty("client.id").startsWith("grantforge-kafka-prod-"));
        assertNotEquals(props.get("client.id"), of(values).get("client.id"));
    }

    @Test
    void scramGetsAJaasLineWithItsValuesEscapedAndPlaintextGetsNoSaslOrTls() {
        Properties props = of(Map.of("bootstrap.servers", "a:9092", "security.protocol", "SASL_PLAINTEXT",
                "sasl.mechanism", "SCRAM-SHA-256", "sasl.username", "gf", "sasl.password", "pa\"ss\\word",
                "ssl.truststore.location", "/unused.jks"));
        assertEquals("org.apache.kafka.common.security.scram.ScramLoginModule required username=\"gf\" "
                + "password=\"pa\\\"ss\\\\word\";", props.get("sasl.jaas.config"));
        assertFalse(props.containsKey("ssl.truststore.location"), "no TLS on SASL_PLAINTEXT");
        Properties plain = of(Map.of("bootstrap.servers", "a:9092", "sasl.password", "stored"));
        assertFalse(plain.containsKey("sasl.jaas.config"));
        assertEquals("PLAINTEXT", plain.get("security.protocol"));
    }

    @Test
    void mutualTlsFromPemTextPassesTheCertificatesAndKeyAndCanSkipHostNameVerification() {
        Properties props = of(Map.of("bootstrap.servers", "a:9093", "security.protocol", "SSL", "ssl.truststore.type", "PEM",
                "ssl.truststore.certificates", "CA", "ssl.keystore.type", "PEM", "ssl.keystore.certificate.chain", "CHAIN",
                "ssl.keystore.key", "KEY", "ssl.keystore.password", "unused", "ssl.hostname.verification", "false"));
        assertEquals("CA", props.get("ssl.truststore.certificates"));
        assertEquals("CHAIN", props.get("ssl.keystore.certificate.chain"));
        assertEquals("KEY", props.get("ssl.keystore.key"));
        assertFalse(props.containsKey("ssl.keystore.password"), "a PEM key store has no store password");
        assertEquals("", props.get("ssl.endpoint.identification.algorithm"));
    }

    @Test
    void extraClientPropertiesArePassedOn() {
        Properties props = of(Map.of("bootstrap.servers", "a:9092", "client.properties", "# c\nretries=3\n"));
        assertEquals("3", props.get("retries"));
    }
}
