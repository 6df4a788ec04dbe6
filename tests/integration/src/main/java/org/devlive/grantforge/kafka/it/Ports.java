package org.devlive.grantforge.kafka.it;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Loopback ports for the harness's servers (Kafka listeners, JMX, the KDC), free when handed out and
 * never handed out twice by two test JVMs running at once.
 *
 * <p>A port found by binding port 0 is an ephemeral one: between the probe and the moment a node binds
 * it, seconds later, any client connection of any test may take it as its local port, and another
 * test JVM may be handed it too. So ports come from below the kernel's ephemeral range, and each
 * surefire fork ({@value #FORK_PROPERTY}, set by tests/integration/pom.xml) has a block of its own;
 * each port handed out is probed with a bind first, which skips ports other programs hold.
 */
public final class Ports {

    /** The surefire fork number (1, 2, …); absent outside surefire (the demo), which uses block 0. */
    public static final String FORK_PROPERTY = "grantforge.it.fork";

    /** Ports per fork: a whole run starts a few hundred listeners in one fork. */
    private static final int BLOCK = 1_000;
    /** The first block: below Linux's default ephemeral range (32768–60999) with room for 12 blocks. */
    private static final int FIRST_PORT = 20_000;
    private static final int BLOCKS = 12;

    private static final int blockStart;
    private static int next;

    static {
        int fork = Integer.getInteger(FORK_PROPERTY, 0);
        if (fork < 0 || fork >= BLOCKS) {
            throw new IllegalStateException(FORK_PROPERTY + "=" + fork + ": at most " + (BLOCKS - 1)
                    + " test JVMs at once have a block of ports; use fewer forks");
        }
        blockStart = FIRST_PORT + fork * BLOCK;
        // a second run at the same time (another checkout) most likely starts elsewhere in the block
        next = ThreadLocalRandom.current().nextInt(BLOCK);
    }

    private Ports() {
    }

    /** {@code n} distinct ports of this JVM's block, each free when probed. */
    public static synchronized int[] free(int n) {
        int[] ports = new int[n];
        for (int i = 0; i < n; i++) {
            ports[i] = nextFree();
        }
        return ports;
    }

    /** One port of this JVM's block, free when probed. */
    public static int free() {
        return free(1)[0];
    }

    private static int nextFree() {
        for (int tried = 0; tried < BLOCK; tried++) {
            int port = blockStart + next;
            next = (next + 1) % BLOCK;
            if (bindable(port)) {
                return port;
            }
        }
        throw new IllegalStateException("no free loopback port in " + blockStart + "–" + (blockStart + BLOCK - 1));
    }

    private static boolean bindable(int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1);
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
