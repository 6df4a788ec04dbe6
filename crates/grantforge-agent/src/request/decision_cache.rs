//! The decision cache: a broker asks the same questions on every produce and fetch.
//!
//! One cache per applied snapshot: a new snapshot comes with a new, empty cache, so no answer of an
//! old snapshot can be served after a swap, however the races fall (a request holds the snapshot
//! and its cache together). The key holds everything a decision can read: the principal, the
//! resource, the operation, and the client address, listener and client id when some policy's
//! conditions read them. Only settled decisions are kept; errors never are. No decision is kept
//! past the next instant at which a validity period of its snapshot starts or ends, so a grant
//! that ends at T is refused from T on, whatever the TTL. Time here is the wall clock's, the one
//! the periods are written in (`clock.rs`): a decision is served only between the moment it was
//! made and its expiry, so a step of the clock, back or forward, never serves it outside the
//! period it was made in.
//!
//! Bounds in bytes: a question whose key would exceed [`MAX_KEY_BYTES`] (a client-chosen group id
//! of a megabyte, say: Kafka asks before it validates names) is decided every time and never kept,
//! so an entry costs at most that much plus the map's own overhead. Expired entries are dropped by
//! the agent's thread ([`DecisionCache::drop_expired`]); a full shard makes room for an eighth of
//! its capacity in one pass, so an insert never scans the shard each time.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use grantforge_kafka::{Action, ConditionReads, KafkaContext, Reason, RequestContext};
use parking_lot::RwLock;

use crate::keys::{hash_of, with_key_buffer, Access, KeyBuildHasher, KeyWriter};
use crate::request::clock::{coarse_lag_millis, wall_millis};

/// Shards of the cache: two request threads rarely want the same lock.
const SHARDS: usize = 16;

/// The longest key kept. Kafka caps topic names at 249 characters, and principals, group ids and
/// client ids in use are far below this; a longer question is decided every time.
pub(crate) const MAX_KEY_BYTES: usize = 1024;

/// The key's fixed parts: lengths, codes, the address and the request type (at most 50 bytes).
const KEY_FRAME_BYTES: usize = 64;

/// A decision, and when it is served: from the moment it was made until it expires
/// (milliseconds of [`wall_millis`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Kept {
    pub reason: Reason,
    pub decided_ms: u64,
    pub expires_ms: u64,
}

impl Kept {
    /// A decision that is served never.
    fn not_kept(reason: Reason) -> Kept {
        Kept {
            reason,
            decided_ms: u64::MAX,
            expires_ms: 0,
        }
    }

    /// Whether the decision may be served at `now`: not before it was made (the clock stepped
    /// back), not once it has expired.
    pub(crate) fn serves_at(&self, now: u64) -> bool {
        (self.decided_ms..self.expires_ms).contains(&now)
    }
}

type Shard = RwLock<HashMap<Box<[u8]>, Kept, KeyBuildHasher>>;

/// A sharded map from packed request keys to decisions. (moka was measured first: its hit cost,
/// with the key built as owned strings, was several hundred ns from Java; see docs/benchmarks.md.)
pub struct DecisionCache {
    shards: Option<Box<[Shard]>>,
    shard_capacity: usize,
    ttl_ms: u64,
    reads: ConditionReads,
    /// When expired entries were last dropped (milliseconds of [`wall_millis`]).
    last_sweep_ms: AtomicU64,
    /// When a validity period of the snapshot starts or ends (milliseconds of [`wall_millis`]),
    /// earliest first: a decision kept never outlives the next one.
    validity_changes_ms: Box<[u64]>,
}

impl DecisionCache {
    /// A cache of `max_entries` kept for `ttl`; either 0 turns caching off.
    pub fn new(max_entries: u64, ttl: Duration, reads: ConditionReads) -> DecisionCache {
        let enabled = max_entries > 0 && !ttl.is_zero();
        let shards = enabled.then(|| {
            (0..SHARDS)
                .map(|_| RwLock::new(HashMap::default()))
                .collect()
        });
        let shard_capacity = usize::try_from(max_entries)
            .unwrap_or(usize::MAX)
            .div_ceil(SHARDS)
            .max(1);
        let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
        DecisionCache {
            shards,
            shard_capacity,
            ttl_ms,
            reads,
            last_sweep_ms: AtomicU64::new(0),
            validity_changes_ms: Box::new([]),
        }
    }

    /// The same cache, keeping no decision past the next of `changes_ms` (milliseconds since 1970,
    /// earliest first): the instants a validity period starts or ends.
    pub fn ending_at(self, changes_ms: Vec<u64>) -> DecisionCache {
        DecisionCache {
            validity_changes_ms: changes_ms.into_boxed_slice(),
            ..self
        }
    }

    /// When a decision kept at `now` expires: after the TTL, or before the next validity change.
    ///
    /// [`wall_millis`] is coarse: `now` here, and the clock of every later hit, lag the precise
    /// clock by up to [`coarse_lag_millis`], and the changes are truncated to the millisecond,
    /// so a change is only known to within `margin` of it. A
    /// decision made within `margin` of a change (on either side: the engine's precise clock
    /// may not have reached it yet) is not kept; one made before expires `margin` ahead of it, so
    /// that no hit sees it once the change has come. Such questions are decided afresh.
    fn expiry(&self, now: u64) -> u64 {
        let ttl_over = now.saturating_add(self.ttl_ms);
        let margin = 2 * coarse_lag_millis() + 1;
        let next = self
            .validity_changes_ms
            .partition_point(|&at| at.saturating_add(margin) <= now);
        self.validity_changes_ms
            .get(next)
            .map_or(ttl_over, |&change| {
                change.saturating_sub(margin).min(ttl_over)
            })
    }

    /// Whether decisions are kept at all.
    pub fn enabled(&self) -> bool {
        self.shards.is_some()
    }

    /// The kept decision (and `true`), or `decide()`'s (and `false`), kept when it may be.
    /// A decision that is not kept comes with an expiry in the past.
    pub fn get_or_decide(
        &self,
        context: &RequestContext,
        action: &Action<'_>,
        decide: impl FnOnce() -> Reason,
    ) -> (Kept, bool) {
        self.get_or_decide_at(wall_millis(), context, action, decide)
    }

    /// [`DecisionCache::get_or_decide`] with the clock read at `now`.
    fn get_or_decide_at(
        &self,
        now: u64,
        context: &RequestContext,
        action: &Action<'_>,
        decide: impl FnOnce() -> Reason,
    ) -> (Kept, bool) {
        let Some(shards) = &self.shards else {
            return (Kept::not_kept(decide()), false);
        };
        with_key_buffer(|key| {
            if !self.pack(context, action, key, false) {
                return (Kept::not_kept(decide()), false);
            }
            let shard = &shards[hash_of(key) as usize % SHARDS];
            if let Some(kept) = shard.read().get(key.as_slice()) {
                if kept.serves_at(now) {
                    return (*kept, true);
                }
            }
            let reason = decide();
            if !reason.cacheable() {
                return (Kept::not_kept(reason), false);
            }
            let kept = Kept {
                reason,
                decided_ms: now,
                expires_ms: self.expiry(now),
            };
            let mut entries = shard.write();
            if entries.len() >= self.shard_capacity {
                self.make_room(&mut entries, now);
            }
            entries.insert(key.as_slice().into(), kept);
            (kept, false)
        })
    }

    /// Empties a full shard down to seven eighths of its capacity in one pass: expired entries
    /// first, then arbitrary ones. The next eighth of inserts then need no pass at all.
    fn make_room(&self, entries: &mut HashMap<Box<[u8]>, Kept, KeyBuildHasher>, now: u64) {
        let target = self.shard_capacity - self.shard_capacity.div_ceil(8);
        let mut left = entries.len();
        entries.retain(|_, kept| {
            let keep = kept.serves_at(now) && left <= target;
            left -= usize::from(!keep);
            keep
        });
    }

    /// Drops expired entries, at most once per TTL (and per second): an entry outlives its expiry
    /// by at most that long, whether or not its shard fills. Called from the agent's thread.
    pub(crate) fn drop_expired(&self) {
        let Some(shards) = &self.shards else { return };
        let now = wall_millis();
        // Wrapping: a clock stepped back before the last sweep sweeps at once.
        if now.wrapping_sub(self.last_sweep_ms.load(Ordering::Relaxed)) < self.ttl_ms.max(1000) {
            return;
        }
        self.last_sweep_ms.store(now, Ordering::Relaxed);
        for shard in shards.iter() {
            shard.write().retain(|_, kept| kept.serves_at(now));
        }
    }

    /// Decisions kept now (expired ones included until they are dropped).
    pub fn size(&self) -> u64 {
        self.shards.as_ref().map_or(0, |shards| {
            shards.iter().map(|s| s.read().len() as u64).sum()
        })
    }

    /// Packs the key of a question: everything a decision can read (the principal, the resource,
    /// the operation, and the client address, listener and client id when some policy's conditions
    /// read them). `with_audit` adds what the audit folds by (the client address and the request
    /// type): a lane's front keeps the access's fold group beside the decision.
    ///
    /// Returns false, packing nothing, when the key would exceed [`MAX_KEY_BYTES`]: such a
    /// question is not kept.
    pub(crate) fn pack(
        &self,
        context: &RequestContext,
        action: &Action<'_>,
        key: &mut Vec<u8>,
        with_audit: bool,
    ) -> bool {
        // Every field named: a field added to what a condition may read (KafkaContext) or to what
        // the snapshot reads (ConditionReads) does not compile until the key holds it.
        let KafkaContext {
            client_address,
            listener,
            client_id,
        } = &context.conditions;
        let ConditionReads {
            client_address: reads_address,
            listener: reads_listener,
            client_id: reads_client_id,
        } = self.reads;
        let principal = &context.principal;
        let mut names = principal.principal_type.len() + principal.name.len() + action.name.len();
        names += if reads_listener { listener.len() } else { 0 };
        names += if reads_client_id { client_id.len() } else { 0 };
        if names > MAX_KEY_BYTES - KEY_FRAME_BYTES {
            return false;
        }
        // The access as far as a decision reads it: the address only when a condition does, the
        // request type (which no decision reads) only for the lane's fold.
        let access = Access {
            client: client_address.filter(|_| with_audit || reads_address),
            request_type: if with_audit { context.request_type } else { 0 },
            ..Access::of(context, action)
        };
        let mut w = KeyWriter(key);
        access.pack(&mut w);
        w.byte(u8::from(action.literal));
        if reads_listener {
            w.str(listener);
        }
        if reads_client_id {
            w.str(client_id);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use grantforge_kafka::{Operation, Principal, ResourceType};
    use std::cell::Cell;

    fn context(address: &str, client_id: &str) -> RequestContext {
        RequestContext {
            principal: Principal {
                principal_type: "User".into(),
                name: "alice".into(),
            },
            conditions: KafkaContext {
                client_address: Some(address.parse().unwrap()),
                listener: "L".into(),
                client_id: client_id.into(),
            },
            request_type: 0,
            request_version: 0,
        }
    }

    fn read(topic: &str) -> Action<'_> {
        Action {
            operation: Some(Operation::Read),
            resource_type: Some(ResourceType::Topic),
            literal: true,
            name: topic,
            log_if_allowed: true,
            log_if_denied: true,
        }
    }

    const SETTLED: Reason = Reason::Policy {
        id: 1,
        allowed: true,
    };
    const ERROR: Reason = Reason::Unplaced;

    #[test]
    fn keeps_settled_decisions_and_never_errors() {
        let cache = DecisionCache::new(100, Duration::from_secs(60), ConditionReads::default());
        let asked = Cell::new(0);
        for _ in 0..3 {
            cache.get_or_decide(&context("10.0.0.1", "a"), &read("orders"), || {
                asked.set(asked.get() + 1);
                SETTLED
            });
        }
        assert_eq!(asked.get(), 1);
        for _ in 0..3 {
            cache.get_or_decide(&context("10.0.0.1", "a"), &read("bad"), || {
                asked.set(asked.get() + 1);
                ERROR
            });
        }
        assert_eq!(asked.get(), 4, "errors are decided every time");
        assert_eq!(cache.size(), 1);
    }

    #[test]
    fn the_key_holds_what_conditions_read_and_only_that() {
        let blind = DecisionCache::new(100, Duration::from_secs(60), ConditionReads::default());
        blind.get_or_decide(&context("10.0.0.1", "a"), &read("orders"), || SETTLED);
        blind.get_or_decide(&context("10.0.0.2", "b"), &read("orders"), || SETTLED);
        assert_eq!(
            blind.size(),
            1,
            "no condition reads the address: one entry serves every client"
        );
        let by_address = DecisionCache::new(
            100,
            Duration::from_secs(60),
            ConditionReads {
                client_address: true,
                ..Default::default()
            },
        );
        by_address.get_or_decide(&context("10.0.0.1", "a"), &read("orders"), || SETTLED);
        by_address.get_or_decide(&context("10.0.0.2", "a"), &read("orders"), || SETTLED);
        by_address.get_or_decide(&context("10.0.0.2", "b"), &read("orders"), || SETTLED);
        assert_eq!(by_address.size(), 2);
    }

    #[test]
    fn entries_expire_and_capacity_is_bounded() {
        let short = DecisionCache::new(100, Duration::from_millis(30), ConditionReads::default());
        let asked = Cell::new(0);
        let ask = || {
            asked.set(asked.get() + 1);
            SETTLED
        };
        short.get_or_decide(&context("10.0.0.1", "a"), &read("orders"), ask);
        std::thread::sleep(Duration::from_millis(50));
        short.get_or_decide(&context("10.0.0.1", "a"), &read("orders"), || {
            asked.set(asked.get() + 1);
            SETTLED
        });
        assert_eq!(asked.get(), 2, "an expired decision is decided again");
        let small = DecisionCache::new(16, Duration::from_secs(60), ConditionReads::default());
        let names: Vec<String> = (0..1000).map(|i| format!("t{i}")).collect();
        for name in &names {
            small.get_or_decide(&context("10.0.0.1", "a"), &read(name), || SETTLED);
        }
        assert!(small.size() <= 16, "{}", small.size());
    }

    #[test]
    fn a_question_beyond_the_key_bound_is_decided_every_time_and_never_kept() {
        let cache = DecisionCache::new(100, Duration::from_secs(60), ConditionReads::default());
        let asked = Cell::new(0);
        let long = "g".repeat(MAX_KEY_BYTES);
        for _ in 0..3 {
            let (kept, hit) = cache.get_or_decide(&context("10.0.0.1", "a"), &read(&long), || {
                asked.set(asked.get() + 1);
                SETTLED
            });
            assert!(kept.reason.allowed() && !hit);
        }
        assert_eq!((asked.get(), cache.size()), (3, 0));
        let mut key = Vec::new();
        assert!(!cache.pack(&context("10.0.0.1", "a"), &read(&long), &mut key, true));
        assert!(
            key.is_empty(),
            "nothing is packed for a question that is not kept"
        );
        // The client id counts only when a condition reads it.
        let by_client = DecisionCache::new(
            100,
            Duration::from_secs(60),
            ConditionReads {
                client_id: true,
                ..Default::default()
            },
        );
        let long_id = "c".repeat(MAX_KEY_BYTES);
        assert!(cache.pack(
            &context("10.0.0.1", &long_id),
            &read("orders"),
            &mut key,
            false
        ));
        assert!(!by_client.pack(
            &context("10.0.0.1", &long_id),
            &read("orders"),
            &mut key,
            false
        ));
    }

    #[test]
    fn the_key_bound_counts_every_name_the_key_holds_to_the_byte() {
        // "User" and "alice" are 9 bytes; the names may take MAX_KEY_BYTES - KEY_FRAME_BYTES.
        let names = MAX_KEY_BYTES - KEY_FRAME_BYTES;
        let fits = |cache: &DecisionCache, context: &RequestContext, topic_bytes: usize| {
            let topic = "t".repeat(topic_bytes);
            cache.pack(context, &read(&topic), &mut Vec::new(), false)
        };
        let blind = DecisionCache::new(100, Duration::from_secs(60), ConditionReads::default());
        let alice = context("10.0.0.1", "a");
        assert!(fits(&blind, &alice, names - 9));
        assert!(!fits(&blind, &alice, names - 8));
        // The listener ("L", 1 byte) and the client id count when a condition reads them.
        let by_listener = DecisionCache::new(
            100,
            Duration::from_secs(60),
            ConditionReads {
                listener: true,
                ..Default::default()
            },
        );
        assert!(fits(&by_listener, &alice, names - 10));
        assert!(!fits(&by_listener, &alice, names - 9));
    }

    #[test]
    fn expired_entries_are_dropped_without_their_shard_filling() {
        let cache = DecisionCache::new(1000, Duration::from_millis(20), ConditionReads::default());
        for i in 0..50 {
            cache.get_or_decide(&context("10.0.0.1", "a"), &read(&format!("t{i}")), || {
                SETTLED
            });
        }
        assert_eq!(cache.size(), 50);
        std::thread::sleep(Duration::from_millis(40));
        cache.drop_expired();
        assert_eq!(cache.size(), 0);
    }

    #[test]
    fn a_sweep_keeps_every_entry_that_has_not_expired() {
        let cache = DecisionCache::new(1000, Duration::from_secs(60), ConditionReads::default());
        for i in 0..50 {
            cache.get_or_decide(&context("10.0.0.1", "a"), &read(&format!("t{i}")), || {
                SETTLED
            });
        }
        cache.drop_expired();
        assert_eq!(cache.size(), 50);
    }

    #[test]
    fn a_full_shard_makes_room_for_an_eighth_in_one_pass() {
        let capacity = 16 * 64; // 64 per shard
        let cache =
            DecisionCache::new(capacity, Duration::from_secs(60), ConditionReads::default());
        let names: Vec<String> = (0..20_000).map(|i| format!("t{i}")).collect();
        let mut sizes = Vec::new();
        for name in &names {
            cache.get_or_decide(&context("10.0.0.1", "a"), &read(name), || SETTLED);
            sizes.push(cache.size());
        }
        assert!(sizes.iter().all(|s| *s <= capacity));
        // A pass empties a shard to 56 of 64: the cache stays between 7/8 full and full.
        assert!(
            sizes[10_000..].iter().all(|s| *s >= capacity * 7 / 8 - 16),
            "{:?}",
            &sizes[10_000..10_010]
        );
        // Passes are rare: the total shrinks (a pass ran) about once per 8 inserts into a shard.
        let passes = sizes.windows(2).filter(|w| w[1] < w[0]).count();
        assert!(
            passes > 0 && passes < names.len() / 6,
            "{passes} passes for {} inserts",
            names.len()
        );
    }

    #[test]
    fn a_decision_is_kept_no_longer_than_the_next_validity_change() {
        let margin = 2 * coarse_lag_millis() + 1;
        let now = wall_millis();
        let (passed, ahead, last) = (
            now.saturating_sub(2 * margin),
            now + 40 + margin,
            now + 90 + 2 * margin,
        );
        let cache = DecisionCache::new(100, Duration::from_secs(60), ConditionReads::default())
            .ending_at(vec![passed, ahead, last]);
        assert_eq!(
            cache.expiry(now),
            ahead - margin,
            "the change ahead, not the one passed, less the margin"
        );
        assert!(
            cache.expiry(ahead - 1) < ahead - 1 && cache.expiry(ahead) < ahead,
            "within the margin of a change, on either side, nothing is kept"
        );
        assert_eq!(
            cache.expiry(ahead + margin),
            last - margin,
            "a change a margin ago has taken effect"
        );
        assert_eq!(
            cache.expiry(last + margin),
            last + margin + 60_000,
            "none ahead: the TTL"
        );
        let asked = context("10.0.0.1", "c");
        let (first, hit) = cache.get_or_decide(&asked, &read("orders"), || SETTLED);
        assert!(!hit && first.expires_ms <= ahead - margin);
        std::thread::sleep(Duration::from_millis(60 + 2 * margin));
        let (_, hit) = cache.get_or_decide(&asked, &read("orders"), || SETTLED);
        assert!(!hit, "decided again after the validity change");
    }

    #[test]
    fn a_decision_is_served_only_from_when_it_was_made_whichever_way_the_clock_steps() {
        let margin = 2 * coarse_lag_millis() + 1;
        let start = 1_781_524_800_000; // 2026-06-15 12:00 UTC
        let change = start + 60_000;
        let cache = DecisionCache::new(100, Duration::from_secs(600), ConditionReads::default())
            .ending_at(vec![change]);
        let asked = Cell::new(0);
        let ask = |now: u64| {
            cache.get_or_decide_at(now, &context("10.0.0.1", "a"), &read("orders"), || {
                asked.set(asked.get() + 1);
                SETTLED
            })
        };
        assert!(!ask(start).1);
        assert!(ask(start + 1_000).1, "served as time goes on");
        assert!(
            !ask(start - 5_000).1,
            "the clock stepped back before the decision was made: decided again"
        );
        assert!(
            !ask(change).1,
            "the clock stepped forward past the change: decided again, though the TTL is not over"
        );
        assert!(!ask(change - margin).1, "within the margin of the change");
        assert_eq!(asked.get(), 4);
    }

    #[test]
    fn a_clock_stepped_back_sweeps_at_once() {
        let cache = DecisionCache::new(100, Duration::from_secs(60), ConditionReads::default());
        let later = wall_millis() + 3_600_000;
        cache.get_or_decide_at(later, &context("10.0.0.1", "a"), &read("orders"), || {
            SETTLED
        });
        cache.last_sweep_ms.store(later, Ordering::Relaxed);
        cache.drop_expired();
        assert_eq!(
            cache.size(),
            0,
            "made an hour ahead of the clock now: dropped, not kept until the clock is there"
        );
    }

    #[test]
    fn zero_entries_or_ttl_turns_caching_off() {
        let on = DecisionCache::new(1, Duration::from_secs(60), ConditionReads::default());
        assert!(on.enabled());
        let no_ttl = DecisionCache::new(100, Duration::ZERO, ConditionReads::default());
        assert!(!no_ttl.enabled());
        let off = DecisionCache::new(0, Duration::from_secs(60), ConditionReads::default());
        assert!(!off.enabled(), "a lane's front keeps nothing either");
        let asked = Cell::new(0);
        for _ in 0..2 {
            off.get_or_decide(&context("10.0.0.1", "a"), &read("orders"), || {
                asked.set(asked.get() + 1);
                SETTLED
            });
        }
        assert_eq!(asked.get(), 2);
    }
}
