package org.devlive.grantforge.kafka.agent;

/**
 * Compare mode, for the weeks after the switch: GrantForge's policies decide (as {@link GrantForgeKafkaAuthorizer}),
 * and Kafka's ACLs, kept in the metadata log, are asked beside them, with the same counters, audit events and
 * {@code explain --disagreements} as {@link GrantForgeShadowAuthorizer}: where the new policies are stricter or looser
 * than the old ACLs in live traffic. {@code kafka-acls} still lists, adds and removes Kafka's ACLs (the last step of
 * the migration removes them); the policies are changed in GrantForge.
 *
 * <p>Kafka's ACLs do not stand in for the agent: with no snapshot, an error or a panic, the request is refused (fail
 * closed). On Kafka 4.1 and later, name {@code MonitorableGrantForgeCompareAuthorizer} for the plugin metrics.
 */
public class GrantForgeCompareAuthorizer extends ComparingAuthorizer {
    public GrantForgeCompareAuthorizer() {
        super(Mode.COMPARE);
    }
}
