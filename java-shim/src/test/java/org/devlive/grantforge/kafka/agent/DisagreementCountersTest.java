package org.devlive.grantforge.kafka.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import javax.management.MBeanAttributeInfo;
import org.junit.jupiter.api.Test;
import org.devlive.grantforge.kafka.agent.tools.Disagreements;

/**
 * {@code explain --disagreements} shows the counters the native library lists for shadow and compare modes, named as
 * it names them (the golden metrics payload of {@code crates/grantforge-jni/src/agent_metrics.rs}): the tool spells
 * none of them, so they are defined once.
 */
class DisagreementCountersTest {
    @Test
    void theToolShowsEveryShadowCounterTheNativeLibraryListsAndNoOther() {
        AgentMetrics metrics = new AgentMetrics(() -> GoldenFixtures.read("metrics.bin"));
        List<String> expected = new ArrayList<>();
        for (AgentMetrics.Metric metric : metrics.listed()) {
            if (metric.name.startsWith("shadow-") && !metric.text) {
                expected.add(metric.attribute);
            }
        }
        List<String> shown = new ArrayList<>();
        for (MBeanAttributeInfo counter : Disagreements.counters(metrics.getMBeanInfo())) {
            shown.add(counter.getName());
        }
        assertEquals(List.of("ShadowAgreements", "ShadowGrantforgeRefuses", "ShadowGrantforgeAllows",
            "ShadowNotCompared", "ShadowOverflow", "ShadowUntracked"), expected, "the native list's shadow counters");
        assertEquals(expected, shown);
    }
}
