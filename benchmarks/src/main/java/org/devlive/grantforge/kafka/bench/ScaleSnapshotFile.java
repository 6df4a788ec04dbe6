package org.devlive.grantforge.kafka.bench;

import java.nio.file.Path;
import java.nio.file.Paths;
import org.devlive.grantforge.kafka.it.GrantForgeSnapshot;

/**
 * Writes the signed snapshot that {@link SnapshotScaleBenchmark} loads, for the load's stages to be measured apart
 * ({@code benchmarks/run.sh load-stages}): {@code ScaleSnapshotFile <file> <resources>} writes the file, its
 * {@code .sig} and its {@code .pub} key file.
 */
public final class ScaleSnapshotFile {
    private ScaleSnapshotFile() {
    }

    public static void main(String[] args) {
        if (args.length != 2) {
            System.err.println("usage: ScaleSnapshotFile <file> <resources>");
            System.exit(2);
        }
        Path file = Paths.get(args[0]);
        long bytes = GrantForgeSnapshot.write(file, Integer.parseInt(args[1]), SnapshotScaleBenchmark.ACLS_PER_RESOURCE,
            SnapshotScaleBenchmark.DENY_PERCENTAGE);
        SignedSnapshot.sign(file);
        System.out.println(file + ": " + bytes + " bytes, signed");
    }
}
