package org.devlive.grantforge.kafka.agent.tools;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * {@code explain --principal-of} with a Kerberos name Kafka's rules cannot map, or that no client authenticates as
 * (no realm): the error says what is wrong and what to do, where Kafka's own words are only "No rules apply to …"
 * or a name passed through unmapped. Kafka's own classes compute the name.
 */
class PrincipalOfTest {

    private static IOException refused(String... args) {
        PrintStream out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        return assertThrows(IOException.class, () -> PrincipalOf.resolve(args, out));
    }

    @Test
    void aKerberosNameWithoutARealmIsToldToGiveItsRealm() {
        String message = refused("--principal-of", "kafka/broker1.example.com").getMessage();
        assertTrue(message.contains("the Kerberos name `kafka/broker1.example.com` has no realm"), message);
        assertTrue(message.contains("sasl.kerberos.principal.to.local.rules = DEFAULT maps that full name"), message);
        assertTrue(message.contains("Give it as klist or the keytab shows it, such as kafka/broker1.example.com@"), message);
    }

    @Test
    void aNameOfAnotherRealmIsToldToAddARuleForIt() {
        String message = refused("--principal-of", "kafka/broker1.example.com@NOT.THIS.HOSTS.REALM").getMessage();
        assertTrue(message.contains("no rule of sasl.kerberos.principal.to.local.rules = DEFAULT applies to"
            + " `kafka/broker1.example.com@NOT.THIS.HOSTS.REALM`: DEFAULT maps only names of this host's default realm"), message);
        assertTrue(message.contains("Add a RULE for realm NOT.THIS.HOSTS.REALM"), message);
        assertFalse(message.startsWith("No rules apply"), message);
    }
}
