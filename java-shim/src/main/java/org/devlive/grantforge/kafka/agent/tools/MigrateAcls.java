package org.devlive.grantforge.kafka.agent.tools;

import java.io.File;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.devlive.grantforge.kafka.agent.jni.AgentVersion;
import org.devlive.grantforge.kafka.agent.jni.NativeLibraryLoader;

/**
 * {@code migrate-acls}: reads every ACL of a running cluster through the Admin API and writes the
 * equivalent GrantForge policies (the mapping is the native library's, {@link AclMigration}), then,
 * with {@code --verify}, asks Kafka's {@code StandardAuthorizer} and the agent the same questions
 * ({@link AclVerifier}). Kafka's client and server jars must be on the classpath: run it as
 * {@code java -cp "grantforge-agent-kafka-<version>.jar:$KAFKA_HOME/libs/*" org.devlive.grantforge.kafka.agent.tools.Main migrate-acls ...}.
 */
final class MigrateAcls {
    static final String SNAPSHOT_FILE = "grantforge-snapshot.json";
    static final String REQUESTS_FILE = "policy-requests.json";
    static final String REPORT_FILE = "report.txt";

    static final String USAGE = "usage: migrate-acls --bootstrap-server HOST:PORT [--command-config FILE] [--service NAME]\n"
        + "                    (--out DIR [--verify] | --verify --snapshot FILE) [--strict] [--max-questions N]\n"
        + "                    [--accept-widening]\n"
        + "  --out DIR       writes " + SNAPSHOT_FILE + " (a snapshot for grantforge.policy.file), " + REQUESTS_FILE + "\n"
        + "                  (bodies of GrantForge's POST /api/v1/services/{id}/policies) and " + REPORT_FILE + "\n"
        + "  --service NAME  the GrantForge service the snapshot names (default kafka)\n"
        + "  --verify        asks Kafka's StandardAuthorizer, loaded with the cluster's ACLs, and the agent on the\n"
        + "                  snapshot (--snapshot FILE, or the one just written) the same questions; exits 1 on a\n"
        + "                  disagreement the report does not explain (--strict: on any difference); above N questions\n"
        + "                  (default " + AclVerifier.MAX_CROSS_PRODUCT + "), each principal is asked about its own ACLs' resources only\n"
        + "  --accept-widening  exits 0 although some ACLs, as migrated, can allow more than Kafka did (a DENY left\n"
        + "                  out, an ACL of a Group: principal given to a GrantForge group's users); without it such\n"
        + "                  a migration exits 1 after writing its files and naming those ACLs\n"
        + "Run with Kafka's jars on the classpath:\n"
        + "  java -cp \"grantforge-agent-kafka-" + AgentVersion.VERSION + ".jar:$KAFKA_HOME/libs/*\" "
        + Main.class.getName() + " migrate-acls ...";

    private static final long ADMIN_TIMEOUT_S = 120;

    private MigrateAcls() {
    }

    /** Runs the command; returns the exit code (0 done and agreed, 1 failed or disagreed, 2 usage). */
    static int run(String[] args, PrintStream out, PrintStream err) {
        String bootstrap = null;
        String commandConfig = null;
        String service = "kafka";
        String outDir = null;
        String snapshot = null;
        boolean verify = false;
        boolean strict = false;
        boolean acceptWidening = false;
        long maxQuestions = AclVerifier.MAX_CROSS_PRODUCT;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (arg.equals("--verify")) {
                verify = true;
            } else if (arg.equals("--strict")) {
                strict = true;
            } else if (arg.equals("--accept-widening")) {
                acceptWidening = true;
            } else if (arg.equals("--help") || arg.equals("-h")) {
                out.println(USAGE);
                return 0;
            } else if (i + 1 < args.length && arg.equals("--bootstrap-server")) {
                bootstrap = args[++i];
            } else if (i + 1 < args.length && arg.equals("--command-config")) {
                commandConfig = args[++i];
            } else if (i + 1 < args.length && arg.equals("--service")) {
                service = args[++i];
            } else if (i + 1 < args.length && arg.equals("--out")) {
                outDir = args[++i];
            } else if (i + 1 < args.length && arg.equals("--snapshot")) {
                snapshot = args[++i];
            } else if (i + 1 < args.length && arg.equals("--max-questions")) {
                try {
                    maxQuestions = Long.parseLong(args[++i]);
                } catch (NumberFormatException e) {
                    err.println("migrate-acls: --max-questions takes a number, not `" + args[i] + "`");
                    return 2;
                }
            } else {
                err.println("migrate-acls: unknown or incomplete option `" + arg + "`\n" + USAGE);
                return 2;
            }
        }
        if (bootstrap == null || (outDir == null && !(verify && snapshot != null))) {
            err.println("migrate-acls: give --bootstrap-server, and --out DIR or --verify --snapshot FILE\n" + USAGE);
            return 2;
        }
        try {
            NativeLibraryLoader.load(System.getProperty(NativeLibraryLoader.PATH_KEY));
        } catch (NativeLibraryLoader.NativeLoadException e) {
            err.println("migrate-acls: " + e.getMessage());
            return 1;
        }
        try {
            List<AclBinding> acls = describeAcls(bootstrap, commandConfig);
            AclMigration migration = AclMigration.migrate(service, acls);
            if (outDir != null) {
                File dir = new File(outDir);
                if (!dir.isDirectory() && !dir.mkdirs()) {
                    err.println("migrate-acls: cannot create the directory " + dir);
                    return 1;
                }
                write(new File(dir, SNAPSHOT_FILE), migration.snapshotJson);
                write(new File(dir, REQUESTS_FILE), migration.policyRequestsJson);
                write(new File(dir, REPORT_FILE), migration.reportText);
                out.print(migration.reportText);
                out.println("migrate-acls: wrote " + SNAPSHOT_FILE + ", " + REQUESTS_FILE + " and " + REPORT_FILE + " to " + dir);
                if (snapshot == null) {
                    snapshot = new File(dir, SNAPSHOT_FILE).getPath();
                }
            }
            List<AclMigration.Entry> widening = outDir == null
                ? Collections.<AclMigration.Entry>emptyList() : migration.widening(acls);
            boolean widens = !widening.isEmpty();
            if (widens) {
                reportWidening(widening, acls, acceptWidening, out);
            }
            int refused = widens && !acceptWidening ? 1 : 0;
            if (!verify) {
                return refused;
            }
            AclVerifier.Result result = new AclVerifier(acls, migration, maxQuestions).verify(new File(snapshot), out);
            return result.disagreements > 0 || (strict && result.narrower > 0) ? 1 : refused;
        } catch (NoClassDefFoundError e) {
            err.println("migrate-acls: Kafka's classes are not on the classpath (" + e.getMessage() + ")\n" + USAGE);
            return 1;
        } catch (AclMigration.MigrationException | AclVerifier.VerifyException | IOException e) {
            err.println("migrate-acls: " + e.getMessage());
            return 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            err.println("migrate-acls: interrupted");
            return 1;
        } catch (Exception e) {
            err.println("migrate-acls: failed: " + e);
            return 1;
        }
    }

    /** Names the ACLs whose migration can allow more than Kafka did, and what the exit code will be. */
    private static void reportWidening(List<AclMigration.Entry> widening, List<AclBinding> acls, boolean accepted,
                                       PrintStream out) {
        out.println("migrate-acls: " + widening.size() + " ACLs, as migrated, can allow more than Kafka did:");
        for (AclMigration.Entry entry : widening) {
            out.println("  WIDENS    " + acls.get(entry.acl) + ": " + entry.message);
        }
        out.println(accepted
            ? "migrate-acls: accepted with --accept-widening"
            : "migrate-acls: review them (the files are written), then rerun with --accept-widening to accept; exit 1");
    }

    /** Every ACL of the cluster, in a fixed order so that the same ACLs write the same files. */
    private static List<AclBinding> describeAcls(String bootstrap, String commandConfig) throws Exception {
        Properties props = new Properties();
        if (commandConfig != null) {
            InputStream in = new FileInputStream(commandConfig);
            try {
                props.load(in);
            } finally {
                in.close();
            }
        }
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        Admin admin = Admin.create(props);
        try {
            List<AclBinding> acls = new ArrayList<AclBinding>(
                admin.describeAcls(AclBindingFilter.ANY).values().get(ADMIN_TIMEOUT_S, TimeUnit.SECONDS));
            Collections.sort(acls, new Comparator<AclBinding>() {
                @Override
                public int compare(AclBinding a, AclBinding b) {
                    return a.toString().compareTo(b.toString());
                }
            });
            return acls;
        } finally {
            admin.close();
        }
    }

    private static void write(File file, String text) throws IOException {
        OutputStream out = new FileOutputStream(file);
        try {
            out.write(text.getBytes(StandardCharsets.UTF_8));
        } finally {
            out.close();
        }
    }
}
