package org.devlive.grantforge.kafka.agent;

import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.apache.kafka.server.authorizer.Authorizer;

/**
 * The Kafka ACL behind an answer of Kafka's {@code StandardAuthorizer}, in words: asked only for a disagreement of shadow
 * and compare modes (a few times per disagreement key), over the ACLs {@code acls(filter)} lists for the resource.
 * Kafka's rules, as {@code StandardAuthorizerData} applies them (super users aside: the agent allows them before any
 * policy, so they are never a disagreement and never left to Kafka's ACLs): a DENY that matches the
 * principal, host and operation (or ALL) refuses; an ALLOW that matches allows, ALLOW of READ, WRITE, DELETE or ALTER
 * implying DESCRIBE and ALLOW of ALTER_CONFIGS implying DESCRIBE_CONFIGS; with no ACL on the resource at all,
 * {@code allow.everyone.if.no.acl.found} answers.
 */
public final class KafkaAclBasis {
    private KafkaAclBasis() {
    }

    /** Why Kafka answered {@code allowed}, naming the ACL that decided when one did. */
    static String of(Authorizer kafka, AuthorizableRequestContext context, Action action, boolean allowed) {
        ResourcePattern resource = action.resourcePattern();
        AclBindingFilter onTheResource = new AclBindingFilter(
            new ResourcePatternFilter(resource.resourceType(), resource.name(), PatternType.MATCH),
            AccessControlEntryFilter.ANY);
        boolean anyAcl = false;
        AclBinding allowing = null;
        for (AclBinding acl : kafka.acls(onTheResource)) {
            anyAcl = true;
            if (!appliesTo(acl, context)) {
                continue;
            }
            AclOperation operation = acl.entry().operation();
            if (acl.entry().permissionType() == AclPermissionType.DENY
                && (operation == action.operation() || operation == AclOperation.ALL)) {
                return "DENY ACL " + describe(acl);
            }
            if (allowing == null && acl.entry().permissionType() == AclPermissionType.ALLOW
                && grants(operation, action.operation())) {
                allowing = acl;
            }
        }
        if (allowing != null) {
            return "ALLOW ACL " + describe(allowing);
        }
        return anyAcl ? "no ACL allows it" : "no ACL on the resource (allow.everyone.if.no.acl.found decides)";
    }

    /** Whether Kafka applies {@code acl} to the request's principal and address (its pattern is the caller's). */
    public static boolean appliesTo(AclBinding acl, AuthorizableRequestContext context) {
        String principal = acl.entry().principal();
        String host = acl.entry().host();
        return (principal.equals("User:*") || principal.equals(String.valueOf(context.principal())))
            && (host.equals("*") || (context.clientAddress() != null
                && host.equals(context.clientAddress().getHostAddress())));
    }

    /** Whether an ALLOW of {@code granted} allows {@code asked}. */
    private static boolean grants(AclOperation granted, AclOperation asked) {
        if (granted == asked || granted == AclOperation.ALL) {
            return true;
        }
        switch (asked) {
            case DESCRIBE:
                return granted == AclOperation.READ || granted == AclOperation.WRITE || granted == AclOperation.DELETE
                    || granted == AclOperation.ALTER;
            case DESCRIBE_CONFIGS:
                return granted == AclOperation.ALTER_CONFIGS;
            default:
                return false;
        }
    }

    /** An ACL in one line: {@code TOPIC:LITERAL:orders User:alice from * ALLOW READ}. */
    public static String describe(AclBinding acl) {
        return acl.pattern().resourceType() + ":" + acl.pattern().patternType() + ":" + acl.pattern().name() + " "
            + acl.entry().principal() + " from " + acl.entry().host() + " " + acl.entry().permissionType() + " "
            + acl.entry().operation();
    }
}
