package org.devlive.grantforge.kafka.agent.tools;

import java.lang.reflect.Method;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.server.authorizer.Authorizer;

/**
 * The one place the JAR's tools reach into Kafka's internals, by reflection: Kafka's own {@code StandardAuthorizer},
 * which {@code migrate-acls --verify} asks beside the agent. It is in Kafka's metadata jar ({@code $KAFKA_HOME/libs}),
 * which the shim does not compile against, and its loading methods are not a public API: the integration tests run
 * it on every supported release ({@code WalkingSkeleton}, {@code MigratedAcls}). The plugin itself never uses this.
 */
final class KafkaInternals {
    private static final String STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer";
    private static final String STANDARD_ACL = "org.apache.kafka.metadata.authorizer.StandardAcl";

    /** Kafka's internals are not on the class path, or not as this release of the agent knows them. */
    static final class Unavailable extends Exception {
        Unavailable(String message) {
            super(message);
        }
    }

    private KafkaInternals() {
    }

    /**
     * Kafka's {@code StandardAuthorizer} holding {@code acls}, without super users and with
     * {@code allow.everyone.if.no.acl.found} false, as a KRaft broker loads them. Reached by reflection:
     * it is in Kafka's metadata jar (in {@code $KAFKA_HOME/libs}), which the shim does not compile against.
     */
    static Authorizer standardAuthorizer(List<AclBinding> acls) throws Unavailable {
        try {
            Class<?> authorizerClass = Class.forName(STANDARD_AUTHORIZER);
            Authorizer authorizer = (Authorizer) authorizerClass.getConstructor().newInstance();
            authorizer.configure(Collections.<String, Object>emptyMap());
            givePluginMetrics(authorizerClass, authorizer);
            Method fromAclBinding = Class.forName(STANDARD_ACL).getMethod("fromAclBinding", AclBinding.class);
            Map<Uuid, Object> loaded = new HashMap<Uuid, Object>();
            for (AclBinding acl : acls) {
                loaded.put(Uuid.randomUuid(), fromAclBinding.invoke(null, acl));
            }
            authorizerClass.getMethod("loadSnapshot", Map.class).invoke(authorizer, loaded);
            authorizerClass.getMethod("completeInitialLoad").invoke(authorizer);
            return authorizer;
        } catch (ClassNotFoundException e) {
            throw new Unavailable("Kafka's " + STANDARD_AUTHORIZER + " is not on the classpath: put $KAFKA_HOME/libs/* on it");
        } catch (ReflectiveOperationException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            throw new Unavailable("cannot load the ACLs into Kafka's StandardAuthorizer: " + cause);
        }
    }

    /**
     * Since Kafka 4.1 {@code StandardAuthorizer} counts its answers in metrics the broker gives it
     * ({@code Monitorable.withPluginMetrics}), and {@code authorize} fails without them: give it metrics of its
     * own. Before 4.1 there is no such method, and nothing to do.
     */
    private static void givePluginMetrics(Class<?> authorizerClass, Authorizer authorizer) throws ReflectiveOperationException {
        Class<?> pluginMetrics;
        try {
            pluginMetrics = Class.forName("org.apache.kafka.common.metrics.PluginMetrics");
        } catch (ClassNotFoundException e) {
            return;
        }
        Method with;
        try {
            with = authorizerClass.getMethod("withPluginMetrics", pluginMetrics);
        } catch (NoSuchMethodException e) {
            return;
        }
        Object metrics = Class.forName("org.apache.kafka.common.metrics.internals.PluginMetricsImpl")
            .getConstructor(org.apache.kafka.common.metrics.Metrics.class, Map.class)
            .newInstance(new org.apache.kafka.common.metrics.Metrics(), Collections.<String, String>emptyMap());
        with.invoke(authorizer, metrics);
    }
}
