//! Kafka's view of a GrantForge snapshot.
//!
//! The policy engine (`grantforge-engine`) is generic over any service definition; this crate is the
//! only place that knows Kafka: which level a `ResourceType` is, which access type an `AclOperation`
//! is, how a `KafkaPrincipal` becomes a GrantForge subject, which conditions the agent can evaluate
//! (`ip-range`, `listener`, `client-id`), the `authorizeByResourceType` question, and how policies
//! are shown as ACLs; and the inverse, Kafka's ACLs as policies (`migrate-acls`). It knows nothing
//! of JNI, HTTP or files: it turns bytes of a snapshot into a [`KafkaPolicies`] and answers
//! questions against it.

#![forbid(unsafe_code)]

mod acl;
mod conditions;
mod migrate;
mod policies;
mod vocabulary;

pub use acl::{acl_view, AclRow, AclView, IndexedRow, ACL_VIEW_MAX_ROWS};
pub use conditions::{kafka_evaluators, ConditionReads, KafkaContext};
pub use migrate::{
    describe_acl, migrate_acls, Finding, KafkaAcl, Migration, ReportEntry, MIGRATION_LABEL,
};
pub use policies::{
    subject_user, Action, KafkaPolicies, LoadError, Principal, Reason, RequestContext, SERVICE_TYPE,
};
pub use vocabulary::{
    api_key_name, Operation, PatternType, Permission, ResourceType, API_KEYS, CLUSTER_NAME,
};
