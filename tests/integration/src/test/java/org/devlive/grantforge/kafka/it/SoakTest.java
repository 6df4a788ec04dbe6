package org.devlive.grantforge.kafka.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The soak ({@link Soak}) with every check enforced: a smoke of {@value #SMOKE_MINUTES} minute in the test command
 * (every step of the schedule once, {@link Soak#SMOKE_SCHEDULE}), as long as {@value #MINUTES_PROPERTY} says through
 * {@code scripts/soak --minutes N} (an hour by default, the full schedule). The report and the plot are written to
 * {@value #OUT_PROPERTY} (default {@code target/soak}).
 */
// As long as the soak asked for: surefire's fork timeout (it.fork.timeout, raised by scripts/soak) stops a hung one.
@Timeout(value = 24, unit = TimeUnit.HOURS)
class SoakTest {
    static final String MINUTES_PROPERTY = "grantforge.soak.minutes";
    static final String OUT_PROPERTY = "grantforge.soak.out";
    static final String SMOKE_MINUTES = "1";

    @Test
    void aClusterUnderTrafficChurnAndFaultsAnswersOnlyWhatThePoliciesInForceAllow() throws Exception {
        Duration length = Duration.ofSeconds(Math.round(Double.parseDouble(System.getProperty(MINUTES_PROPERTY, SMOKE_MINUTES)) * 60));
        Path out = Path.of(System.getProperty(OUT_PROPERTY, "target/soak")).toAbsolutePath();
        Soak soak = new Soak(KafkaDist.DEFAULT_VERSION, length, out);
        soak.run();
        SoakReport report = new SoakReport(soak);
        report.write();
        System.out.println(report.markdown());
        assertTrue(report.failed().isEmpty(), "soak checks failed (" + out.resolve("report.md") + "): " + report.failed());
    }
}
