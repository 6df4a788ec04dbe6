//! The tests of the audit fold: events folded and counted, and room shared fairly between outcomes
//! and principals.

use super::*;
use crate::audit::events::EventIds;
use crate::audit::names::CUT_KEEPS;
use crate::test_support::{context, write};
use grantforge_kafka::Operation;
use serde_json::Value;

const ALLOWED: Reason = Reason::Policy {
    id: 1,
    allowed: true,
};
const DENIED: Reason = Reason::Policy {
    id: 5,
    allowed: false,
};

fn take(auditor: &Auditor, now: Instant, window_over: bool) -> Vec<AccessEvent> {
    let ids = EventIds::new("test");
    auditor.take_events(now, window_over, |key, parts| {
        AccessEvent::new(ids.next(), key, parts)
    })
}

#[test]
fn identical_allowed_accesses_fold_into_one_event_and_past_the_room_are_dropped_and_counted() {
    // Room::of(2): one group of a principal's own and one overflow group in each half.
    let auditor = Auditor::new(2);
    let now = Instant::now();
    for _ in 0..1000 {
        auditor.record(&context("alice"), &write("orders"), &ALLOWED, 1, now);
    }
    auditor.record(&context("alice"), &write("payments"), &ALLOWED, 1, now);
    auditor.record(&context("bob"), &write("orders"), &ALLOWED, 1, now);
    assert_eq!(
        (auditor.queued(), auditor.take_dropped()),
        (2, 1),
        "alice's orders, alice's overflow; bob finds neither room"
    );
    assert!(
        take(&auditor, now, false).is_empty(),
        "allowed groups wait for the window"
    );
    let events = take(&auditor, now, true);
    assert_eq!(events.iter().map(|e| e.count).sum::<u64>(), 1001);
    assert_eq!(events.len(), 2);
    assert_eq!(auditor.queued(), 0);
}

#[test]
fn the_principal_part_of_a_packed_key_is_where_pack_ends_it() {
    let group = Group::first_access(
        &context("zoë"),
        &write("orders"),
        &DENIED,
        1,
        Instant::now(),
    );
    let mut packed = Vec::new();
    let principal = pack(&mut packed, &group.key.parts());
    assert_eq!(principal_part(&group.key), principal);
}

#[test]
fn the_room_is_halved_between_outcomes_and_a_tenth_of_a_half_is_a_share() {
    assert_eq!(
        Room::of(10_000),
        Room {
            own: 4_500,
            open: 2_250,
            share: 500,
            overflow: 500
        }
    );
    assert_eq!(
        Room::of(1),
        Room {
            own: 1,
            open: 0,
            share: 1,
            overflow: 1
        }
    );
}

/// Sums the counts of `events` by (user, resource, outcome).
fn counts(events: &[AccessEvent]) -> HashMap<(String, String, bool), u64> {
    let mut counts = HashMap::new();
    for e in events {
        *counts
            .entry((
                e.access.principal_name.clone(),
                e.access.resource.clone(),
                e.allowed,
            ))
            .or_insert(0) += e.count;
    }
    counts
}

#[test]
fn a_principal_flooding_unique_refusals_cannot_blind_the_audit_of_the_others() {
    // Per half: 450 of their own, any principal up to 225 of them, then 50 a principal; 50 overflow.
    let auditor = Auditor::new(1_000);
    let t0 = Instant::from_unix_millis(1_000_000);
    let mut events = Vec::new();
    for round in 0..20 {
        let now = t0.plus_millis(round * 100);
        for i in 0..1_000 {
            let name = format!("g-{round}-{i}");
            auditor.record(&context("mallory"), &write(&name), &DENIED, 1, now);
        }
        auditor.record(&context("alice"), &write("orders"), &ALLOWED, 1, now);
        auditor.record(&context("bob"), &write("orders"), &DENIED, 1, now);
        events.extend(take(&auditor, now, false));
    }
    events.extend(take(&auditor, t0.plus_seconds(10), true));
    let counts = counts(&events);
    assert_eq!(counts[&("alice".into(), "orders".into(), true)], 20);
    assert_eq!(counts[&("bob".into(), "orders".into(), false)], 20);
    let overflowed: u64 = events
        .iter()
        .filter(|e| e.overflow && e.access.principal_name == "mallory")
        .map(|e| e.count)
        .sum();
    let own: u64 = events
        .iter()
        .filter(|e| !e.overflow && e.access.principal_name == "mallory")
        .map(|e| e.count)
        .sum();
    assert_eq!(own + overflowed, 20_000, "every refusal counted, exactly");
    assert_eq!(
        own,
        225 + 224,
        "half of the room, twice (its first groups leave after their quiet second; bob's, \
         refreshed every round, stays)"
    );
    assert_eq!(auditor.dropped_total(), 0);
    assert_eq!(auditor.queued(), 0, "every room given back");
}

#[test]
fn past_its_share_a_principal_folds_into_one_overflow_group_per_request_resource_type_operation_and_outcome(
) {
    // Per half: 45 of their own, any principal up to 22 of them, then 5 a principal; 5 overflow.
    let auditor = Auditor::new(100);
    let now = Instant::now();
    for i in 0..1_000 {
        auditor.record(
            &context("carol"),
            &write(&format!("t{i}")),
            &ALLOWED,
            1,
            now,
        );
        auditor.record(&context("carol"), &write(&format!("t{i}")), &DENIED, 1, now);
    }
    let mut read = write("x");
    read.operation = Some(Operation::Read);
    auditor.record(&context("carol"), &read, &ALLOWED, 1, now);
    let events = take(&auditor, now.plus_seconds(5), true);
    let overflow: Vec<_> = events.iter().filter(|e| e.overflow).collect();
    let mut by_kind = std::collections::BTreeMap::new();
    for e in &overflow {
        *by_kind.entry((e.access.operation, e.allowed)).or_insert(0) += e.count;
    }
    assert_eq!(
        by_kind,
        [
            ((Some(Operation::Write), false), 978),
            ((Some(Operation::Write), true), 978),
            ((Some(Operation::Read), true), 1),
        ]
        .into_iter()
        .collect()
    );
    assert!(overflow.iter().all(|e| e.access.client.is_none()
        && e.policy_id.is_none()
        && e.access.resource.is_empty()));
    assert_eq!(events.iter().map(|e| e.count).sum::<u64>(), 2_001);
}

#[test]
fn allowed_groups_have_room_of_their_own_whatever_the_refusals() {
    let auditor = Auditor::new(100);
    let now = Instant::now();
    for user in 0..100 {
        for i in 0..10 {
            let name = format!("t{i}");
            auditor.record(
                &context(&format!("u{user}")),
                &write(&name),
                &DENIED,
                1,
                now,
            );
        }
    }
    assert!(auditor.take_dropped() > 0, "the refused half is full");
    auditor.record(&context("alice"), &write("orders"), &ALLOWED, 1, now);
    let events = take(&auditor, now, true);
    assert!(events
        .iter()
        .any(|e| e.allowed && e.access.principal_name == "alice" && !e.overflow));
}

#[test]
fn refusals_are_reported_at_once_and_repeats_fold_after_a_quiet_second() {
    let auditor = Auditor::new(100);
    let t0 = Instant::from_unix_millis(1_000_000);
    for i in 0..50 {
        auditor.record(
            &context("bob"),
            &write("orders"),
            &DENIED,
            1,
            t0.plus_millis(i),
        );
    }
    let first = take(&auditor, t0.plus_millis(50), false);
    assert_eq!(first.len(), 1);
    assert_eq!((first[0].count, first[0].allowed), (1, false));
    assert!(
        take(&auditor, t0.plus_millis(500), false).is_empty(),
        "repeats wait for a quiet second"
    );
    let repeats = take(&auditor, t0.plus_millis(1100), false);
    assert_eq!(repeats.len(), 1);
    assert_eq!(repeats[0].count, 49, "every refusal is counted: 1 + 49");
    assert_eq!(auditor.queued(), 0);
}

#[test]
fn a_flood_of_distinct_refusals_stays_bounded_and_counted() {
    let auditor = Auditor::new(1000);
    let now = Instant::now();
    let names: Vec<String> = (0..100_000).map(|i| format!("t{i}")).collect();
    for name in &names {
        auditor.record(&context("mallory"), &write(name), &DENIED, 1, now);
    }
    assert_eq!(
        auditor.queued(),
        226,
        "half of the room of their own, and one overflow group"
    );
    let events = take(&auditor, now, true);
    assert_eq!(events.iter().map(|e| e.count).sum::<u64>(), 100_000);
    for user in 0..100 {
        for name in &names[..60] {
            auditor.record(&context(&format!("u{user}")), &write(name), &DENIED, 1, now);
        }
    }
    let dropped = auditor.take_dropped();
    assert!(dropped > 0, "room for overflow groups is bounded too");
    assert_eq!(
        auditor.take_dropped(),
        0,
        "taken: counted once per log line"
    );
    assert_eq!(
        auditor.dropped_total(),
        dropped,
        "the metric counts since start, whatever was taken for the log"
    );
    let events = take(&auditor, now, true);
    assert_eq!(events.iter().map(|e| e.count).sum::<u64>() + dropped, 6_000);
}

#[test]
fn a_single_refusal_is_one_event_and_its_quiet_second_adds_none() {
    let auditor = Auditor::new(10);
    let t0 = Instant::from_unix_millis(1_000_000);
    auditor.record(&context("bob"), &write("orders"), &DENIED, 1, t0);
    assert_eq!(take(&auditor, t0, false).len(), 1);
    assert!(
        take(&auditor, t0.plus_millis(1100), false).is_empty(),
        "no repeat to report: no event of zero accesses"
    );
    assert_eq!(auditor.queued(), 0);
}

#[test]
fn a_group_merged_from_a_lane_keeps_the_first_and_last_access_of_both() {
    let auditor = Auditor::new(10);
    let t0 = Instant::from_unix_millis(1_000_000);
    auditor.record(&context("alice"), &write("orders"), &ALLOWED, 1, t0);
    let mut folded = Group::first_access(
        &context("alice"),
        &write("orders"),
        &ALLOWED,
        1,
        t0.plus_millis(100),
    );
    folded.add(t0.plus_millis(200));
    auditor.merge(Box::new(folded));
    let events = take(&auditor, t0.plus_millis(300), true);
    assert_eq!(
        events
            .iter()
            .map(|e| (e.count, e.first, e.last))
            .collect::<Vec<_>>(),
        [(3, t0, t0.plus_millis(200))]
    );
}

#[test]
fn names_kept_for_audit_are_clamped_to_the_servers_event_limits() {
    let auditor = Auditor::new(100);
    let now = Instant::now();
    let mut long = context(&"u".repeat(1 << 20));
    long.conditions.client_id = "c".repeat(1 << 20);
    let name = "g".repeat(1 << 20);
    for _ in 0..3 {
        auditor.record(&long, &write(&name), &DENIED, 1, now);
    }
    let group = Group::first_access(&long, &write(&name), &DENIED, 1, now);
    assert_eq!(
        (
            group.key.access.principal_name.len(),
            group.key.access.resource.len(),
            group.client_id.len()
        ),
        (limits::USER, CUT_KEEPS, limits::REQUEST_PART)
    );
    auditor.merge(Box::new(group));
    assert_eq!(auditor.queued(), 1);
    let events = take(&auditor, now.plus_seconds(5), true);
    assert_eq!(events.iter().map(|e| e.count).sum::<u64>(), 4);
    assert!(events.iter().all(|e| e.log_line().len() < 4 * 1024));
}

/// GrantForge's HDFS agent cuts a long resource to its first units and a marker, and says the
/// whole name's length and SHA-256 in the event's `request`: two names sharing those first units
/// are two resources in the events, never one.
#[test]
fn two_long_names_sharing_their_first_units_are_two_events_that_say_which_is_which() {
    let auditor = Auditor::new(100);
    let now = Instant::now();
    let prefix = "g".repeat(2000);
    let (a, b) = (format!("{prefix}-a"), format!("{prefix}-b"));
    auditor.record(&context("alice"), &write(&a), &DENIED, 1, now);
    auditor.record(&context("alice"), &write(&b), &DENIED, 1, now);
    let events: Vec<Value> = take(&auditor, now, false)
        .iter()
        .map(AccessEvent::to_json)
        .collect();
    assert_eq!(events.len(), 2);
    let cut = format!("{}...[truncated]", "g".repeat(CUT_KEEPS));
    let digest = |name: &str| {
        let sha = ring::digest::digest(&ring::digest::SHA256, name.as_bytes());
        let hex: String = sha.as_ref().iter().map(|b| format!("{b:02x}")).collect();
        format!("resourceLength=2002; resourceSha256={hex}; ")
    };
    let mut requests: Vec<&str> = events
        .iter()
        .map(|e| {
            assert_eq!(e["resource"], cut.as_str(), "the HDFS agent's cut");
            e["request"].as_str().unwrap()
        })
        .collect();
    requests.sort_unstable();
    let mut expected = [digest(&a), digest(&b)];
    expected.sort_unstable();
    for (request, expected) in requests.iter().zip(&expected) {
        assert!(request.starts_with(expected.as_str()), "{request}");
    }
}

#[test]
fn unchecked_and_unrequested_accesses_are_not_recorded() {
    let auditor = Auditor::new(10);
    let mut quiet = write("orders");
    quiet.log_if_allowed = false;
    auditor.record(&context("alice"), &quiet, &ALLOWED, 1, Instant::now());
    let unchecked = Reason::ServiceDisabled;
    auditor.record(
        &context("alice"),
        &write("orders"),
        &unchecked,
        1,
        Instant::now(),
    );
    assert_eq!(auditor.queued(), 0);
}

#[test]
fn a_refusal_after_one_reported_is_reported_at_its_own_time() {
    let auditor = Auditor::new(100);
    let t = |ms: i64| Instant::from_unix_millis(1_800_000_000_000 + ms);
    auditor.record(
        &context("bob"),
        &write("orders"),
        &Reason::NoPolicy,
        3,
        t(0),
    );
    let first = take(&auditor, t(10), false);
    assert_eq!((first.len(), first[0].first), (1, t(0)));
    auditor.record(
        &context("bob"),
        &write("orders"),
        &Reason::NoPolicy,
        3,
        t(500),
    );
    let later = take(&auditor, t(2000), false);
    assert_eq!(later.len(), 1);
    assert_eq!(
        (later[0].count, later[0].first, later[0].last),
        (1, t(500), t(500)),
        "occurredAt of the follow-up is its own access, not the one reported before"
    );
}

#[test]
fn accesses_decided_under_another_snapshot_are_an_event_of_their_own_version() {
    let auditor = Auditor::new(100);
    let t = |ms: i64| Instant::from_unix_millis(1_800_000_000_000 + ms);
    // No snapshot yet: refused under version -1; then version 3 is applied and refuses too.
    auditor.record(
        &context("bob"),
        &write("orders"),
        &Reason::NoSnapshot,
        -1,
        t(0),
    );
    let first = take(&auditor, t(10), false);
    assert_eq!(first[0].policy_version, -1);
    auditor.record(
        &context("bob"),
        &write("orders"),
        &Reason::NoPolicy,
        3,
        t(300),
    );
    let later = take(&auditor, t(2000), false);
    assert_eq!(
        later.iter().map(|e| e.policy_version).collect::<Vec<_>>(),
        [3],
        "decided under version 3"
    );
}
