package org.devlive.grantforge.kafka.agent.tools;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.security.SecureRandom;
import java.util.concurrent.TimeUnit;

/**
 * {@code break-glass --dir DIR --file SNAPSHOT [--wait-seconds N]}: hands a snapshot signed with the pinned key (and its
 * {@code SNAPSHOT.sig}) to the running node whose {@code grantforge.break.glass.dir} is DIR, and prints the agent's
 * answer. The agent checks the file and applies it or refuses it, naming why; this command only copies it in, says who
 * asks, and waits. A request no agent takes within the wait is withdrawn, so a later start never applies it.
 * Exit codes: 0 applied, 1 refused, 2 usage, 3 no running agent took it.
 */
final class BreakGlass {
    static final String USAGE = "usage: break-glass --dir DIR --file SNAPSHOT [--wait-seconds N]\n"
        + "  hands SNAPSHOT (signed with the key the node pins, its signature in SNAPSHOT.sig) to the running node whose\n"
        + "  grantforge.break.glass.dir is DIR, and prints the node's answer; waits N seconds (default 120) for it\n"
        + "  (docs/reliability.md, \"Break-glass\")";

    private BreakGlass() {
    }

    static int run(String[] args, PrintStream out, PrintStream err) {
        Path dir = null;
        Path file = null;
        long waitSeconds = 120;
        try {
            for (int i = 0; i < args.length; i++) {
                if (args[i].equals("--dir")) {
                    dir = Paths.get(args[++i]);
                } else if (args[i].equals("--file")) {
                    file = Paths.get(args[++i]);
                } else if (args[i].equals("--wait-seconds")) {
                    waitSeconds = Long.parseLong(args[++i]);
                } else if (args[i].equals("--help") || args[i].equals("-h")) {
                    out.println(USAGE);
                    return 0;
                } else {
                    throw new IllegalArgumentException("unknown argument `" + args[i] + "`");
                }
            }
        } catch (ArrayIndexOutOfBoundsException | IllegalArgumentException e) {
            err.println("break-glass: " + (e instanceof ArrayIndexOutOfBoundsException ? "an option lacks its value" : e.getMessage()));
            err.println(USAGE);
            return 2;
        }
        if (dir == null || file == null) {
            err.println("break-glass: needs --dir (the node's grantforge.break.glass.dir) and --file (the signed snapshot)");
            err.println(USAGE);
            return 2;
        }
        try {
            return handIn(dir, file.toAbsolutePath(), waitSeconds, out, err);
        } catch (IOException e) {
            err.println("break-glass: " + e);
            return 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            err.println("break-glass: interrupted while waiting for the node's answer");
            return 1;
        }
    }

    private static int handIn(Path dir, Path file, long waitSeconds, PrintStream out, PrintStream err)
            throws IOException, InterruptedException {
        Path sig = Paths.get(file + ".sig");
        if (!Files.isRegularFile(file) || !Files.isRegularFile(sig)) {
            err.println("break-glass: " + (Files.isRegularFile(file) ? sig : file) + " does not exist; the snapshot needs its"
                + " Base64 signature beside it in " + sig.getFileName() + " (docs/reliability.md, \"Break-glass\")");
            return 1;
        }
        if (!Files.isDirectory(dir)) {
            err.println("break-glass: " + dir + " is not a directory; name the node's grantforge.break.glass.dir");
            return 1;
        }
        String id = System.currentTimeMillis() + "-" + Long.toHexString(new SecureRandom().nextLong() & Long.MAX_VALUE);
        place(dir, id + ".json", Files.readAllBytes(file));
        place(dir, id + ".json.sig", Files.readAllBytes(sig));
        String request = "{\"file\":\"" + escape(file.toString()) + "\",\"by\":\"" + escape(who()) + "\"}";
        // Last: the agent takes only a complete request.
        place(dir, id + ".request", request.getBytes(StandardCharsets.UTF_8));
        Path result = dir.resolve(id + ".result");
        if (!awaitResult(result, waitSeconds)) {
            try {
                Files.delete(dir.resolve(id + ".request"));
                Files.deleteIfExists(dir.resolve(id + ".json"));
                Files.deleteIfExists(dir.resolve(id + ".json.sig"));
                err.println("break-glass: no running node took the request within " + waitSeconds + " s, so it is withdrawn:"
                    + " is the node running, with grantforge.break.glass.dir=" + dir + "?");
                return 3;
            } catch (NoSuchFileException taken) {
                // The agent took it meanwhile: its answer follows.
                if (!awaitResult(result, waitSeconds)) {
                    err.println("break-glass: the node took the request but did not answer within " + waitSeconds + " s; see its log");
                    return 3;
                }
            }
        }
        String answer = new String(Files.readAllBytes(result), StandardCharsets.UTF_8);
        Files.deleteIfExists(result);
        int newline = answer.indexOf('\n');
        boolean applied = answer.startsWith("applied\n");
        String message = newline < 0 ? answer : answer.substring(newline + 1).trim();
        (applied ? out : err).println("break-glass: " + message);
        return applied ? 0 : 1;
    }

    private static boolean awaitResult(Path result, long waitSeconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(waitSeconds);
        while (!Files.exists(result)) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(200);
        }
        return true;
    }

    /** Writes a file under a temporary name and renames it, so the agent never reads a part of it. */
    private static void place(Path dir, String name, byte[] bytes) throws IOException {
        Path tmp = dir.resolve(name + ".tmp");
        Files.write(tmp, bytes);
        Files.move(tmp, dir.resolve(name), StandardCopyOption.ATOMIC_MOVE);
    }

    /** Who asks, as the audit names them: the account running the command and its host. */
    private static String who() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            host = "unknown-host";
        }
        return System.getProperty("user.name") + "@" + host;
    }

    private static String escape(String text) {
        StringBuilder out = new StringBuilder();
        for (char c : text.toCharArray()) {
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }
}
