//! Delivery of access events to GrantForge: batches, a bounded disk spool, and nothing lost
//! silently.
//!
//! Batches hold at most `grantforge.audit.batch.size` (≤ 1000) events. A batch the server cannot
//! take now (network, 401, 404, 5xx) goes to the spool (`<cache dir>/audit-spool/`, one file per
//! batch, bounded by `grantforge.audit.spool.limit.bytes`: the oldest batches are dropped and
//! counted to make room), and the spool is sent oldest first once the server answers again. A 400
//! means some event the server refuses (events are made to its rules, `names`, so this is a rule
//! the agent does not know): the batch is split to find it, at most [`POSTS_PER_REFUSED_BATCH`]
//! requests, and what is refused is dropped and counted exactly, with one WARN per batch; what is
//! still refused or untried when that search ends is dropped and counted too. Event ids are
//! stable, so a resent event is deduplicated by the server.
//! What is dropped is counted in accesses (an event stands for `count` of them), in all and per
//! user ([`Ledger`]); a spooled batch found unreadable is counted too, by the events its name says.
//!
//! Recovery shares the agent's thread with the policy rounds, so it must never hold them up: the
//! spool is listed once when opened and then kept as an index in step with every write and
//! removal; small spooled batches are merged up to the batch size when resent; and each delivery
//! resends for at most [`RESEND_BUDGET`] before the thread's other work, so heartbeats,
//! downloads and revocations keep their schedule while a long outage's spool drains. One delivery
//! makes at most [`POSTS_PER_DELIVERY`] requests in all; what it has not sent by then waits in the
//! spool for the next tick.

mod in_flight;
mod spool;
pub mod topic;

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::audit::ledger::{accesses_in, Ledger};
use crate::client::{CallError, ServerClient};
use in_flight::InFlight;
use spool::Spool;

/// Delivery counters, for the heartbeat's health and the metrics.
#[derive(Default)]
pub struct DeliveryStats {
    /// Events the server accepted.
    pub sent: AtomicU64,
    /// Accesses whose events were lost on the way.
    pub dropped: AtomicU64,
    /// What the spool holds now: its bytes, and its files (one per batch).
    pub spooled_bytes: AtomicU64,
    pub spooled_files: AtomicU64,
    /// The audit's account per user (the auditor's): what is lost here is counted in it too.
    pub ledger: Arc<Ledger>,
    /// This sink's own account per user: what was routed to it, delivered, lost.
    pub sink: Arc<Ledger>,
}

impl DeliveryStats {
    /// Counts `events` as lost.
    fn lost(&self, events: &[Value]) {
        self.dropped
            .fetch_add(accesses_in(events), Ordering::Relaxed);
        self.ledger.lost(events);
        self.sink.lost(events);
    }

    /// What `spool` holds now, for the metrics.
    fn spooled(&self, spool: &Spool) {
        self.spooled_bytes.store(spool.bytes(), Ordering::Relaxed);
        self.spooled_files
            .store(spool.index.len() as u64, Ordering::Relaxed);
    }

    /// Counts the events of spooled batches that could not be read back as lost.
    fn lost_unreadable(&self, events: u64) {
        if events > 0 {
            self.dropped.fetch_add(events, Ordering::Relaxed);
            self.ledger.lost_unreadable(events);
            self.sink.lost_unreadable(events);
        }
    }
}

/// How long one delivery may resend spooled batches before the agent's thread looks at its other
/// work: a policy round that falls due waits at most this long (plus one batch's send). While a
/// backlog remains, the thread resends again at once instead of waiting for its next tick.
pub const RESEND_BUDGET: Duration = Duration::from_millis(250);

/// The most requests one delivery makes (resent batches, new ones and searches for refused events
/// together), so that no answer of the server's, and no event a client provokes, holds the agent's
/// thread for more than a bounded number of round trips.
pub const POSTS_PER_DELIVERY: usize = 64;

/// The most requests spent on one batch the server refuses (400): enough to find one refused event
/// in the largest batch by halving it.
pub const POSTS_PER_REFUSED_BATCH: usize = 24;

pub struct Shipper {
    instance: String,
    /// Who takes the events, for the log: GrantForge, or the audit topic.
    receiver: &'static str,
    batch_size: usize,
    spool: Spool,
    stats: Arc<DeliveryStats>,
    /// The last resend ran out of its budget with the server answering: resend again next tick.
    backlog: bool,
    /// The events the server refused and that were counted lost, while the spool may still hold
    /// them (a batch whose rest could not be rewritten is resent whole): each is counted once.
    /// Emptied when the spool is.
    counted_lost: RefCell<HashSet<String>>,
    /// Requests the current delivery may still make (see [`POSTS_PER_DELIVERY`]).
    posts_left: Cell<usize>,
    /// The current delivery's events not yet delivered or spooled, shared with the closing thread.
    in_flight: Arc<InFlight>,
}

/// The search for the events of one batch the server refuses: its requests left, and what it has
/// dropped so far (for one WARN per batch).
struct Search {
    posts_left: usize,
    refused: u64,
    given_up: u64,
    accesses: u64,
    detail: Option<String>,
}

/// What the server did not take now: the events from the first it could not take to the end of
/// the batch (those before were delivered, or refused and counted lost), to be spooled.
struct Later(Vec<Value>);

/// Posts one body of events to the server: the client's `send_events`, or a script in tests.
pub(crate) type Post<'a> = &'a dyn Fn(&Value) -> Result<Value, CallError>;

/// How a resend of the spool ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Resend {
    /// Everything spooled is delivered: new events may go straight to the server.
    Drained,
    /// The budget ran out; the server answers, so the rest goes next tick.
    OutOfBudget,
    /// The server did not take a batch, or is known to be away.
    Failed,
}

impl Shipper {
    pub fn new(
        instance: &str,
        batch_size: usize,
        spool_dir: PathBuf,
        spool_limit: u64,
        stats: Arc<DeliveryStats>,
    ) -> Shipper {
        Self::on(
            instance,
            batch_size,
            Spool::open(spool_dir, spool_limit),
            stats,
        )
    }

    fn on(instance: &str, batch_size: usize, spool: Spool, stats: Arc<DeliveryStats>) -> Shipper {
        stats.spooled(&spool);
        Shipper {
            instance: instance.to_string(),
            receiver: "GrantForge",
            batch_size,
            spool,
            stats,
            backlog: false,
            counted_lost: RefCell::default(),
            posts_left: Cell::new(POSTS_PER_DELIVERY),
            in_flight: Arc::default(),
        }
    }

    /// Delivers `events` (or spools them when the server is known to be away), after the spool,
    /// resending for at most `budget`: events that would overtake spooled ones are spooled behind them.
    /// Returns whether the server did not take what it was sent (nothing is sent to a server
    /// known to be away): the caller backs off before sending again.
    pub fn ship(
        &mut self,
        client: &ServerClient,
        events: &[Value],
        server_answers: bool,
        budget: Duration,
    ) -> bool {
        let post = |body: &Value| client.send_events(body);
        self.ship_with(&post, events, server_answers, budget)
    }

    /// [`Shipper::ship`] to another receiver than GrantForge: `post` takes each body
    /// (`{"instance", "events"}`) as the server would, a 400 meaning events it refuses.
    pub(crate) fn ship_to(
        &mut self,
        receiver: &'static str,
        post: Post<'_>,
        events: &[Value],
        deliverable: bool,
        budget: Duration,
    ) -> bool {
        self.receiver = receiver;
        self.ship_with(post, events, deliverable, budget)
    }

    fn ship_with(
        &mut self,
        post: Post<'_>,
        events: &[Value],
        server_answers: bool,
        budget: Duration,
    ) -> bool {
        self.posts_left.set(POSTS_PER_DELIVERY);
        let in_flight = Arc::clone(&self.in_flight);
        in_flight.hold(events);
        let resent = if server_answers {
            self.resend_spool(post, Instant::now() + budget)
        } else {
            Resend::Failed
        };
        self.backlog = resent == Resend::OutOfBudget;
        let mut refused = server_answers && resent == Resend::Failed;
        let mut deliverable = resent == Resend::Drained;
        for batch in events.chunks(self.batch_size) {
            if !deliverable {
                in_flight.release(batch.len(), || self.spool_batch(batch));
                continue;
            }
            match self.send(post, batch) {
                Ok(()) => in_flight.release(batch.len(), || {}),
                Err(Later(rest)) => {
                    deliverable = false;
                    if self.posts_left.get() == 0 {
                        self.backlog = true; // not refused: out of requests, the rest goes next tick
                    } else {
                        refused = true;
                    }
                    in_flight.release(batch.len(), || self.spool_batch(&rest));
                }
            }
        }
        self.stats.spooled(&self.spool);
        refused
    }

    /// Spools what a delivery interrupted by a panic still held (none of it if the closing
    /// thread took it). A batch may have been delivered already; event ids are stable, so the
    /// server counts the resent ones as duplicates.
    pub fn spool_in_flight(&mut self) {
        let held = self.in_flight.take();
        self.spool_only(&held);
    }

    /// Spools `events` without trying to deliver them.
    pub fn spool_only(&mut self, events: &[Value]) {
        for batch in events.chunks(self.batch_size) {
            self.spool_batch(batch);
        }
        self.stats.spooled(&self.spool);
    }

    /// Whether the spool holds batches that the last resend had no time for, the server answering.
    pub fn has_backlog(&self) -> bool {
        self.backlog
    }

    /// What another thread needs to spool events beside this shipper: at close, when the agent's
    /// thread is held up by the server.
    pub fn spool_beside(&self) -> SpoolBeside {
        SpoolBeside {
            instance: self.instance.clone(),
            batch_size: self.batch_size,
            dir: self.spool.dir.clone(),
            limit: self.spool.limit,
            stats: Arc::clone(&self.stats),
            in_flight: Arc::clone(&self.in_flight),
        }
    }

    /// Sends spooled batches oldest first, merged up to the batch size, until `deadline`. Of a
    /// batch taken in part, only the rest stays spooled, still first: a refused event is counted
    /// lost once, never resent.
    fn resend_spool(&mut self, post: Post<'_>, deadline: Instant) -> Resend {
        loop {
            if self.spool.is_empty() {
                self.counted_lost.get_mut().clear();
                return Resend::Drained;
            }
            if Instant::now() >= deadline || self.posts_left.get() == 0 {
                return Resend::OutOfBudget;
            }
            let oldest = self.spool.oldest(self.batch_size);
            self.count_spool_losses();
            let Some((files, batch)) = oldest else {
                return Resend::Drained;
            };
            if let Err(Later(rest)) = self.send(post, &batch) {
                let out_of_posts = self.posts_left.get() == 0;
                if rest.len() < batch.len() {
                    if let Err(e) = self.spool.replace_oldest(files, &rest) {
                        tracing::warn!(
                            "cannot rewrite the audit spool's oldest batch in {}: {e}; it is resent whole (the server drops what it already has)",
                            self.spool.dir.display()
                        );
                    }
                }
                return if out_of_posts {
                    Resend::OutOfBudget
                } else {
                    Resend::Failed
                };
            }
            self.spool.remove_oldest(files);
            self.stats.spooled(&self.spool);
        }
    }

    /// Sends one batch; of a batch the server refuses, finds and drops what it refuses (see
    /// [`POSTS_PER_REFUSED_BATCH`]) and says so in one WARN.
    fn send(&self, post: Post<'_>, batch: &[Value]) -> Result<(), Later> {
        let mut search = Search {
            posts_left: POSTS_PER_REFUSED_BATCH,
            refused: 0,
            given_up: 0,
            accesses: 0,
            detail: None,
        };
        let sent = self.send_part(post, batch, &mut search);
        if search.refused + search.given_up > 0 {
            tracing::warn!(
                "{} refused access events ({}): {} found refused and {} more of the same batch not sorted out within {} requests were dropped ({} accesses in all, counted in audit-dropped); the others are delivered",
                self.receiver,
                search.detail.as_deref().unwrap_or("400"),
                search.refused,
                search.given_up,
                POSTS_PER_REFUSED_BATCH,
                search.accesses,
            );
        }
        sent
    }

    fn send_part(&self, post: Post<'_>, part: &[Value], search: &mut Search) -> Result<(), Later> {
        if part.is_empty() {
            return Ok(());
        }
        if self.posts_left.get() == 0 {
            return Err(Later(part.to_vec()));
        }
        if search.posts_left == 0 {
            search.given_up += self.drop_refused(part, search);
            return Ok(());
        }
        self.posts_left.set(self.posts_left.get() - 1);
        search.posts_left -= 1;
        match post(&json!({"instance": self.instance, "events": part})) {
            Ok(_) => {
                self.stats
                    .sent
                    .fetch_add(part.len() as u64, Ordering::Relaxed);
                self.stats.sink.delivered(part);
                Ok(())
            }
            Err(CallError::Status {
                status: 400,
                detail,
            }) => {
                search.detail.get_or_insert(detail);
                if part.len() == 1 {
                    search.refused += self.drop_refused(part, search);
                    return Ok(());
                }
                let (left, right) = part.split_at(part.len() / 2);
                if let Err(Later(mut rest)) = self.send_part(post, left, search) {
                    rest.extend_from_slice(right);
                    return Err(Later(rest));
                }
                self.send_part(post, right, search)
            }
            Err(_) => Err(Later(part.to_vec())),
        }
    }

    /// Counts the events of `part` lost, each once however often a spooled batch holding it is
    /// resent; returns how many were new, and adds their accesses to the search's.
    fn drop_refused(&self, part: &[Value], search: &mut Search) -> u64 {
        let fresh: Vec<Value> = part
            .iter()
            .filter(|e| {
                let id = e["eventId"].as_str().unwrap_or("?").to_string();
                self.counted_lost.borrow_mut().insert(id)
            })
            .cloned()
            .collect();
        self.stats.lost(&fresh);
        search.accesses += accesses_in(&fresh);
        fresh.len() as u64
    }

    fn spool_batch(&mut self, batch: &[Value]) {
        let written = self.spool.write(batch);
        let lost = self.count_spool_losses();
        if lost > 0 {
            tracing::warn!(
                "the audit spool is full ({}): {lost} of the oldest spooled events were dropped",
                crate::settings::AUDIT_SPOOL_LIMIT_BYTES.key
            );
        }
        if let Err(e) = written {
            self.stats.lost(batch);
            tracing::warn!(
                "cannot spool {} access events in {}: {e}; they are dropped",
                batch.len(),
                self.spool.dir.display()
            );
        }
    }

    /// Counts what the spool lost since the last call (batches evicted to make room, batches
    /// found unreadable), whether or not the write that caused it succeeded; returns the events.
    fn count_spool_losses(&mut self) -> u64 {
        let (evicted, unreadable) = self.spool.take_losses();
        self.stats.lost(&evicted);
        self.stats.lost_unreadable(unreadable);
        evicted.len() as u64 + unreadable
    }
}

/// A shipper's spool as another thread opens it: its own index of the directory, taken when
/// opened, and the same limit and counts. Its batches are named apart from the shipper's, so
/// neither overwrites the other's.
pub struct SpoolBeside {
    instance: String,
    batch_size: usize,
    dir: PathBuf,
    limit: u64,
    stats: Arc<DeliveryStats>,
    in_flight: Arc<InFlight>,
}

impl SpoolBeside {
    /// A shipper on the same spool (only to spool with: it sends nothing). It leaves the files
    /// the agent's thread is writing where they are.
    pub fn open(&self) -> Shipper {
        let spool = Spool::open_beside(self.dir.clone(), self.limit);
        Shipper::on(
            &self.instance,
            self.batch_size,
            spool,
            Arc::clone(&self.stats),
        )
    }

    /// The events a delivery of the agent's thread holds in memory only, now the caller's to
    /// spool: the agent's thread spools none of them again.
    pub fn take_in_flight(&self) -> Vec<Value> {
        self.in_flight.take()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::fs;
    use std::path::Path;

    use super::spool::tests::dir;
    use super::*;

    /// A server that refuses (400) any batch holding an event whose id starts with `bad`, and
    /// cannot be reached for any other batch holding one that starts with `late`.
    fn picky(body: &Value) -> Result<Value, CallError> {
        let has = |tag: &str| {
            body["events"]
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e["eventId"].as_str().unwrap().starts_with(tag))
        };
        if has("bad") {
            Err(CallError::Status {
                status: 400,
                detail: "refused".into(),
            })
        } else if has("late") {
            Err(CallError::Unreachable("away".into()))
        } else {
            Ok(json!({}))
        }
    }

    /// A shipper of batches of 100 spooling in `dir` up to `limit` bytes, and its counters.
    fn shipper(dir: PathBuf, limit: u64) -> (Shipper, Arc<DeliveryStats>) {
        let stats = Arc::new(DeliveryStats::default());
        let shipper = Shipper::new("t", 100, dir, limit, Arc::clone(&stats));
        (shipper, stats)
    }

    /// Once the server takes everything, the spool empties and `dropped` stays as it was.
    fn drains_counting_nothing_twice(mut shipper: Shipper, stats: &DeliveryStats, dropped: u64) {
        let all = |_: &Value| Ok(json!({}));
        shipper.ship_with(&all, &[], true, RESEND_BUDGET);
        assert!(shipper.spool.is_empty());
        assert_eq!(
            stats.dropped.load(Ordering::Relaxed),
            dropped,
            "nothing counted twice"
        );
        fs::remove_dir_all(&shipper.spool.dir).unwrap();
    }

    fn event(id: &str) -> Value {
        json!({"eventId": id, "user": "alice", "count": 3})
    }

    #[test]
    fn a_batch_taken_in_part_spools_only_its_rest_and_a_refusal_is_counted_once() {
        let (mut shipper, stats) = shipper(dir("in-part"), 1 << 20);
        let events = [event("e0"), event("bad-1"), event("e2"), event("late-3")];
        shipper.ship_with(&picky, &events, true, RESEND_BUDGET);
        assert_eq!(
            stats.dropped.load(Ordering::Relaxed),
            3,
            "bad-1's 3 accesses"
        );
        let (_, spooled) = shipper.spool.oldest(100).unwrap();
        assert_eq!(
            spooled,
            [event("e2"), event("late-3")],
            "e0 was delivered, bad-1 refused"
        );
        drains_counting_nothing_twice(shipper, &stats, 3);
    }

    /// `server`, counting the requests made to it.
    fn counting(
        server: impl Fn(&Value) -> Result<Value, CallError>,
    ) -> (
        impl Fn(&Value) -> Result<Value, CallError>,
        std::rc::Rc<Cell<usize>>,
    ) {
        let posts = std::rc::Rc::new(Cell::new(0));
        let counter = std::rc::Rc::clone(&posts);
        let post = move |body: &Value| {
            counter.set(counter.get() + 1);
            server(body)
        };
        (post, posts)
    }

    #[test]
    fn a_batch_the_server_refuses_whole_costs_a_bounded_number_of_requests_and_is_counted_exactly()
    {
        let (mut shipper, stats) = shipper(dir("refused-whole"), 1 << 20);
        let events: Vec<Value> = (0..100).map(|i| event(&format!("bad-{i}"))).collect();
        let (post, posts) = counting(picky);
        shipper.ship_with(&post, &events, true, RESEND_BUDGET);
        assert_eq!(
            posts.get(),
            POSTS_PER_REFUSED_BATCH,
            "not one request per event"
        );
        assert_eq!(
            stats.dropped.load(Ordering::Relaxed),
            300,
            "every event dropped, each of its 3 accesses counted"
        );
        assert!(shipper.spool.is_empty(), "nothing refused is resent");
        assert_eq!(stats.ledger.accounts()["alice"].dropped, 300);
    }

    #[test]
    fn one_refused_event_in_the_largest_batch_is_found_and_only_it_is_dropped() {
        let stats = Arc::new(DeliveryStats::default());
        let mut shipper = Shipper::new("t", 1000, dir("largest"), 1 << 20, Arc::clone(&stats));
        let mut events: Vec<Value> = (0..999).map(|i| event(&format!("e{i}"))).collect();
        events.push(event("bad-last"));
        shipper.ship_with(&picky, &events, true, RESEND_BUDGET);
        assert_eq!(
            stats.dropped.load(Ordering::Relaxed),
            3,
            "bad-last's accesses"
        );
        assert_eq!(stats.sent.load(Ordering::Relaxed), 999);
    }

    #[test]
    fn one_delivery_makes_a_bounded_number_of_requests_and_leaves_the_rest_for_the_next_tick() {
        let (mut shipper, stats) = shipper(dir("per-delivery"), 1 << 30);
        let batches = POSTS_PER_DELIVERY + 5;
        let events: Vec<Value> = (0..batches * 100)
            .map(|i| event(&format!("e{i}")))
            .collect();
        let (post, posts) = counting(|_: &Value| Ok(json!({})));
        let refused = shipper.ship_with(&post, &events, true, RESEND_BUDGET);
        assert_eq!(posts.get(), POSTS_PER_DELIVERY);
        assert!(!refused, "the server took all it was sent: no back-off");
        assert!(shipper.has_backlog(), "the rest goes at the next tick");
        shipper.ship_with(&post, &[], true, RESEND_BUDGET);
        assert!(shipper.spool.is_empty());
        assert_eq!(stats.sent.load(Ordering::Relaxed), (batches * 100) as u64);
        assert_eq!(stats.dropped.load(Ordering::Relaxed), 0);
        fs::remove_dir_all(&shipper.spool.dir).unwrap();
    }

    /// `docs/protocol.md`, its words joined on one line.
    pub(crate) fn protocol_page() -> String {
        let page =
            fs::read_to_string(crate::test_support::in_crate("../../docs/protocol.md")).unwrap();
        page.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn the_protocol_page_states_the_bounds_on_requests() {
        let page = protocol_page();
        for bound in [
            format!("at most {POSTS_PER_REFUSED_BATCH} requests per batch"),
            format!("One delivery makes at most {POSTS_PER_DELIVERY} requests in all"),
        ] {
            assert!(page.contains(&bound), "docs/protocol.md lacks {bound:?}");
        }
    }

    #[test]
    fn a_refused_event_is_counted_once_though_its_batch_is_resent_whole() {
        let (mut shipper, stats) = shipper(dir("rewrite-fails"), 1 << 20);
        shipper.spool_only(&[event("a0"), event("bad-a1"), event("late-a2")]);
        // The rest (late-a2) is written aside as `<millis>-<seq>-1.json.tmp`: a directory there
        // makes the rewrite fail, as a full disk would, so the batch is resent whole each time.
        let oldest = shipper.spool.index[0].path.clone();
        let stem = oldest.file_stem().unwrap().to_str().unwrap().to_string();
        let prefix = stem.rsplit_once('-').unwrap().0.to_string();
        fs::create_dir_all(shipper.spool.dir.join(format!("{prefix}-1.json.tmp"))).unwrap();
        for _ in 0..3 {
            shipper.ship_with(&picky, &[], true, RESEND_BUDGET);
        }
        assert_eq!(
            stats.dropped.load(Ordering::Relaxed),
            3,
            "bad-a1 stands for 3 accesses, refused once"
        );
    }

    #[test]
    fn a_spooled_batch_resent_in_part_keeps_only_its_rest_first() {
        let (mut shipper, stats) = shipper(dir("resent-in-part"), 1 << 20);
        shipper.spool_only(&[event("a0"), event("bad-a1"), event("late-a2")]);
        shipper.spool_only(&[event("b0")]);
        shipper.ship_with(&picky, &[], true, RESEND_BUDGET);
        assert_eq!(
            stats.dropped.load(Ordering::Relaxed),
            3,
            "bad-a1's 3 accesses"
        );
        // the two files were resent merged: what remains of them is one file, first
        assert_eq!(shipper.spool.index.len(), 1);
        let (_, rest) = shipper.spool.oldest(100).unwrap();
        assert_eq!(rest, [event("late-a2"), event("b0")]);
        drains_counting_nothing_twice(shipper, &stats, 3);
    }

    /// Events of `user` standing for `count` accesses each.
    fn folded(n: usize, tag: &str, user: &str, count: u64) -> Vec<Value> {
        (0..n)
            .map(|i| json!({"eventId": format!("{tag}-{i}"), "user": user, "count": count, "pad": "x".repeat(100)}))
            .collect()
    }

    #[test]
    fn what_a_full_spool_drops_is_counted_in_accesses_per_user() {
        let (mut shipper, stats) = shipper(dir("accesses"), 4000);
        shipper.spool_only(&folded(10, "a", "alice", 7));
        shipper.spool_only(&folded(10, "b", "bob", 3));
        shipper.spool_only(&folded(10, "c", "bob", 3));
        assert_eq!(
            stats.dropped.load(Ordering::Relaxed),
            70,
            "alice's 10 events of 7 accesses each made room for c"
        );
        let accounts = stats.ledger.accounts();
        assert_eq!(accounts["alice"].dropped, 70);
        assert!(!accounts.contains_key("bob"), "nothing of bob's was lost");
        fs::remove_dir_all(&shipper.spool.dir).unwrap();
    }

    #[test]
    fn an_unreadable_spooled_batch_is_counted_as_dropped() {
        let dir = dir("unreadable-counted");
        fs::create_dir_all(&dir).unwrap();
        let not_json = "not json ".repeat(120);
        fs::write(dir.join("0000000000000000000-000000-4.json"), not_json).unwrap();
        let (mut shipper, stats) = shipper(dir.clone(), 2000);
        shipper.spool_only(&folded(10, "a", "alice", 1));
        assert_eq!(
            stats.dropped.load(Ordering::Relaxed),
            4,
            "the unreadable batch made room, its 4 events lost"
        );
        assert_eq!(
            stats.ledger.accounts()[crate::audit::ledger::UNREADABLE].dropped,
            4
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    /// The ids of every event in the spool's files, as a start after the process ended would
    /// find them.
    fn spooled_ids(dir: &Path) -> Vec<String> {
        let mut ids: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .flat_map(|p| serde_json::from_slice::<Vec<Value>>(&fs::read(p).unwrap()).unwrap())
            .map(|e| e["eventId"].as_str().unwrap().to_string())
            .collect();
        ids.sort();
        ids
    }

    #[test]
    fn close_time_spooling_keeps_a_delivery_in_flight_once_and_the_threads_files() {
        let dir = dir("in-flight");
        fs::create_dir_all(&dir).unwrap();
        let (mut shipper, _) = shipper(dir.clone(), 1 << 20);
        let beside = shipper.spool_beside();
        let (asked, server_asked) = std::sync::mpsc::channel();
        let (answer, server_answers) = std::sync::mpsc::channel::<()>();
        let agents_thread = std::thread::spawn(move || {
            let slow = |_: &Value| {
                asked.send(()).unwrap();
                server_answers.recv().unwrap();
                Err(CallError::Unreachable("away".into()))
            };
            shipper.ship_with(&slow, &[event("a0"), event("a1")], true, RESEND_BUDGET);
        });
        server_asked.recv().unwrap();
        // What the agent's thread writes aside at this moment, to rename into place next.
        let aside = dir.join("0000000000000000001-000001-1.json.tmp");
        fs::write(&aside, b"[]").unwrap();

        let mut closing = beside.open();
        closing.spool_only(&beside.take_in_flight());
        assert!(
            aside.exists(),
            "the agent thread's file being written stays"
        );
        assert_eq!(
            spooled_ids(&dir),
            ["a0", "a1"],
            "held in memory only by a thread the process may not wait for: spooled at close"
        );

        answer.send(()).unwrap();
        agents_thread.join().unwrap();
        assert_eq!(
            spooled_ids(&dir),
            ["a0", "a1"],
            "the server did not take them, and the agent's thread did not spool them again"
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
