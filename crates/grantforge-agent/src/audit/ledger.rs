//! The audit's account per principal, so that what GrantForge received can be set beside what the
//! agent audited for each user, not only in all.
//!
//! For each GrantForge user (an event's `user`, clamped as the event carries it), two counts since
//! start:
//! - **accesses**: audited accesses that became events (their `count`; in shadow and compare modes
//!   the disagreements' events too), plus those the fold tables had no room for;
//! - **dropped**: accesses lost on the way: no room in the fold tables, events the server refused,
//!   the oldest spooled batches dropped for a full spool, batches that could not be spooled,
//!   spooled batches found unreadable.
//!
//! So for each user, once the events are delivered: what the server received + dropped + what is
//! still spooled = accesses.
//!
//! Each sink of the audit (`routes`) keeps a ledger of its own too, whose accesses are those routed
//! to it and which also counts what it **delivered**: for each user and sink, delivered + dropped +
//! what its spool holds = accesses. Counts are added off the request path (when groups become events, and
//! when something is lost), never per access. At most [`MAX_USERS`] users are kept, so a flood of
//! principal names costs a bounded table: the users past it are summed under [`OTHERS`].

use std::collections::HashMap;

use parking_lot::Mutex;
use serde_json::Value;

/// Users kept apart; past them, under [`OTHERS`].
pub const MAX_USERS: usize = 1024;

/// The row of the users past [`MAX_USERS`], and of the accesses shown past a report's rows.
pub const OTHERS: &str = "(others)";

/// The user of accesses lost with a spooled batch that could not be read back.
pub const UNREADABLE: &str = "(unreadable spooled batch)";

/// One user's account.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Account {
    pub accesses: u64,
    pub dropped: u64,
    /// What a sink delivered (a sink's ledger only).
    pub delivered: u64,
}

#[derive(Default)]
pub struct Ledger {
    users: Mutex<HashMap<Box<str>, Account>>,
}

impl Ledger {
    /// Accesses (user, count) that became events now.
    pub(crate) fn evented<'e>(&self, events: impl IntoIterator<Item = (&'e str, u64)>) {
        self.add(events, |account, n| account.accesses += n);
    }

    /// Accesses the fold tables had no room for: audited, never an event.
    pub(crate) fn unfolded(&self, user: &str, accesses: u64) {
        self.add([(user, accesses)], |account, n| {
            account.accesses += n;
            account.dropped += n;
        });
    }

    /// Events lost after they were made, given as they travel (JSON).
    pub(crate) fn lost(&self, events: &[Value]) {
        self.add(events.iter().map(accesses_of), |account, n| {
            account.dropped += n
        });
    }

    /// Events a sink delivered, given as they travel (JSON).
    pub(crate) fn delivered(&self, events: &[Value]) {
        self.add(events.iter().map(accesses_of), |account, n| {
            account.delivered += n
        });
    }

    /// A spooled batch that could not be read back: its `events` are counted as dropped under
    /// [`UNREADABLE`] (whose accesses they were, and how many each stood for, is lost with it).
    pub(crate) fn lost_unreadable(&self, events: u64) {
        self.add([(UNREADABLE, events)], |account, n| account.dropped += n);
    }

    fn add<'e>(
        &self,
        entries: impl IntoIterator<Item = (&'e str, u64)>,
        count: impl Fn(&mut Account, u64),
    ) {
        let mut users = self.users.lock();
        for (user, n) in entries {
            if let Some(account) = users.get_mut(user) {
                count(account, n);
                continue;
            }
            let key = if users.len() < MAX_USERS {
                user
            } else {
                OTHERS
            };
            count(users.entry(key.into()).or_default(), n);
        }
    }

    /// Every user's account.
    pub fn accounts(&self) -> HashMap<String, Account> {
        let users = self.users.lock();
        users.iter().map(|(u, a)| (u.to_string(), *a)).collect()
    }

    /// The `rows` users with the most accesses, then one [`OTHERS`] row summing the rest (when
    /// there is any).
    pub fn top(&self, rows: usize) -> Vec<(String, Account)> {
        let mut accounts: Vec<(String, Account)> = self.accounts().into_iter().collect();
        accounts.sort_by(|a, b| b.1.accesses.cmp(&a.1.accesses).then(a.0.cmp(&b.0)));
        let mut others = Account::default();
        let mut top = Vec::new();
        for (i, (user, account)) in accounts.into_iter().enumerate() {
            if i < rows && user != OTHERS {
                top.push((user, account));
            } else {
                others.accesses += account.accesses;
                others.dropped += account.dropped;
                others.delivered += account.delivered;
            }
        }
        if others != Account::default() {
            top.push((OTHERS.to_string(), others));
        }
        top
    }

    /// [`Ledger::top`] one per line: user, accesses, dropped, tab-separated; empty when nothing
    /// was audited.
    pub fn report(&self, rows: usize) -> String {
        self.top(rows)
            .iter()
            .map(|(user, a)| format!("{user}\t{}\t{}", a.accesses, a.dropped))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// The sinks' ledgers as the metric `audit-by-sink` shows them: per sink, [`Ledger::top`]'s users,
/// one per line, tab-separated: sink, user, accesses routed to it, delivered, dropped.
pub fn sinks_report(sinks: &[(&str, &Ledger)], rows: usize) -> String {
    let mut lines = Vec::new();
    for (sink, ledger) in sinks {
        for (user, a) in ledger.top(rows) {
            lines.push(format!(
                "{sink}\t{user}\t{}\t{}\t{}",
                a.accesses, a.delivered, a.dropped
            ));
        }
    }
    lines.join("\n")
}

/// An event's user and accesses, as it travels.
pub(crate) fn accesses_of(event: &Value) -> (&str, u64) {
    (
        event["user"].as_str().unwrap_or(OTHERS),
        event["count"].as_u64().unwrap_or(1),
    )
}

/// The accesses of events as they travel.
pub(crate) fn accesses_in(events: &[Value]) -> u64 {
    events.iter().map(|e| accesses_of(e).1).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_and_losses_are_counted_per_user() {
        let ledger = Ledger::default();
        ledger.evented([("alice", 5), ("bob", 1), ("alice", 2)]);
        ledger.unfolded("bob", 3);
        ledger.lost(&[json!({"user": "alice", "count": 4})]);
        let accounts = ledger.accounts();
        assert_eq!(
            accounts["alice"],
            Account {
                accesses: 7,
                dropped: 4,
                delivered: 0
            }
        );
        assert_eq!(
            accounts["bob"],
            Account {
                accesses: 4,
                dropped: 3,
                delivered: 0
            }
        );
    }

    #[test]
    fn users_past_the_bound_are_summed_as_others() {
        let ledger = Ledger::default();
        for i in 0..MAX_USERS + 11 {
            ledger.evented([(format!("u{i}").as_str(), 1)]);
        }
        ledger.evented([("u0", 1)]);
        let accounts = ledger.accounts();
        assert_eq!(
            accounts.len(),
            MAX_USERS + 1,
            "the kept users and the others"
        );
        assert_eq!(accounts[OTHERS].accesses, 11, "past the bound");
        assert_eq!(accounts["u0"].accesses, 2, "a kept user keeps counting");
    }

    #[test]
    fn the_report_lists_the_most_accesses_first_and_sums_the_rest() {
        let ledger = Ledger::default();
        ledger.evented([("carol", 1), ("alice", 9), ("bob", 5)]);
        ledger.lost(&[json!({"user": "bob", "count": 2})]);
        assert_eq!(ledger.report(2), "alice\t9\t0\nbob\t5\t2\n(others)\t1\t0");
        assert_eq!(Ledger::default().report(10), "");
    }

    #[test]
    fn a_sinks_ledger_balances_per_user_and_the_report_names_the_sink() {
        let topic = Ledger::default();
        topic.evented([("alice", 5), ("bob", 2)]);
        let alice = json!({"user": "alice", "count": 3});
        let bob = json!({"user": "bob", "count": 2});
        topic.delivered(std::slice::from_ref(&alice));
        topic.lost(std::slice::from_ref(&bob));
        let accounts = topic.accounts();
        assert_eq!(
            accounts["alice"],
            Account {
                accesses: 5,
                dropped: 0,
                delivered: 3
            },
            "two accesses still spooled"
        );
        assert_eq!(accounts["bob"].accesses, accounts["bob"].dropped);
        let log = Ledger::default();
        assert_eq!(
            sinks_report(&[("topic", &topic), ("log", &log)], 10),
            "topic\talice\t5\t3\t0\ntopic\tbob\t2\t0\t2"
        );
    }

    #[test]
    fn an_event_without_a_count_is_one_access() {
        assert_eq!(accesses_of(&json!({"user": "a"})), ("a", 1));
        assert_eq!(accesses_in(&[json!({"count": 3}), json!({})]), 4);
    }
}
