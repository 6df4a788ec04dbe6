//! A snapshot of the `kafka` service type, ready to answer Kafka's questions.

use std::fmt;

use grantforge_engine::{
    AccessRequest, Explanation, Instant, Outcome, PolicyEngine, RequestError, Snapshot,
};

use std::sync::Arc;

use crate::acl::{AclView, TimedAclView, ACL_VIEW_MAX_ROWS};
use crate::conditions::{kafka_evaluators, ConditionReads, KafkaContext};
use crate::vocabulary::{Operation, ResourceType};

/// The service type this agent serves; a snapshot of any other type refuses everything.
pub const SERVICE_TYPE: &str = "kafka";

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

/// Why an action was answered as it was: the rule that applied, as Kafka's
/// `StandardAuthorizerData` reports its `MatchingRule`. The rules are asked in this order: super
/// users, then the snapshot in force (none, or one of another service type, refuses), then the
/// snapshot's own rules (a disabled service leaves Kafka unchecked; an action the policies cannot
/// place is refused), then the policies. The broker's path, the audit and `explain` all read the
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
    /// The policies cannot be asked: an unknown operation or resource type (to the agent, or to
    /// a service type older than it), a pattern other than LITERAL, or a request the engine cannot
    /// place (a blank name). Refused, never kept.
    Unplaced,
    /// A policy decided.
    Policy { id: i64, allowed: bool },
    /// No policy decides: refused (fail closed).
    NoPolicy,
}

impl Reason {
    /// Whether the action is allowed.
    pub fn allowed(self) -> bool {
        matches!(
            self,
            Reason::SuperUser | Reason::ServiceDisabled | Reason::Policy { allowed: true, .. }
        )
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
    /// what comes before the snapshot (super users, no snapshot, a refused type) is not the
    /// snapshot's to keep, and an unplaced request is refused every time.
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
            Reason::Unplaced => "the request cannot be placed (an operation or resource type unknown to the agent or to the server's service type, a pattern other than LITERAL, or a blank name): refused",
            Reason::Policy { allowed: true, .. } => "a policy allows and none of its priority denies",
            Reason::Policy { allowed: false, .. } => "a policy denies (a deny beats an allow within a priority)",
            Reason::NoPolicy => "no policy decides: refused (fail closed)",
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
    /// Parses and compiles snapshot bytes; `now` fixes which policies the ACL view shows until the
    /// next validity boundary ([`KafkaPolicies::advance_acl_view`]).
    pub fn load(bytes: &[u8], now: Instant) -> Result<KafkaPolicies, LoadError> {
        let snapshot = Snapshot::parse(bytes).map_err(LoadError::Snapshot)?;
        KafkaPolicies::from_snapshot(&snapshot, now)
    }

    /// Compiles a parsed snapshot (kept by callers that also show the policies, such as `explain`).
    pub fn from_snapshot(snapshot: &Snapshot, now: Instant) -> Result<KafkaPolicies, LoadError> {
        if snapshot.service_type != SERVICE_TYPE {
            return Err(LoadError::WrongServiceType(snapshot.service_type.clone()));
        }
        check_definition(snapshot)?;
        let engine =
            PolicyEngine::build(snapshot, &kafka_evaluators()).map_err(LoadError::Snapshot)?;
        Ok(KafkaPolicies {
            reads: ConditionReads::of(&engine),
            missing_operations: missing_access_types(&snapshot.definition),
            acl_view: TimedAclView::new(snapshot, now, ACL_VIEW_MAX_ROWS),
            service: snapshot.service.clone(),
            service_enabled: snapshot.service_enabled,
            policy_version: snapshot.policy_version,
            access_policies: snapshot.policies.len(),
            other_policies: snapshot.other_policies,
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

    /// Every instant after `now` at which a validity period of the policies starts or ends,
    /// earliest first (none for a disabled service): what was decided before one of them may
    /// change at it.
    pub fn validity_changes_after(&self, now: Instant) -> Vec<Instant> {
        self.acl_view.changes_after(now)
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
fn missing_access_types(definition: &grantforge_engine::Definition) -> Vec<Operation> {
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

/// A server that names Kafka's levels or access types differently must fail here, loudly, and not
/// silently at decision time.
fn check_definition(snapshot: &Snapshot) -> Result<(), LoadError> {
    let definition = &snapshot.definition;
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
    if let Some(missing) = missing_access_types(definition)
        .into_iter()
        .find(|o| o.required_by_the_service_type())
    {
        let access_type = missing.access_type();
        return Err(LoadError::Definition(format!(
            "definition.accessTypes: the kafka service type has no access type `{access_type}`; fix the kafka service type on the server (docs/kafka-service-type.md)"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::AclRow;

    fn e2e() -> String {
        std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/snapshots/e2e.json"
        ))
        .unwrap()
    }

    fn quoted(items: impl Iterator<Item = String>) -> String {
        items
            .map(|item| format!("\"{item}\""))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Policy 1 of the fixture with 3,000 topics, 3,000 users and all 13 access types: 77 KB that
    /// ask for 3,000 × 3,000 × 13 = 117 M ACL rows (4.7 GB of rows before deduplication), plus the
    /// fixture's other 5.
    fn cross_product_snapshot() -> String {
        let values = quoted((0..3000).map(|i| format!("topic-{i}")));
        let users = quoted((0..3000).map(|i| format!("user-{i}")));
        let all = quoted(
            [
                "all",
                "read",
                "write",
                "create",
                "delete",
                "alter",
                "describe",
                "cluster_action",
                "describe_configs",
                "alter_configs",
                "idempotent_write",
                "create_tokens",
                "describe_tokens",
            ]
            .iter()
            .map(|a| a.to_string()),
        );
        let text = e2e()
            .replacen("\"values\":[\"orders\"]", &format!("\"values\":[{values}]"), 1)
            .replacen(
                "\"users\":[\"alice\"],\"groups\":[],\"roles\":[],\"accessTypes\":[\"read\",\"write\"]",
                &format!("\"users\":[{users}],\"groups\":[],\"roles\":[],\"accessTypes\":[{all}]"),
                1,
            );
        assert!(text.len() < 80_000, "{} bytes", text.len());
        text
    }

    #[test]
    fn a_small_snapshot_asking_for_a_hundred_million_acl_rows_loads_quickly_with_bounded_rows_and_one_warning(
    ) {
        let text = cross_product_snapshot();
        let started = std::time::Instant::now();
        let policies = KafkaPolicies::load(text.as_bytes(), Instant::now()).unwrap();
        let took = started.elapsed();
        eprintln!(
            "{} bytes asking for 117 M ACL rows loaded in {took:?}",
            text.len()
        );
        assert!(took < std::time::Duration::from_secs(20), "took {took:?}");
        let rows = policies.acl_view().rows.len();
        assert!(
            rows <= ACL_VIEW_MAX_ROWS && rows > ACL_VIEW_MAX_ROWS / 2,
            "{rows} rows"
        );
        let warnings = policies.warnings();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].contains("cut at 1000000 rows")
                && warnings[0].contains("ask for 117000005 rows"),
            "{}",
            warnings[0]
        );
        // The view is cut, the decisions are not.
        let user = RequestContext {
            principal: Principal {
                principal_type: "User".into(),
                name: "user-2999".into(),
            },
            ..Default::default()
        };
        let action = Action {
            operation: Some(Operation::Create),
            resource_type: Some(ResourceType::Topic),
            literal: true,
            name: "topic-2999",
            log_if_allowed: false,
            log_if_denied: false,
        };
        assert!(policies.decide(&user, &action, Instant::now()).allowed());
    }

    #[test]
    fn each_reason_says_whether_it_allows_is_checked_is_kept_and_which_policy_decided() {
        // (reason, allowed, checked, cacheable, policy id)
        let table = [
            (Reason::SuperUser, true, false, false, None),
            (Reason::ServiceDisabled, true, false, true, None),
            (Reason::NoSnapshot, false, true, false, None),
            (Reason::RefusedServiceType, false, true, false, None),
            (Reason::Unplaced, false, true, false, None),
            (
                Reason::Policy {
                    id: 7,
                    allowed: true,
                },
                true,
                true,
                true,
                Some(7),
            ),
            (
                Reason::Policy {
                    id: 9,
                    allowed: false,
                },
                false,
                true,
                true,
                Some(9),
            ),
            (Reason::NoPolicy, false, true, true, None),
        ];
        for (reason, allowed, checked, cacheable, policy_id) in table {
            assert_eq!(
                (
                    reason.allowed(),
                    reason.checked(),
                    reason.cacheable(),
                    reason.policy_id()
                ),
                (allowed, checked, cacheable, policy_id),
                "{reason:?}"
            );
        }
        let described: std::collections::HashSet<&str> =
            table.iter().map(|(reason, ..)| reason.describe()).collect();
        assert_eq!(described.len(), table.len(), "each rule in its own words");
        assert!(Reason::NoPolicy.describe().contains("fail closed"));
    }

    #[test]
    fn principals_are_written_as_kafka_writes_them_and_only_users_are_users() {
        let principal = |principal_type: &str, name: &str| Principal {
            principal_type: principal_type.into(),
            name: name.into(),
        };
        assert_eq!(principal("User", "alice").to_kafka_string(), "User:alice");
        assert_eq!(subject_user(&principal("User", "alice")), "alice");
        assert_eq!(
            subject_user(&principal("Group", "alice")),
            "\u{0}Group:alice",
            "a name no policy can contain, and distinct per principal"
        );
    }

    #[test]
    fn a_kafka_level_with_a_parent_is_refused_at_load() {
        let text = e2e().replacen(
            "{\"name\":\"delegation_token\",\"parent\":null",
            "{\"name\":\"delegation_token\",\"parent\":\"user\"",
            1,
        );
        let Err(error) = KafkaPolicies::load(text.as_bytes(), Instant::now()) else {
            panic!("a delegation_token level below user must be refused");
        };
        assert!(
            error
                .to_string()
                .contains("level `delegation_token` must be a root level"),
            "{error}"
        );
    }

    #[test]
    fn a_definition_without_one_of_kafkas_access_types_is_refused_naming_it() {
        let text = e2e()
            .replacen(
                "{\"name\":\"describe_tokens\",\"impliedGrants\":[]},",
                "",
                1,
            )
            .replacen("\"describe_tokens\",", "", 1);
        let Err(error) = KafkaPolicies::load(text.as_bytes(), Instant::now()) else {
            panic!("a definition without describe_tokens must be refused");
        };
        assert!(
            error
                .to_string()
                .contains("has no access type `describe_tokens`"),
            "{error}"
        );
    }

    #[test]
    fn explain_asks_the_engine_the_request_decide_asks() {
        let policies = KafkaPolicies::load(e2e().as_bytes(), Instant::now()).unwrap();
        let alice = RequestContext {
            principal: Principal {
                principal_type: "User".into(),
                name: "alice".into(),
            },
            ..Default::default()
        };
        let mut describe_payments = Action {
            operation: Some(Operation::Describe),
            resource_type: Some(ResourceType::Topic),
            literal: true,
            name: "payments",
            log_if_allowed: false,
            log_if_denied: false,
        };
        let now = Instant::now();
        let explained = policies
            .explain(&alice, &describe_payments, now)
            .expect("a placed action is explained")
            .expect("the engine can place it");
        assert_eq!(
            (explained.decision.outcome, explained.decision.policy_id),
            (Outcome::Denied, Some(5))
        );
        assert_eq!(
            policies.decide(&alice, &describe_payments, now),
            Reason::Policy {
                id: 5,
                allowed: false
            }
        );
        describe_payments.literal = false;
        assert!(
            policies.explain(&alice, &describe_payments, now).is_none(),
            "refused before the policies are asked"
        );
    }

    #[test]
    fn the_fixture_has_its_whole_acl_view_and_no_warning() {
        let policies = KafkaPolicies::load(e2e().as_bytes(), Instant::now()).unwrap();
        assert_eq!(policies.acl_view().rows.len(), 7);
        assert!(policies.warnings().is_empty(), "{:?}", policies.warnings());
    }

    /// The fixture with the `validity` of its policy `id` set to `periods`.
    fn with_validity(text: &str, id: i64, periods: &str) -> String {
        let policy = text
            .find(&format!("{{\"id\":\"{id}\""))
            .expect("the fixture's policy");
        let at = policy + text[policy..].find("\"validity\":[]").unwrap();
        format!(
            "{}\"validity\":{periods}{}",
            &text[..at],
            &text[at + "\"validity\":[]".len()..]
        )
    }

    fn noon() -> Instant {
        Instant::parse("2026-06-15T12:00:00Z").unwrap()
    }

    /// Whether the view lists alice's `orders` rows (policy 1) and the analysts' (policy 2).
    fn shows(view: &AclView) -> (bool, bool) {
        let alice = |r: &&AclRow| &*r.principal == "User:alice" && &*r.name == "orders";
        let analysts = |r: &&AclRow| &*r.principal == "Role:analyst" && &*r.name == "orders";
        (
            view.rows.iter().any(|r| alice(&r)),
            view.rows.iter().any(|r| analysts(&r)),
        )
    }

    #[test]
    fn the_acl_view_shows_a_policy_from_its_start_and_hides_it_from_its_end() {
        // Written with offsets as a server may write them: 14:00:10+02:00 is noon + 10 s, and
        // 07:00:05-05:00 is noon + 5 s.
        let text = with_validity(
            &e2e(),
            1,
            r#"[{"from":"2026-06-15T14:00:10+02:00","until":"2026-06-15T12:00:20Z"}]"#,
        );
        let text = with_validity(&text, 2, r#"[{"until":"2026-06-15T07:00:05-05:00"}]"#);
        let at = |secs| noon().plus_seconds(secs);
        let policies = KafkaPolicies::load(text.as_bytes(), noon()).unwrap();
        let loaded = policies.acl_view();
        assert_eq!(shows(&loaded), (false, true));
        assert_eq!(policies.next_acl_view_change(), Some(at(5)));

        assert!(
            policies.advance_acl_view(at(4)).is_none(),
            "no boundary passed"
        );
        let ended = policies.advance_acl_view(at(5)).expect("policy 2 ended");
        assert_eq!(shows(&ended), (false, false));
        assert_eq!(shows(&policies.acl_view()), (false, false));
        assert_eq!(
            shows(&loaded),
            (false, true),
            "a reader keeps the view it took"
        );
        assert_eq!(policies.next_acl_view_change(), Some(at(10)));

        let started = policies.advance_acl_view(at(12)).expect("policy 1 started");
        assert_eq!(shows(&started), (true, false));
        assert_eq!(policies.next_acl_view_change(), Some(at(20)));

        let over = policies.advance_acl_view(at(20)).expect("policy 1 ended");
        assert_eq!(shows(&over), (false, false));
        assert_eq!(over.rows.len(), 7 - 2 - 1, "the fixture's other rows stay");
        assert_eq!(policies.next_acl_view_change(), None);
        assert!(policies.advance_acl_view(at(3600)).is_none());
    }

    #[test]
    fn the_validity_changes_after_now_are_each_boundary_still_ahead_once_earliest_first() {
        // Policy 1 began before noon; policy 2 begins at noon, which has taken effect, and lists
        // its periods out of order and one end shared with policy 1.
        let text = with_validity(
            &e2e(),
            1,
            r#"[{"from":"2026-06-15T11:59:50Z","until":"2026-06-15T12:00:30Z"}]"#,
        );
        let text = with_validity(
            &text,
            2,
            r#"[{"from":"2026-06-15T12:00:00Z","until":"2026-06-15T12:00:30Z"},{"from":"2026-06-15T12:00:10Z"}]"#,
        );
        let policies = KafkaPolicies::load(text.as_bytes(), noon()).unwrap();
        let at = |secs| noon().plus_seconds(secs);
        assert_eq!(
            policies.validity_changes_after(noon()),
            vec![at(10), at(30)]
        );
        assert_eq!(policies.validity_changes_after(at(10)), vec![at(30)]);
    }

    #[test]
    fn a_disabled_service_shows_no_acl_and_never_recomputes() {
        let text = with_validity(&e2e(), 1, r#"[{"from":"2026-06-15T12:00:10Z"}]"#).replacen(
            "\"serviceEnabled\":true",
            "\"serviceEnabled\":false",
            1,
        );
        let policies = KafkaPolicies::load(text.as_bytes(), noon()).unwrap();
        assert!(!policies.service_enabled);
        assert!(policies.acl_view().rows.is_empty());
        assert_eq!(policies.next_acl_view_change(), None);
        assert_eq!(policies.validity_changes_after(noon()), vec![]);
        assert!(policies.advance_acl_view(noon().plus_seconds(60)).is_none());
        assert!(policies.acl_view().rows.is_empty());
    }

    #[test]
    fn engine_warnings_are_surfaced_for_the_agent_to_log() {
        let text = e2e()
            .replacen(
                "\"conditions\":[{\"name\":\"ip-range\"",
                "\"conditions\":[{\"name\":\"geo\",\"evaluator\":\"geo-ip\",\"options\":{}},{\"name\":\"ip-range\"",
                1,
            )
            .replacen(
                "\"accessTypes\":[\"read\",\"write\"],\"conditions\":[]",
                "\"accessTypes\":[\"read\",\"write\"],\"conditions\":[{\"type\":\"geo\",\"values\":[\"EU\"]}]",
                1,
            )
            .replacen(
                "\"accessTypes\":[\"describe\"],\"conditions\":[]",
                "\"accessTypes\":[\"describe\"],\"conditions\":[{\"type\":\"ip-range\",\"values\":[\"10.0.0.0/99\"]}]",
                1,
            );
        let policies = KafkaPolicies::load(text.as_bytes(), Instant::now()).unwrap();
        let warnings = policies.warnings();
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("condition geo has no evaluator")),
            "{warnings:?}"
        );
        assert!(
            warnings.iter().any(|w| w.contains("10.0.0.0/99")),
            "{warnings:?}"
        );
    }
}
