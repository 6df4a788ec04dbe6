//! The staleness contract of server mode (`grantforge.snapshot.max.age.ms`): how long the snapshot
//! in force may go unconfirmed by the GrantForge server before the agent stops deciding with it.
//!
//! A snapshot's **age** is the time since the last round that confirmed it: a snapshot applied
//! from the server, a 304 to a revalidation, or a heartbeat announcing the applied version (with
//! no refused body standing). A snapshot started from the disk cache is as old as the cache
//! records its last confirmation to be (`source::disk_cache`), so a node restarted during a long
//! outage does not serve an arbitrarily old cache; a cache that records no such time is of
//! unknown age, older than any limit.
//!
//! The states, as the metric `snapshot-state` and the heartbeat's `health.state` show them:
//! - **current**: the last round confirmed the snapshot in force;
//! - **degraded**: the last round did not (the server is away, or it answered and its snapshot
//!   was refused): the snapshot keeps deciding. It starts with the first such round, because that
//!   is the first moment the agent knows, and the warning then leaves the operator the whole limit
//!   to act; a later start (a fraction of the limit) would only shorten that time;
//! - **refusing**: the age passed the limit: every request but the super users' is refused
//!   ([`Reason::SnapshotTooOld`](grantforge_kafka::Reason::SnapshotTooOld)).
//!
//! A break-glass snapshot (`source::break_glass`) is never refused for its age: the server cannot
//! confirm it, and its own validity periods, which all end, bound it instead.
//!
//! The next round that confirms a snapshot makes it current again. With the limit set, each change
//! of state is logged once (a WARN, an ERROR, an INFO); without it nothing is ever refused and the
//! state is only shown (the failed rounds log their own problems).

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU8, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::settings::SNAPSHOT_MAX_AGE;

/// Where the snapshot in force stands with the staleness contract.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum State {
    Current,
    Degraded,
    Refusing,
}

impl State {
    /// As the metric shows it (-1, no snapshot, is the metric's own).
    pub(crate) fn number(self) -> i64 {
        self as i64
    }

    /// As the heartbeat's `health.state` says it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            State::Current => "current",
            State::Degraded => "degraded",
            State::Refusing => "refusing",
        }
    }

    fn from_number(n: u8) -> State {
        match n {
            0 => State::Current,
            1 => State::Degraded,
            _ => State::Refusing,
        }
    }
}

/// How old the snapshot in force is known to be.
#[derive(Clone, Copy, Debug)]
enum Basis {
    /// No snapshot from the server or its cache (offline mode, or none yet).
    None,
    /// It was `age` old at `at`.
    Known { at: Instant, age: Duration },
    /// A cached snapshot whose last confirmation is not recorded: older than any limit.
    Unknown,
}

/// The contract of one agent: what its source reports, what the request path reads.
pub(crate) struct Staleness {
    max_age: Option<Duration>,
    basis: Mutex<Basis>,
    /// Whether the last round reached the server: 1, 0, or -1 before the first round (and in
    /// offline mode, which has none).
    reachable: AtomicI64,
    /// Whether the last round left the snapshot in force unconfirmed.
    unconfirmed: AtomicBool,
    state: AtomicU8,
    /// Read by every decision: set while [`State::Refusing`].
    refusing: AtomicBool,
    /// A break-glass snapshot is in force: its age refuses nothing.
    break_glass: AtomicBool,
}

impl Staleness {
    pub(crate) fn new(max_age: Option<Duration>) -> Staleness {
        Staleness {
            max_age,
            basis: Mutex::new(Basis::None),
            reachable: AtomicI64::new(-1),
            unconfirmed: AtomicBool::new(false),
            state: AtomicU8::new(State::Current as u8),
            refusing: AtomicBool::new(false),
            break_glass: AtomicBool::new(false),
        }
    }

    /// A round confirmed the snapshot in force: its age starts again from zero.
    pub(crate) fn confirmed(&self, now: Instant) {
        *self.basis.lock() = Basis::Known {
            at: now,
            age: Duration::ZERO,
        };
        self.reachable.store(1, Ordering::Relaxed);
        self.unconfirmed.store(false, Ordering::Relaxed);
    }

    /// A round ended without confirming the snapshot in force; `reached` tells whether the server
    /// answered at all.
    pub(crate) fn unconfirmed(&self, reached: bool) {
        self.reachable.store(i64::from(reached), Ordering::Relaxed);
        self.unconfirmed.store(true, Ordering::Relaxed);
    }

    /// The server answered, and nothing is said yet of the snapshot (a download put off).
    pub(crate) fn reached(&self) {
        self.reachable.store(1, Ordering::Relaxed);
    }

    /// The snapshot in force came from the disk cache, last confirmed `age` ago (`None`: unknown).
    pub(crate) fn cached(&self, now: Instant, age: Option<Duration>) {
        *self.basis.lock() = match age {
            Some(age) => Basis::Known { at: now, age },
            None => Basis::Unknown,
        };
    }

    /// Whether a break-glass snapshot is in force.
    pub(crate) fn break_glass(&self, in_force: bool) {
        self.break_glass.store(in_force, Ordering::Relaxed);
    }

    pub(crate) fn refusing(&self) -> bool {
        self.refusing.load(Ordering::Acquire)
    }

    pub(crate) fn state(&self) -> State {
        State::from_number(self.state.load(Ordering::Relaxed))
    }

    pub(crate) fn server_reachable(&self) -> i64 {
        self.reachable.load(Ordering::Relaxed)
    }

    /// The age of the snapshot in force now; `None` without one, [`Duration::MAX`] when unknown.
    pub(crate) fn age(&self, now: Instant) -> Option<Duration> {
        match *self.basis.lock() {
            Basis::None => None,
            Basis::Known { at, age } => Some(age.saturating_add(now.saturating_duration_since(at))),
            Basis::Unknown => Some(Duration::MAX),
        }
    }

    /// Works out the state now and, on a change, says so once; `version` names the snapshot in
    /// force in the log. Called after each round and on each tick of the agent's thread, so the
    /// refusal starts within a tick of the limit unless a call to the server holds the thread.
    pub(crate) fn update(&self, now: Instant, version: Option<i64>) {
        let age = self.age(now);
        let next = match (age, self.max_age) {
            (Some(age), Some(max)) if age > max && !self.break_glass.load(Ordering::Relaxed) => {
                State::Refusing
            }
            (Some(_), _) if self.unconfirmed.load(Ordering::Relaxed) => State::Degraded,
            _ => State::Current,
        };
        self.refusing
            .store(next == State::Refusing, Ordering::Release);
        let before = State::from_number(self.state.swap(next as u8, Ordering::Relaxed));
        if before != next {
            if let Some(max) = self.max_age {
                tell(before, next, age, max, version);
            }
        }
    }
}

/// One line per change of state: the operator learns the snapshot is ageing, then that it is
/// refused, then that it is current again.
fn tell(before: State, next: State, age: Option<Duration>, max: Duration, version: Option<i64>) {
    let what = version.map_or("the snapshot in force".to_string(), |v| {
        format!("the snapshot in force (policy version {v})")
    });
    let age = match age {
        Some(Duration::MAX) | None => "at a time the disk cache does not record".to_string(),
        Some(age) => format!("{} s ago", age.as_secs()),
    };
    let limit = format!("{}={}", SNAPSHOT_MAX_AGE.key, max.as_millis());
    match next {
        State::Degraded => tracing::warn!(
            "{what} was last confirmed by the GrantForge server {age}, and this round did not confirm it: degraded; once it is older than {limit}, every request but the super users' is refused until the server confirms a snapshot"
        ),
        State::Refusing => tracing::error!(
            "{what} was last confirmed by the GrantForge server {age}, longer than {limit} allows: every request but the super users' is refused until the server confirms a snapshot (docs/reliability.md, \"Staleness\")"
        ),
        State::Current => tracing::info!(
            "the GrantForge server confirmed {what} again: current, no longer {}",
            before.name()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: Duration = Duration::from_secs(60);

    #[test]
    fn a_failed_round_degrades_and_the_limit_refuses_until_a_round_confirms() {
        let staleness = Staleness::new(Some(LIMIT));
        let start = Instant::now();
        staleness.confirmed(start);
        staleness.update(start, Some(3));
        assert_eq!(staleness.state(), State::Current);
        staleness.unconfirmed(false);
        staleness.update(start + LIMIT, Some(3));
        assert_eq!(
            (staleness.state(), staleness.refusing()),
            (State::Degraded, false)
        );
        staleness.update(start + LIMIT + Duration::from_millis(1), Some(3));
        assert_eq!(
            (staleness.state(), staleness.refusing()),
            (State::Refusing, true)
        );
        assert_eq!(staleness.server_reachable(), 0);
        staleness.confirmed(start + LIMIT * 2);
        staleness.update(start + LIMIT * 2, Some(3));
        assert_eq!(
            (staleness.state(), staleness.refusing()),
            (State::Current, false)
        );
        assert_eq!(staleness.server_reachable(), 1);
    }

    #[test]
    fn without_a_limit_an_old_snapshot_is_degraded_but_never_refused() {
        let staleness = Staleness::new(None);
        let start = Instant::now();
        staleness.cached(start, None);
        staleness.unconfirmed(false);
        staleness.update(start + Duration::from_secs(86_400), None);
        assert_eq!(
            (staleness.state(), staleness.refusing()),
            (State::Degraded, false)
        );
    }

    #[test]
    fn a_cached_snapshot_is_as_old_as_its_last_confirmation_and_one_of_unknown_age_is_refused() {
        let staleness = Staleness::new(Some(LIMIT));
        let start = Instant::now();
        staleness.cached(start, Some(LIMIT - Duration::from_secs(1)));
        staleness.update(start, Some(3));
        assert!(!staleness.refusing(), "younger than the limit");
        staleness.update(start + Duration::from_secs(2), Some(3));
        assert!(
            staleness.refusing(),
            "the age counts from the cache's record"
        );
        staleness.cached(start, None);
        staleness.update(start, Some(3));
        assert!(staleness.refusing(), "unknown age");
    }

    #[test]
    fn a_break_glass_snapshot_is_not_refused_for_its_age() {
        let staleness = Staleness::new(Some(LIMIT));
        let start = Instant::now();
        staleness.confirmed(start);
        staleness.break_glass(true);
        staleness.unconfirmed(false);
        staleness.update(start + LIMIT * 10, Some(4));
        assert_eq!(
            (staleness.state(), staleness.refusing()),
            (State::Degraded, false)
        );
        staleness.break_glass(false);
        staleness.update(start + LIMIT * 10, Some(4));
        assert!(staleness.refusing());
    }

    #[test]
    fn the_states_are_numbered_and_named_as_the_metric_and_heartbeat_show_them() {
        let shown: Vec<(i64, &str)> = [State::Current, State::Degraded, State::Refusing]
            .iter()
            .map(|s| (s.number(), s.name()))
            .collect();
        assert_eq!(shown, [(0, "current"), (1, "degraded"), (2, "refusing")]);
    }
}
