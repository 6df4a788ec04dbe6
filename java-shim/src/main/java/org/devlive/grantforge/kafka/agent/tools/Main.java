package org.devlive.grantforge.kafka.agent.tools;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.devlive.grantforge.kafka.agent.jni.AgentVersion;
import org.devlive.grantforge.kafka.agent.jni.NativeLibraryLoader;

/**
 * {@code java -jar grantforge-agent-kafka-<version>.jar explain ...}: the agent's commands without a
 * broker. Runs the same native code as the broker does, so the answer is the agent's. {@code explain --quota
 * --bootstrap-server B [--command-config F]} first reads the cluster's quota entities ({@link ClusterQuotas}; it
 * needs kafka-clients on the class path).
 */
public final class Main {
    /** Every command, one line each: what {@code java -jar <jar>}, {@code help} and {@code --help} print. */
    static final String USAGE = "usage: java -jar grantforge-agent-kafka-" + AgentVersion.VERSION + ".jar COMMAND ...\n"
        + "  explain ...                 what the agent would decide for a request, and why (docs/explain.md)\n"
        + "  explain --quota ...         the group, rule and limit the quota callback gives a connection (docs/quotas.md)\n"
        + "  explain --principal-of ...  the principal Kafka gives a certificate or a Kerberos name (docs/transports.md)\n"
        + "  explain --disagreements ... what shadow or compare mode counted on a node, read over JMX (docs/operations.md)\n"
        + "  migrate-acls ...            Kafka's ACLs as GrantForge policies, and --verify (docs/operations.md)\n"
        + "  check-config ...            whether the classes server.properties names for the agent load on this Kafka\n"
        + "  break-glass ...             hand a snapshot signed with the pinned key to a running node (docs/reliability.md)\n"
        + "  help                        this text; COMMAND --help prints the command's own\n"
        + "explain --quota --bootstrap-server, explain --principal-of, migrate-acls and check-config need Kafka's jars on the\n"
        + "class path:\n"
        + "  java -cp \"grantforge-agent-kafka-" + AgentVersion.VERSION + ".jar:$KAFKA_HOME/libs/*\" " + Main.class.getName()
        + " COMMAND ...";

    private Main() {
    }

    public static void main(String[] args) throws IOException {
        String command = args.length == 0 ? "" : args[0];
        switch (command) {
            case "help":
            case "--help":
            case "-h":
                System.out.println(USAGE);
                System.exit(0);
                return;
            case "migrate-acls":
                System.exit(MigrateAcls.run(java.util.Arrays.copyOfRange(args, 1, args.length), System.out, System.err));
                return;
            case "break-glass":
                System.exit(BreakGlass.run(java.util.Arrays.copyOfRange(args, 1, args.length), System.out, System.err));
                return;
            case "check-config":
                System.exit(CheckConfig.run(java.util.Arrays.copyOfRange(args, 1, args.length), System.out, System.err));
                return;
            case "explain":
                explain(args);
                return;
            default:
                System.err.println((command.isEmpty() ? "" : "unknown command `" + command + "`\n") + USAGE);
                System.exit(2);
        }
    }

    private static void explain(String[] args) throws IOException {
        if (Disagreements.asked(args)) {
            System.exit(Disagreements.run(java.util.Arrays.copyOfRange(args, 1, args.length), System.out, System.err));
            return;
        }
        boolean help = java.util.Arrays.asList(args).contains("--help") || java.util.Arrays.asList(args).contains("-h");
        if (PrincipalOf.asked(args) && !help) {
            args = principalOf(args);
        }
        try {
            NativeLibraryLoader.load(System.getProperty(NativeLibraryLoader.PATH_KEY));
        } catch (NativeLibraryLoader.NativeLoadException e) {
            System.err.println("explain: " + e.getMessage());
            System.exit(1);
            return;
        }
        boolean quota = java.util.Arrays.asList(args).contains("--quota");
        List<String> arguments = new ArrayList<String>();
        boolean readStdin = false;
        String bootstrapServers = null;
        String commandConfig = null;
        for (int i = 1; i < args.length; i++) {
            // A cluster's quotas are read here (the Admin API is Java) and handed over as a file on standard input.
            if (quota && args[i].equals("--bootstrap-server") && i + 1 < args.length) {
                bootstrapServers = args[++i];
                continue;
            }
            if (quota && args[i].equals("--command-config") && i + 1 < args.length) {
                commandConfig = args[++i];
                continue;
            }
            arguments.add(args[i]);
            readStdin |= args[i].equals("--batch") || (args[i].equals("--quota-file") && i + 1 < args.length && args[i + 1].equals("-"));
        }
        byte[] stdin;
        if (bootstrapServers != null) {
            // named too: the native side then takes no entities as the cluster's answer, not as an empty file
            Collections.addAll(arguments, "--bootstrap-server", bootstrapServers, "--quota-file", "-");
            stdin = clusterQuotas(bootstrapServers, commandConfig);
        } else {
            stdin = readStdin ? readAll(System.in) : new byte[0];
        }
        ExplainCodec.Answer answer = ExplainCodec.run(arguments, stdin);
        if (answer == null) {
            System.err.println("explain: the native library failed; nothing was decided");
            System.exit(1);
            return;
        }
        int code = answer.exitCode;
        PrintStream out = code == 0 ? System.out : System.err;
        out.print(answer.output);
        if (help) {
            out.println(PrincipalOf.USAGE);
        }
        out.flush();
        System.exit(code);
    }

    /**
     * {@code explain --principal-of}: prints the principal Kafka gives the certificate or Kerberos name, and returns
     * the arguments of the decision for it; exits when none is asked or on failure.
     */
    private static String[] principalOf(String[] args) {
        try {
            String[] question = PrincipalOf.resolve(java.util.Arrays.copyOfRange(args, 1, args.length), System.out);
            if (question != null) {
                String[] explain = new String[question.length + 1];
                explain[0] = args[0];
                System.arraycopy(question, 0, explain, 1, question.length);
                return explain;
            }
            System.exit(0);
        } catch (PrincipalOf.UsageException e) {
            System.err.println("explain: " + e.getMessage());
            System.err.println(PrincipalOf.USAGE);
            System.exit(2);
        } catch (NoClassDefFoundError e) {
            System.err.println("explain: " + PrincipalOf.OPTION + " computes the principal with Kafka's own classes and needs"
                + " kafka-clients on the class path: java -cp \"grantforge-agent-kafka-" + AgentVersion.VERSION
                + ".jar:$KAFKA_HOME/libs/*\" " + Main.class.getName() + " explain " + PrincipalOf.OPTION + " ...");
            System.exit(1);
        } catch (IOException | java.security.GeneralSecurityException | RuntimeException e) {
            System.err.println("explain: " + PrincipalOf.OPTION + ": " + e.getMessage());
            System.exit(1);
        }
        return args;
    }

    /** The cluster's quota entities as {@code kafka-configs --describe} prints them; exits on failure. */
    private static byte[] clusterQuotas(String bootstrapServers, String commandConfig) {
        try {
            return ClusterQuotas.describe(bootstrapServers, commandConfig).getBytes(StandardCharsets.UTF_8);
        } catch (NoClassDefFoundError e) {
            System.err.println("explain: --bootstrap-server needs kafka-clients on the class path: java -cp \"grantforge-agent-kafka-"
                + AgentVersion.VERSION + ".jar:$KAFKA_HOME/libs/*\" " + Main.class.getName() + " explain --quota ...");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            System.err.println("explain: interrupted while reading the cluster's quotas");
        } catch (Exception e) {
            System.err.println("explain: cannot read the quotas of " + bootstrapServers + ": " + e);
        }
        System.exit(1);
        return new byte[0];
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
