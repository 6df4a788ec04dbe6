package org.devlive.grantforge.kafka.agent;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.ByteArrayInputStream;
import java.io.IOException;
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
}
