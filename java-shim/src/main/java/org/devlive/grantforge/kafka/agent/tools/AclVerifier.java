package org.devlive.grantforge.kafka.agent.tools;

import java.io.File;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.apache.kafka.server.authorizer.AuthorizationResult;
import org.apache.kafka.server.authorizer.Authorizer;
import org.devlive.grantforge.kafka.agent.GrantForgeKafkaAuthorizer;
import org.devlive.grantforge.kafka.agent.KafkaAclBasis;
import org.devlive.grantforge.kafka.agent.jni.NativeAgent;

/**
 * {@code migrate-acls --verify}: asks Kafka's own {@code StandardAuthorizer}, loaded with the cluster's
 * ACLs, and the agent, on the migrated snapshot through the broker's decision path
 * ({@link GrantForgeKafkaAuthorizer#authorize}), the same questions: every principal the ACLs name and
 * one they do not, every IP address they name and one they do not, every resource they name (a prefix,
 * a name under it and one beside it; a name for the wildcard) and one they do not, every operation of
 * the {@code kafka} service type. Every difference is printed with its reason. A difference is <em>narrower, as reported</em>
 * when the agent refuses what Kafka allowed because of an ACL the migration report lists (left out, a
 * deny that also covers implied operations, a Group principal); anything else, and every case where the
 * agent allows what Kafka refused, is a <em>disagreement</em>.
 */
final class AclVerifier {
    /** What a principal, resource or address no ACL names is called in the questions. */
    static final String UNNAMED = "gf-verify-unnamed";
    /** An address no ACL names: TEST-NET-1 (RFC 5737), never a real client. */
    static final String UNNAMED_ADDRESS = "192.0.2.1";
    /** How many actions go into one {@code authorize} call. */
    private static final int BATCH = 256;
    /**
     * By default, above this many questions (every principal about every resource), each principal is asked
     * only about the resources of the ACLs that can apply to it: a few minutes of questions on both sides.
     */
    static final long MAX_CROSS_PRODUCT = 20_000_000L;
    /** Disagreements shown with the agent's {@code explain}; the rest are counted and listed briefly. */
    private static final int EXPLAINED = 20;

    /** Verification could not run (Kafka's authorizer missing, the snapshot not loaded). */
    static final class VerifyException extends Exception {
        private static final long serialVersionUID = 1L;

        VerifyException(String message) {
            super(message);
        }
    }

    /** The counts of one verification. */
    static final class Result {
        final long questions;
        final long disagreements;
        final long narrower;

        Result(long questions, long disagreements, long narrower) {
            this.questions = questions;
            this.disagreements = disagreements;
            this.narrower = narrower;
        }
    }

    private final List<AclBinding> acls;
    private final AclMigration migration;
    private final long maxCrossProduct;

    AclVerifier(List<AclBinding> acls, AclMigration migration, long maxCrossProduct) {
        this.acls = acls;
        this.migration = migration;
        this.maxCrossProduct = maxCrossProduct;
    }

    Result verify(File snapshot, PrintStream out) throws VerifyException {
        Authorizer kafka;
        try {
            kafka = KafkaInternals.standardAuthorizer(acls);
        } catch (KafkaInternals.Unavailable e) {
            throw new VerifyException(e.getMessage());
        }
        GrantForgeKafkaAuthorizer agent = new GrantForgeKafkaAuthorizer();
        Map<String, Object> settings = new HashMap<String, Object>();
        settings.put(migration.policyFileKey, snapshot.getAbsolutePath());
        agent.configure(settings);
        try {
            if (!NativeAgent.awaitSnapshot(agent.nativeHandle(), 30000L)) {
                throw new VerifyException("the agent did not load " + snapshot + " (see the log lines above)");
            }
            return compare(kafka, agent, snapshot, out);
        } finally {
            agent.close();
            try {
                kafka.close();
            } catch (Exception e) {
                out.println("verify: closing Kafka's authorizer: " + e);
            }
        }
    }

    private Result compare(Authorizer kafka, Authorizer agent, File snapshot, PrintStream out) {
        List<KafkaPrincipal> principals = principals();
        List<String> hosts = hosts();
        List<ResourcePattern> everyResource = resources(acls);
        List<AclOperation> operations = operations();
        long questions = (long) principals.size() * hosts.size() * everyResource.size() * operations.size();
        boolean crossProduct = questions <= maxCrossProduct;
        if (crossProduct) {
            out.println("verify: " + questions + " questions (" + principals.size() + " principals x " + hosts.size()
                + " addresses x " + everyResource.size() + " resources x " + operations.size()
                + " operations) asked of Kafka's StandardAuthorizer with " + acls.size() + " ACLs and of the agent on " + snapshot);
        } else {
            out.println("verify: every principal x every resource would be " + questions + " questions, more than "
                + maxCrossProduct + ": each principal is asked about the resources of its own ACLs and of User:*'s"
                + " (and one unnamed per type), from " + hosts.size() + " addresses, " + operations.size()
                + " operations, of Kafka's StandardAuthorizer with " + acls.size() + " ACLs and of the agent on " + snapshot);
            questions = 0;
        }
        Set<AclOperation> unknown = unknownToTheAgent(operations);
        if (!unknown.isEmpty()) {
            out.println("verify: not asked: " + unknown + ", which this Kafka release has and the agent does not know"
                + ": it refuses them whatever the policies say (where Kafka's ACLs of ALL allowed them)");
        }
        long started = System.nanoTime();
        long disagreements = 0;
        long narrower = 0;
        for (KafkaPrincipal principal : principals) {
            List<ResourcePattern> resources = crossProduct ? everyResource : resources(aclsApplyingTo(principal));
            if (!crossProduct) {
                questions += (long) hosts.size() * resources.size() * operations.size();
            }
            for (String host : hosts) {
                AuthorizableRequestContext context = context(principal, host);
                List<Action> batch = new ArrayList<Action>(BATCH);
                for (ResourcePattern resource : resources) {
                    for (AclOperation operation : operations) {
                        batch.add(new Action(operation, resource, 1, false, false));
                        if (batch.size() == BATCH) {
                            long[] counts = compareBatch(kafka, agent, context, batch, snapshot, out, disagreements);
                            disagreements += counts[0];
                            narrower += counts[1];
                            batch.clear();
                        }
                    }
                }
                if (!batch.isEmpty()) {
                    long[] counts = compareBatch(kafka, agent, context, batch, snapshot, out, disagreements);
                    disagreements += counts[0];
                    narrower += counts[1];
                }
            }
        }
        String verdict = disagreements > 0 ? ""
            : narrower > 0 ? ": the agent decides as Kafka's ACLs did, but where the report says it refuses more"
            : ": the agent decides as Kafka's ACLs did";
        out.println("verify: " + questions + " questions asked in " + (System.nanoTime() - started) / 1_000_000L + " ms; "
            + disagreements + " disagreements, " + narrower + " answers narrower as the report says" + verdict);
        return new Result(questions, disagreements, narrower);
    }

    /** The disagreements and the reported narrowings of one batch: {disagreements, narrower}. */
    private long[] compareBatch(Authorizer kafka, Authorizer agent, AuthorizableRequestContext context, List<Action> batch,
                                File snapshot, PrintStream out, long disagreementsSoFar) {
        List<AuthorizationResult> expected = kafka.authorize(context, batch);
        List<AuthorizationResult> actual = agent.authorize(context, batch);
        long disagreements = 0;
        long narrower = 0;
        for (int i = 0; i < batch.size(); i++) {
            boolean kafkaAllows = expected.get(i) == AuthorizationResult.ALLOWED;
            boolean agentAllows = actual.get(i) == AuthorizationResult.ALLOWED;
            if (kafkaAllows == agentAllows) {
                continue;
            }
            Action action = batch.get(i);
            String question = question(context, action) + ": Kafka " + (kafkaAllows ? "ALLOWED" : "DENIED")
                + ", the agent " + (agentAllows ? "ALLOWED" : "DENIED");
            AclMigration.Entry reported = kafkaAllows ? reportedNarrowing(context, action) : null;
            if (reported != null) {
                narrower++;
                out.println("NARROWER  " + question + ", as the report says of "
                    + KafkaAclBasis.describe(acls.get(reported.acl)) + ": " + reported.message);
                continue;
            }
            disagreements++;
            out.println("DISAGREE  " + question);
            out.println("    why Kafka: " + kafkaReason(context, action, kafkaAllows));
            if (disagreementsSoFar + disagreements <= EXPLAINED) {
                out.println("    why the agent (explain):");
                for (String line : explain(snapshot, context, action).split("\n")) {
                    out.println("      " + line);
                }
            }
        }
        return new long[] {disagreements, narrower};
    }

    /** A report entry whose ACL matches the question and narrows its operation, if any. */
    private AclMigration.Entry reportedNarrowing(AuthorizableRequestContext context, Action action) {
        for (AclMigration.Entry entry : migration.report) {
            if (entry.narrowed.contains(action.operation()) && matches(acls.get(entry.acl), context, action)) {
                return entry;
            }
        }
        return null;
    }

    /** Whether Kafka applies {@code acl} to the question, whatever its operation: its pattern, principal and host. */
    private static boolean matches(AclBinding acl, AuthorizableRequestContext context, Action action) {
        ResourcePattern resource = action.resourcePattern();
        return new ResourcePatternFilter(resource.resourceType(), resource.name(), PatternType.MATCH).matches(acl.pattern())
            && KafkaAclBasis.appliesTo(acl, context);
    }

    private String kafkaReason(AuthorizableRequestContext context, Action action, boolean allowed) {
        List<String> matching = new ArrayList<String>();
        for (AclBinding acl : acls) {
            if (matches(acl, context, action)) {
                matching.add(KafkaAclBasis.describe(acl));
            }
        }
        if (matching.isEmpty()) {
            return "no ACL matches the resource, principal and address, so " + (allowed ? "allowed" : "denied");
        }
        return "the ACLs that match the resource, principal and address: " + String.join("; ", matching);
    }

    private static String explain(File snapshot, AuthorizableRequestContext context, Action action) {
        ResourcePattern resource = action.resourcePattern();
        List<String> args = new ArrayList<String>();
        Collections.addAll(args, "--snapshot", snapshot.getAbsolutePath(), "--principal", context.principal().toString(),
            "--operation", action.operation().name(), "--host", context.clientAddress().getHostAddress());
        switch (resource.resourceType()) {
            case CLUSTER:
                args.add("--cluster");
                break;
            default:
                args.add("--" + resource.resourceType().name().toLowerCase(java.util.Locale.ROOT).replace('_', '-'));
                args.add(resource.name());
        }
        ExplainCodec.Answer answer = ExplainCodec.run(args, new byte[0]);
        return answer == null ? "(explain failed in the native library)" : answer.output.trim();
    }

    private static String question(AuthorizableRequestContext context, Action action) {
        ResourcePattern resource = action.resourcePattern();
        return context.principal() + " from " + context.clientAddress().getHostAddress() + " " + action.operation()
            + " " + resource.resourceType() + " `" + resource.name() + "`";
    }


    // ---------------------------------------------------------------------------------------------
    // the questions

    /** Every principal the ACLs name ({@code User:*} is asked through the others) and one they do not. */
    private List<KafkaPrincipal> principals() {
        Set<String> names = new TreeSet<String>();
        for (AclBinding acl : acls) {
            names.add(acl.entry().principal());
        }
        names.remove("User:*");
        List<KafkaPrincipal> principals = new ArrayList<KafkaPrincipal>();
        for (String name : names) {
            // as Kafka parses an ACL's principal; not Type:name, no client can be it
            int colon = name.indexOf(':');
            if (colon > 0) {
                principals.add(new KafkaPrincipal(name.substring(0, colon), name.substring(colon + 1)));
            }
        }
        principals.add(new KafkaPrincipal(KafkaPrincipal.USER_TYPE, UNNAMED));
        return principals;
    }

    /**
     * Every host the ACLs name that is an IP address literal, as the client's address Kafka compares it
     * with, and one address no ACL names. (A host name is never resolved: Kafka never compares with one.)
     */
    private List<String> hosts() {
        Set<String> hosts = new LinkedHashSet<String>();
        for (AclBinding acl : acls) {
            String host = acl.entry().host();
            if (!host.equals("*") && host.matches("[0-9.]+|[0-9a-fA-F:.]*:[0-9a-fA-F:.]*")) {
                try {
                    hosts.add(InetAddress.getByName(host).getHostAddress());
                } catch (UnknownHostException e) {
                    // not an address: no client has it
                }
            }
        }
        hosts.add(UNNAMED_ADDRESS);
        return new ArrayList<String>(hosts);
    }

    /** The ACLs Kafka may apply to {@code principal}: its own and those of {@code User:*}. */
    private List<AclBinding> aclsApplyingTo(KafkaPrincipal principal) {
        List<AclBinding> applying = new ArrayList<AclBinding>();
        for (AclBinding acl : acls) {
            String named = acl.entry().principal();
            if (named.equals("User:*") || named.equals(principal.toString())) {
                applying.add(acl);
            }
        }
        return applying;
    }

    /** Per resource type {@code acls} name: their names, a name under and beside each prefix, and one unnamed name. */
    private static List<ResourcePattern> resources(List<AclBinding> acls) {
        Map<ResourceType, Set<String>> names = new TreeMap<ResourceType, Set<String>>();
        for (AclBinding acl : acls) {
            ResourceType type = acl.pattern().resourceType();
            if (type == ResourceType.UNKNOWN || type == ResourceType.ANY) {
                continue;
            }
            Set<String> ofType = names.get(type);
            if (ofType == null) {
                ofType = new TreeSet<String>();
                ofType.add(type == ResourceType.CLUSTER ? "kafka-cluster" : UNNAMED);
                names.put(type, ofType);
            }
            String name = acl.pattern().name();
            if (type == ResourceType.CLUSTER) {
                continue;
            }
            if (acl.pattern().patternType() == PatternType.PREFIXED) {
                ofType.add(name);
                ofType.add(name + "-" + UNNAMED);
                ofType.add(name.length() > 1 ? name.substring(0, name.length() - 1) : UNNAMED + "-beside");
            } else if (!name.equals(ResourcePattern.WILDCARD_RESOURCE)) {
                ofType.add(name);
            }
        }
        List<ResourcePattern> resources = new ArrayList<ResourcePattern>();
        for (Map.Entry<ResourceType, Set<String>> entry : names.entrySet()) {
            for (String name : entry.getValue()) {
                resources.add(new ResourcePattern(entry.getKey(), name, PatternType.LITERAL));
            }
        }
        return resources;
    }

    /**
     * What brokers ask, as far as the policies can answer: the operations of this Kafka release that the agent knows
     * (its table of Kafka's operations), except ALL, which brokers never ask.
     */
    private static List<AclOperation> operations() {
        List<AclOperation> operations = new ArrayList<AclOperation>();
        for (byte code : NativeAgent.operationCodes()) {
            AclOperation operation = AclOperation.fromCode(code);
            if (operation != AclOperation.UNKNOWN && operation != AclOperation.ALL) {
                operations.add(operation);
            }
        }
        return operations;
    }

    /**
     * The operations of this Kafka release the agent does not know ({@code asked}: those it does, from
     * {@link #operations()}): it refuses them whatever the policies say.
     */
    private static Set<AclOperation> unknownToTheAgent(List<AclOperation> asked) {
        Set<AclOperation> unknown = EnumSet.allOf(AclOperation.class);
        unknown.removeAll(EnumSet.of(AclOperation.UNKNOWN, AclOperation.ANY, AclOperation.ALL));
        unknown.removeAll(asked);
        return unknown;
    }

    private static AuthorizableRequestContext context(final KafkaPrincipal principal, String host) {
        final InetAddress address;
        try {
            address = InetAddress.getByName(host);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(host, e);
        }
        return new AuthorizableRequestContext() {
            @Override public String listenerName() { return "MIGRATION_VERIFY"; }
            @Override public SecurityProtocol securityProtocol() { return SecurityProtocol.PLAINTEXT; }
            @Override public KafkaPrincipal principal() { return principal; }
            @Override public InetAddress clientAddress() { return address; }
            @Override public int requestType() { return 0; }
            @Override public int requestVersion() { return 0; }
            @Override public String clientId() { return "migrate-acls-verify"; }
            @Override public int correlationId() { return 0; }
        };
    }
}
