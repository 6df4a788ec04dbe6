//! The answers do not depend on the order Kafka delivers updates and removals in (its metadata
//! loader replays entities in any order, a `<U, C>` before or after `<U>`).

use grantforge_quotas::{Entity, Part, QuotaTable, QuotaType};
use proptest::prelude::*;

fn entity(kind: u8, user: u8, client: u8) -> Entity {
    let named = |prefix: &str, n: u8| Some(Part::Named(format!("{prefix}{n}")));
    match kind % 8 {
        0 => Entity::of(named("u", user), named("c", client)),
        1 => Entity::of(named("u", user), Some(Part::Default)),
        2 => Entity::of(named("u", user), None),
        3 => Entity::of(Some(Part::Default), named("c", client)),
        4 => Entity::of(Some(Part::Default), Some(Part::Default)),
        5 => Entity::of(Some(Part::Default), None),
        6 => Entity::of(None, named("c", client)),
        _ => Entity::of(None, Some(Part::Default)),
    }
}

/// An update (value) or a removal (none) of one entity and type.
type Change = (u8, u8, u8, u8, Option<u16>);

fn change() -> impl Strategy<Value = Change> {
    (
        0u8..8,
        0u8..3,
        0u8..3,
        0u8..4,
        proptest::option::of(1u16..20_000),
    )
}

fn apply(changes: &[Change]) -> QuotaTable {
    let mut table = QuotaTable::new();
    for (kind, user, client, quota_type, value) in changes {
        let (entity, quota_type) = (
            entity(*kind, *user, *client),
            QuotaType::ALL[*quota_type as usize],
        );
        match value {
            Some(v) => table.update(&entity, quota_type, f64::from(*v)),
            None => table.remove(&entity, quota_type),
        }
    }
    table
}

/// The last change of each (entity, type): what any order of the same final state must give.
fn last_per_key(changes: &[Change]) -> Vec<Change> {
    let mut last: Vec<Change> = Vec::new();
    for change in changes {
        let key = |c: &Change| (entity(c.0, c.1, c.2), c.3);
        last.retain(|c| key(c) != key(change));
        last.push(*change);
    }
    last
}

/// A failing case's seed is written to `tests/proptest-regressions/order.txt` (committed) and
/// replayed before the random cases on every later run.
fn config() -> ProptestConfig {
    ProptestConfig {
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::Direct(
                "tests/proptest-regressions/order.txt",
            ),
        )),
        ..ProptestConfig::with_cases(2_000)
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_order_of_the_same_entities_resolves_alike(changes in proptest::collection::vec(change(), 0..40), seed in any::<u64>()) {
        let finals = last_per_key(&changes);
        let mut shuffled = finals.clone();
        // A Fisher–Yates shuffle driven by the seed.
        let mut state = seed | 1;
        for i in (1..shuffled.len()).rev() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            shuffled.swap(i, (state % (i as u64 + 1)) as usize);
        }
        let (in_order, reordered) = (apply(&changes), apply(&shuffled));
        for quota_type in QuotaType::ALL {
            for user in ["u0", "u1", "u2", "u9"] {
                for client in ["c0", "c1", "c2", "c9", ""] {
                    prop_assert_eq!(in_order.resolve(quota_type, user, client), reordered.resolve(quota_type, user, client));
                }
            }
        }
    }
}
