//! User and client-id quotas (KIP-55) with reserved sub-quotas: the quota table Kafka's quota
//! entities describe, and which group and limit a connection gets.
//!
//! The crate is pure: no I/O, no logging, no Kafka classes. Kafka hands every quota entity to its
//! `ClientQuotaCallback` (`updateQuota` / `removeQuota`, in any order, the start-up replay
//! included); [`QuotaTable::update`] and [`QuotaTable::remove`] record them, and
//! [`QuotaTable::resolve`] answers, for one quota type and one connection (user `U`, client id `C`),
//! the first rule of this table that applies:
//!
//! | # | configured entity | the connection's group (tags `user`, `client-id`) | limit |
//! |---|---|---|---|
//! | 1 | `<U, C>` | (U, C): reserved for U's clients named C | v(U, C) |
//! | 2 | `<U, default client>` | (U, C) | v |
//! | 3 | `<U>` | (U, ""): shared by U's clients without a rule 1 or 2 quota | v(U) − R(U) |
//! | 4 | `<default user, C>` | (U, C) | v |
//! | 5 | `<default user, default client>` | (U, C) | v |
//! | 6 | `<default user>` | (U, ""): U's own share of the default | v(default user) − R(U) − D(U) |
//! | 7 | `<C>` (client id only) | (U, C): per user, never shared with another user's clients | v(C) |
//! | 8 | `<default client>` | (U, C): per user and client id | v |
//! | — | nothing | (U, C): measured apart, never throttled | none |
//!
//! R(U) is the sum of U's reserved sub-quotas (its explicit `<U, c>` entities of that type): a
//! sub-quota is carved out of the user's total, not added on top, which is where this differs from
//! Kafka's built-in callback (it also shares a client id's quota across users; here it is per user).
//! D(U) is the sum of the `<default user, c>` values of the client ids c U has no `<U, c>` for: a
//! default sub-quota is carved out of each user's share of the default total in the same way.
//! Every value an operator set is used as set, however small (as Kafka's own callback does). Only
//! a remainder this table computes (rules 3 and 6 for a user with sub-quotas) is ever raised: one
//! below the smallest bound Kafka's throttle arithmetic enforces ([`SafeBounds`], from the node's
//! `socket.request.max.bytes`; zero or less included) becomes that bound, and the resolution says
//! so ([`Resolved::oversubscribed`]). Below it Kafka's throttle overflows an `int` and the client
//! goes unthrottled; [`SafeBounds::overflows`] tells an operator's value of that size.
//!
//! Every quota type resolves on its own. Answers are computed from the entities in the table, never
//! from the order they arrived in. The `user` tag is the principal name as Kafka's `Sanitizer`
//! writes it ([`sanitize`]).
//!
//! ```
//! use grantforge_quotas::{Entity, QuotaTable, QuotaType, Rule};
//!
//! let mut table = QuotaTable::new();
//! table.update(&Entity::user("user2"), QuotaType::Produce, 4096.0);
//! table.update(&Entity::user_client("user2", "clientA"), QuotaType::Produce, 10.0);
//! let shared = table.resolve(QuotaType::Produce, "user2", "clientC");
//! assert_eq!((shared.tags(), shared.rule, shared.limit), (("user2", ""), Rule::User, Some(4086.0)));
//! ```

#![forbid(unsafe_code)]
// The API is what this file re-exports: an item `pub` elsewhere but not reachable from here is
// `pub(crate)`, and clippy's gate (`-D warnings`) fails on one that is not.
#![warn(unreachable_pub)]

mod bounds;
mod entity;
mod sanitize;
mod table;

pub use bounds::{SafeBounds, DEFAULT_SOCKET_REQUEST_MAX_BYTES};
pub use entity::{Entity, EntityError, Part, QuotaType};
pub use sanitize::sanitize;
pub use table::{QuotaTable, Resolved, Rule};
