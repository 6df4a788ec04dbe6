package org.devlive.grantforge.kafka.agent;

/**
 * Hybrid mode, for moving a cluster from Kafka's ACLs to GrantForge team by team: a GrantForge allow or deny is final,
 * and a question no GrantForge policy decides is answered by Kafka's own {@code StandardAuthorizer} (its ACLs in the
 * metadata log, {@code kafka-acls} working as before). {@code grantforge.hybrid.resource.prefixes} limits the
 * policies to the resources whose names begin with one of its prefixes; the others' questions go to the ACLs alone.
 * Each question the ACLs answer is audited as enforced {@code NATIVE} with the ACL behind the answer, and counted in
 * the metric {@code hybrid-acl-decisions}: when it stops growing, the ACLs can go and the cluster can name
 * {@link GrantForgeKafkaAuthorizer}.
 *
 * <p>Fail closed: with no snapshot, an error or a panic in the agent, every question but the super users' is
 * refused (a GrantForge deny may be the answer the agent could not give); while Kafka's ACLs are not loaded, the
 * questions left to them are refused ({@link ComparingAuthorizer}). On Kafka 4.1 and later, name
 * {@code MonitorableGrantForgeHybridAuthorizer} to see the agent's metrics among Kafka's plugin metrics too.
 */
public class GrantForgeHybridAuthorizer extends ComparingAuthorizer {
    public GrantForgeHybridAuthorizer() {
        super(Mode.HYBRID);
    }
}
