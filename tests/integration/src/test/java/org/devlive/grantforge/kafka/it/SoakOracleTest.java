package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The soak's oracle on timelines made by hand: it must catch what a broken agent would do, and nothing else. */
class SoakOracleTest {
    private static final DateTimeFormatter LOG_TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss,SSS");
    private static final long T0 = 1_800_000_000_000L;
    private static final SoakOracle.Rule BOB_WRITES = SoakOracle.Rule.always("bob", "WRITE", "t");

    private static String applied(long atMs, long version) {
        return "[" + LocalDateTime.ofInstant(Instant.ofEpochMilli(atMs), ZoneId.systemDefault()).format(LOG_TIME)
            + "] INFO  [org.devlive.grantforge.agent] applied policy version " + version + " of service kafka-soak from the server";
    }

    private static SoakOracle.Outcome bob(long start, long end, boolean allowed) {
        return new SoakOracle.Outcome("bob", "WRITE", "t", start, end, allowed);
    }

    /** Version 1 grants bob from T0; version 2, published at T0 + 10 s, revokes it; the node applies it at T0 + 11 s. */
    private static SoakOracle grantThenRevoke() {
        SoakOracle oracle = new SoakOracle();
        oracle.published(new SoakOracle.Version(1, T0, List.of(BOB_WRITES)));
        oracle.published(new SoakOracle.Version(2, T0 + 10_000, List.of()));
        oracle.nodeLog("broker-1", List.of(applied(T0 + 500, 1), applied(T0 + 11_000, 2)), List.of(T0));
        return oracle;
    }

    @Test
    void anAnswerOfTheVersionInForceHolds() {
        SoakOracle oracle = grantThenRevoke();
        assertNull(oracle.check(bob(T0 + 2_000, T0 + 2_100, true)));
        assertNull(oracle.check(bob(T0 + 12_000, T0 + 12_100, false)));
    }

    @Test
    void whileAVersionPropagatesBothAnswersHold() {
        SoakOracle oracle = grantThenRevoke();
        assertNull(oracle.check(bob(T0 + 10_500, T0 + 10_600, true)));
        assertNull(oracle.check(bob(T0 + 10_500, T0 + 10_600, false)));
    }

    @Test
    void anAccessAfterTheRevocationWasAppliedIsCaught() {
        SoakOracle.Violation violation = grantThenRevoke().check(bob(T0 + 11_100, T0 + 11_200, true));
        assertNotNull(violation);
        assertEquals(List.of(2L), violation.versions());
    }

    @Test
    void aRefusalBeforeTheRevocationWasPublishedIsCaught() {
        assertNotNull(grantThenRevoke().check(bob(T0 + 5_000, T0 + 5_100, false)));
    }

    @Test
    void aNodeWithoutASnapshotRefusesAndAllowsNothing() {
        SoakOracle oracle = grantThenRevoke();
        assertNull(oracle.check(bob(T0 + 100, T0 + 200, false)));
        assertNotNull(new SoakOracle().check(bob(T0, T0 + 100, true)));
    }

    @Test
    void aRestartedNodeRefusesUntilItAppliesItsDiskCache() {
        SoakOracle oracle = new SoakOracle();
        oracle.published(new SoakOracle.Version(1, T0, List.of(BOB_WRITES)));
        oracle.nodeLog("broker-1", List.of(applied(T0 + 500, 1), applied(T0 + 20_500, 1)), List.of(T0, T0 + 20_000));
        assertNull(oracle.check(bob(T0 + 20_100, T0 + 20_200, false)));
        assertNotNull(oracle.check(bob(T0 + 21_000, T0 + 21_100, false)));
    }

    @Test
    void aValidityPeriodIsExactOnTheWallClock() {
        SoakOracle oracle = new SoakOracle();
        oracle.published(new SoakOracle.Version(1, T0, List.of(new SoakOracle.Rule("bob", "WRITE", "t", T0 + 5_000, T0 + 8_000))));
        oracle.nodeLog("broker-1", List.of(applied(T0 + 100, 1)), List.of(T0));
        assertNull(oracle.check(bob(T0 + 6_000, T0 + 6_100, true)));
        assertNotNull(oracle.check(bob(T0 + 4_000, T0 + 4_900, true)));
        assertNotNull(oracle.check(bob(T0 + 6_000, T0 + 6_100, false)));
        assertNull(oracle.check(bob(T0 + 7_950, T0 + 8_050, false)));
        assertNull(oracle.check(bob(T0 + 8_000, T0 + 8_100, false)));
    }

    @Test
    void aVersionANodeNeverAppliedDecidesNothingThere() {
        SoakOracle oracle = new SoakOracle();
        oracle.published(new SoakOracle.Version(1, T0, List.of()));
        oracle.published(new SoakOracle.Version(2, T0 + 1_000, List.of(BOB_WRITES)));
        oracle.published(new SoakOracle.Version(3, T0 + 2_000, List.of()));
        // the node skipped version 2 (a refused download) and went from 1 to 3
        oracle.nodeLog("broker-1", List.of(applied(T0 + 100, 1), applied(T0 + 3_000, 3)), List.of(T0));
        assertNotNull(oracle.check(bob(T0 + 1_500, T0 + 1_600, true)));
    }

    /**
     * Version 1 grants bob through a role; at T0 + 10 s the role ends without a new version (another body of version 1);
     * the node replaces the body at T0 + 12 s.
     */
    private static SoakOracle roleEndedAtTheSameVersion() {
        SoakOracle oracle = new SoakOracle();
        oracle.published(new SoakOracle.Version(1, "\"a\"", T0, List.of(BOB_WRITES)));
        oracle.published(new SoakOracle.Version(1, "\"b\"", T0 + 10_000, List.of()));
        oracle.nodeLog("broker-1", List.of(applied(T0 + 500, 1), applied(T0 + 12_000, 1), "[x] INFO  [org.devlive.grantforge.agent]"
            + " GrantForge server http://h changed the snapshot of policy version 1 without a new version: roles r (ETag \"a\" \u2192"
            + " \"b\"); applied"), List.of(T0));
        return oracle;
    }

    @Test
    void anAccessAfterARoleEndedAtTheSameVersionWasAppliedIsCaught() {
        SoakOracle oracle = roleEndedAtTheSameVersion();
        assertNull(oracle.check(bob(T0 + 2_000, T0 + 2_100, true)));
        assertNull(oracle.check(bob(T0 + 11_000, T0 + 11_100, true)), "published, not yet applied: the old body may decide");
        assertNull(oracle.check(bob(T0 + 11_000, T0 + 11_100, false)), "published: the new body may decide");
        SoakOracle.Violation violation = oracle.check(bob(T0 + 12_100, T0 + 12_200, true));
        assertNotNull(violation);
        assertEquals(List.of("\"b\""), violation.candidates().stream().map(SoakOracle.Version::etag).toList());
    }

    @Test
    void aNodeThatAppliesAVersionAfreshMayHaveAnyBodyOfItPublishedByThen() {
        SoakOracle oracle = new SoakOracle();
        oracle.published(new SoakOracle.Version(1, "\"a\"", T0, List.of(BOB_WRITES)));
        oracle.published(new SoakOracle.Version(1, "\"b\"", T0 + 10_000, List.of()));
        oracle.nodeLog("broker-1", List.of(applied(T0 + 500, 1), applied(T0 + 20_500, 1)), List.of(T0, T0 + 20_000));
        assertNull(oracle.check(bob(T0 + 21_000, T0 + 21_100, true)));
        assertNull(oracle.check(bob(T0 + 21_000, T0 + 21_100, false)));
        assertNotNull(oracle.check(bob(T0 + 5_000, T0 + 5_100, false)), "before the second body, only the first decides");
    }
}
