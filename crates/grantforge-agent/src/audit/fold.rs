//! Audit of the accesses Kafka asks to report (`logIfAllowed` / `logIfDenied`), folded.
//!
//! Identical allowed accesses within the fold window (same principal, client address, resource,
//! access type, request type and deciding policy) become one [`AccessEvent`] with the count and
//! the first and last time. Refusals become an event at once; repeats of the same refusal within a
//! second are counted into one follow-up event, so a flood of refusals cannot flood the server or
//! exhaust memory. A decision from the cache is recorded exactly like a new one.
//!
//! Room is shared fairly, so that no client can blind the audit of the others
//! (`grantforge.audit.queue.capacity` groups in all, see [`Room`]): allowed and refused groups have
//! a half each; in each half a tenth is kept for overflow groups, and once half of the rest is
//! held, no principal may hold more than a tenth of the half with groups of its own. An access
//! that finds no room for a group of its own folds
//! into its principal's overflow group of that request type, resource type, operation and outcome,
//! which counts it exactly but keeps no resource name, address or policy. Only when the overflow
//! room is full too is an access dropped, and counted. The tables are sharded: no global lock on a
//! request thread.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use grantforge_engine::Instant;
use grantforge_kafka::{Action, Reason, RequestContext};
use parking_lot::Mutex;

use crate::audit::events::{write_event_user, AccessEvent, EventParts, FoldKey};
use crate::audit::ledger::Ledger;
use crate::audit::limits::{self, clamp};
use crate::audit::names::{kept_resource, Cut};
use crate::keys::{hash_of, with_key_buffer, Access, KeyBuildHasher, KeyWriter};

/// The policy version of an access no policy could decide: Kafka's ACLs did (hybrid mode).
const NO_POLICY_VERSION: i64 = -1;

/// Shards of each table: request threads recording different accesses rarely share a lock.
const SHARDS: usize = 16;

/// Repeats of one refusal within this long are folded into one follow-up event.
const DENIAL_QUIET_MILLIS: i64 = 1000;

/// The part of a half's room that one principal may hold once the half is half full, and that is
/// kept for overflow groups: a tenth.
const SHARE_DIVISOR: usize = 10;

impl FoldKey {
    fn parts(&self) -> KeyParts<'_> {
        KeyParts {
            access: self.access.borrowed(),
            resource_cut: self.resource_cut,
            policy_id: self.policy_id,
            policy_version: self.policy_version,
            overflow: self.overflow,
            acl: self.acl.as_deref(),
        }
    }
}

/// A fold key, borrowed: from a request's names (clamped) or from a group's key.
#[derive(Clone, Copy)]
struct KeyParts<'a> {
    access: Access<&'a str>,
    resource_cut: Option<Cut>,
    policy_id: Option<i64>,
    policy_version: i64,
    overflow: bool,
    acl: Option<&'a str>,
}

impl<'a> KeyParts<'a> {
    /// The names of an access as the audit keeps them: clamped to the server's event limits, so
    /// that a group costs a bounded number of bytes however long the names a client sends (Kafka
    /// asks the authorizer before it validates them). A resource longer than the limit is kept
    /// cut with its length and digest (`names`), so two long names stay two groups; principals'
    /// names that differ only beyond the limit fold together.
    fn of(
        context: &'a RequestContext,
        action: &Action<'a>,
        reason: &Reason,
        policy_version: i64,
    ) -> KeyParts<'a> {
        let asked = Access::of(context, action);
        let (resource, resource_cut) = kept_resource(asked.resource);
        KeyParts {
            access: Access {
                principal_type: clamp(asked.principal_type, limits::NAME),
                principal_name: clamp(asked.principal_name, limits::USER),
                resource,
                ..asked
            },
            resource_cut,
            policy_id: reason.policy_id(),
            policy_version,
            overflow: false,
            acl: None,
        }
    }

    /// The key of an access Kafka's ACLs decided (hybrid mode), `acl` the deciding one in words.
    fn by_acl(self, acl: &'a str) -> KeyParts<'a> {
        KeyParts {
            acl: Some(clamp(acl, limits::REQUEST_PART)),
            ..self
        }
    }

    /// The key of the principal's overflow group for this access.
    fn overflow(self) -> KeyParts<'a> {
        KeyParts {
            access: Access {
                client: None,
                resource: "",
                ..self.access
            },
            resource_cut: None,
            policy_id: None,
            overflow: true,
            acl: self.acl.map(|_| ""),
            ..self
        }
    }

    fn owned(&self) -> FoldKey {
        FoldKey {
            access: self.access.owned(),
            resource_cut: self.resource_cut,
            policy_id: self.policy_id,
            policy_version: self.policy_version,
            overflow: self.overflow,
            acl: self.acl.map(str::to_string),
        }
    }
}

/// Packs a fold key into `packed`: the access, then what the audit alone folds by. Returns the
/// length of the principal's part, which starts it.
fn pack(packed: &mut Vec<u8>, parts: &KeyParts<'_>) -> usize {
    let mut w = KeyWriter(packed);
    parts.access.pack(&mut w);
    w.byte(u8::from(parts.overflow));
    match parts.resource_cut {
        Some(cut) => {
            w.byte(1).i64(cut.units as i64);
            w.0.extend_from_slice(&cut.sha256);
        }
        None => {
            w.byte(0);
        }
    }
    w.byte(u8::from(parts.policy_id.is_some()))
        .i64(parts.policy_id.unwrap_or(0))
        .i64(parts.policy_version);
    if let Some(acl) = parts.acl {
        w.byte(1).str(acl);
    }
    parts.access.principal_bytes()
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
    /// Refusals: whether the first one has been reported already.
    reported: bool,
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
        Group {
            key: KeyParts::of(context, action, reason, version).owned(),
            allowed: reason.allowed(),
            count: 1,
            first: now,
            last: now,
            request_version: context.request_version,
            listener: clamp(&context.conditions.listener, limits::REQUEST_PART).to_string(),
            client_id: clamp(&context.conditions.client_id, limits::REQUEST_PART).to_string(),
            reported: false,
        }
    }

    /// One more identical access; the first of a group whose accesses have all been reported.
    pub(crate) fn add(&mut self, now: Instant) {
        if self.count == 0 {
            self.first = now;
        }
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

    /// This group's accesses as the start of its principal's overflow group.
    fn into_overflow(mut self) -> Group {
        self.key.access.client = None;
        self.key.access.resource.clear();
        self.key.resource_cut = None;
        self.key.policy_id = None;
        self.key.overflow = true;
        if let Some(acl) = &mut self.key.acl {
            acl.clear();
        }
        self
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

/// Accesses arriving at the tables: one from a request thread, or a group folded in its lane.
enum Arrival<'r> {
    Access {
        context: &'r RequestContext,
        action: &'r Action<'r>,
        reason: &'r Reason,
        version: i64,
        now: Instant,
        /// Hybrid mode: the Kafka ACL that decided, in words.
        acl: Option<&'r str>,
    },
    /// Boxed as the lanes keep it: the arrival is moved a few times on the way to its table.
    Folded(Box<Group>),
}

impl Arrival<'_> {
    fn key_parts(&self) -> KeyParts<'_> {
        match self {
            Arrival::Access {
                context,
                action,
                reason,
                version,
                acl,
                ..
            } => {
                let parts = KeyParts::of(context, action, reason, *version);
                acl.map_or(parts, |acl| parts.by_acl(acl))
            }
            Arrival::Folded(group) => group.key.parts(),
        }
    }

    fn allowed(&self) -> bool {
        match self {
            Arrival::Access { reason, .. } => reason.allowed(),
            Arrival::Folded(group) => group.allowed,
        }
    }

    fn count(&self) -> u64 {
        match self {
            Arrival::Access { .. } => 1,
            Arrival::Folded(group) => group.count,
        }
    }

    fn add_to(&self, group: &mut Group) {
        match self {
            Arrival::Access { now, .. } => group.add(*now),
            Arrival::Folded(folded) => group.absorb(folded),
        }
    }

    fn into_group(self) -> Group {
        match self {
            Arrival::Access {
                context,
                action,
                reason,
                version,
                now,
                acl,
            } => {
                let mut group = Group::first_access(context, action, reason, version, now);
                if let Some(acl) = acl {
                    group.key = KeyParts::of(context, action, reason, version)
                        .by_acl(acl)
                        .owned();
                }
                group
            }
            Arrival::Folded(group) => *group,
        }
    }
}

/// How the room of `grantforge.audit.queue.capacity` groups is shared, in each half (allowed
/// groups, refused groups): groups of their own for the principals and overflow groups. While
/// fewer than `open` groups of their own are held, any principal may take one; past that, only a
/// principal holding fewer than `share`. So one principal that reads thousands of topics (a
/// mirror, a connector) keeps their names while there is room, and no principal can take more
/// than half of it from the others.
///
/// The shadow's disagreement table shares its room by the same rule (`comparison::table`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Room {
    pub own: usize,
    pub open: usize,
    pub share: usize,
    pub overflow: usize,
}

impl Room {
    fn of(capacity: usize) -> Room {
        Room::within((capacity / 2).max(2))
    }

    /// The room of one table of `half` groups.
    pub(crate) fn within(half: usize) -> Room {
        let tenth = (half / SHARE_DIVISOR).max(1);
        let own = half - tenth;
        Room {
            own,
            open: own / 2,
            share: tenth,
            overflow: tenth,
        }
    }
}

/// Sharded by packed key (see `keys`): looking an entry up allocates nothing.
type Shards<V> = Vec<Mutex<HashMap<Box<[u8]>, V, KeyBuildHasher>>>;

fn shards<V>() -> Shards<V> {
    (0..SHARDS)
        .map(|_| Mutex::new(HashMap::default()))
        .collect()
}

fn shard_of<'s, V>(
    shards: &'s Shards<V>,
    packed: &[u8],
) -> &'s Mutex<HashMap<Box<[u8]>, V, KeyBuildHasher>> {
    &shards[hash_of(packed) as usize % SHARDS]
}

/// The groups of one outcome (allowed or refused) and their room.
struct Half {
    room: Room,
    /// Groups by packed fold key.
    groups: Shards<Group>,
    /// Groups of their own held by each principal, by packed principal.
    held: Shards<usize>,
    own: AtomicUsize,
    overflow: AtomicUsize,
}

impl Half {
    fn new(room: Room) -> Half {
        Half {
            room,
            groups: shards(),
            held: shards(),
            own: AtomicUsize::new(0),
            overflow: AtomicUsize::new(0),
        }
    }

    /// Folds `arrival` into its group, or its principal's overflow group; gives it back if both
    /// are full (the accesses are dropped). The overflow key is packed only when needed.
    fn fold<'r>(&self, arrival: Arrival<'r>) -> Result<(), Arrival<'r>> {
        with_key_buffer(|packed| {
            let principal = pack(packed, &arrival.key_parts());
            {
                let mut shard = shard_of(&self.groups, packed).lock();
                if let Some(group) = shard.get_mut(packed.as_slice()) {
                    arrival.add_to(group);
                    return Ok(());
                }
                if self.take_own_room(&packed[..principal]) {
                    shard.insert(packed.as_slice().into(), arrival.into_group());
                    return Ok(());
                }
            }
            packed.clear();
            pack(packed, &arrival.key_parts().overflow());
            let mut shard = shard_of(&self.groups, packed).lock();
            if let Some(group) = shard.get_mut(packed.as_slice()) {
                arrival.add_to(group);
                return Ok(());
            }
            if take(&self.overflow, self.room.overflow) {
                shard.insert(
                    packed.as_slice().into(),
                    arrival.into_group().into_overflow(),
                );
                return Ok(());
            }
            Err(arrival)
        })
    }

    /// Room for one more group of the principal's own, if the half and its share allow it.
    fn take_own_room(&self, principal: &[u8]) -> bool {
        let held_before = self.own.fetch_add(1, Ordering::AcqRel);
        if held_before >= self.room.own {
            self.own.fetch_sub(1, Ordering::AcqRel);
            return false;
        }
        let mut held = shard_of(&self.held, principal).lock();
        match held.get_mut(principal) {
            Some(n) if *n >= self.room.share && held_before >= self.room.open => {
                self.own.fetch_sub(1, Ordering::AcqRel);
                false
            }
            Some(n) => {
                *n += 1;
                true
            }
            None => {
                held.insert(principal.into(), 1);
                true
            }
        }
    }

    /// Gives back the room of a group that became an event.
    fn give_back(&self, packed: &[u8], key: &FoldKey) {
        if key.overflow {
            self.overflow.fetch_sub(1, Ordering::AcqRel);
            return;
        }
        self.own.fetch_sub(1, Ordering::AcqRel);
        let principal = &packed[..principal_part(key)];
        let mut held = shard_of(&self.held, principal).lock();
        if let Some(n) = held.get_mut(principal) {
            *n -= 1;
            if *n == 0 {
                held.remove(principal);
            }
        }
    }

    fn queued(&self) -> usize {
        self.own.load(Ordering::Acquire) + self.overflow.load(Ordering::Acquire)
    }
}

/// The length of the principal's part of a packed key (see [`pack`]).
fn principal_part(key: &FoldKey) -> usize {
    key.access.borrowed().principal_bytes()
}

/// Takes one of `limit` places counted by `taken`.
pub(crate) fn take(taken: &AtomicUsize, limit: usize) -> bool {
    if taken.fetch_add(1, Ordering::AcqRel) < limit {
        return true;
    }
    taken.fetch_sub(1, Ordering::AcqRel);
    false
}

pub struct Auditor {
    allowed: Half,
    denied: Half,
    dropped: AtomicU64,
    dropped_total: AtomicU64,
    /// Accesses dropped, by the user of their events, until the agent's thread counts them in the
    /// ledger ([`Auditor::count_dropped_per_user`]): a request thread takes a shard, never the ledger.
    dropped_per_user: Shards<u64>,
    ledger: Arc<Ledger>,
}

impl Auditor {
    pub fn new(capacity: usize) -> Auditor {
        let room = Room::of(capacity);
        Auditor {
            allowed: Half::new(room),
            denied: Half::new(room),
            dropped: AtomicU64::new(0),
            dropped_total: AtomicU64::new(0),
            dropped_per_user: shards(),
            ledger: Arc::default(),
        }
    }

    /// The audit's account per user: the events made here and the accesses dropped here are
    /// counted in it, and the delivery counts what it loses in it too.
    pub(crate) fn ledger(&self) -> &Arc<Ledger> {
        &self.ledger
    }

    fn half(&self, allowed: bool) -> &Half {
        if allowed {
            &self.allowed
        } else {
            &self.denied
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
        self.fold(Arrival::Access {
            context,
            action,
            reason,
            version,
            now,
            acl: None,
        });
    }

    /// Records a super user's access, which is never checked and so never audited by
    /// [`Auditor::record`]: for the super users' mutations an operator asked to audit.
    pub fn record_super_user(
        &self,
        context: &RequestContext,
        action: &Action<'_>,
        version: i64,
        now: Instant,
    ) {
        self.fold(Arrival::Access {
            context,
            action,
            reason: &Reason::SuperUser,
            version,
            now,
            acl: None,
        });
    }

    /// Records an access Kafka's ACLs decided in hybrid mode (no policy did): enforced `NATIVE`,
    /// `acl` the deciding ACL in words, no policy and no policy version.
    pub(crate) fn record_by_acl(
        &self,
        context: &RequestContext,
        action: &Action<'_>,
        allowed: bool,
        acl: &str,
        now: Instant,
    ) {
        self.fold(Arrival::Access {
            context,
            action,
            reason: &Reason::KafkaAcl { allowed },
            version: NO_POLICY_VERSION,
            now,
            acl: Some(acl),
        });
    }

    /// Adds a group folded on a request thread (see `lane`) to the tables.
    pub(crate) fn merge(&self, group: Box<Group>) {
        self.fold(Arrival::Folded(group));
    }

    fn fold(&self, arrival: Arrival<'_>) {
        let accesses = arrival.count();
        if let Err(arrival) = self.half(arrival.allowed()).fold(arrival) {
            self.dropped.fetch_add(accesses, Ordering::Relaxed);
            self.dropped_total.fetch_add(accesses, Ordering::Relaxed);
            let parts = arrival.key_parts();
            with_key_buffer(|user| {
                write_event_user(
                    user,
                    parts.access.principal_type,
                    parts.access.principal_name,
                );
                let mut shard = shard_of(&self.dropped_per_user, user).lock();
                match shard.get_mut(user.as_slice()) {
                    Some(n) => *n += accesses,
                    None => {
                        shard.insert(user.as_slice().into(), accesses);
                    }
                }
            });
        }
    }

    /// Counts the accesses dropped since the last call in the ledger, each under its user.
    pub(crate) fn count_dropped_per_user(&self) {
        for shard in &self.dropped_per_user {
            let dropped = std::mem::take(&mut *shard.lock());
            for (user, n) in dropped {
                self.ledger.unfolded(&String::from_utf8_lossy(&user), n);
            }
        }
    }

    /// Groups waiting to become events.
    pub fn queued(&self) -> usize {
        self.allowed.queued() + self.denied.queued()
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
        let denied = &self.denied;
        for shard in &denied.groups {
            shard.lock().retain(|packed, group| {
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
                let done = quiet || fold_window_over;
                if done {
                    denied.give_back(packed, key);
                }
                !done
            });
        }
        if fold_window_over {
            for shard in &self.allowed.groups {
                let groups = std::mem::take(&mut *shard.lock());
                for (packed, g) in &groups {
                    self.allowed.give_back(packed, &g.key);
                    events.push(make(&g.key, g.parts(true, g.count, g.first, g.last)));
                }
            }
        }
        events
    }
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
            policy_version: self.key.policy_version,
        }
    }
}

#[cfg(test)]
mod tests;
