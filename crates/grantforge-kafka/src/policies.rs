//! A snapshot of the `kafka` service type, ready to answer Kafka's questions.

use std::fmt;

use grantforge_engine::{
    AccessRequest, Definition, Explanation, Instant, Outcome, PolicyEngine, PolicyVisitor,
    RequestError, Snapshot, SnapshotError, SnapshotHead,
};

use std::sync::Arc;

use crate::acl::{AclBlocks, AclView, Gathering, TimedAclView, ACL_VIEW_MAX_ROWS};
use crate::conditions::{kafka_evaluators, ConditionReads, KafkaContext};
use crate::vocabulary::{Operation, ResourceType};

/// The service type this agent serves; a snapshot of any other type refuses everything.
pub const SERVICE_TYPE: &str = "kafka";

/// The `kafka` service type's definition, as every snapshot the migration writes carries it (one
/// file for the docs, the test server and this crate).
pub(crate) const KAFKA_DEFINITION_JSON: &str = include_str!("../kafka-service-type.json");

/// Kafka's `KafkaPrincipal`: type and name (`User:alice`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Principal {
    pub principal_type: String,
    pub name: String,
}

impl Principal {
    /// The `Type:name` form Kafka uses in `super.users` and ACLs.
    pub fn to_kafka_string(&self) -> String {
        format!("{}:{}", self.principal_type, self.name)
    }
}

/// What Kafka tells the authorizer about one request (`AuthorizableRequestContext`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct RequestContext {
    pub principal: Principal,
    pub conditions: KafkaContext,
    /// Kafka's API key (`ApiKeys.id`) and version, for audit.
    pub request_type: i16,
    pub request_version: i16,
}

/// One `Action` of `authorize(context, actions)`. Unknown Kafka codes arrive as `None` and refuse
/// that action only.
#[derive(Clone, Copy, Debug)]
pub struct Action<'a> {
    pub operation: Option<Operation>,
    pub resource_type: Option<ResourceType>,
    /// Brokers only ask about LITERAL patterns; anything else is refused, as Kafka's own authorizer
    /// refuses it.
    pub literal: bool,
    pub name: &'a str,
    pub log_if_allowed: bool,
    pub log_if_denied: bool,
}

impl Action<'static> {
    /// A slot no action was written into: it names no operation or resource, so it asks nothing.
    pub const NONE: Action<'static> = Action {
        operation: None,
        resource_type: None,
        literal: false,
        name: "",
        log_if_allowed: false,
        log_if_denied: false,
    };
}

/// Why an action was answered as it was: the rule that applied, as Kafka's
/// `StandardAuthorizerData` reports its `MatchingRule`. The rules are asked in this order: super
/// users, then the snapshot in force (none, one of another service type, or one too old refuses),
/// then the snapshot's own rules (a disabled service leaves Kafka unchecked; an action the policies
/// cannot place is refused), then the policies. The broker's path, the audit and `explain` all read the
/// answer from this value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// A principal of `super.users`: allowed, never checked, never audited.
    SuperUser,
    /// The service is disabled in GrantForge: Kafka is unchecked (allowed, not audited).
    ServiceDisabled,
    /// No snapshot is in force yet: refused.
    NoSnapshot,
    /// The server sent a snapshot of another service type (the token's service is not kafka):
    /// everything but super users is refused until a kafka snapshot is in force.
    RefusedServiceType,
    /// The snapshot in force went unconfirmed by the GrantForge server for longer than the
    /// staleness limit the agent was given: everything but super users is refused until the
    /// server confirms a snapshot again.
    SnapshotTooOld,
    /// The policies cannot be asked: an operation or resource type unknown to the agent, an
    /// operation a service type older than the agent lacks, a pattern other than LITERAL, or a
    /// request the engine cannot place (a blank name). Refused, never kept.
    Unplaced,
    /// A policy decided.
    Policy { id: i64, allowed: bool },
    /// No policy decides: refused (fail closed).
    NoPolicy,
    /// Hybrid mode: no policy decided (see [`Reason::undetermined`]), and Kafka's own ACLs answered.
    KafkaAcl { allowed: bool },
}

impl Reason {
    /// Whether the action is allowed.
    pub fn allowed(self) -> bool {
        matches!(
            self,
            Reason::SuperUser
                | Reason::ServiceDisabled
                | Reason::Policy { allowed: true, .. }
                | Reason::KafkaAcl { allowed: true }
        )
    }

    /// Whether GrantForge's policies left the question open: none decides, or it cannot be put
    /// to them. Refused in every mode but hybrid, where Kafka's ACLs answer it instead.
    pub fn undetermined(self) -> bool {
        matches!(self, Reason::NoPolicy | Reason::Unplaced)
    }

    /// The deciding policy, if one decided.
    pub fn policy_id(self) -> Option<i64> {
        match self {
            Reason::Policy { id, .. } => Some(id),
            _ => None,
        }
    }

    /// Whether the access is checked, and so audited when Kafka asks: super users and a disabled
    /// service are not.
    pub fn checked(self) -> bool {
        !matches!(self, Reason::SuperUser | Reason::ServiceDisabled)
    }

    /// Whether the snapshot's rules settled it, so that it may be kept for the snapshot's life:
    /// what comes before the snapshot (super users, no snapshot, a refused type, a snapshot too
    /// old) is not the snapshot's to keep, and an unplaced request is refused every time.
    pub fn cacheable(self) -> bool {
        matches!(
            self,
            Reason::ServiceDisabled | Reason::Policy { .. } | Reason::NoPolicy
        )
    }

    /// The rule in words, for `explain` and logs.
    pub fn describe(self) -> &'static str {
        match self {
            Reason::SuperUser => "a super user: never checked",
            Reason::ServiceDisabled => "the service is disabled: Kafka is unchecked",
            Reason::NoSnapshot => "no snapshot is in force yet: refused (fail closed)",
            Reason::RefusedServiceType => "the snapshot is of another service type: everything is refused",
            Reason::SnapshotTooOld => "the GrantForge server has not confirmed the snapshot in force for longer than the staleness limit: everything is refused (fail closed)",
            Reason::Unplaced => "the request cannot be placed (an operation or resource type unknown to the agent or to the server's service type, a pattern other than LITERAL, or a blank name): refused",
            Reason::Policy { allowed: true, .. } => "a policy allows and none of its priority denies",
            Reason::Policy { allowed: false, .. } => "a policy denies (a deny beats an allow within a priority)",
            Reason::NoPolicy => "no policy decides: refused (fail closed)",
            Reason::KafkaAcl { allowed: true } => "hybrid mode: no policy decides, and Kafka's ACLs allow",
            Reason::KafkaAcl { allowed: false } => "hybrid mode: no policy decides, and Kafka's ACLs refuse",
        }
    }
}

/// Why a snapshot cannot serve Kafka.
#[derive(Debug)]
pub enum LoadError {
    /// The bytes are not a usable snapshot (names the field and the policy).
    Snapshot(grantforge_engine::SnapshotError),
    /// The snapshot is of another service type: the token belongs to another kind of service.
    WrongServiceType(String),
    /// The definition lacks a level or access type the Kafka mapping needs.
    Definition(String),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Snapshot(e) => write!(f, "{e}"),
            LoadError::WrongServiceType(t) => write!(
                f,
                "the snapshot is of service type `{t}`, not `{SERVICE_TYPE}`: the policies belong to another kind of service; use a kafka data service"
            ),
            LoadError::Definition(message) => write!(f, "{message}"),
        }
    }
}

impl std::error::Error for LoadError {}

/// A verified snapshot of a kafka data service, compiled and indexed, with its ACL view.
pub struct KafkaPolicies {
    pub service: String,
    pub service_enabled: bool,
    pub policy_version: i64,
    /// ACCESS policies (evaluated) and others (DATA_MASK, ROW_FILTER: counted only).
    pub access_policies: usize,
    pub other_policies: usize,
    /// What of the request the conditions read, so a decision cache keys on exactly that.
    pub reads: ConditionReads,
    /// Operations newer than the server's service type: refused to everyone (see
    /// [`Operation::NEWER_THAN_THE_SERVICE_TYPE`]).
    missing_operations: Vec<Operation>,
    engine: PolicyEngine<KafkaContext>,
    acl_view: TimedAclView,
}

/// The snapshot's identity and size, not its compiled form (which can be large).
impl std::fmt::Debug for KafkaPolicies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KafkaPolicies")
            .field("service", &self.service)
            .field("service_enabled", &self.service_enabled)
            .field("policy_version", &self.policy_version)
            .field("access_policies", &self.access_policies)
            .field("other_policies", &self.other_policies)
            .finish_non_exhaustive()
    }
}

impl KafkaPolicies {
    /// Reads and compiles snapshot bytes in one pass, policy by policy (the parsed policies are
    /// never all held at once), gathering the ACL view from the same policies on the compiling
    /// thread; `now` fixes which policies the view shows until the next validity boundary
    /// ([`KafkaPolicies::advance_acl_view`]).
    pub fn load(bytes: &[u8], now: Instant) -> Result<KafkaPolicies, LoadError> {
        let evaluators = kafka_evaluators();
        let mut gathering = Gathering::new(now, ACL_VIEW_MAX_ROWS);
        let (head, engine) = PolicyEngine::read(bytes, &evaluators, &mut gathering)
            .map_err(|refusal| refusal_of(bytes, refusal))?;
        KafkaPolicies::assemble(&head, engine, gathering.into_view(), now)
    }

    /// Compiles a parsed snapshot (kept by callers that also show the policies, such as `explain`).
    pub fn from_snapshot(snapshot: &Snapshot, now: Instant) -> Result<KafkaPolicies, LoadError> {
        check_service_type(&snapshot.service_type)?;
        let engine =
            PolicyEngine::build(snapshot, &kafka_evaluators()).map_err(LoadError::Snapshot)?;
        let mut gathering = Gathering::new(now, ACL_VIEW_MAX_ROWS);
        snapshot.policies.iter().for_each(|p| gathering.visit(p));
        KafkaPolicies::assemble(&snapshot.head, engine, gathering.into_view(), now)
    }

    /// Checks that a compiled snapshot can serve Kafka, and puts it together with its ACL view.
    fn assemble(
        head: &SnapshotHead,
        engine: PolicyEngine<KafkaContext>,
        acl_view: TimedAclView,
        now: Instant,
    ) -> Result<KafkaPolicies, LoadError> {
        check_service_type(&head.service_type)?;
        let missing_operations = check_definition(&head.definition)?;
        // A disabled service shows no ACLs: no policy applies to a Kafka that is unchecked.
        let acl_view = if head.service_enabled {
            acl_view
        } else {
            TimedAclView::new(AclBlocks::default(), now, ACL_VIEW_MAX_ROWS)
        };
        Ok(KafkaPolicies {
            reads: ConditionReads::of(&engine),
            missing_operations,
            acl_view,
            service: head.service.clone(),
            service_enabled: head.service_enabled,
            policy_version: head.policy_version,
            access_policies: engine.policy_count(),
            other_policies: head.other_policies,
            engine,
        })
    }

    /// Decides one action by the snapshot's rules: a disabled service, an unplaced action, the
    /// policies. (Super users and the absence of a snapshot are the caller's rules: see [`Reason`].)
    pub fn decide(&self, context: &RequestContext, action: &Action<'_>, now: Instant) -> Reason {
        if !self.service_enabled {
            return Reason::ServiceDisabled;
        }
        let evaluated = self.with_request(context, action, now, |request| {
            self.engine.evaluate(request)
        });
        match evaluated {
            Some(Ok(decision)) => match (decision.outcome, decision.policy_id) {
                (Outcome::NotDetermined, _) | (_, None) => Reason::NoPolicy,
                (outcome, Some(id)) => Reason::Policy {
                    id,
                    allowed: outcome == Outcome::Allowed,
                },
            },
            // An action the policies cannot be asked about (unknown codes, a pattern other than
            // LITERAL), or a request the engine cannot place (an empty group id): refused, never
            // decided.
            None | Some(Err(_)) => Reason::Unplaced,
        }
    }

    /// The engine's reasons for the decision of one action, for `explain`; `None` when the action
    /// is refused before the policies are asked (unknown operation or type, non-literal pattern).
    pub fn explain(
        &self,
        context: &RequestContext,
        action: &Action<'_>,
        now: Instant,
    ) -> Option<Result<Explanation, RequestError>> {
        self.with_request(context, action, now, |request| self.engine.explain(request))
    }

    /// Runs `ask` with the engine's request for one Kafka action (the principal as a GrantForge
    /// user, the resource at its level, the operation as its access type), or `None` when the
    /// action cannot be placed. `decide` and `explain` ask the same request.
    fn with_request<R>(
        &self,
        context: &RequestContext,
        action: &Action<'_>,
        now: Instant,
        ask: impl FnOnce(&AccessRequest<'_, KafkaContext>) -> R,
    ) -> Option<R> {
        let (operation, resource_type) = placed(action)?;
        if self.missing_operations.contains(&operation) {
            return None;
        }
        let user = subject_user(&context.principal);
        let resource = [(resource_type.level(), action.name)];
        let request = AccessRequest::new(
            &resource,
            operation.access_type(),
            &user,
            now,
            &context.conditions,
        );
        Some(ask(&request))
    }

    /// Kafka's `authorizeByResourceType`: may the principal perform `operation` on SOME resource of
    /// `resource_type`? Answered from the engine's index; never audited.
    pub fn holds_on_some_resource(
        &self,
        context: &RequestContext,
        operation: Operation,
        resource_type: ResourceType,
        now: Instant,
    ) -> bool {
        if !self.service_enabled {
            return true;
        }
        let user = subject_user(&context.principal);
        let level = resource_type.level();
        let access_type = operation.access_type();
        self.engine
            .holds_on_some_resource(
                level,
                access_type,
                &user,
                &[],
                &[],
                now,
                &context.conditions,
            )
            .unwrap_or(false)
    }

    /// The policies that apply now as ACL rows (none for a disabled service): at most
    /// [`ACL_VIEW_MAX_ROWS`](crate::ACL_VIEW_MAX_ROWS), see [`KafkaPolicies::warnings`]. Computed at
    /// load and at each validity boundary since ([`KafkaPolicies::advance_acl_view`]).
    pub fn acl_view(&self) -> Arc<AclView> {
        self.acl_view.shown()
    }

    /// When a validity period of the policies next starts or ends, changing the ACL view; `None`
    /// when no boundary lies ahead (nor for a disabled service, whose view is always empty).
    pub fn next_acl_view_change(&self) -> Option<Instant> {
        self.acl_view.next_change()
    }

    /// Every instant at which a validity period of the policies starts or ends, earliest first,
    /// each once (none for a disabled service): what was decided may change at each of them. All
    /// the policies that decide count, those the ACL view cannot show too.
    pub fn validity_changes(&self) -> &[Instant] {
        if !self.service_enabled {
            return &[];
        }
        self.engine.validity_changes()
    }

    /// Recomputes the ACL view once `now` has reached the next validity boundary and swaps it in,
    /// returning it; `None` before that (one comparison). Meant for the agent's own thread: building
    /// a view can take a fraction of a second, and readers keep the previous view until the swap.
    pub fn advance_acl_view(&self, now: Instant) -> Option<Arc<AclView>> {
        self.acl_view.advance(now)
    }

    /// What the operator should read once, when the snapshot is applied: the engine's warnings (a
    /// condition without an evaluator in this agent, values of a condition that do not compile,
    /// both taken in the safe direction), the operations a service type older than the agent
    /// lacks, and an ACL view that stopped at its maximum.
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings = self.engine.warnings().to_vec();
        warnings.extend(self.missing_operations.iter().map(|o| format!(
            "definition.accessTypes: the kafka service type on the server predates Kafka's {} (no access type `{}`): it is refused to everyone until the service type has it (docs/kafka-service-type.md)",
            o.kafka_name(),
            o.access_type()
        )));
        warnings.extend(self.acl_view().truncation_warning());
        warnings
    }

    /// The compiled engine, for `explain`.
    pub fn engine(&self) -> &PolicyEngine<KafkaContext> {
        &self.engine
    }
}

/// The level and access type of an action the policies can answer: known codes, LITERAL pattern.
fn placed(action: &Action<'_>) -> Option<(Operation, ResourceType)> {
    match (action.operation, action.resource_type, action.literal) {
        (Some(operation), Some(resource_type), true) => Some((operation, resource_type)),
        _ => None,
    }
}

/// The GrantForge user for a Kafka principal. Policies name users by the principal's name, and
/// only `User:` principals are users: another type (a custom principal builder's) must match only
/// the public group, so it gets a name no policy can contain (a NUL-prefixed `Type:name`).
pub fn subject_user(principal: &Principal) -> String {
    if principal.principal_type == "User" {
        principal.name.clone()
    } else {
        format!("\u{0}{}", principal.to_kafka_string())
    }
}

/// The operations whose access type the definition lacks.
fn missing_access_types(definition: &Definition) -> Vec<Operation> {
    Operation::ALL
        .iter()
        .copied()
        .filter(|o| {
            !definition
                .access_types
                .iter()
                .any(|a| a.name == o.access_type())
        })
        .collect()
}

/// A snapshot of another service type is refused as such, before anything of its definition.
fn check_service_type(service_type: &str) -> Result<(), LoadError> {
    if service_type != SERVICE_TYPE {
        return Err(LoadError::WrongServiceType(service_type.to_string()));
    }
    Ok(())
}

/// Why snapshot bytes were refused: a snapshot of another service type is refused as such, as the
/// protocol checks the type before the policies, even when the engine, which reads the policies
/// as they come, refused one of them first.
fn refusal_of(bytes: &[u8], refusal: SnapshotError) -> LoadError {
    match Snapshot::service_type_of(bytes) {
        Some(service_type) if service_type != SERVICE_TYPE => {
            LoadError::WrongServiceType(service_type)
        }
        _ => LoadError::Snapshot(refusal),
    }
}

/// A server that names Kafka's levels or access types differently must fail here, loudly, and not
/// silently at decision time. Returns the operations newer than the server's service type that it
/// lacks (see [`Operation::NEWER_THAN_THE_SERVICE_TYPE`]); every level is required.
fn check_definition(definition: &Definition) -> Result<Vec<Operation>, LoadError> {
    for &resource_type in ResourceType::ALL {
        let level = resource_type.level();
        match definition.resources.iter().find(|l| l.name == level) {
            Some(l) if l.parent.is_none() => {}
            Some(_) => {
                return Err(LoadError::Definition(format!(
                    "definition.resources: level `{level}` must be a root level (parent null) for Kafka; fix the kafka service type on the server (docs/kafka-service-type.md)"
                )))
            }
            None => {
                return Err(LoadError::Definition(format!(
                    "definition.resources: the kafka service type has no level `{level}`; fix the kafka service type on the server (docs/kafka-service-type.md)"
                )))
            }
        }
    }
    let missing = missing_access_types(definition);
    if let Some(required) = missing.iter().find(|o| o.required_by_the_service_type()) {
        let access_type = required.access_type();
        return Err(LoadError::Definition(format!(
            "definition.accessTypes: the kafka service type has no access type `{access_type}`; fix the kafka service type on the server (docs/kafka-service-type.md)"
        )));
    }
    Ok(missing)
}

#[cfg(test)]
mod tests;
