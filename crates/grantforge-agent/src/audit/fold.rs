//! Audit of the accesses Kafka asks to report (`logIfAllowed` / `logIfDenied`), folded.
//!
//! Identical allowed accesses within the fold window (same principal, client address, resource,
//! access type, request type and deciding policy) become one [`AccessEvent`] with the count and
//! the first and last time. Refusals become an event at once; repeats of the same refusal within a
//! second are counted into one follow-up event, so a flood of refusals cannot flood the server or
//! exhaust memory. The tables are sharded (no global lock on a request thread) and bounded by
//! `grantforge.audit.queue.capacity` groups: beyond it accesses are dropped and counted. A decision
//! from the cache is recorded exactly like a new one.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use grantforge_engine::Instant;
use grantforge_kafka::{Action, Operation, Reason, RequestContext, ResourceType};
use parking_lot::Mutex;

use crate::audit::events::{clamp, limits, AccessEvent};
use crate::request::keys::{hash_of, with_key_buffer, KeyBuildHasher, KeyWriter};

/// Shards of each table: request threads recording different accesses rarely share a lock.
const SHARDS: usize = 16;

/// Repeats of one refusal within this long are folded into one follow-up event.
const DENIAL_QUIET_MILLIS: i64 = 1000;

/// What makes two accesses "identical" for the audit.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct FoldKey {
    pub principal_type: String,
    pub principal_name: String,
    pub client: Option<IpAddr>,
    pub resource_type: Option<ResourceType>,
    pub resource: String,
    pub operation: Option<Operation>,
    pub request_type: i16,
    pub policy_id: Option<i64>,
}

/// One folded group of identical accesses.
#[derive(Clone, Debug)]
pub(crate) struct Group {
    key: FoldKey,
    allowed: bool,
    count: u64,
    first: Instant,
    last: Instant,
    request_version: i16,
    listener: String,
    client_id: String,
    policy_version: i64,
    /// Refusals: whether the first one has been reported already.
    reported: bool,
}

/// The client-chosen names of an access as the audit keeps them: clamped to the server's event
/// limits, so that a group costs a bounded number of bytes however long the names a client sends
/// (Kafka asks the authorizer before it validates them). Accesses whose names differ only beyond
/// the limits fold together: their events would read the same.
struct KeptNames<'a> {
    principal_type: &'a str,
    principal_name: &'a str,
    resource: &'a str,
}

impl<'a> KeptNames<'a> {
    fn of(context: &'a RequestContext, action: &Action<'a>) -> KeptNames<'a> {
        KeptNames {
            principal_type: clamp(&context.principal.principal_type, limits::NAME),
            principal_name: clamp(&context.principal.name, limits::USER),
            resource: clamp(action.name, limits::RESOURCE),
        }
    }
}

impl Group {
    /// The group an access starts; the listener, client id and request version are the first access's.
    pub(crate) fn first_access(
        context: &RequestContext,
        action: &Action<'_>,
        reason: &Reason,
        version: i64,
        now: Instant,
    ) -> Group {
        let names = KeptNames::of(context, action);
        let key = FoldKey {
            principal_type: names.principal_type.to_string(),
            principal_name: names.principal_name.to_string(),
            client: context.conditions.client_address,
            resource_type: action.resource_type,
            resource: names.resource.to_string(),
            operation: action.operation,
            request_type: context.request_type,
            policy_id: reason.policy_id(),
        };
        Group {
            key,
            allowed: reason.allowed(),
            count: 1,
            first: now,
            last: now,
            request_version: context.request_version,
            listener: clamp(&context.conditions.listener, limits::REQUEST_PART).to_string(),
            client_id: clamp(&context.conditions.client_id, limits::REQUEST_PART).to_string(),
            policy_version: version,
            reported: false,
        }
    }

    /// One more identical access.
    pub(crate) fn add(&mut self, now: Instant) {
        self.count += 1;
        self.last = now;
    }

    /// Adds the accesses of `other`, a group with the same key folded elsewhere (a request thread's lane).
    fn absorb(&mut self, other: &Group) {
        self.first = if self.count == 0 {
            other.first
        } else {
            self.first.min(other.first)
        };
        self.last = self.last.max(other.last);
        self.count += other.count;
    }
}

/// Whether Kafka asked to report this access (`logIfAllowed` / `logIfDenied`); a disabled service
/// is never audited.
pub(crate) fn is_audited(action: &Action<'_>, reason: &Reason) -> bool {
    let wanted = if reason.allowed() {
        action.log_if_allowed
    } else {
        action.log_if_denied
    };
    wanted && reason.checked()
}

/// Packs a fold key (see `keys`): the same bytes whether it comes from a request or from a group.
#[allow(clippy::too_many_arguments)]
fn pack(
    packed: &mut Vec<u8>,
    principal_type: &str,
    principal_name: &str,
    client: Option<IpAddr>,
    resource_type: Option<ResourceType>,
    resource: &str,
    operation: Option<Operation>,
    request_type: i16,
    policy_id: Option<i64>,
) {
    let mut w = KeyWriter(packed);
    w.str(principal_type).str(principal_name).address(client);
    w.byte(resource_type.map_or(0, |t| t.code()))
        .str(resource)
        .byte(operation.map_or(0, |o| o.code()));
    w.i64(i64::from(request_type))
        .byte(u8::from(policy_id.is_some()))
        .i64(policy_id.unwrap_or(0));
}

/// Groups of one shard, by packed fold key (see `keys`): looking a group up allocates nothing.
type Shard = Mutex<HashMap<Box<[u8]>, Group, KeyBuildHasher>>;

struct Table {
    shards: Vec<Shard>,
}

impl Table {
    fn new() -> Table {
        Table {
            shards: (0..SHARDS)
                .map(|_| Mutex::new(HashMap::default()))
                .collect(),
        }
    }

    fn shard(&self, packed: &[u8]) -> &Shard {
        &self.shards[hash_of(packed) as usize % SHARDS]
    }
}

pub struct Auditor {
    capacity: usize,
    allowed: Table,
    denied: Table,
    groups: AtomicUsize,
    dropped: AtomicU64,
    dropped_total: AtomicU64,
}

impl Auditor {
    pub fn new(capacity: usize) -> Auditor {
        Auditor {
            capacity,
            allowed: Table::new(),
            denied: Table::new(),
            groups: AtomicUsize::new(0),
            dropped: AtomicU64::new(0),
            dropped_total: AtomicU64::new(0),
        }
    }

    /// Records one reason action, if Kafka asked to report it. A disabled service is never
    /// audited; super users never reach this.
    pub fn record(
        &self,
        context: &RequestContext,
        action: &Action<'_>,
        reason: &Reason,
        version: i64,
        now: Instant,
    ) {
        if !is_audited(action, reason) {
            return;
        }
        let table = if reason.allowed() {
            &self.allowed
        } else {
            &self.denied
        };
        with_key_buffer(|packed| {
            let names = KeptNames::of(context, action);
            pack(
                packed,
                names.principal_type,
                names.principal_name,
                context.conditions.client_address,
                action.resource_type,
                names.resource,
                action.operation,
                context.request_type,
                reason.policy_id(),
            );
            let mut shard = table.shard(packed).lock();
            if let Some(group) = shard.get_mut(packed.as_slice()) {
                group.add(now);
            } else if self.admit(1) {
                shard.insert(
                    packed.as_slice().into(),
                    Group::first_access(context, action, reason, version, now),
                );
            }
        })
    }

    /// Adds a group folded on a request thread (see `lane`) to the tables.
    pub(crate) fn merge(&self, group: Group) {
        let table = if group.allowed {
            &self.allowed
        } else {
            &self.denied
        };
        with_key_buffer(|packed| {
            let k = &group.key;
            pack(
                packed,
                &k.principal_type,
                &k.principal_name,
                k.client,
                k.resource_type,
                &k.resource,
                k.operation,
                k.request_type,
                k.policy_id,
            );
            let mut shard = table.shard(packed).lock();
            if let Some(existing) = shard.get_mut(packed.as_slice()) {
                existing.absorb(&group);
            } else if self.admit(group.count) {
                shard.insert(packed.as_slice().into(), group);
            }
        })
    }

    /// Whether a new group fits; if not, its accesses are dropped and counted.
    fn admit(&self, accesses: u64) -> bool {
        if self.groups.fetch_add(1, Ordering::AcqRel) < self.capacity {
            return true;
        }
        self.groups.fetch_sub(1, Ordering::AcqRel);
        self.dropped.fetch_add(accesses, Ordering::Relaxed);
        self.dropped_total.fetch_add(accesses, Ordering::Relaxed);
        false
    }

    /// Groups waiting to become events.
    pub fn queued(&self) -> usize {
        self.groups.load(Ordering::Acquire)
    }

    /// Accesses dropped because the tables were full, since start.
    pub fn dropped_total(&self) -> u64 {
        self.dropped_total.load(Ordering::Relaxed)
    }

    /// Accesses dropped since the last call (for one log line per occurrence, not per access).
    pub fn take_dropped(&self) -> u64 {
        self.dropped.swap(0, Ordering::Relaxed)
    }

    /// The events due now: every new refusal, folded repeats of refusals whose quiet second has
    /// passed, and — when `fold_window_over` (or at the end) — every folded allowed group.
    pub(crate) fn take_events(
        &self,
        now: Instant,
        fold_window_over: bool,
        mut make: impl FnMut(&FoldKey, EventParts) -> AccessEvent,
    ) -> Vec<AccessEvent> {
        let mut events = Vec::new();
        for shard in &self.denied.shards {
            let mut shard = shard.lock();
            let before = shard.len();
            shard.retain(|_, group| {
                let key = &group.key;
                if !group.reported {
                    events.push(make(key, group.parts(false, 1, group.first, group.first)));
                    group.reported = true;
                    group.count -= 1;
                    group.first = group.last;
                }
                let quiet = now.unix_millis() - group.last.unix_millis() >= DENIAL_QUIET_MILLIS;
                if (quiet || fold_window_over) && group.count > 0 {
                    events.push(make(
                        key,
                        group.parts(false, group.count, group.first, group.last),
                    ));
                    group.count = 0;
                }
                !(quiet || fold_window_over)
            });
            self.groups
                .fetch_sub(before - shard.len(), Ordering::AcqRel);
        }
        if fold_window_over {
            for shard in &self.allowed.shards {
                let groups = std::mem::take(&mut *shard.lock());
                self.groups.fetch_sub(groups.len(), Ordering::AcqRel);
                events.extend(
                    groups
                        .values()
                        .map(|g| make(&g.key, g.parts(true, g.count, g.first, g.last))),
                );
            }
        }
        events
    }
}

/// What a group contributes to its event.
pub struct EventParts {
    pub allowed: bool,
    pub count: u64,
    pub first: Instant,
    pub last: Instant,
    pub request_version: i16,
    pub listener: String,
    pub client_id: String,
    pub policy_version: i64,
}

impl Group {
    fn parts(&self, allowed: bool, count: u64, first: Instant, last: Instant) -> EventParts {
        EventParts {
            allowed,
            count,
            first,
            last,
            request_version: self.request_version,
            listener: self.listener.clone(),
            client_id: self.client_id.clone(),
            policy_version: self.policy_version,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::events::EventIds;
    use crate::test_support::{context, write};

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
    fn identical_allowed_accesses_fold_into_one_event_and_capacity_bounds_groups() {
        let auditor = Auditor::new(2);
        let now = Instant::now();
        for _ in 0..1000 {
            auditor.record(&context("alice"), &write("orders"), &ALLOWED, 1, now);
        }
        auditor.record(&context("alice"), &write("payments"), &ALLOWED, 1, now);
        auditor.record(&context("bob"), &write("orders"), &ALLOWED, 1, now);
        assert_eq!((auditor.queued(), auditor.take_dropped()), (2, 1));
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
        assert_eq!(auditor.queued(), 1000);
        assert_eq!(auditor.take_dropped(), 99_000);
        assert_eq!(
            auditor.take_dropped(),
            0,
            "taken: counted once per log line"
        );
        assert_eq!(
            auditor.dropped_total(),
            99_000,
            "the metric counts since start, whatever was taken for the log"
        );
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
        auditor.merge(folded);
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
        for i in 0..3 {
            // Names that differ only past the limits fold into one group.
            let name = format!("{}{i}", "g".repeat(1 << 20));
            auditor.record(&long, &write(&name), &DENIED, 1, now);
        }
        let group = Group::first_access(&long, &write(&"g".repeat(1 << 20)), &DENIED, 1, now);
        assert_eq!(
            (
                group.key.principal_name.len(),
                group.key.resource.len(),
                group.client_id.len()
            ),
            (limits::USER, limits::RESOURCE, limits::REQUEST_PART)
        );
        auditor.merge(group);
        assert_eq!(auditor.queued(), 1);
        let events = take(&auditor, now.plus_seconds(5), true);
        assert_eq!(events.iter().map(|e| e.count).sum::<u64>(), 4);
        assert!(events
            .iter()
            .all(|e| e.resource.len() == limits::RESOURCE && e.log_line().len() < 4 * 1024));
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
}
