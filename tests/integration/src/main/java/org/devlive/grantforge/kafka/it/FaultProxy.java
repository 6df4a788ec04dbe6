package org.devlive.grantforge.kafka.it;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.EnumMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP proxy on loopback between the agents and the test server that misbehaves on purpose, as a network does. The
 * agents are configured with the proxy's address, which never changes, so the server behind it may stop and start on
 * another port ({@link #target}).
 *
 * <p>A fault applies to every connection opened while it is set; setting one closes the connections already open, so a
 * kept-alive connection cannot slip past it. {@link #injected()} counts the connections each fault touched.
 */
public final class FaultProxy implements AutoCloseable {
    /** What the proxy does to a connection. */
    public enum Fault {
        /** Pass the bytes through. */
        NONE,
        /** Hold each chunk of the server's answer for {@link #LATENCY_MS} before passing it on. */
        LATENCY,
        /** Reset the connection (RST) as soon as it is accepted. */
        RESET,
        /** Pass the first bytes of the answer (64 B to 2 KiB), then close: an answer cut short. */
        CUT,
        /** Answer {@code 503 Service Unavailable} itself, as a load balancer with no backend does. */
        STATUS_503,
        /** Pass the first bytes of the answer, then send nothing for {@code stallMs}: longer than the agent's read timeout. */
        STALL,
        /** The server is stopped: the proxy cannot reach it and closes the connection (set by {@link #target}). */
        SERVER_DOWN
    }

    /** The added latency of {@link Fault#LATENCY}. */
    public static final long LATENCY_MS = 700;

    private final ServerSocket listener;
    private final long stallMs;
    private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
        Thread thread = new Thread(r, "grantforge-it-fault-proxy");
        thread.setDaemon(true);
        return thread;
    });
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private final Map<Fault, AtomicLong> injected = new EnumMap<>(Fault.class);
    private volatile Fault fault = Fault.NONE;
    private volatile InetSocketAddress target;

    private FaultProxy(ServerSocket listener, long stallMs) {
        this.listener = listener;
        this.stallMs = stallMs;
        for (Fault each : Fault.values()) {
            injected.put(each, new AtomicLong());
        }
    }

    /** A proxy on a free loopback port, passing bytes to nowhere until {@link #target} is set. */
    public static FaultProxy start(long stallMs) throws IOException {
        ServerSocket listener = new ServerSocket(Ports.free(), 64, InetAddress.getLoopbackAddress());
        FaultProxy proxy = new FaultProxy(listener, stallMs);
        proxy.threads.execute(proxy::acceptLoop);
        return proxy;
    }

    /** The proxy's URL, in place of the server's: {@code http://127.0.0.1:<port>}. */
    public String url() {
        return "http://127.0.0.1:" + listener.getLocalPort();
    }

    /** Where the bytes go, from the server's URL ({@code http://127.0.0.1:<port>}); {@code null}: the server is down. */
    public void target(String serverUrl) {
        if (serverUrl == null) {
            target = null;
        } else {
            java.net.URI uri = java.net.URI.create(serverUrl);
            target = new InetSocketAddress(uri.getHost(), uri.getPort());
        }
        closeOpenConnections();
    }

    /** Applies {@code next} to every connection from now on, closing the ones already open. */
    public void fault(Fault next) {
        fault = next;
        closeOpenConnections();
    }

    /** Per fault, the connections it touched so far. */
    public Map<Fault, Long> injected() {
        Map<Fault, Long> counts = new EnumMap<>(Fault.class);
        injected.forEach((fault, count) -> counts.put(fault, count.get()));
        return counts;
    }

    private void acceptLoop() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                open.add(client);
                threads.execute(() -> serve(client));
            } catch (IOException closed) {
                return;
            }
        }
    }

    private void serve(Socket client) {
        Fault now = fault;
        InetSocketAddress upstream = target;
        Fault counted = upstream == null ? Fault.SERVER_DOWN : now;
        injected.get(counted).incrementAndGet();
        try (client) {
            switch (counted) {
                case SERVER_DOWN, RESET -> client.setSoLinger(true, 0);
                case STATUS_503 -> answer503(client);
                default -> relay(client, upstream, now);
            }
        } catch (IOException | InterruptedException ignored) {
            // the agent sees the connection fail: that is the point
        } finally {
            open.remove(client);
        }
    }

    private static void answer503(Socket client) throws IOException {
        InputStream in = client.getInputStream();
        // Read the request's head, so the agent is not reset before it has sent it.
        int matched = 0;
        byte[] end = {'\r', '\n', '\r', '\n'};
        for (int b; matched < 4 && (b = in.read()) >= 0; ) {
            matched = b == end[matched] ? matched + 1 : (b == '\r' ? 1 : 0);
        }
        String body = "no backend";
        client.getOutputStream().write(("HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: "
            + body.length() + "\r\nConnection: close\r\n\r\n" + body).getBytes(StandardCharsets.US_ASCII));
        client.getOutputStream().flush();
    }

    private void relay(Socket client, InetSocketAddress upstream, Fault now) throws IOException, InterruptedException {
        try (Socket server = new Socket()) {
            server.connect(upstream, 2_000);
            open.add(server);
            try {
                threads.execute(() -> pump(client, server));
                long limit = now == Fault.CUT || now == Fault.STALL ? ThreadLocalRandom.current().nextLong(64, 2_049) : Long.MAX_VALUE;
                InputStream in = server.getInputStream();
                OutputStream out = client.getOutputStream();
                byte[] buffer = new byte[16 * 1024];
                long passed = 0;
                for (int n; (n = in.read(buffer)) > 0; ) {
                    if (now == Fault.LATENCY) {
                        Thread.sleep(LATENCY_MS);
                    }
                    int pass = (int) Math.min(n, limit - passed);
                    out.write(buffer, 0, pass);
                    out.flush();
                    passed += pass;
                    if (passed >= limit) {
                        if (now == Fault.STALL) {
                            Thread.sleep(stallMs);
                        }
                        return;
                    }
                }
            } finally {
                open.remove(server);
            }
        }
    }

    /** The request's bytes, from the agent to the server, unchanged. */
    private static void pump(Socket from, Socket to) {
        try {
            from.getInputStream().transferTo(to.getOutputStream());
            to.shutdownOutput();
        } catch (IOException closed) {
            // either side closed: the other direction ends too
        }
    }

    private void closeOpenConnections() {
        for (Socket socket : open) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // already closed
            }
        }
    }

    @Override
    public void close() throws IOException {
        listener.close();
        closeOpenConnections();
        threads.shutdownNow();
    }
}
