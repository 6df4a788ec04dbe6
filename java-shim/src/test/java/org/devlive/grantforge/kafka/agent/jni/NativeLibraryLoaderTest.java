package org.devlive.grantforge.kafka.agent.jni;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NativeLibraryLoaderTest {
    @TempDir
    Path tmp;

    /** No other account can replace the library between its copy and its load: its directory is 0700. */
    @Test
    void theBundledLibraryIsExtractedIntoAPrivateDirectoryThatIsDeletedAfterwards() throws IOException {
        byte[] library = {0x7f, 'E', 'L', 'F'};
        Path copy = NativeLibraryLoader.extract(new ByteArrayInputStream(library), tmp);
        Path directory = copy.getParent();
        assertEquals(tmp, directory.getParent());
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(directory)));
        assertArrayEquals(library, Files.readAllBytes(copy));

        NativeLibraryLoader.delete(copy);
        assertFalse(Files.exists(directory), "nothing is left in the temporary directory");
    }

    @Test
    void theLibraryIsChosenForTheHostsArchitectureAndCLibrary() {
        assertEquals("linux-x86_64", NativeLibraryLoader.platform("Linux", "amd64", false));
        assertEquals("linux-aarch64", NativeLibraryLoader.platform("Linux", "aarch64", false));
        assertEquals("linux-musl-x86_64", NativeLibraryLoader.platform("Linux", "amd64", true));
        assertEquals("linux-musl-aarch64", NativeLibraryLoader.platform("Linux", "aarch64", true));
        assertEquals("osx-aarch64", NativeLibraryLoader.platform("Mac OS X", "aarch64", false));
        assertEquals("linux-ppc64le", NativeLibraryLoader.platform("Linux", "ppc64le", false));
        for (String platform : new String[] {"linux-x86_64", "linux-aarch64", "linux-musl-x86_64", "linux-musl-aarch64"}) {
            assertTrue(NativeLibraryLoader.PLATFORMS.contains(platform), platform);
        }
        // every platform the build made (all four, unless a host-only build named fewer: java-shim/pom.xml)
        for (String platform : System.getProperty("grantforge.native.platforms", String.join(" ", NativeLibraryLoader.PLATFORMS)).trim().split("\\s+")) {
            assertTrue(NativeLibraryLoader.class.getResource("native/" + platform + "/libgrantforge_kafka_jni.so") != null,
                "the JAR carries " + platform);
        }
    }

    /** What the process maps decides, as the loaders of Alpine (musl, gcompat beside it) and of glibc hosts map. */
    @Test
    void muslIsTheCLibraryTheJvmHasMappedNotOneInstalledBeside() throws IOException {
        Path alpine = tmp.resolve("alpine-maps");
        Files.write(alpine, ("7f1c2a000000-7f1c2a014000 r--p 00000000 00:2e 1053 /lib/ld-musl-aarch64.so.1\n"
            + "7f1c2b000000-7f1c2b001000 r--p 00000000 00:2e 2001 /lib/libgcompat.so.0\n").getBytes(StandardCharsets.UTF_8));
        assertTrue(NativeLibraryLoader.runsOnMusl(alpine));
        Path debian = tmp.resolve("debian-maps");
        Files.write(debian, ("7f55d6a00000-7f55d6a28000 r--p 00000000 08:01 2360 /usr/lib/x86_64-linux-gnu/libc.so.6\n")
            .getBytes(StandardCharsets.UTF_8));
        assertFalse(NativeLibraryLoader.runsOnMusl(debian));
        assertFalse(NativeLibraryLoader.runsOnMusl(tmp.resolve("absent")), "no /proc: glibc, as before");
    }

    /**
     * The JVM the tests run on loads the JAR's library of its own platform: linux-x86_64 here, linux-aarch64 in
     * the build's second run of these tests under emulation ({@code grantforge.test.platform}, java-shim/pom.xml).
     */
    @Test
    void theJvmLoadsTheBundledLibraryOfItsOwnPlatform() {
        String expected = System.getProperty("grantforge.test.platform", NativeLibraryLoader.platform(
            System.getProperty("os.name"), System.getProperty("os.arch"),
            NativeLibraryLoader.runsOnMusl(java.nio.file.Paths.get("/proc/self/maps"))));
        assertEquals("the agent JAR, " + expected, NativeLibraryLoader.load(null));
    }
}
