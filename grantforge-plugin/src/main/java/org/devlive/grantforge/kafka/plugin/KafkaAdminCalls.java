package org.devlive.grantforge.kafka.plugin;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.ListTransactionsOptions;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.config.SaslConfigs;
import org.devlive.grantforge.plugin.api.ServiceConfig;

/**
 * The plugin's calls to Kafka, each with one Admin client made for it and closed before it returns (a rescan
 * drops the plugin's class loader; a client left open would keep its threads and classes alive). Every request
 * carries the service's timeout, and each wait is bounded by it again, so a call ends within the host's limit.
 */
final class KafkaAdminCalls implements AutoCloseable {

    /** Beyond the requests' own timeout, so that Kafka's error (which says more) arrives before the wait ends. */
    private static final int WAIT_SLACK_MS = 500;

    private final Admin admin;
    /**
     * One budget for the whole call, from before the client is made: requests made one after another share it, so
     * a call takes at most the service's timeout, the slack and the close (at most 8 + 0.5 + 1 s of the host's 10).
     */
    private final long deadlineNanos;

    private KafkaAdminCalls(Admin admin, long deadlineNanos) {
        this.admin = admin;
        this.deadlineNanos = deadlineNanos;
    }

    static KafkaAdminCalls open(ServiceConfig config) {
        long deadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(AdminSettings.timeoutMs(config));
        // Kafka finds its login modules and callback handlers through the context class loader, which the host
        // sets to the plugin's during a call; set it anyway for callers that do not
        Thread thread = Thread.currentThread();
        ClassLoader previous = thread.getContextClassLoader();
        thread.setContextClassLoader(KafkaAdminCalls.class.getClassLoader());
        try {
            Properties settings = AdminSettings.of(config);
            if ("OAUTHBEARER".equals(settings.getProperty(SaslConfigs.SASL_MECHANISM))) {
                OAuthProviderOfThisLoader.install();
            }
            return new KafkaAdminCalls(Admin.create(settings), deadlineNanos);
        } finally {
            thread.setContextClassLoader(previous);
        }
    }

    record ClusterSummary(String clusterId, int brokers, int visibleTopics) {
    }

    ClusterSummary describe() throws Exception {
        DescribeClusterResult cluster = admin.describeCluster(new DescribeClusterOptions().timeoutMs(remainingMs()));
        String clusterId = cluster.clusterId().get(waitMs(), TimeUnit.MILLISECONDS);
        Collection<Node> nodes = cluster.nodes().get(waitMs(), TimeUnit.MILLISECONDS);
        return new ClusterSummary(clusterId, nodes.size(), topics(false).size());
    }

    Set<String> topics(boolean internal) throws Exception {
        return admin.listTopics(new ListTopicsOptions().listInternal(internal).timeoutMs(remainingMs())).names()
                .get(waitMs(), TimeUnit.MILLISECONDS);
    }

    /** Groups of every type the broker knows: classic, consumer, share and streams (KIP-1043). */
    Stream<String> groups() throws Exception {
        Collection<GroupListing> groups = admin.listGroups(new ListGroupsOptions().timeoutMs(remainingMs())).all()
                .get(waitMs(), TimeUnit.MILLISECONDS);
        return groups.stream().map(GroupListing::groupId);
    }

    Stream<String> transactionalIds() throws Exception {
        Collection<TransactionListing> transactions = admin.listTransactions(new ListTransactionsOptions().timeoutMs(remainingMs()))
                .all().get(waitMs(), TimeUnit.MILLISECONDS);
        return transactions.stream().map(TransactionListing::transactionalId);
    }

    /** What is left of the budget for the next request; at least 1 ms, so that Kafka still reports its timeout. */
    private int remainingMs() {
        return (int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime()));
    }

    private long waitMs() {
        return remainingMs() + WAIT_SLACK_MS;
    }

    @Override
    public void close() {
        admin.close(Duration.ofMillis(AdminSettings.CLOSE_TIMEOUT_MS));
    }

    static List<String> matching(Stream<String> names, String prefix, int limit) {
        return names.filter(name -> name.startsWith(prefix)).distinct().sorted().limit(limit).toList();
    }
}
