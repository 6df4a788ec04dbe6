//! The table of disagreements, bounded and shared fairly as the audit's fold tables are
//! (`audit::fold`'s `Room`): at most [`TRACKED`] keys; once half of the room for keys of their own
//! is held, no principal may hold more than a tenth of it, and a disagreement that finds no room
//! for a key of its own is counted exactly in its principal's overflow row (kind, operation and
//! resource type, no resource name), which a tenth of the room is kept for. Only when that room is
//! full too is a disagreement counted by its kind alone ([`Comparisons::untracked`]). So a client
//! that floods distinct names cannot take the names of another principal's disagreements.
//!
//! A key that was reported (it became an audit event) and then saw no disagreement for
//! [`QUIET_WINDOWS_KEPT`] fold windows ages out and gives its room back: the table shows what
//! disagrees now, and empties once the policies and the ACLs agree.
//!
//! The table is sharded by key, each shard behind its own lock: a disagreement takes one shard's
//! lock (and, for a new key, its principal's), never one lock of the whole process.

use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hash};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use grantforge_engine::Instant;
use grantforge_kafka::{Action, Reason, RequestContext};
use parking_lot::Mutex;

use super::{event, report, Decider, DisagreementKey, Kind, Tally, BASIS_LIMIT};
use crate::audit::events::{AccessEvent, EventIds};
use crate::audit::fold::{take, Room};
use crate::audit::limits::clamp;

/// Disagreement keys kept at most (their names clamped to the audit's limits: a few KiB each).
pub const TRACKED: usize = 512;

/// Fold windows a reported key stays without a new disagreement (five minutes at the default
/// `grantforge.audit.fold.window.ms`).
pub const QUIET_WINDOWS_KEPT: u32 = 30;

/// Shards of the table: disagreements of different keys rarely share a lock.
const SHARDS: usize = 16;

type Shards<K, V> = Vec<Mutex<HashMap<K, V>>>;

fn shards<K, V>() -> Shards<K, V> {
    (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect()
}

/// Every comparison of one agent.
pub struct Comparisons {
    grantforge_refuses: AtomicU64,
    grantforge_allows: AtomicU64,
    /// Disagreements counted in overflow rows.
    overflowed: AtomicU64,
    /// Disagreements past all the room: counted by kind only.
    untracked: AtomicU64,
    room: Room,
    /// Keys of their own held (all principals), and overflow rows held.
    own: AtomicUsize,
    overflow_rows: AtomicUsize,
    keys: Shards<DisagreementKey, Tally>,
    /// Keys of their own held by each principal.
    held: Shards<(String, String), usize>,
    hasher: RandomState,
}

impl Default for Comparisons {
    fn default() -> Comparisons {
        Comparisons::with_room(TRACKED)
    }
}

impl Comparisons {
    /// A table of at most `tracked` keys.
    pub(crate) fn with_room(tracked: usize) -> Comparisons {
        Comparisons {
            grantforge_refuses: AtomicU64::new(0),
            grantforge_allows: AtomicU64::new(0),
            overflowed: AtomicU64::new(0),
            untracked: AtomicU64::new(0),
            room: Room::within(tracked),
            own: AtomicUsize::new(0),
            overflow_rows: AtomicUsize::new(0),
            keys: shards(),
            held: shards(),
            hasher: RandomState::new(),
        }
    }

    fn shard<'s, K: Hash, V>(&self, shards: &'s Shards<K, V>, key: &K) -> &'s Mutex<HashMap<K, V>> {
        &shards[self.hasher.hash_one(key) as usize % SHARDS]
    }

    /// Keeps one disagreement: `Some(true)` when the shim should tell the Kafka ACL behind it (the
    /// key has none yet), `None` when the table had no room for it (no event will carry it).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn record(
        &self,
        decider: Decider,
        kafka_allowed: bool,
        context: &RequestContext,
        action: &Action<'_>,
        reason: Reason,
        policy_version: i64,
        now: Instant,
    ) -> Option<bool> {
        let kind = Kind::of(kafka_allowed);
        match kind {
            Kind::GrantForgeRefuses => &self.grantforge_refuses,
            Kind::GrantForgeAllows => &self.grantforge_allows,
        }
        .fetch_add(1, Ordering::Relaxed);
        let key = DisagreementKey::of(decider, kind, context, action);
        let policy_id = reason.policy_id();
        {
            let mut shard = self.shard(&self.keys, &key).lock();
            if let Some(tally) = shard.get_mut(&key) {
                tally.renew(policy_id, policy_version, now);
                return Some(tally.kafka_basis.is_none());
            }
            if self.take_own_room(&key) {
                shard.insert(key, Tally::first(context, policy_id, policy_version, now));
                return Some(true);
            }
        }
        self.record_overflow(key.into_overflow(), context, policy_version, now)
            .then_some(false)
    }

    /// Counts a disagreement in its principal's overflow row; false when there is no room for
    /// it, and it is counted by kind only.
    fn record_overflow(
        &self,
        key: DisagreementKey,
        context: &RequestContext,
        policy_version: i64,
        now: Instant,
    ) -> bool {
        let mut shard = self.shard(&self.keys, &key).lock();
        if let Some(tally) = shard.get_mut(&key) {
            tally.renew(None, policy_version, now);
        } else if take(&self.overflow_rows, self.room.overflow) {
            shard.insert(key, Tally::first(context, None, policy_version, now));
        } else {
            self.untracked.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        self.overflowed.fetch_add(1, Ordering::Relaxed);
        true
    }

    /// Room for one more key of the principal's own, if the table and its share allow it.
    fn take_own_room(&self, key: &DisagreementKey) -> bool {
        let held_before = self.own.fetch_add(1, Ordering::AcqRel);
        if held_before >= self.room.own {
            self.own.fetch_sub(1, Ordering::AcqRel);
            return false;
        }
        let principal = key.principal();
        let mut held = self.shard(&self.held, &principal).lock();
        let n = held.entry(principal).or_insert(0);
        if *n >= self.room.share && held_before >= self.room.open {
            self.own.fetch_sub(1, Ordering::AcqRel);
            return false;
        }
        *n += 1;
        true
    }

    /// Gives back the room of a key that aged out.
    fn give_back(&self, key: &DisagreementKey) {
        if key.overflow {
            self.overflow_rows.fetch_sub(1, Ordering::AcqRel);
            return;
        }
        self.own.fetch_sub(1, Ordering::AcqRel);
        let principal = key.principal();
        let mut held = self.shard(&self.held, &principal).lock();
        if let Some(n) = held.get_mut(&principal) {
            *n -= 1;
            if *n == 0 {
                held.remove(&principal);
            }
        }
    }

    /// Keeps the Kafka ACL behind Kafka's answer to a kept disagreement, as the shim found it.
    pub(crate) fn describe_kafka_basis(
        &self,
        decider: Decider,
        kafka_allowed: bool,
        context: &RequestContext,
        action: &Action<'_>,
        basis: &str,
    ) {
        let key = DisagreementKey::of(decider, Kind::of(kafka_allowed), context, action);
        if let Some(tally) = self.shard(&self.keys, &key).lock().get_mut(&key) {
            tally.kafka_basis = Some(clamp(basis, BASIS_LIMIT).to_string());
        }
    }

    pub fn grantforge_refuses(&self) -> u64 {
        self.grantforge_refuses.load(Ordering::Relaxed)
    }

    pub fn grantforge_allows(&self) -> u64 {
        self.grantforge_allows.load(Ordering::Relaxed)
    }

    /// Disagreements counted in a principal's overflow row (past its share: no resource kept).
    pub fn overflowed(&self) -> u64 {
        self.overflowed.load(Ordering::Relaxed)
    }

    /// Disagreements past the table's room: counted by kind, not kept by key.
    pub fn untracked(&self) -> u64 {
        self.untracked.load(Ordering::Relaxed)
    }

    /// The disagreements of the fold window that ends now, one event per key (with its count),
    /// and the window started afresh; the keys quiet for [`QUIET_WINDOWS_KEPT`] windows since
    /// they were reported age out.
    pub(crate) fn take_events(&self, ids: &EventIds) -> Vec<AccessEvent> {
        let mut events = Vec::new();
        for shard in &self.keys {
            shard.lock().retain(|key, tally| {
                if tally.in_window > 0 {
                    events.push(event(ids.next(), key, tally));
                    tally.in_window = 0;
                    tally.quiet_windows = 0;
                    return true;
                }
                tally.quiet_windows += 1;
                let keep = tally.quiet_windows < QUIET_WINDOWS_KEPT;
                if !keep {
                    self.give_back(key);
                }
                keep
            });
        }
        events
    }

    /// The kept disagreements: each principal's most frequent first, then each one's second,
    /// and so on, so that `limit` rows name as many principals as they can (a principal with
    /// thousands of rows cannot push another's one row out), shown most frequent first.
    pub fn top(&self, limit: usize) -> Vec<(DisagreementKey, Tally)> {
        let mut rows: Vec<(DisagreementKey, Tally)> = Vec::new();
        for shard in &self.keys {
            rows.extend(shard.lock().iter().map(|(k, t)| (k.clone(), t.clone())));
        }
        let most_frequent_first = |a: &(DisagreementKey, Tally), b: &(DisagreementKey, Tally)| {
            b.1.total
                .cmp(&a.1.total)
                .then_with(|| a.0.principal_name.cmp(&b.0.principal_name))
                .then_with(|| a.0.resource.cmp(&b.0.resource))
                .then_with(|| a.0.overflow.cmp(&b.0.overflow))
        };
        rows.sort_by(most_frequent_first);
        let mut rank_of_principal: HashMap<(String, String), usize> = HashMap::new();
        let mut ranked: Vec<(usize, usize)> = rows
            .iter()
            .enumerate()
            .map(|(at, (key, _))| {
                let rank = rank_of_principal.entry(key.principal()).or_insert(0);
                *rank += 1;
                (*rank, at)
            })
            .collect();
        ranked.sort_unstable();
        ranked.truncate(limit);
        let mut kept: Vec<usize> = ranked.into_iter().map(|(_, at)| at).collect();
        kept.sort_unstable();
        let mut rows: Vec<Option<(DisagreementKey, Tally)>> = rows.into_iter().map(Some).collect();
        kept.into_iter().filter_map(|at| rows[at].take()).collect()
    }

    /// [`Comparisons::top`] as a table in text, one disagreement per line.
    pub fn report(&self, limit: usize) -> String {
        report(self.top(limit))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comparison::REPORTED;
    use crate::test_support::{context, write};

    /// A disagreement of `user` about writing `topic` (Kafka allows it).
    fn record(comparisons: &Comparisons, user: &str, topic: &str) -> Option<bool> {
        comparisons.record(
            Decider::Kafka,
            true,
            &context(user),
            &write(topic),
            Reason::NoPolicy,
            1,
            Instant::from_unix_millis(0),
        )
    }

    fn rows_of<'r>(report: &'r str, user: &str) -> Vec<&'r str> {
        let principal = format!("\tUser:{user}\t");
        report
            .lines()
            .filter(|row| row.contains(&principal))
            .collect()
    }

    #[test]
    fn a_flood_of_names_goes_to_its_principals_overflow_row_and_another_principal_stays_named() {
        let comparisons = Comparisons::default();
        let room = Room::within(TRACKED);
        for i in 0..5000 {
            record(&comparisons, "mallory", &format!("group-{i}"));
        }
        assert_eq!(
            record(&comparisons, "alice", "orders"),
            Some(true),
            "a key of alice's own"
        );
        let rows = comparisons.top(usize::MAX);
        let own = rows
            .iter()
            .filter(|(k, _)| k.principal_name == "mallory" && !k.overflow)
            .count();
        assert_eq!(own, room.open, "mallory holds the open room, no more");
        let overflow: Vec<_> = rows.iter().filter(|(k, _)| k.overflow).collect();
        assert_eq!(overflow.len(), 1, "one overflow row");
        assert_eq!(overflow[0].1.total, (5000 - own) as u64, "counted exactly");
        assert_eq!(comparisons.overflowed(), (5000 - own) as u64);
        assert_eq!(
            (comparisons.untracked(), comparisons.grantforge_refuses()),
            (0, 5001)
        );

        let report = comparisons.report(REPORTED);
        let alice = rows_of(&report, "alice");
        assert_eq!(alice.len(), 1, "{report}");
        assert!(alice[0].contains("\tTOPIC:orders\t"), "{report}");
        let overflow_row = format!("{}\tshadow\t", 5000 - own);
        assert!(
            report.contains(&overflow_row),
            "the overflow row is shown: {report}"
        );
        assert!(
            report.contains(crate::audit::limits::OVERFLOW_RESOURCE),
            "{report}"
        );
        assert_eq!(report.lines().count(), REPORTED + 1, "{report}");
    }

    #[test]
    fn past_all_of_its_room_the_table_counts_disagreements_by_kind_exactly() {
        let comparisons = Comparisons::with_room(20);
        for user in 0..30 {
            for topic in 0..3 {
                record(&comparisons, &format!("u{user}"), &format!("t{topic}"));
            }
        }
        let kept: u64 = comparisons
            .top(usize::MAX)
            .iter()
            .map(|(_, t)| t.total)
            .sum();
        assert_eq!(comparisons.grantforge_refuses(), 90);
        let untracked_before = comparisons.untracked();
        assert!(comparisons.untracked() > 0);
        assert_eq!(
            record(&comparisons, "u99", "t9"),
            None,
            "nothing will carry it"
        );
        assert_eq!(kept + untracked_before, 90, "every one counted once");
        let room = Room::within(20);
        assert_eq!(comparisons.top(usize::MAX).len(), room.own + room.overflow);
    }

    #[test]
    fn a_reported_key_ages_out_after_its_quiet_windows_and_gives_its_room_back() {
        let comparisons = Comparisons::with_room(20);
        let ids = EventIds::new("t");
        let room = Room::within(20);
        for i in 0..room.own {
            record(&comparisons, &format!("u{i}"), "orders");
        }
        assert_eq!(
            record(&comparisons, "late", "orders"),
            Some(false),
            "an overflow row"
        );
        assert_eq!(
            comparisons.take_events(&ids).len(),
            room.own + 1,
            "reported"
        );
        for _ in 1..QUIET_WINDOWS_KEPT {
            assert!(comparisons.take_events(&ids).is_empty());
        }
        assert_eq!(
            comparisons.top(usize::MAX).len(),
            room.own + 1,
            "kept while quiet"
        );
        comparisons.take_events(&ids);
        assert!(comparisons.report(REPORTED).is_empty(), "aged out");
        assert_eq!(
            record(&comparisons, "late", "orders"),
            Some(true),
            "its room given back"
        );
        assert_eq!(comparisons.top(1)[0].0.principal_name, "late");
    }

    #[test]
    fn a_key_not_yet_reported_never_ages_out() {
        let comparisons = Comparisons::default();
        let ids = EventIds::new("t");
        record(&comparisons, "alice", "orders");
        for _ in 0..QUIET_WINDOWS_KEPT {
            comparisons.take_events(&ids);
            record(&comparisons, "alice", "orders");
        }
        assert_eq!(comparisons.take_events(&ids)[0].count, 1);
        assert_eq!(
            comparisons.top(1)[0].1.total,
            u64::from(QUIET_WINDOWS_KEPT) + 1
        );
    }

    #[test]
    fn names_a_client_chose_cannot_forge_a_row_or_a_column_of_the_report() {
        let comparisons = Comparisons::default();
        record(&comparisons, "mallory\n1\tshadow", "orders\tforged");
        record(&comparisons, "eve", crate::audit::limits::OVERFLOW_RESOURCE);
        let report = comparisons.report(REPORTED);
        let rows: Vec<&str> = report.lines().collect();
        assert_eq!(rows.len(), 3, "the header and two rows: {report}");
        assert_eq!(rows[1].split('\t').count(), 8, "{report}");
        assert!(
            report.contains(r#"(escaped) "mallory\n1\tshadow""#),
            "{report}"
        );
        assert!(report.contains(r#"(escaped) "orders\tforged""#), "{report}");
        assert!(
            report.contains("\tTOPIC:(escaped) \"(names not kept"),
            "a name cannot pass for an overflow row: {report}"
        );
    }

    #[test]
    fn each_window_gives_one_event_per_key_with_the_windows_count_only() {
        let comparisons = Comparisons::default();
        let ids = EventIds::new("t");
        for _ in 0..3 {
            record(&comparisons, "alice", "orders");
        }
        let events = comparisons.take_events(&ids);
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].count, 3);
        assert!(comparisons.take_events(&ids).is_empty(), "a quiet window");
        record(&comparisons, "alice", "orders");
        assert_eq!(comparisons.take_events(&ids)[0].count, 1);
        assert_eq!(comparisons.top(1)[0].1.total, 4, "the total goes on");
    }

    #[test]
    fn names_are_kept_clamped_to_the_audits_limits() {
        let comparisons = Comparisons::default();
        let long = "t".repeat(5000);
        record(&comparisons, "alice", &long);
        let basis = "b".repeat(5000);
        comparisons.describe_kafka_basis(
            Decider::Kafka,
            true,
            &context("alice"),
            &write(&long),
            &basis,
        );
        let (key, tally) = comparisons.top(1).remove(0);
        assert_eq!(key.resource.len(), crate::audit::names::CUT_KEEPS);
        assert_eq!(key.resource_cut.map(|cut| cut.units), Some(5000));
        assert_eq!(tally.kafka_basis.unwrap().len(), BASIS_LIMIT);
    }
}
