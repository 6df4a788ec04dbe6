package org.devlive.grantforge.kafka.agent;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;

/** This JVM's resident memory as Linux counts it (native and heap alike), for bounds in bytes. */
final class ResidentMemory {
    private ResidentMemory() {
    }

    /** Starts a new peak at the resident set of now (Linux's {@code clear_refs} 5), and returns it in bytes. */
    static long resetPeak() throws IOException {
        Files.write(Paths.get("/proc/self/clear_refs"), "5".getBytes(StandardCharsets.US_ASCII));
        return status("VmRSS:");
    }

    /** The largest resident set since the last {@link #resetPeak}, in bytes. */
    static long peak() throws IOException {
        return status("VmHWM:");
    }

    private static long status(String field) throws IOException {
        for (String line : Files.readAllLines(Paths.get("/proc/self/status"), StandardCharsets.US_ASCII)) {
            if (line.startsWith(field)) {
                return Long.parseLong(line.substring(field.length()).replace("kB", "").trim()) * 1024;
            }
        }
        throw new IOException("no " + field + " in /proc/self/status");
    }
}
