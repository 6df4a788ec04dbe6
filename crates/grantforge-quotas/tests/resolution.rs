//! The resolution table of `docs/quotas.md`, row by row, and its worked example.

use grantforge_quotas::{Entity, Part, QuotaTable, QuotaType, Rule, SafeBounds};

const PRODUCE: QuotaType = QuotaType::Produce;
const FETCH: QuotaType = QuotaType::Fetch;

fn both(table: &mut QuotaTable, entity: Entity, produce: f64, fetch: f64) {
    table.update(&entity, PRODUCE, produce);
    table.update(&entity, FETCH, fetch);
}

/// The worked example of docs/quotas.md: user2 has (producer 4096, consumer 8192), clientA (10, 20), clientB (30, 40).
fn worked_example() -> QuotaTable {
    let mut table = QuotaTable::new();
    both(&mut table, Entity::user("user2"), 4096.0, 8192.0);
    both(
        &mut table,
        Entity::user_client("user2", "clientA"),
        10.0,
        20.0,
    );
    both(
        &mut table,
        Entity::user_client("user2", "clientB"),
        30.0,
        40.0,
    );
    table
}

fn limits(table: &QuotaTable, user: &str, client: &str) -> (Option<f64>, Option<f64>) {
    (
        table.resolve(PRODUCE, user, client).limit,
        table.resolve(FETCH, user, client).limit,
    )
}

#[test]
fn the_worked_example_reserves_sub_quotas_out_of_the_users_total() {
    let table = worked_example();
    assert_eq!(limits(&table, "user2", "clientA"), (Some(10.0), Some(20.0)));
    assert_eq!(limits(&table, "user2", "clientB"), (Some(30.0), Some(40.0)));
    for other in ["clientC", "", "another"] {
        assert_eq!(
            limits(&table, "user2", other),
            (Some(4056.0), Some(8132.0)),
            "{other}"
        );
        assert_eq!(
            table.resolve(PRODUCE, "user2", other).tags(),
            ("user2", ""),
            "the shared group"
        );
    }
    assert_eq!(
        table.resolve(PRODUCE, "user2", "clientA").tags(),
        ("user2", "clientA"),
        "a reserved group"
    );
    assert_eq!(
        table.resolve(PRODUCE, "user3", "clientA").limit,
        None,
        "another user is unthrottled"
    );
    assert_eq!(table.limit_of_group(PRODUCE, "user2", ""), Some(4056.0));
    assert_eq!(table.limit_of_group(FETCH, "user2", "clientB"), Some(40.0));
}

/// Each row of the table applies when the rows above it have no entity, and loses to them.
#[test]
fn every_row_of_the_table_in_order() {
    let user = || Some(Part::Named("u".into()));
    let client = || Some(Part::Named("c".into()));
    let default = || Some(Part::Default);
    // From the last row up: each added entity takes over.
    let rows: [(Entity, Rule, (&str, &str), f64); 8] = [
        (
            Entity::of(None, default()),
            Rule::DefaultClient,
            ("u", "c"),
            8000.0,
        ),
        (Entity::of(None, client()), Rule::Client, ("u", "c"), 7000.0),
        (
            Entity::of(default(), None),
            Rule::DefaultUser,
            ("u", ""),
            6000.0,
        ),
        (
            Entity::of(default(), default()),
            Rule::DefaultUserDefaultClient,
            ("u", "c"),
            5000.0,
        ),
        (
            Entity::of(default(), client()),
            Rule::DefaultUserClient,
            ("u", "c"),
            4000.0,
        ),
        (Entity::of(user(), None), Rule::User, ("u", ""), 3000.0),
        (
            Entity::of(user(), default()),
            Rule::UserDefaultClient,
            ("u", "c"),
            2000.0,
        ),
        (
            Entity::of(user(), client()),
            Rule::UserClient,
            ("u", "c"),
            1000.0,
        ),
    ];
    let mut table = QuotaTable::new();
    let nothing = table.resolve(PRODUCE, "u", "c");
    assert_eq!(
        (nothing.rule, nothing.limit, nothing.tags()),
        (Rule::Unlimited, None, ("u", "c")),
        "a group of its own, as Kafka's built-in callback gives a client when user quotas are in use"
    );
    for (entity, rule, tags, value) in &rows {
        table.update(entity, PRODUCE, *value);
        let resolved = table.resolve(PRODUCE, "u", "c");
        // Rules 3 and 6 give the total less u's reserved sub-quotas, which are none until row 1.
        assert_eq!(
            (resolved.rule, resolved.tags(), resolved.limit),
            (*rule, *tags, Some(*value)),
            "{entity}"
        );
    }
    // And from the first row down: removing each entity hands the connection to the next row.
    for (at, (entity, _, _, _)) in rows.iter().enumerate().rev() {
        table.remove(entity, PRODUCE);
        let expected = at
            .checked_sub(1)
            .map(|next| rows[next].1)
            .unwrap_or(Rule::Unlimited);
        assert_eq!(
            table.resolve(PRODUCE, "u", "c").rule,
            expected,
            "after removing {entity}"
        );
    }
}

#[test]
fn the_default_users_share_is_less_the_users_own_sub_quotas() {
    let mut table = QuotaTable::new();
    table.update(&Entity::of(Some(Part::Default), None), PRODUCE, 10_000.0);
    table.update(&Entity::user_client("u", "c"), PRODUCE, 3000.0);
    let shared = table.resolve(PRODUCE, "u", "other");
    assert_eq!(
        (shared.rule, shared.tags(), shared.limit),
        (Rule::DefaultUser, ("u", ""), Some(7000.0))
    );
    assert_eq!(
        table.resolve(PRODUCE, "v", "other").limit,
        Some(10_000.0),
        "v reserved nothing"
    );
    assert_eq!(table.resolve(PRODUCE, "u", "c").limit, Some(3000.0));
}

#[test]
fn a_client_id_quota_is_per_user_never_shared_across_users() {
    let mut table = QuotaTable::new();
    table.update(&Entity::client("clientA"), PRODUCE, 5000.0);
    let of_user2 = table.resolve(PRODUCE, "user2", "clientA");
    let of_user4 = table.resolve(PRODUCE, "user4", "clientA");
    assert_eq!(
        (of_user2.rule, of_user2.limit),
        (Rule::Client, Some(5000.0))
    );
    assert_eq!(of_user2.tags(), ("user2", "clientA"));
    assert_eq!(
        of_user4.tags(),
        ("user4", "clientA"),
        "a group of its own: the same limit, not the same budget"
    );
    table.update(&Entity::of(None, Some(Part::Default)), PRODUCE, 2000.0);
    assert_eq!(
        table.resolve(PRODUCE, "user4", "clientZ").tags(),
        ("user4", "clientZ")
    );
}

#[test]
fn a_value_the_operator_set_is_used_as_set_however_small() {
    let mut table = QuotaTable::new();
    let mutation = QuotaType::ControllerMutation;
    table.update(&Entity::user("u"), mutation, 0.2);
    table.update(&Entity::of(Some(Part::Default), None), PRODUCE, 512.0);
    table.update(&Entity::user("u"), QuotaType::Request, 0.5);
    table.update(&Entity::user("tiny"), FETCH, 1.0);
    for (quota_type, user, limit) in [
        (mutation, "u", 0.2),
        (PRODUCE, "anyone", 512.0),
        (QuotaType::Request, "u", 0.5),
        (FETCH, "tiny", 1.0),
    ] {
        let resolved = table.resolve(quota_type, user, "c");
        assert_eq!(
            (resolved.limit, resolved.oversubscribed),
            (Some(limit), false),
            "{quota_type} of {user}"
        );
        assert_eq!(table.limit_of_group(quota_type, user, ""), Some(limit));
    }
    assert!(
        table
            .bounds()
            .overflows(FETCH, table.resolve(FETCH, "tiny", "c").limit.unwrap()),
        "1 byte/s is used as set, and known to be below what Kafka enforces"
    );
}

#[test]
fn a_remainder_stands_down_to_the_smallest_bound_kafka_enforces() {
    // The seed: "clients not listed share the remaining quota of the user".
    let mut table = QuotaTable::new();
    table.update(&Entity::user("olga"), PRODUCE, 4096.0);
    table.update(&Entity::user_client("olga", "clientA"), PRODUCE, 3900.0);
    let shared = table.resolve(PRODUCE, "olga", "clientC");
    assert_eq!((shared.limit, shared.oversubscribed), (Some(196.0), false));
    // 50 bytes/s is above the 49 that Kafka's arithmetic handles for 100 MiB requests.
    table.update(&Entity::user_client("olga", "clientA"), PRODUCE, 4046.0);
    assert_eq!(table.resolve(PRODUCE, "olga", "clientC").limit, Some(50.0));
    // A node that accepts requests of at most 1 MiB handles 0.49 bytes/s.
    table.set_bounds(SafeBounds::for_requests_up_to(1024 * 1024));
    table.update(&Entity::user_client("olga", "clientA"), PRODUCE, 4095.0);
    assert_eq!(table.resolve(PRODUCE, "olga", "clientC").limit, Some(1.0));
}

#[test]
fn a_remainder_below_the_smallest_bound_becomes_it_and_says_so() {
    let mut table = QuotaTable::new();
    let bounds = table.bounds();
    table.update(&Entity::user("u"), PRODUCE, 100.0);
    table.update(&Entity::user_client("u", "a"), PRODUCE, 60.0);
    let sliver = table.resolve(PRODUCE, "u", "c");
    assert_eq!(
        (sliver.limit, sliver.oversubscribed),
        (Some(bounds.smallest(PRODUCE)), true),
        "40 bytes/s left: Kafka's throttle would overflow on a 100 MiB request"
    );
    table.update(&Entity::user_client("u", "b"), PRODUCE, 60.0);
    let none_left = table.resolve(PRODUCE, "u", "c");
    assert_eq!(
        (none_left.limit, none_left.oversubscribed),
        (Some(bounds.smallest(PRODUCE)), true),
        "less than nothing left"
    );
    for quota_type in [QuotaType::Request, QuotaType::ControllerMutation] {
        table.update(&Entity::of(Some(Part::Default), None), quota_type, 50.0);
        table.update(&Entity::user_client("u", "a"), quota_type, 50.0);
        let zero = table.resolve(quota_type, "u", "c");
        assert_eq!(
            (zero.rule, zero.limit, zero.oversubscribed),
            (Rule::DefaultUser, Some(bounds.smallest(quota_type)), true),
            "{quota_type}: a remainder of zero becomes a positive bound"
        );
    }
    table.update(&Entity::user("u"), PRODUCE, 10_000.0);
    assert_eq!(table.resolve(PRODUCE, "u", "c").limit, Some(9880.0));
    assert!(!table.resolve(PRODUCE, "u", "c").oversubscribed);
}

#[test]
fn quota_types_resolve_independently() {
    let mut table = QuotaTable::new();
    table.update(&Entity::user("u"), PRODUCE, 4096.0);
    table.update(&Entity::user_client("u", "c"), FETCH, 100.0);
    table.update(
        &Entity::of(Some(Part::Default), None),
        QuotaType::ControllerMutation,
        5.0,
    );
    assert_eq!(
        table.resolve(PRODUCE, "u", "c").limit,
        Some(4096.0),
        "the fetch sub-quota reserves nothing of produce"
    );
    assert_eq!(table.resolve(FETCH, "u", "c").rule, Rule::UserClient);
    assert_eq!(table.resolve(FETCH, "u", "d").rule, Rule::Unlimited);
    assert_eq!(
        table.resolve(QuotaType::Request, "u", "c").rule,
        Rule::Unlimited
    );
    assert_eq!(
        table.resolve(QuotaType::ControllerMutation, "u", "c").limit,
        Some(5.0)
    );
    assert!(table.is_empty(QuotaType::Request) && !table.is_empty(QuotaType::ControllerMutation));
}

#[test]
fn the_user_tag_is_sanitized_and_the_group_limit_reads_it_back() {
    let mut table = QuotaTable::new();
    table.update(&Entity::user("CN=alice,O=acme"), PRODUCE, 4096.0);
    let resolved = table.resolve(PRODUCE, "CN=alice,O=acme", "app");
    assert_eq!(resolved.tags(), ("CN%3Dalice%2CO%3Dacme", ""));
    assert_eq!(
        table.limit_of_group(PRODUCE, &resolved.user_tag, &resolved.client_tag),
        Some(4096.0)
    );
}

#[test]
fn a_default_named_entity_is_a_user_named_default() {
    // Kafka names defaults `<default>`; only the entity type makes one a default.
    let mut table = QuotaTable::new();
    table.update(&Entity::user("<default>"), PRODUCE, 2048.0);
    assert_eq!(table.resolve(PRODUCE, "someone", "c").rule, Rule::Unlimited);
    assert_eq!(table.resolve(PRODUCE, "<default>", "c").limit, Some(2048.0));
}

#[test]
fn values_and_a_one_line_summary_of_the_table() {
    let table = worked_example();
    assert_eq!(
        table.value(&Entity::user_client("user2", "clientB"), FETCH),
        Some(40.0)
    );
    assert_eq!(table.value(&Entity::user("user3"), FETCH), None);
    assert_eq!(
        table.summary(),
        "6 quota entities (3 producer_byte_rate, 3 consumer_byte_rate, 0 request_percentage, 0 controller_mutation_rate); users reserving sub-quotas: 1"
    );
    let mut more = table.clone();
    more.update(&Entity::user_client("user4", "clientA"), FETCH, 5.0);
    more.update(&Entity::user("user4"), PRODUCE, 5.0);
    assert_eq!((more.entities(), more.users_reserving()), (8, 2));
    more.remove(&Entity::user_client("user4", "clientA"), FETCH);
    assert_eq!((more.entities(), more.users_reserving()), (7, 1));
}

/// `<default user, C>` is the default sub-quota of client id C of every user whose total is the
/// default: as a user's own sub-quota is carved out of its own total, it is carved out of each
/// user's share of the default, never added on top.
#[test]
fn a_default_users_client_sub_quota_is_carved_out_of_each_users_share_of_the_default() {
    let mut table = QuotaTable::new();
    let default_user = || Some(Part::Default);
    table.update(&Entity::of(default_user(), None), PRODUCE, 10_000.0);
    table.update(
        &Entity::of(default_user(), Some(Part::Named("clientA".into()))),
        PRODUCE,
        1_000.0,
    );
    let reserved = table.resolve(PRODUCE, "v", "clientA");
    assert_eq!(
        (reserved.rule, reserved.tags(), reserved.limit),
        (Rule::DefaultUserClient, ("v", "clientA"), Some(1_000.0))
    );
    let shared = table.resolve(PRODUCE, "v", "other");
    assert_eq!(
        (shared.rule, shared.tags(), shared.limit),
        (Rule::DefaultUser, ("v", ""), Some(9_000.0)),
        "v's clients use at most its default total of 10,000 in all"
    );
    // u's own sub-quota for clientA replaces the default one, and is carved out instead.
    table.update(&Entity::user_client("u", "clientA"), PRODUCE, 3_000.0);
    table.update(&Entity::user_client("u", "clientB"), PRODUCE, 500.0);
    assert_eq!(table.resolve(PRODUCE, "u", "other").limit, Some(6_500.0));
    // A user with a total of its own is not under the default: nothing of it is carved out.
    table.update(&Entity::user("w"), PRODUCE, 4_000.0);
    assert_eq!(table.resolve(PRODUCE, "w", "other").limit, Some(4_000.0));
    assert_eq!(table.resolve(PRODUCE, "w", "clientA").rule, Rule::User);
    // Default sub-quotas that take the whole default total leave the smallest bound.
    table.update(
        &Entity::of(default_user(), Some(Part::Named("clientB".into()))),
        PRODUCE,
        9_000.0,
    );
    let none_left = table.resolve(PRODUCE, "v", "other");
    assert_eq!(
        (none_left.limit, none_left.oversubscribed),
        (Some(table.bounds().smallest(PRODUCE)), true)
    );
}
