package org.devlive.grantforge.kafka.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.devlive.grantforge.plugin.api.LookupException;
import org.devlive.grantforge.plugin.api.ServiceConfig;
import org.junit.jupiter.api.Test;

/** Failures as one line with the API's reason, every secret of the service masked. */
class SafeTextTest {

    private static final ServiceConfig CONFIG = new ServiceConfig("kafka-prod", Map.of("bootstrap.servers", "b:9093",
            "sasl.password", "hunter2!", "ssl.keystore.key", "-----BEGIN PRIVATE KEY-----\nMIIEvAIBADANBg\n-----END PRIVATE KEY-----"));

    @Test
    void secretsWholeQuotedOrByLineAreMaskedAndTheTextIsOneShortLine() {
        SafeText safe = SafeText.of(CONFIG);
        assertEquals("login password=*** failed", safe.line("login password=\"hunter2!\" failed\nat line 2"));
        assertEquals("bad key *** here", safe.line("bad key MIIEvAIBADANBg here"));
        assertEquals(SafeText.MAX_LENGTH, safe.line("x".repeat(1000)).length());
    }

    @Test
    void kafkasFailuresBecomeTheApisReasons() {
        assertEquals(LookupException.Reason.UNREACHABLE,
                KafkaFailure.of(new ExecutionException(new TimeoutException("Timed out")), "b:9093", 5000).reason());
        KafkaFailure auth = KafkaFailure.of(new ExecutionException(new SaslAuthenticationException("invalid credentials")), "b:9093", 5000);
        assertEquals(LookupException.Reason.AUTHENTICATION_FAILED, auth.reason());
        assertEquals("authentication failed: invalid credentials", auth.message());
        assertEquals(LookupException.Reason.ACCESS_DENIED,
                KafkaFailure.of(new TopicAuthorizationException("no"), "b:9093", 5000).reason());
        KafkaFailure wrapped = KafkaFailure.of(new KafkaException("Failed to create new KafkaAdminClient",
                new KafkaException("Failed to load SSL keystore /x.p12")), "b:9093", 5000);
        assertEquals(LookupException.Reason.FAILED, wrapped.reason());
        assertEquals("Failed to create new KafkaAdminClient: Failed to load SSL keystore /x.p12", wrapped.message());
    }

    @Test
    void anInterruptedWaitIsAFailureThatKeepsTheInterrupt() {
        try {
            KafkaFailure failure = KafkaFailure.of(new InterruptedException(), "b:9093", 5000);
            assertEquals(LookupException.Reason.FAILED, failure.reason());
            assertTrue(Thread.currentThread().isInterrupted());
        } finally {
            Thread.interrupted();
        }
    }
}
