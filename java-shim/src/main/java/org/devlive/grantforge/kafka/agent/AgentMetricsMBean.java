package org.devlive.grantforge.kafka.agent;

/**
 * The agent's metrics in JMX, under {@code org.devlive.grantforge.kafka:type=Agent,instance=<instance>,role=<broker|controller>}.
 * Counters count since the broker started; the snapshot attributes are -1 while there is none.
 */
public interface AgentMetricsMBean {
    long getDecisionsAllowed();

    long getDecisionsDenied();

    long getCacheHits();

    long getCacheMisses();

    long getCacheSize();

    long getSnapshotVersion();

    long getSnapshotAgeSeconds();

    String getLastRefreshError();

    long getHeartbeatFailures();

    long getAuditQueued();

    long getAuditSpooledBytes();

    long getAuditSent();

    long getAuditDropped();
}
