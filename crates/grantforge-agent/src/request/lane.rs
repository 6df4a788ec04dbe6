//! A request thread's lane of an agent: the front of the decision cache, the audit folded on the
//! thread, and the thread's counts.
//!
//! Two request threads asking the same question must not meet on a shared lock or counter: the
//! cache line they would share decides the cost (with both cores busy, the shared cache's lock and
//! fold table cost several hundred ns per call; docs/benchmarks.md). So each thread keeps, per
//! agent, a small front of the decisions it used recently (copies of the shared cache's entries,
//! with their expiry, for one applied snapshot), the accesses it folded since the agent's thread
//! last took them, and its counts. A lane sits behind its own lock, which only the agent's thread
//! ever contends for (each tick, to take the folded accesses), so the request thread's lock stays
//! uncontended and in its core's cache.
//!
//! Bounds: a front holds at most [`FRONT_ENTRIES`] questions of at most
//! [`MAX_KEY_BYTES`](crate::request::decision_cache::MAX_KEY_BYTES) each (then it hands its audit on and starts
//! afresh), never serves past the shared entry's expiry, and never serves a decision of another
//! snapshot. The audit it holds is handed to the [`Auditor`] at least every tick (250 ms), so
//! refusals still reach GrantForge within a second.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use grantforge_engine::Instant;
use grantforge_kafka::{Action, KafkaPolicies, Operation, Reason, RequestContext};
use parking_lot::Mutex;

use crate::audit::fold::{is_audited, Auditor, Group};
use crate::keys::KeyBuildHasher;
use crate::request::clock;
use crate::request::decision_cache::{DecisionCache, Kept};
use crate::request::spin::SpinLock;

/// The policy version audited for refusals while no snapshot is in force (as the metric shows it).
pub(crate) const NO_SNAPSHOT_VERSION: i64 = -1;

/// Questions a lane's front keeps; beyond, it starts afresh (the shared cache still holds them).
pub(crate) const FRONT_ENTRIES: usize = 1024;

/// What a lane counted (summed over lanes for the metrics).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    pub allowed: u64,
    pub denied: u64,
    pub cache_hits: u64,
    pub cache_misses: u64,
    /// Shadow and compare modes: questions both authorizers answered alike, and questions not
    /// compared (no snapshot was in force).
    pub agreements: u64,
    pub not_compared: u64,
    /// Accesses handed to the audit (those Kafka asked to report): what the server's event counts,
    /// the spool and the drops add up to.
    pub audited: u64,
    /// Actions refused because no snapshot could decide (none, another service type, too old).
    pub undecided: u64,
    /// Hybrid mode: questions Kafka's ACLs decided (no policy did, or their resource is outside
    /// the prefixes GrantForge decides), but for the filter questions they refused.
    pub left_to_kafka: u64,
}

/// Kafka's ACLs' answer to a question hybrid mode left to them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AclAnswer<'a> {
    pub allowed: bool,
    /// The ACL behind the answer, in words.
    pub acl: &'a str,
    /// False for a principal excluded from audit.
    pub audited: bool,
}

/// What a question the policies leave open ([`Reason::undetermined`]) comes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Undetermined {
    /// Refused (fail closed): every mode but hybrid.
    Refused,
    /// Left to Kafka's ACLs: hybrid mode.
    LeftToKafka,
}

impl Counts {
    /// One question looked up in the decision cache: a hit, or a miss decided from the policies.
    fn lookup(&mut self, hit: bool) {
        *(if hit {
            &mut self.cache_hits
        } else {
            &mut self.cache_misses
        }) += 1;
    }

    fn add(&mut self, other: &Counts) {
        self.allowed += other.allowed;
        self.denied += other.denied;
        self.cache_hits += other.cache_hits;
        self.cache_misses += other.cache_misses;
        self.agreements += other.agreements;
        self.not_compared += other.not_compared;
        self.audited += other.audited;
        self.undecided += other.undecided;
        self.left_to_kafka += other.left_to_kafka;
    }
}

/// A kept decision and the accesses to it this thread folded since they were last handed on.
struct Front {
    kept: Kept,
    audit: Option<Box<Group>>,
}

/// A snapshot in force and the decisions kept for it (they never outlive it).
pub(crate) struct SnapshotInForce {
    /// Unique per applied snapshot (never reused, unlike an address): a front belongs to one.
    pub id: u64,
    pub policies: Arc<KafkaPolicies>,
    pub decisions: DecisionCache,
    pub at: std::time::Instant,
}

/// The snapshot in force as a thread last saw it: (the agent's generation then, the snapshot).
pub(crate) type Held = Option<(u64, Arc<SnapshotInForce>)>;

#[derive(Default)]
pub(crate) struct Lane {
    snapshot: u64,
    front: HashMap<Box<[u8]>, Front, KeyBuildHasher>,
    /// Fronts holding folded accesses not yet handed on.
    folded: usize,
    key: Vec<u8>,
    counts: Counts,
}

impl Lane {
    /// Decides one action of a call against `applied`, and folds the access if Kafka asked to
    /// report it. `now` is the call's time of access, read once when first needed.
    pub(crate) fn decide(
        &mut self,
        applied: &SnapshotInForce,
        context: &RequestContext,
        action: &Action<'_>,
        auditor: &Auditor,
        now: &mut Option<Instant>,
        undetermined: Undetermined,
    ) -> Reason {
        if self.snapshot != applied.id {
            self.start_afresh(auditor);
            self.snapshot = applied.id;
        }
        let version = applied.policies.policy_version;
        let decide = || applied.policies.decide(context, action, Instant::now());
        self.key.clear();
        if !applied.decisions.enabled()
            || !applied.decisions.pack(context, action, &mut self.key, true)
        {
            // Not kept (caching off, or a key beyond the byte bound): reason, and audited through
            // the shared tables, which keep names clamped.
            let reason = decide();
            if leaves_to_kafka(&mut self.counts, &reason, undetermined, false) {
                return reason;
            }
            self.count(action, &reason, false);
            if is_audited(action, &reason) {
                auditor.record(
                    context,
                    action,
                    &reason,
                    version,
                    *now.get_or_insert_with(clock::wall_now),
                );
            }
            return reason;
        }
        if let Some(front) = self.front.get_mut(self.key.as_slice()) {
            if front.kept.serves_at(clock::wall_millis()) {
                let reason = front.kept.reason;
                if leaves_to_kafka(&mut self.counts, &reason, undetermined, true) {
                    return reason;
                }
                if is_audited(action, &reason) {
                    let now = *now.get_or_insert_with(clock::wall_now);
                    match &mut front.audit {
                        Some(group) => group.add(now),
                        None => {
                            front.audit = Some(Box::new(Group::first_access(
                                context, action, &reason, version, now,
                            )));
                            self.folded += 1;
                        }
                    }
                }
                self.count(action, &reason, true);
                return reason;
            }
        }
        let (kept, hit) = applied.decisions.get_or_decide(context, action, decide);
        let reason = kept.reason;
        if leaves_to_kafka(&mut self.counts, &reason, undetermined, hit) {
            // Kept in the front all the same: the next ask is a hit that leaves it again.
            if reason.cacheable() {
                self.keep_in_front(kept, None, auditor);
            }
            return reason;
        }
        self.count(action, &reason, hit);
        let accessed_at =
            is_audited(action, &reason).then(|| *now.get_or_insert_with(clock::wall_now));
        if !reason.cacheable() {
            // Not kept, so no front to fold into: straight to the shared tables.
            if let Some(at) = accessed_at {
                auditor.record(context, action, &reason, version, at);
            }
            return reason;
        }
        let audit = accessed_at
            .map(|at| Box::new(Group::first_access(context, action, &reason, version, at)));
        self.keep_in_front(kept, audit, auditor);
        reason
    }

    /// Keeps a decision of the shared cache in the front under the key just packed.
    fn keep_in_front(&mut self, kept: Kept, audit: Option<Box<Group>>, auditor: &Auditor) {
        if self.front.len() >= FRONT_ENTRIES {
            self.start_afresh(auditor);
        }
        self.folded += usize::from(audit.is_some());
        // A front entry replaced here (expired) hands its folded accesses on first.
        if let Some(old) = self
            .front
            .insert(self.key.as_slice().into(), Front { kept, audit })
        {
            if let Some(group) = old.audit {
                self.folded -= 1;
                auditor.merge(group);
            }
        }
    }

    /// Kafka's ACLs' answer to a question hybrid mode left to them, audited when Kafka asks to
    /// report it (`enforcer` NATIVE, the deciding ACL in words: `acl`). Counted as the ACLs'
    /// decision unless it is a filter question they refused (`logIfDenied` off: a follower probe, a
    /// listing), which is refused without them too: the count says whether the ACLs still matter.
    pub(crate) fn settle_by_acls(
        &mut self,
        context: &RequestContext,
        action: &Action<'_>,
        answer: AclAnswer<'_>,
        auditor: &Auditor,
        now: &mut Option<Instant>,
    ) {
        let AclAnswer {
            allowed,
            acl,
            audited,
        } = answer;
        let reason = Reason::KafkaAcl { allowed };
        if allowed || action.log_if_denied {
            self.counts.left_to_kafka += 1;
        }
        if audited && is_audited(action, &reason) {
            self.counts.audited += 1;
            auditor.record_by_acl(
                context,
                action,
                allowed,
                acl,
                *now.get_or_insert_with(clock::wall_now),
            );
        }
    }

    /// Refuses one action while no snapshot may decide (`reason`: none yet, one of another
    /// service type, or one too old): counted as denied (and as undecided) and audited like any
    /// refusal, with no policy and policy version [`NO_SNAPSHOT_VERSION`].
    pub(crate) fn refuse_undecided(
        &mut self,
        reason: Reason,
        context: &RequestContext,
        action: &Action<'_>,
        auditor: &Auditor,
        now: &mut Option<Instant>,
    ) {
        self.counts.denied += 1;
        self.counts.undecided += 1;
        if is_audited(action, &reason) {
            self.counts.audited += 1;
            auditor.record(
                context,
                action,
                &reason,
                NO_SNAPSHOT_VERSION,
                *now.get_or_insert_with(clock::wall_now),
            );
        }
    }

    /// A super user's action, allowed unchecked: audited only when it is a mutation Kafka asks to
    /// report and the operator asked for it (`grantforge.audit.super.users.mutations`), with no
    /// policy and policy version [`NO_SNAPSHOT_VERSION`].
    pub(crate) fn audit_super_user_mutation(
        &mut self,
        context: &RequestContext,
        action: &Action<'_>,
        auditor: &Auditor,
        now: &mut Option<Instant>,
    ) {
        if action.log_if_allowed && action.operation.is_some_and(Operation::is_mutation) {
            self.counts.audited += 1;
            auditor.record_super_user(
                context,
                action,
                NO_SNAPSHOT_VERSION,
                *now.get_or_insert_with(clock::wall_now),
            );
        }
    }

    pub(crate) fn count_agreements(&mut self, questions: u64) {
        self.counts.agreements += questions;
    }

    pub(crate) fn count_not_compared(&mut self, questions: usize) {
        self.counts.not_compared += questions as u64;
    }

    fn count(&mut self, action: &Action<'_>, reason: &Reason, hit: bool) {
        let counts = &mut self.counts;
        counts.audited += u64::from(is_audited(action, reason));
        *(if reason.allowed() {
            &mut counts.allowed
        } else {
            &mut counts.denied
        }) += 1;
        counts.lookup(hit);
    }

    /// Hands every folded access to the auditor.
    fn hand_on(&mut self, auditor: &Auditor) {
        let mut groups = Vec::new();
        self.take_folded(&mut groups);
        groups.into_iter().for_each(|group| auditor.merge(group));
    }

    // The groups stay in the boxes the fronts keep them in: handed on without a copy.
    #[allow(clippy::vec_box)]
    fn take_folded(&mut self, into: &mut Vec<Box<Group>>) {
        if self.folded > 0 {
            into.extend(
                self.front
                    .values_mut()
                    .filter_map(|front| front.audit.take()),
            );
            self.folded = 0;
        }
    }

    fn start_afresh(&mut self, auditor: &Auditor) {
        self.hand_on(auditor);
        self.front.clear();
    }
}

/// Whether hybrid mode leaves this question to Kafka's ACLs: the policies left it open. Such a
/// question is neither allowed nor denied here, and neither counted nor audited here (Kafka's
/// answer is: [`Lane::settle_by_acls`]).
fn leaves_to_kafka(
    counts: &mut Counts,
    reason: &Reason,
    undetermined: Undetermined,
    hit: bool,
) -> bool {
    if undetermined == Undetermined::Refused || !reason.undetermined() {
        return false;
    }
    counts.lookup(hit);
    true
}

/// Gives out unique ids: one per agent's lanes, one per applied snapshot.
pub(crate) fn unique_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// A lane and its lock: taken by its request thread on every call, and by the agent's thread once
/// a tick, only to move the folded groups out ([`SpinLock`] says why a spin lock).
type LaneLock = SpinLock<LaneState>;

/// A lane and the snapshot in force as its thread last saw it. The agent's thread lets go of a
/// snapshot that is no longer in force, so an idle request thread does not keep an old one alive.
#[derive(Default)]
struct LaneState {
    lane: Lane,
    held: Held,
}

/// A thread's lane of one agent.
struct Mine {
    lanes_id: u64,
    lane: Arc<LaneLock>,
}

thread_local! {
    /// This thread's lanes, one per agent it worked for.
    static MINE: RefCell<Vec<Mine>> = const { RefCell::new(Vec::new()) };
}

/// The lanes of one agent: every request thread's, so that the agent's thread can take their
/// folded accesses and sum their counts.
pub(crate) struct Lanes {
    id: u64,
    all: Mutex<Vec<Arc<LaneLock>>>,
    /// Counts of lanes whose threads ended.
    retired: Mutex<Counts>,
}

impl Lanes {
    pub(crate) fn new() -> Lanes {
        Lanes {
            id: unique_id(),
            all: Mutex::new(Vec::new()),
            retired: Mutex::new(Counts::default()),
        }
    }

    /// Runs `f` with this thread's lane (made and registered on first use) and the snapshot the
    /// thread holds.
    pub(crate) fn with_mine<R>(&self, f: impl FnOnce(&mut Lane, &mut Held) -> R) -> R {
        MINE.with(|mine| {
            let Ok(mut mine) = mine.try_borrow_mut() else {
                // Re-entered on this thread (never on Kafka's path): a lane for this call only,
                // registered so that the next tick takes what it holds.
                let lane = Arc::new(LaneLock::default());
                let result = lane.with(|state| f(&mut state.lane, &mut state.held));
                self.all.lock().push(lane);
                return result;
            };
            let at = match mine.iter().position(|m| m.lanes_id == self.id) {
                Some(at) => at,
                None => {
                    // Lanes of agents that are gone are only referenced from here.
                    mine.retain(|m| Arc::strong_count(&m.lane) > 1);
                    let lane = Arc::new(LaneLock::default());
                    self.all.lock().push(Arc::clone(&lane));
                    mine.push(Mine {
                        lanes_id: self.id,
                        lane,
                    });
                    mine.len() - 1
                }
            };
            mine[at]
                .lane
                .with(|state| f(&mut state.lane, &mut state.held))
        })
    }

    /// Hands every lane's folded accesses to the auditor, lets go of snapshots older than
    /// `generation`, and retires the lanes of ended threads. What is dropped or merged is dropped or
    /// merged after the lanes' locks are released.
    pub(crate) fn hand_on(&self, auditor: &Auditor, generation: u64) {
        let mut groups = Vec::new();
        let mut stale = Vec::new();
        {
            let mut all = self.all.lock();
            let mut retired = self.retired.lock();
            all.retain(|lane| {
                let alive = Arc::strong_count(lane) > 1;
                lane.with(|state| {
                    state.lane.take_folded(&mut groups);
                    if !alive {
                        retired.add(&state.lane.counts);
                    }
                    if !alive || matches!(&state.held, Some((g, _)) if *g != generation) {
                        stale.push(state.held.take());
                    }
                });
                alive
            });
        }
        drop(stale);
        groups.into_iter().for_each(|group| auditor.merge(group));
    }

    /// Every lane's counts, summed. The locks are taken in `hand_on`'s order (all lanes, then the
    /// retired counts), so a lane being retired is counted exactly once.
    pub(crate) fn counts(&self) -> Counts {
        let all = self.all.lock();
        let mut total = *self.retired.lock();
        for lane in all.iter() {
            lane.with(|state| total.add(&state.lane.counts));
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{context, write};
    use std::time::Duration;

    /// alice may write `orders`; bob may not.
    const SNAPSHOT: &str = include_str!("../../../../tests/fixtures/snapshots/e2e.json");

    fn take_counts(auditor: &Auditor) -> Vec<(bool, u64)> {
        let ids = crate::audit::events::EventIds::new("t");
        let mut events: Vec<(bool, u64)> = auditor
            .take_events(Instant::now().plus_seconds(5), true, |key, parts| {
                crate::audit::events::AccessEvent::new(ids.next(), key, parts)
            })
            .iter()
            .map(|e| (e.allowed, e.count))
            .collect();
        events.sort();
        events
    }

    /// The e2e snapshot applied with a decision cache of `entries`.
    fn applied(entries: u64) -> Arc<SnapshotInForce> {
        let policies = KafkaPolicies::load(SNAPSHOT.as_bytes(), Instant::now()).unwrap();
        let decisions = DecisionCache::new(entries, Duration::from_secs(60), policies.reads);
        Arc::new(SnapshotInForce {
            id: unique_id(),
            policies: Arc::new(policies),
            decisions,
            at: std::time::Instant::now(),
        })
    }

    fn decide(
        lanes: &Lanes,
        applied: &SnapshotInForce,
        user: &str,
        topic: &str,
        auditor: &Auditor,
    ) -> bool {
        lanes.with_mine(|lane, _| {
            lane.decide(
                applied,
                &context(user),
                &write(topic),
                auditor,
                &mut None,
                Undetermined::Refused,
            )
            .allowed()
        })
    }

    #[test]
    fn hits_come_from_the_front_and_every_access_reaches_the_auditor() {
        let (applied, lanes, auditor) = (applied(100), Lanes::new(), Auditor::new(100));
        for _ in 0..1000 {
            assert!(decide(&lanes, &applied, "alice", "orders", &auditor));
            assert!(!decide(&lanes, &applied, "bob", "orders", &auditor));
        }
        let counts = lanes.counts();
        assert_eq!(
            (
                counts.allowed,
                counts.denied,
                counts.cache_misses,
                counts.cache_hits
            ),
            (1000, 1000, 2, 1998)
        );
        assert_eq!(
            auditor.queued(),
            0,
            "the folded accesses wait in the lane for the tick"
        );
        lanes.hand_on(&auditor, 0);
        assert_eq!(
            take_counts(&auditor),
            vec![(false, 1), (false, 999), (true, 1000)],
            "the first refusal alone, then the repeats"
        );
    }

    #[test]
    fn an_audited_hit_on_a_front_kept_without_audit_is_handed_on() {
        let (applied, lanes, auditor) = (applied(100), Lanes::new(), Auditor::new(100));
        let mut unreported = write("orders");
        unreported.log_if_allowed = false;
        lanes.with_mine(|lane, _| {
            let alice = context("alice");
            let refused = Undetermined::Refused;
            assert!(lane
                .decide(&applied, &alice, &unreported, &auditor, &mut None, refused)
                .allowed());
            assert!(lane
                .decide(
                    &applied,
                    &alice,
                    &write("orders"),
                    &auditor,
                    &mut None,
                    refused
                )
                .allowed());
        });
        lanes.hand_on(&auditor, 0);
        assert_eq!(take_counts(&auditor), vec![(true, 1)]);
    }

    #[test]
    fn a_refusal_without_a_snapshot_is_counted_and_audited_under_no_policy_version() {
        let (lanes, auditor) = (Lanes::new(), Auditor::new(100));
        lanes.with_mine(|lane, _| {
            let alice = context("alice");
            lane.refuse_undecided(
                Reason::NoSnapshot,
                &alice,
                &write("orders"),
                &auditor,
                &mut None,
            )
        });
        assert_eq!(lanes.counts().denied, 1);
        let ids = crate::audit::events::EventIds::new("t");
        let events = auditor.take_events(Instant::now(), false, |key, parts| {
            crate::audit::events::AccessEvent::new(ids.next(), key, parts)
        });
        assert_eq!(
            events
                .iter()
                .map(|e| (e.allowed, e.policy_id, e.policy_version))
                .collect::<Vec<_>>(),
            [(false, None, -1)]
        );
    }

    #[test]
    fn a_thread_keeps_one_lane_per_agent_and_forgets_those_of_agents_gone() {
        // A thread of its own: the lanes a thread keeps are thread-local.
        std::thread::spawn(|| {
            let (applied, auditor) = (applied(100), Auditor::new(100));
            let (a, b) = (Lanes::new(), Lanes::new());
            for _ in 0..3 {
                decide(&a, &applied, "alice", "orders", &auditor);
                decide(&b, &applied, "alice", "orders", &auditor);
            }
            assert_eq!((a.all.lock().len(), b.all.lock().len()), (1, 1));
            drop(a);
            let c = Lanes::new();
            decide(&c, &applied, "alice", "orders", &auditor);
            assert_eq!(
                MINE.with(|mine| mine.borrow().len()),
                2,
                "b's and c's: a's agent is gone"
            );
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_new_snapshot_starts_the_front_afresh_and_keeps_the_audit() {
        let (lanes, auditor) = (Lanes::new(), Auditor::new(100));
        let first = applied(100);
        // The same policies and cache under another snapshot id: only the front starts afresh.
        let second = SnapshotInForce {
            id: unique_id(),
            policies: first.policies.clone(),
            decisions: DecisionCache::new(100, Duration::from_secs(60), first.policies.reads),
            at: first.at,
        };
        for snapshot in [&*first, &second] {
            decide(&lanes, snapshot, "alice", "orders", &auditor);
            decide(&lanes, snapshot, "alice", "orders", &auditor);
        }
        let counts = lanes.counts();
        assert_eq!(
            (counts.cache_misses, counts.cache_hits),
            (2, 2),
            "each snapshot decides once, then the front serves it"
        );
        lanes.hand_on(&auditor, 0);
        assert_eq!(take_counts(&auditor), vec![(true, 4)]);
    }

    #[test]
    fn lanes_of_ended_threads_are_taken_and_their_counts_kept() {
        let applied = applied(100);
        let (lanes, auditor) = (Arc::new(Lanes::new()), Arc::new(Auditor::new(100)));
        let threads: Vec<_> = (0..3)
            .map(|_| {
                let (applied, lanes, auditor) = (applied.clone(), lanes.clone(), auditor.clone());
                std::thread::spawn(move || {
                    (0..100).for_each(|_| {
                        assert!(decide(&lanes, &applied, "alice", "orders", &auditor))
                    })
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        lanes.hand_on(&auditor, 0);
        assert_eq!(lanes.all.lock().len(), 0, "the threads ended");
        assert_eq!(lanes.counts().allowed, 300);
        assert_eq!(take_counts(&auditor), vec![(true, 300)]);
    }

    #[test]
    fn the_front_stays_bounded() {
        let (applied, lanes, auditor) = (applied(100_000), Lanes::new(), Auditor::new(100_000));
        let names: Vec<String> = (0..3 * FRONT_ENTRIES).map(|i| format!("t{i}")).collect();
        for name in &names {
            decide(&lanes, &applied, "bob", name, &auditor);
        }
        lanes.with_mine(|lane, _| assert!(lane.front.len() <= FRONT_ENTRIES));
        lanes.hand_on(&auditor, 0);
        assert_eq!(
            auditor.queued(),
            names.len(),
            "every refusal reached the auditor"
        );
    }

    #[test]
    fn a_question_beyond_the_key_bound_is_neither_kept_nor_folded_in_the_front() {
        let (applied, lanes, auditor) = (applied(100), Lanes::new(), Auditor::new(100));
        let long = "o".repeat(crate::request::decision_cache::MAX_KEY_BYTES);
        for _ in 0..3 {
            assert!(!decide(&lanes, &applied, "bob", &long, &auditor));
        }
        lanes.with_mine(|lane, _| assert!(lane.front.is_empty() && lane.key.capacity() < 4 * 1024));
        assert_eq!(applied.decisions.size(), 0);
        let counts = lanes.counts();
        assert_eq!((counts.denied, counts.cache_misses), (3, 3));
        assert_eq!(
            take_counts(&auditor),
            vec![(false, 1), (false, 2)],
            "audited straight through the shared tables"
        );
    }

    #[test]
    fn an_idle_thread_lets_go_of_a_snapshot_no_longer_in_force() {
        let (applied, lanes, auditor) = (applied(100), Lanes::new(), Auditor::new(100));
        lanes.with_mine(|_, held| *held = Some((7, Arc::clone(&applied))));
        lanes.hand_on(&auditor, 7);
        assert_eq!(Arc::strong_count(&applied), 2, "still in force: kept");
        lanes.hand_on(&auditor, 8);
        assert_eq!(
            Arc::strong_count(&applied),
            1,
            "a newer snapshot was applied: let go"
        );
        lanes.with_mine(|_, held| assert!(held.is_none()));
    }
}
