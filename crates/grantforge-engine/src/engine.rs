//! Deciding requests (Java's `PolicyEngine`, plus the agent core's enrichment with the snapshot's
//! roles and groups). An engine is built once per snapshot (`build`: compiling, indexing and
//! resolving memberships), possibly while the snapshot is still being read (`read`), and then only
//! answers questions, here.

mod build;
mod read;

use std::borrow::Cow;
use std::fmt;

pub use self::build::PolicyVisitor;
use self::build::{compile_all, Unvisited};
use crate::condition::Evaluators;
use crate::error::{RequestError, SnapshotError};
use crate::index::Indexes;
use crate::intern::Interner;
use crate::is_blank;
use crate::matcher::normalize;
use crate::model::ServiceModel;
use crate::policy::{CompiledPolicy, Levels, List, Subject};
use crate::record::Priority;
use crate::snapshot::{Snapshot, SnapshotHead};
use crate::stack::StackVec;
use crate::time::Instant;

/// One question: may `user` (with `groups` and `roles`) have `access_type` on `resource` at `time`?
#[derive(Debug)]
pub struct AccessRequest<'a, C: ?Sized> {
    /// (level name, value) pairs forming one chain from a root, in any order.
    pub resource: &'a [(&'a str, &'a str)],
    /// The access type asked for.
    pub access_type: &'a str,
    /// The user asking.
    pub user: &'a str,
    /// Groups the caller knows of; the snapshot's groups of `user` are added by the engine.
    pub groups: &'a [String],
    /// Roles the caller knows of; the snapshot's roles of `user` are added by the engine.
    pub roles: &'a [String],
    /// When: validity periods are checked against it.
    pub time: Instant,
    /// What conditions look at (client address, listener, ...).
    pub context: &'a C,
}

impl<'a, C: ?Sized> AccessRequest<'a, C> {
    /// A request without caller-supplied groups or roles.
    pub fn new(
        resource: &'a [(&'a str, &'a str)],
        access_type: &'a str,
        user: &'a str,
        time: Instant,
        context: &'a C,
    ) -> Self {
        AccessRequest {
            resource,
            access_type,
            user,
            groups: &[],
            roles: &[],
            time,
            context,
        }
    }
}

/// What a decision says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// A policy allows, and none of that priority denies.
    Allowed,
    /// A policy denies.
    Denied,
    /// No covering, applicable policy of either priority has a matching item, or the access type
    /// is unknown. Access is not granted; the caller decides whether to fall back.
    NotDetermined,
}

impl Outcome {
    /// The name Java uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Allowed => "ALLOWED",
            Outcome::Denied => "DENIED",
            Outcome::NotDetermined => "NOT_DETERMINED",
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A decision and the policy that made it (the smallest deciding id of the deciding priority).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Decision {
    /// Allowed, denied or not determined.
    pub outcome: Outcome,
    /// The deciding policy; `None` exactly when not determined.
    pub policy_id: Option<i64>,
}

impl Decision {
    /// Allowed by a policy.
    pub fn allowed_by(policy_id: i64) -> Decision {
        Decision {
            outcome: Outcome::Allowed,
            policy_id: Some(policy_id),
        }
    }

    /// Denied by a policy.
    pub fn denied_by(policy_id: i64) -> Decision {
        Decision {
            outcome: Outcome::Denied,
            policy_id: Some(policy_id),
        }
    }

    /// Nothing decided.
    pub fn not_determined() -> Decision {
        Decision {
            outcome: Outcome::NotDetermined,
            policy_id: None,
        }
    }

    /// Whether access is granted (only when allowed).
    pub fn is_allowed(&self) -> bool {
        self.outcome == Outcome::Allowed
    }
}

/// `DENIED by policy 3`, `ALLOWED by policy 4` or `NOT_DETERMINED`, as Java's `Decision.toString`.
impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.policy_id {
            Some(id) => write!(f, "{} by policy {id}", self.outcome),
            None => f.write_str(self.outcome.as_str()),
        }
    }
}

/// How one policy took part in a decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Branch {
    /// A deny item matched and no deny exception did: the policy denies.
    Deny,
    /// An allow item matched and no allow exception did (and the deny branch did not deny): the
    /// policy allows.
    Allow,
    /// An allow item matched but so did an allow exception.
    AllowExcepted,
    /// A deny item matched but so did a deny exception, and the allow branch did not allow.
    DenyExcepted,
    /// Only exceptions matched: the policy neither allows nor denies.
    NoMatch,
}

/// One covering, applicable policy in which some item matched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyExplanation {
    /// The policy's id.
    pub id: i64,
    /// The policy's name.
    pub name: String,
    /// Its priority.
    pub priority: Priority,
    /// What it did.
    pub branch: Branch,
    /// Indices of the matching deny items (conditions that cannot be evaluated count as holding).
    pub deny: Vec<usize>,
    /// Indices of the matching deny exceptions (unsure conditions do not hold).
    pub deny_exceptions: Vec<usize>,
    /// Indices of the matching allow items (unsure conditions do not hold).
    pub allow: Vec<usize>,
    /// Indices of the matching allow exceptions (unsure conditions hold).
    pub allow_exceptions: Vec<usize>,
}

/// A decision with its reasons, for people (`explain`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Explanation {
    /// The decision, as [`PolicyEngine::evaluate`] gives it.
    pub decision: Decision,
    /// The priority whose policies decided; `None` when nothing was decided.
    pub deciding_priority: Option<Priority>,
    /// The policies that cover the resource, apply at the time and have a matching item:
    /// OVERRIDE first, then by id.
    pub policies: Vec<PolicyExplanation>,
}

/// The groups and roles the snapshot gives one user.
#[derive(Default)]
struct Membership {
    groups: Vec<String>,
    roles: Vec<String>,
    group_ids: Vec<u32>,
    role_ids: Vec<u32>,
    /// A blank code, which Java refuses when it builds the enriched request.
    blank: bool,
}

/// The smallest deciding ids per priority and branch.
#[derive(Default)]
struct Tally {
    denied: [Option<i64>; 2],
    allowed: [Option<i64>; 2],
}

impl Tally {
    fn note(slot: &mut Option<i64>, id: i64) {
        if slot.is_none_or(|current| id < current) {
            *slot = Some(id);
        }
    }

    fn decision(&self) -> (Decision, Option<Priority>) {
        for priority in [Priority::Override, Priority::Normal] {
            let at = priority as usize;
            if let Some(id) = self.denied[at] {
                return (Decision::denied_by(id), Some(priority));
            }
            if let Some(id) = self.allowed[at] {
                return (Decision::allowed_by(id), Some(priority));
            }
        }
        (Decision::not_determined(), None)
    }
}

/// An immutable, indexed engine over one snapshot's ACCESS policies. Build a new one for every
/// snapshot; share it between threads freely.
pub struct PolicyEngine<C: ?Sized> {
    model: ServiceModel,
    policies: Vec<CompiledPolicy<C>>,
    indexes: Indexes,
    users: Interner,
    groups: Interner,
    roles: Interner,
    /// By user id: the snapshot's memberships of that user.
    memberships: Vec<Option<Box<Membership>>>,
    warnings: Vec<String>,
    /// The evaluator names the items' conditions use, sorted.
    evaluators_in_use: Vec<String>,
    /// The policies' names, one after the other (for explanations).
    names: String,
    /// Every start and end of a policy's validity periods, earliest first, each once.
    validity_changes: Box<[Instant]>,
}

impl<C: ?Sized> fmt::Debug for PolicyEngine<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PolicyEngine")
            .field("policies", &self.policies.len())
            .field("warnings", &self.warnings)
            .finish()
    }
}

impl<C: ?Sized> PolicyEngine<C> {
    /// Compiles and indexes a snapshot's ACCESS policies, with the caller's condition evaluators.
    ///
    /// Fails as a whole, like Java's `PolicyEngine.create`, when a policy does not fit the
    /// definition (a parsed snapshot has already been checked; a hand-built one may not have been).
    /// A condition whose evaluator is missing or whose values do not compile is no error: it is
    /// taken in the safe direction, and listed in [`PolicyEngine::warnings`].
    pub fn build(snapshot: &Snapshot, evaluators: &Evaluators<C>) -> Result<Self, SnapshotError> {
        compile_all(snapshot, evaluators, &mut Unvisited)
    }

    /// Reads a snapshot from the exact bytes the server signed and compiles it in one pass, policy
    /// by policy, so that the parsed policies are never all held at once: the same engine as
    /// [`Snapshot::parse`] then [`PolicyEngine::build`], refusing the same snapshots with the same
    /// errors. `visitor` takes each ACCESS policy once it is compiled, in file order, to build what
    /// else the caller derives from them. Returns the rest of the snapshot (the number of policies
    /// is the engine's [`PolicyEngine::policy_count`]). Reads on the caller's thread and compiles
    /// on a second one.
    pub fn read(
        bytes: &[u8],
        evaluators: &Evaluators<C>,
        visitor: &mut dyn PolicyVisitor,
    ) -> Result<(SnapshotHead, Self), SnapshotError> {
        read::read(bytes, evaluators, visitor)
    }

    /// The service model the engine decides with.
    pub fn model(&self) -> &ServiceModel {
        &self.model
    }

    /// How many ACCESS policies the engine holds.
    pub fn policy_count(&self) -> usize {
        self.policies.len()
    }

    /// Conditions the engine cannot evaluate (no evaluator, values that do not compile): worth a
    /// log line, since they are taken in the safe direction.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The evaluators (by evaluator name, sorted) that some item's condition is evaluated with,
    /// through the same condition-to-evaluator mapping the decisions use: everything of a request's
    /// context a decision can read goes through one of them. A cache of decisions must key on
    /// what these read, and on nothing less.
    pub fn evaluators_in_use(&self) -> &[String] {
        &self.evaluators_in_use
    }

    /// Every instant at which one of the policies starts or stops applying, earliest first, each
    /// once: a decision may change at each of them, and at no other instant. Those after `now`
    /// follow `partition_point(|&at| at <= now)` (`from` is inclusive, `until` exclusive, so a
    /// boundary at `now` has taken effect).
    pub fn validity_changes(&self) -> &[Instant] {
        &self.validity_changes
    }

    /// The groups the snapshot puts `user` in (matched on the exact name), in code order.
    pub fn snapshot_groups_of(&self, user: &str) -> &[String] {
        self.membership(user).map_or(&[], |m| m.groups.as_slice())
    }

    /// The roles the snapshot gives `user`, in code order.
    pub fn snapshot_roles_of(&self, user: &str) -> &[String] {
        self.membership(user).map_or(&[], |m| m.roles.as_slice())
    }

    /// Decides a request, looking only at the policies the indexes offer.
    ///
    /// OVERRIDE policies first, then NORMAL ones; within a priority a denial wins over allowances
    /// and the smallest deciding id is reported. An unknown access type is not determined.
    pub fn evaluate(&self, request: &AccessRequest<C>) -> Result<Decision, RequestError> {
        let (levels, subject) = self.place(request)?;
        let Some(access) = self.model.access_id(request.access_type) else {
            return Ok(Decision::not_determined());
        };
        let root = levels.get(0).map_or(0, |(id, _)| *id);
        let root_value = levels.get(0).map_or("", |(_, value)| value.as_ref());
        let mut by_value = StackVec::new();
        self.indexes.by_value(root, root_value, &mut by_value);
        let mut by_subject = StackVec::new();
        self.indexes.by_subject(root, &subject, &mut by_subject);
        let lists = if total(&by_subject) < total(&by_value) {
            by_subject
        } else {
            by_value
        };
        let mut tally = Tally::default();
        for list in lists.iter() {
            for &at in list.iter() {
                self.consider(at as usize, &levels, &subject, access, request, &mut tally);
            }
        }
        Ok(tally.decision().0)
    }

    /// Decides a request by trying every policy; the same answer as [`PolicyEngine::evaluate`],
    /// which tests compare it with.
    pub fn evaluate_unindexed(&self, request: &AccessRequest<C>) -> Result<Decision, RequestError> {
        let (levels, subject) = self.place(request)?;
        let Some(access) = self.model.access_id(request.access_type) else {
            return Ok(Decision::not_determined());
        };
        let mut tally = Tally::default();
        for at in 0..self.policies.len() {
            self.consider(at, &levels, &subject, access, request, &mut tally);
        }
        Ok(tally.decision().0)
    }

    /// Decides a request and says why: the deciding priority and every covering, applicable policy
    /// with a matching item, with the items that matched or were excepted.
    pub fn explain(&self, request: &AccessRequest<C>) -> Result<Explanation, RequestError> {
        let (levels, subject) = self.place(request)?;
        let Some(access) = self.model.access_id(request.access_type) else {
            return Ok(Explanation {
                decision: Decision::not_determined(),
                deciding_priority: None,
                policies: Vec::new(),
            });
        };
        let mut tally = Tally::default();
        let mut explained = Vec::new();
        for policy in &self.policies {
            if !policy.applies_at(request.time) || !policy.covers(&levels) {
                continue;
            }
            let matching = |list| policy.matching(list, &subject, access, request.context);
            let (deny, deny_exceptions) = (matching(List::Deny), matching(List::DenyExceptions));
            let (allow, allow_exceptions) =
                (matching(List::Allow), matching(List::AllowExceptions));
            let slot = policy.priority as usize;
            let branch = if !deny.is_empty() && deny_exceptions.is_empty() {
                Tally::note(&mut tally.denied[slot], policy.id);
                Branch::Deny
            } else if !allow.is_empty() && allow_exceptions.is_empty() {
                Tally::note(&mut tally.allowed[slot], policy.id);
                Branch::Allow
            } else if !allow.is_empty() {
                Branch::AllowExcepted
            } else if !deny.is_empty() {
                Branch::DenyExcepted
            } else {
                Branch::NoMatch
            };
            if [&deny, &deny_exceptions, &allow, &allow_exceptions]
                .iter()
                .any(|l| !l.is_empty())
            {
                explained.push(PolicyExplanation {
                    id: policy.id,
                    name: self.names[policy.name.0 as usize..policy.name.1 as usize].to_string(),
                    priority: policy.priority,
                    branch,
                    deny,
                    deny_exceptions,
                    allow,
                    allow_exceptions,
                });
            }
        }
        explained.sort_by_key(|p| (std::cmp::Reverse(p.priority), p.id));
        let (decision, deciding_priority) = tally.decision();
        Ok(Explanation {
            decision,
            deciding_priority,
            policies: explained,
        })
    }

    /// Kafka's `authorizeByResourceType`, generic: does the subject hold `access_type` (or a type
    /// implying it) on SOME resource of the root level `level`?
    ///
    /// An allow counts when a policy on that root applies at `time`, covers some resource, does not
    /// deny the subject itself (its deny branch would take precedence on every resource it covers),
    /// and has a matching allow item that no allow exception carves out. A deny counts only in a
    /// policy covering every resource of the root (`*` on every level, no exclusion), and then
    /// cancels the allows of its own priority and of lower ones. A deny on some resources never makes
    /// the answer false. Answered from the subject and deny-everything indexes, not by scanning.
    #[allow(clippy::too_many_arguments)]
    pub fn holds_on_some_resource(
        &self,
        level: &str,
        access_type: &str,
        user: &str,
        groups: &[String],
        roles: &[String],
        time: Instant,
        context: &C,
    ) -> Result<bool, RequestError> {
        if is_blank(level) {
            return Err(RequestError::Blank("resource level".to_string()));
        }
        check_names(access_type, user, groups, roles)?;
        let subject = self.subject(user, groups, roles)?;
        let root = self
            .model
            .level_id(level)
            .ok_or_else(|| RequestError::UnknownLevel(level.to_string()))?;
        if self.model.level_at(root).parent.is_some() {
            return Err(RequestError::NotARoot(level.to_string()));
        }
        let Some(access) = self.model.access_id(access_type) else {
            return Ok(false);
        };
        let mut lowest = Priority::Normal;
        for &at in self.indexes.denying_everything(root) {
            let policy = &self.policies[at as usize];
            if policy.applies_at(time) && policy.denies(&subject, access, context) {
                if policy.priority == Priority::Override {
                    return Ok(false);
                }
                lowest = Priority::Override;
            }
        }
        for priority in [Priority::Override, Priority::Normal] {
            if priority < lowest {
                break;
            }
            let mut lists = StackVec::new();
            self.indexes.allowing(root, priority, &subject, &mut lists);
            for &at in lists.iter().flat_map(|list| list.iter()) {
                let policy = &self.policies[at as usize];
                if policy.applies_at(time)
                    && !policy.covers_nothing()
                    && !policy.denies(&subject, access, context)
                    && policy.allows(&subject, access, context)
                {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// Checks a request, normalises its resource and resolves its subject.
    fn place<'r>(
        &self,
        request: &AccessRequest<'r, C>,
    ) -> Result<(Levels<'r>, Subject), RequestError> {
        if request.resource.is_empty() {
            return Err(RequestError::NoResource);
        }
        for (level, value) in request.resource {
            if is_blank(level) {
                return Err(RequestError::Blank("resource level".to_string()));
            }
            if is_blank(value) {
                return Err(RequestError::Blank(format!(
                    "the value of resource level {level}"
                )));
            }
        }
        check_names(
            request.access_type,
            request.user,
            request.groups,
            request.roles,
        )?;
        let subject = self.subject(request.user, request.groups, request.roles)?;
        Ok((self.normalize(request.resource)?, subject))
    }

    /// The requested values in chain order, root first, normalised; the levels must exist and form
    /// exactly one chain from a root.
    fn normalize<'r>(
        &self,
        resource: &'r [(&'r str, &'r str)],
    ) -> Result<Levels<'r>, RequestError> {
        let mut deepest: &[usize] = &[];
        for (at, (name, _)) in resource.iter().enumerate() {
            let id = self
                .model
                .level_id(name)
                .ok_or_else(|| RequestError::UnknownLevel(name.to_string()))?;
            if resource[..at].iter().any(|(other, _)| other == name) {
                return Err(RequestError::RepeatedLevel(name.to_string()));
            }
            let chain = self.model.chain_ids(id);
            if chain.len() > deepest.len() {
                deepest = chain;
            }
        }
        let not_a_chain =
            || RequestError::NotAChain(resource.iter().map(|(name, _)| name.to_string()).collect());
        if deepest.len() != resource.len() {
            return Err(not_a_chain());
        }
        let mut levels = Levels::new();
        for &id in deepest {
            let level = self.model.level_at(id);
            let (_, value) = resource
                .iter()
                .find(|(name, _)| *name == level.name)
                .ok_or_else(not_a_chain)?;
            let value: Cow<'r, str> = normalize(level, value);
            levels.push((id, value));
        }
        Ok(levels)
    }

    /// The subject as ids: the user, and the groups and roles of the caller and of the snapshot.
    fn subject(
        &self,
        user: &str,
        groups: &[String],
        roles: &[String],
    ) -> Result<Subject, RequestError> {
        let id = self.users.get(user);
        let membership = id
            .and_then(|id| self.memberships.get(id as usize))
            .and_then(Option::as_deref);
        if membership.is_some_and(|m| m.blank) {
            return Err(RequestError::Blank(format!(
                "a group or role the snapshot gives {user}"
            )));
        }
        let mut subject = Subject {
            user: id,
            groups: StackVec::new(),
            roles: StackVec::new(),
        };
        for group in groups.iter().filter_map(|g| self.groups.get(g)) {
            subject.groups.push_distinct(group);
        }
        for role in roles.iter().filter_map(|r| self.roles.get(r)) {
            subject.roles.push_distinct(role);
        }
        if let Some(membership) = membership {
            membership
                .group_ids
                .iter()
                .for_each(|&g| subject.groups.push_distinct(g));
            membership
                .role_ids
                .iter()
                .for_each(|&r| subject.roles.push_distinct(r));
        }
        Ok(subject)
    }

    fn membership(&self, user: &str) -> Option<&Membership> {
        let id = self.users.get(user)?;
        self.memberships.get(id as usize)?.as_deref()
    }

    /// One candidate: skipped unless it applies and covers; then its deny branch, else its allow
    /// branch.
    fn consider(
        &self,
        at: usize,
        levels: &Levels<'_>,
        subject: &Subject,
        access: usize,
        request: &AccessRequest<C>,
        tally: &mut Tally,
    ) {
        let policy = &self.policies[at];
        if !policy.applies_at(request.time) || !policy.covers(levels) {
            return;
        }
        let slot = policy.priority as usize;
        if policy.denies(subject, access, request.context) {
            Tally::note(&mut tally.denied[slot], policy.id);
        } else if policy.allows(subject, access, request.context) {
            Tally::note(&mut tally.allowed[slot], policy.id);
        }
    }
}

fn total(lists: &StackVec<&[u32], 16>) -> usize {
    lists.iter().map(|list| list.len()).sum()
}

/// The names Java's `AccessRequest` refuses when blank.
fn check_names(
    access_type: &str,
    user: &str,
    groups: &[String],
    roles: &[String],
) -> Result<(), RequestError> {
    if is_blank(access_type) {
        return Err(RequestError::Blank("access type".to_string()));
    }
    if is_blank(user) {
        return Err(RequestError::Blank("user".to_string()));
    }
    if groups.iter().any(|g| is_blank(g)) {
        return Err(RequestError::Blank("group".to_string()));
    }
    if roles.iter().any(|r| is_blank(r)) {
        return Err(RequestError::Blank("role".to_string()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    // DecisionTest.namesTheOutcomeAndTheDecidingPolicy
    #[test]
    fn names_the_outcome_and_the_deciding_policy() {
        assert!(Decision::allowed_by(3).is_allowed());
        assert_eq!(Decision::allowed_by(3), Decision::allowed_by(3));
        assert_ne!(Decision::allowed_by(3), Decision::denied_by(3));
        assert_ne!(Decision::allowed_by(3), Decision::allowed_by(4));
        assert_eq!(Decision::denied_by(3).to_string(), "DENIED by policy 3");
        assert_eq!(Decision::allowed_by(4).to_string(), "ALLOWED by policy 4");
        assert_eq!(Decision::not_determined().to_string(), "NOT_DETERMINED");
        assert_eq!(Decision::not_determined(), Decision::not_determined());
        assert_eq!(Decision::not_determined().policy_id, None);
        assert_ne!(Decision::not_determined(), Decision::denied_by(1));
        assert!(!Decision::denied_by(1).is_allowed());
    }

    #[test]
    fn engines_are_shared_between_threads() {
        fn shared<T: Send + Sync>() {}
        shared::<PolicyEngine<()>>();
        shared::<PolicyEngine<str>>();
        shared::<Evaluators<()>>();
    }
}
