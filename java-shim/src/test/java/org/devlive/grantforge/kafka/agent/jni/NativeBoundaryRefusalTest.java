package org.devlive.grantforge.kafka.agent.jni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.devlive.grantforge.kafka.agent.GrantForgeKafkaAuthorizer;
import org.devlive.grantforge.kafka.agent.TestAuthorizers;
import org.devlive.grantforge.kafka.agent.TestContexts;

/** The real library answers a malformed request buffer and a bad handle with a refusal (0 / false), no exception. */
class NativeBoundaryRefusalTest {
    private static final Path FIXTURE = Paths.get(System.getProperty("grantforge.fixtures", "../tests/fixtures"),
        "snapshots", "e2e.json");

    @TempDir
    Path tmp;

    private GrantForgeKafkaAuthorizer open() throws IOException {
        Path policies = tmp.resolve("policies.json");
        if (!Files.exists(policies)) {
            Files.copy(FIXTURE, policies);
        }
        return TestAuthorizers.offline(policies, java.util.Collections.emptyMap());
    }

    private static final java.util.List<org.apache.kafka.server.authorizer.Action> ADMIN_WRITE =
        java.util.Collections.singletonList(new org.apache.kafka.server.authorizer.Action(
            org.apache.kafka.common.acl.AclOperation.WRITE,
            new org.apache.kafka.common.resource.ResourcePattern(org.apache.kafka.common.resource.ResourceType.TOPIC,
                "anything", org.apache.kafka.common.resource.PatternType.LITERAL), 1, true, true));

    @Test
    void garbageAndTruncatedBuffersAreRefusedOnAnOpenHandle() throws IOException {
        GrantForgeKafkaAuthorizer authorizer = open();
        try {
            long handle = authorizer.nativeHandle();
            RequestEncoder encoder = RequestEncoder.forThisThread();
            int length = encoder.encodeAuthorize(TestContexts.user("admin"), ADMIN_WRITE);
            assertEquals(1L, NativeAgent.authorize(handle, encoder.address(), encoder.capacity(), length) & 1L,
                "control: the whole request from a super user is allowed");
            for (int cut = 0; cut < length; cut++) {
                assertEquals(0L, NativeAgent.authorize(handle, encoder.address(), encoder.capacity(), cut),
                    "truncated to " + cut + " of " + length + " bytes");
            }
            assertEquals(0L, NativeAgent.authorize(handle, encoder.address(), length - 1, length),
                "length beyond capacity");
            ByteBuffer buffer = ByteBuffer.allocateDirect(4096);
            long address = NativeAgent.bufferAddress(buffer);
            for (int i = 0; i < 4096; i++) {
                buffer.put(i, (byte) 0xFF);
            }
            assertEquals(0L, NativeAgent.authorize(handle, address, 4096, 4096), "garbage buffer");
            assertFalse(NativeAgent.authorizeByResourceType(handle, address, 4096, 4096), "garbage buffer");
            assertFalse(NativeAgent.authorizeByResourceType(handle, address, 4096, 3), "truncated buffer");
        } finally {
            authorizer.close();
        }
    }

    @Test
    void neverOpenedAndClosedHandlesAreRefused() throws IOException {
        GrantForgeKafkaAuthorizer authorizer = open(); // loads the library
        RequestEncoder encoder = RequestEncoder.forThisThread();
        int length = encoder.encodeAuthorize(TestContexts.user("admin"), ADMIN_WRITE);
        assertEquals(0L, NativeAgent.authorize(0L, encoder.address(), encoder.capacity(), length), "never opened");
        long handle = authorizer.nativeHandle();
        assertEquals(1L, NativeAgent.authorize(handle, encoder.address(), encoder.capacity(), length) & 1L,
            "control: allowed while open");
        authorizer.close();
        assertEquals(0L, NativeAgent.authorize(handle, encoder.address(), encoder.capacity(), length), "closed");
    }
}
