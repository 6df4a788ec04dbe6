//! Feeds arbitrary bytes to `Snapshot::parse`; whatever parses must build, and the engine must
//! answer questions about its own values without panicking, the index agreeing with a full scan
//! and `holds_on_some_resource` holding every access a decision allowed.
#![no_main]

use grantforge_engine::{AccessRequest, Evaluators, Instant, PolicyEngine, Snapshot};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(snapshot) = Snapshot::parse(data) else {
        return;
    };
    let engine = PolicyEngine::<()>::build(&snapshot, &Evaluators::new())
        .expect("a snapshot that parses builds");
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
            let indexed = engine.evaluate(&request);
            assert_eq!(
                indexed,
                engine.evaluate_unindexed(&request),
                "the index changed a decision"
            );
            assert_eq!(
                indexed,
                engine.explain(&request).map(|e| e.decision),
                "explain disagrees"
            );
            // The resource's root, not its first level: levels come in name order, and asking
            // about a level with a parent is a refusal, which would check nothing.
            let root = resource.iter().copied().find(|(level, _)| {
                engine
                    .model()
                    .level(level)
                    .is_some_and(|l| l.parent.is_none())
            });
            if let Some(root) = root {
                let holds =
                    engine.holds_on_some_resource(root.0, access, user, &groups, &[], time, &());
                // An access allowed on a resource of the root level alone is held on some
                // resource of that root. Only the root alone: a policy denying every resource of
                // a root names `*` on its own levels and does not cover a deeper resource, which
                // a policy on more levels may allow. The answer comes from the subject and
                // deny-everything indexes, the decision from the value index, so neither can
                // vouch for the other.
                let alone = [root];
                let allowed = engine
                    .evaluate(&AccessRequest {
                        resource: &alone,
                        ..request
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
        }
    }
});
