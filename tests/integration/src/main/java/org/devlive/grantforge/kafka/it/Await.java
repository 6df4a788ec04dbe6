package org.devlive.grantforge.kafka.it;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/** Waits for an event with a deadline, polling: tests wait for what they assert, never sleep and then assert. */
public final class Await {

    /** A condition; an exception counts as "not yet" and is reported if the deadline passes. */
    @FunctionalInterface
    public interface Condition {
        boolean holds() throws Exception;
    }

    private Await() {
    }

    /**
     * Polls {@code condition} every 100 ms until it holds and returns how long that took, in milliseconds.
     *
     * @throws AssertionError naming {@code what} (and the last exception) if it does not hold within {@code timeout}
     */
    public static long until(String what, Duration timeout, Condition condition) throws InterruptedException {
        long start = System.nanoTime();
        long deadline = start + timeout.toNanos();
        Exception last = null;
        while (true) {
            try {
                if (condition.holds()) {
                    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                }
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) {
                last = e;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within " + timeout.toSeconds() + " s: " + what
                        + (last != null ? " (last error: " + last + ")" : ""), last);
            }
            Thread.sleep(100);
        }
    }
}
