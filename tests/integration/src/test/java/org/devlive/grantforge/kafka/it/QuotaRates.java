package org.devlive.grantforge.kafka.it;

import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

/**
 * The quota checks that wait on Kafka's rate windows: clientA's measured rate beside a node with Kafka's built-in
 * callback, and a fetch limit whose window cannot hold a batch. They take about a minute of a class's time and a
 * second node. What the agent decides in them (the groups and limits it resolves) is checked on every release by the
 * rest of {@link QuotaCallback}; how Kafka enforces a resolved limit is Kafka's, so they run on the oldest and the
 * newest release (docs/testing.md, "Which checks run on which release").
 */
interface QuotaRates {
    @Test
    @Order(2)
    default void theMeasuredRateOfAReservedGroupStaysWithinItsLimit() throws Exception {
        ((QuotaCallback) this).measureClientARateBesideKafkasCallback();
    }

    @Test
    @Order(10)
    default void aFetchLimitWhoseWindowCannotHoldABatchStarvesTheConsumerUntilRaised() throws Exception {
        ((QuotaCallback) this).starveAFetchUntilItsLimitIsRaised();
    }
}
