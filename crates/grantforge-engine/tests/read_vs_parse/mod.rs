//! The check the fuzz target `snapshot_parse` runs on every input, shared with the test that
//! replays its kept corpus on stable (`tests/fuzz_corpus.rs`): `PolicyEngine::read`, the one-pass
//! reader the agent loads snapshots with, held to `Snapshot::parse` then `PolicyEngine::build`.
//! Both refuse with the same error, or both accept with the same head, the visitor shown exactly
//! the parsed policies, and engines that answer every question below alike. What is accepted must
//! answer questions about its own values without panicking, the index agreeing with a full scan
//! and `holds_on_some_resource` holding every access a decision allowed.

use grantforge_engine::{
    AccessRequest, Evaluators, Instant, PolicyEngine, PolicyRecord, PolicyVisitor, Snapshot,
};

/// The policies `read` showed its visitor, and how often it was told they were all shown.
#[derive(Default)]
pub struct Seen {
    policies: Vec<PolicyRecord>,
    finished: usize,
}

impl PolicyVisitor for Seen {
    fn visit(&mut self, policy: &PolicyRecord) {
        self.policies.push(policy.clone());
    }
    fn restart(&mut self) {
        *self = Seen::default();
    }
    fn finish(&mut self) {
        self.finished += 1;
    }
}

/// Panics when `read` and `parse` + `build` part on `data`, or the engine contradicts itself.
pub fn check(data: &[u8]) {
    let evaluators = Evaluators::new();
    let mut seen = Seen::default();
    let read = PolicyEngine::<()>::read(data, &evaluators, &mut seen);
    let parsed = Snapshot::parse(data);
    let (snapshot, engine) = match (parsed, read) {
        (Err(refusal), Err(read)) => {
            assert_eq!(read, refusal, "read and parse refuse differently");
            return;
        }
        (Ok(snapshot), Ok((head, engine))) => {
            assert_eq!(head, snapshot.head, "the head read in one pass");
            assert_eq!(seen.policies, snapshot.policies, "the policies visited");
            assert_eq!(seen.finished, 1, "the visitor is finished once");
            (snapshot, engine)
        }
        (parsed, read) => panic!(
            "parse gave {:?}, read gave {:?}",
            parsed.map(|_| ()),
            read.map(|_| ())
        ),
    };
    let built =
        PolicyEngine::<()>::build(&snapshot, &evaluators).expect("a snapshot that parses builds");
    same_engine(&engine, &built, &snapshot);
    ask_its_own_values(&engine, &built, &snapshot);
}

/// What an engine says of itself, besides decisions: the same after `read` as after `build`.
fn same_engine(read: &PolicyEngine<()>, built: &PolicyEngine<()>, snapshot: &Snapshot) {
    assert_eq!(read.policy_count(), built.policy_count());
    assert_eq!(read.warnings(), built.warnings());
    assert_eq!(read.evaluators_in_use(), built.evaluators_in_use());
    assert_eq!(read.validity_changes(), built.validity_changes());
    let members = snapshot.roles.values().chain(snapshot.groups.values());
    for user in members.flatten().take(16) {
        assert_eq!(
            read.snapshot_groups_of(user),
            built.snapshot_groups_of(user)
        );
        assert_eq!(read.snapshot_roles_of(user), built.snapshot_roles_of(user));
    }
}

/// Asks `engine` (read) about the values of the snapshot's first policies, on every access type
/// and one unknown: `built` must answer alike, and `engine` must agree with itself.
fn ask_its_own_values(engine: &PolicyEngine<()>, built: &PolicyEngine<()>, snapshot: &Snapshot) {
    let time = Instant::parse("2026-06-15T12:00:00Z").expect("a valid instant");
    let access_types: Vec<&str> = engine
        .model()
        .access_types()
        .iter()
        .map(|a| a.name.as_str())
        .chain(["none"])
        .collect();
    for policy in snapshot.policies.iter().take(8) {
        let resource: Vec<(&str, &str)> = policy
            .resources
            .iter()
            .filter_map(|(level, values)| Some((level.as_str(), values.values.first()?.as_str())))
            .collect();
        let item = policy.allow.iter().chain(&policy.deny).next();
        let user = item
            .and_then(|i| i.users.first())
            .map_or("someone", String::as_str);
        let groups: Vec<String> = item.map(|i| i.groups.clone()).unwrap_or_default();
        for access in &access_types {
            let request = AccessRequest {
                resource: &resource,
                access_type: access,
                user,
                groups: &groups,
                roles: &[],
                time,
                context: &(),
            };
            let explained = engine.explain(&request);
            assert_eq!(
                explained,
                built.explain(&request),
                "read and build explain apart"
            );
            let indexed = engine.evaluate(&request);
            assert_eq!(
                indexed,
                engine.evaluate_unindexed(&request),
                "the index changed a decision"
            );
            assert_eq!(indexed, explained.map(|e| e.decision), "explain disagrees");
            holds_what_it_allows(engine, built, &request);
        }
    }
}

/// `holds_on_some_resource` on the request's root: the same after `read` as after `build`, and
/// true whenever the root alone is allowed.
fn holds_what_it_allows(
    engine: &PolicyEngine<()>,
    built: &PolicyEngine<()>,
    request: &AccessRequest<()>,
) {
    // The resource's root, not its first level: levels come in name order, and asking about a
    // level with a parent is a refusal, which would check nothing.
    let root = request.resource.iter().copied().find(|(level, _)| {
        engine
            .model()
            .level(level)
            .is_some_and(|l| l.parent.is_none())
    });
    let Some(root) = root else {
        return;
    };
    let (access, user, groups) = (request.access_type, request.user, request.groups);
    let holds = engine.holds_on_some_resource(root.0, access, user, groups, &[], request.time, &());
    let built_holds =
        built.holds_on_some_resource(root.0, access, user, groups, &[], request.time, &());
    assert_eq!(holds, built_holds, "read and build hold apart");
    // An access allowed on a resource of the root level alone is held on some resource of that
    // root. Only the root alone: a policy denying every resource of a root names `*` on its own
    // levels and does not cover a deeper resource, which a policy on more levels may allow. The
    // answer comes from the subject and deny-everything indexes, the decision from the value
    // index, so neither can vouch for the other.
    let alone = [root];
    let allowed = engine
        .evaluate(&AccessRequest {
            resource: &alone,
            ..*request
        })
        .is_ok_and(|decision| decision.is_allowed());
    if allowed {
        assert_eq!(
            holds,
            Ok(true),
            "allowed on {alone:?}, yet held on no resource of {}",
            root.0
        );
    }
}
