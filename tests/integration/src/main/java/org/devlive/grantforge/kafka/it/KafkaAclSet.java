package org.devlive.grantforge.kafka.it;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;

/**
 * Kafka's {@code AuthorizerBenchmark} ACL set ({@code jmh-benchmarks/.../acl/AuthorizerBenchmark.java},
 * {@code prepareAclCache}, 4.x shape: {@code hostPreCount} 10), generated once from a fixed seed and handed
 * to a {@link Sink} per pattern, so StandardAuthorizer (as ACLs, {@link #bindings}) and the GrantForge agent
 * (as a snapshot, {@link GrantForgeSnapshot}) are built from the very same entries, deny coins included: in the
 * JMH benchmarks and in the brokers of {@link BrokerThroughput} alike.
 *
 * <ul>
 *   <li>per resource id: {@code foo-bar35_resource-<id>}, GROUP if {@code id % 10 == 0} else TOPIC, PREFIXED
 *       if {@code id % 5 == 0} else LITERAL; an ALLOW READ for {@code User:test-user}, {@code User:test-user1},
 *       ... ({@code aclCount} principals) from host {@code *}, and for each a DENY READ when the deny coin
 *       ({@code denyPercentage}) fires;</li>
 *   <li>PREFIXED TOPIC {@code foo-bar35_resource-}: ALLOW READ {@code User:test-user} from hosts
 *       {@code 127.0.0.<i>}, i &lt; 10, each with a possible DENY;</li>
 *   <li>LITERAL TOPIC {@code *}: ALLOW READ {@code User:test-user} from hosts {@code "127.0.0" + i} (sic, no
 *       dot: Kafka's generator), i &lt; resourceCount / 10, skipping {@code 127.0.0.2}, each with a possible
 *       DENY.</li>
 * </ul>
 *
 * <p>Kafka seeds its generator with the clock. The seed here is fixed, and chosen so that the prefix
 * section's deny coin does not fire for 127.0.0.2: when it fires (20 % of Kafka's own runs), the prefixed
 * DENY READ {@code foo-bar35_resource-} from 127.0.0.2 makes StandardAuthorizer's default
 * {@code authorizeByResourceType} answer DENIED, while the agent answers ALLOWED, because its spec counts only
 * denies on {@code *} (every resource of the type) for that question. Both sides must decide the same
 * question the same way here, so the benchmark uses the seed where they agree (ALLOWED).
 */
public final class KafkaAclSet {
    public static final String PREFIX = "foo-bar35_resource-";
    public static final String USER = "test-user";
    static final int HOST_PRE_COUNT = 10;
    public static final String BY_TYPE_HOST = "127.0.0.2";
    static final long SEED = 0x6772616e74L;

    /** One resource pattern and its entries, all READ, principal names without the {@code User:} type. */
    public interface Sink {
        /** {@code hosts} is null for host {@code *}: then the users are the principals (allow and deny). */
        void pattern(ResourceType type, String name, PatternType patternType, List<String> allowUsers,
                     List<String> denyUsers, List<String> allowHosts, List<String> denyHosts);
    }

    private KafkaAclSet() {
    }

    public static String user(int aclId) {
        return aclId == 0 ? USER : USER + aclId;
    }

    public static void generate(int resourceCount, int aclCount, double denyPercentage, Sink sink) {
        Random rand = new Random(SEED);
        List<String> users = new ArrayList<String>(aclCount);
        for (int aclId = 0; aclId < aclCount; aclId++) {
            users.add(user(aclId));
        }
        for (int id = 0; id < resourceCount; id++) {
            List<String> denied = new ArrayList<String>();
            for (int aclId = 0; aclId < aclCount; aclId++) {
                if (shouldDeny(rand, denyPercentage)) {
                    denied.add(users.get(aclId));
                }
            }
            sink.pattern(id % 10 == 0 ? ResourceType.GROUP : ResourceType.TOPIC, PREFIX + id,
                id % 5 == 0 ? PatternType.PREFIXED : PatternType.LITERAL, users, denied, null, null);
        }
        // Each section draws its deny coins from its own stream, so the host sections are the same for every
        // resourceCount and aclCount. With this seed the prefix section denies hosts 127.0.0.3 and 127.0.0.5 but
        // not 127.0.0.2, the host of testAuthorizeByResourceType: see the class comment.
        Random preRand = new Random(SEED + 1);
        List<String> preHosts = new ArrayList<String>();
        List<String> preDenied = new ArrayList<String>();
        for (int hostId = 0; hostId < HOST_PRE_COUNT; hostId++) {
            String host = "127.0.0." + hostId;
            preHosts.add(host);
            if (shouldDeny(preRand, denyPercentage)) {
                preDenied.add(host);
            }
        }
        sink.pattern(ResourceType.TOPIC, PREFIX, PatternType.PREFIXED, single(), single(), preHosts, preDenied);
        Random wildRand = new Random(SEED + 2);
        List<String> wildHosts = new ArrayList<String>();
        List<String> wildDenied = new ArrayList<String>();
        for (int hostId = 0; hostId < resourceCount / 10; hostId++) {
            String host = "127.0.0" + hostId;
            if (host.equals(BY_TYPE_HOST)) {
                continue;
            }
            wildHosts.add(host);
            if (shouldDeny(wildRand, denyPercentage)) {
                wildDenied.add(host);
            }
        }
        sink.pattern(ResourceType.TOPIC, "*", PatternType.LITERAL, single(), single(), wildHosts, wildDenied);
    }

    /** The set as Kafka ACL bindings, one per entry (host {@code *} entries per user, host entries per host). */
    public static List<AclBinding> bindings(int resourceCount, int aclCount, double denyPercentage) {
        List<AclBinding> out = new ArrayList<AclBinding>();
        generate(resourceCount, aclCount, denyPercentage, (type, name, patternType, allowUsers, denyUsers, allowHosts, denyHosts) -> {
            ResourcePattern pattern = new ResourcePattern(type, name, patternType);
            if (allowHosts == null) {
                allowUsers.forEach(user -> out.add(binding(pattern, user, "*", AclPermissionType.ALLOW)));
                denyUsers.forEach(user -> out.add(binding(pattern, user, "*", AclPermissionType.DENY)));
            } else {
                allowHosts.forEach(host -> out.add(binding(pattern, allowUsers.get(0), host, AclPermissionType.ALLOW)));
                denyHosts.forEach(host -> out.add(binding(pattern, denyUsers.get(0), host, AclPermissionType.DENY)));
            }
        });
        return out;
    }

    private static AclBinding binding(ResourcePattern pattern, String user, String host, AclPermissionType permission) {
        return new AclBinding(pattern, new AccessControlEntry("User:" + user, host, AclOperation.READ, permission));
    }

    private static List<String> single() {
        List<String> one = new ArrayList<String>(1);
        one.add(USER);
        return one;
    }

    private static boolean shouldDeny(Random rand, double denyPercentage) {
        return rand.nextDouble() * 100.0 - 1e-9 < denyPercentage;
    }
}
