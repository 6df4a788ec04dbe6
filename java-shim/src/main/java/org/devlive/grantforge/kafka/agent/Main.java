package org.devlive.grantforge.kafka.agent;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * {@code java -jar grantforge-agent-kafka-<version>.jar explain ...}: the agent's commands without a
 * broker. Runs the same native code as the broker does, so the answer is the agent's.
 */
public final class Main {
    private Main() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length > 0 && args[0].equals("migrate-acls")) {
            System.exit(MigrateAcls.run(java.util.Arrays.copyOfRange(args, 1, args.length), System.out, System.err));
            return;
        }
        if (args.length == 0 || !args[0].equals("explain")) {
            System.err.println("usage: java -jar grantforge-agent-kafka-" + AgentVersion.VERSION + ".jar explain --help");
            System.exit(2);
            return;
        }
        try {
            NativeLibraryLoader.load(System.getProperty(NativeLibraryLoader.PATH_KEY));
        } catch (NativeLibraryLoader.NativeLoadException e) {
            System.err.println("explain: " + e.getMessage());
            System.exit(1);
            return;
        }
        StringBuilder joined = new StringBuilder();
        boolean batch = false;
        for (int i = 1; i < args.length; i++) {
            joined.append(args[i]).append('\0');
            batch |= args[i].equals("--batch");
        }
        byte[] stdin = batch ? readAll(System.in) : new byte[0];
        byte[] answer = NativeAgent.explain(joined.toString().getBytes(StandardCharsets.UTF_8), stdin);
        if (answer == null || answer.length == 0) {
            System.err.println("explain: the native library failed; nothing was decided");
            System.exit(1);
            return;
        }
        int code = answer[0];
        PrintStream out = code == 0 ? System.out : System.err;
        out.write(answer, 1, answer.length - 1);
        out.flush();
        System.exit(code);
    }

    private static byte[] readAll(InputStream in) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] chunk = new byte[8192];
        int n;
        while ((n = in.read(chunk)) > 0) {
            out.write(chunk, 0, n);
        }
        return out.toByteArray();
    }
}
