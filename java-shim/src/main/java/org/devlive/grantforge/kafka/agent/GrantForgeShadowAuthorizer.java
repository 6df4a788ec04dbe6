package org.devlive.grantforge.kafka.agent;

/**
 * Shadow mode, for moving a live cluster from Kafka's ACLs to GrantForge: this is Kafka's own
 * {@code StandardAuthorizer} (its ACLs in the metadata log, {@code kafka-acls} working as before, its answers returned
 * to clients unchanged), which also asks the GrantForge agent every question Kafka asks and counts where the two
 * answers differ (the metrics {@code shadow-*}, the audit, {@code explain --disagreements}).
 *
 * <p>The agent is asked after Kafka has answered, on the request thread, in one JNI call that takes no lock on the
 * way of an agreement and never waits for the network. Whatever the agent does (no snapshot yet, an error, a panic, a
 * missing native library after start), Kafka's answers are returned as they are: a failure is counted and logged,
 * never answered ({@link ComparingAuthorizer}).
 *
 * <p>{@link GrantForgeCompareAuthorizer} is the reverse, for after the switch, and {@link GrantForgeHybridAuthorizer}
 * the way between, team by team. On Kafka 4.1 and later, name {@code MonitorableGrantForgeShadowAuthorizer} to see the
 * agent's metrics among Kafka's plugin metrics too.
 */
public class GrantForgeShadowAuthorizer extends ComparingAuthorizer {
    public GrantForgeShadowAuthorizer() {
        super(Mode.SHADOW);
    }
}
