//! The GrantForge agent runtime for Kafka: one agent per policy source and JVM, shared by the
//! broker's and the controller's authorizers, that keeps the signed policies in force, answers
//! Kafka's questions through a decision cache, audits what Kafka asks to report, and shows its
//! metrics; one quota table per JVM for the quota callback; and the log queue the JVM drains.
//!
//! It knows the Kafka mapping (`grantforge-kafka`), the engine and the quota resolution, and nothing
//! of JNI: the JNI crate decodes what the Java shim sends and calls [`registry::open`], the
//! [`Agent`] it returns, [`quotas::shared`], [`explain::run`] and [`logging::drain`].
//!
//! The modules, by concern:
//! - the agent and its lifecycle: `agent`, [`registry`], `rules` (the order of the agent's rules),
//!   [`config`] read through the [`settings`] table, `lockout` (the WARN of a node about to lock
//!   itself out);
//! - the request path: `request` (per-thread lanes, the decision cache, keys, clocks, the lanes' lock);
//! - the audit: `audit` (folding, access events, delivery with a disk spool);
//! - shadow and compare modes: [`comparison`] (Kafka's ACLs and the agent asked alike, every
//!   disagreement counted and kept);
//! - the policy source: `source` (a policy file, or a server: trust, disk cache), each seeing the
//!   agent only as a `source::Holder`, and `staleness` (how long its snapshot may go unconfirmed);
//! - the GrantForge protocol's `client`, which server mode's rounds and the audit's delivery call;
//! - what operators see: [`metrics`], [`logging`], [`explain`]; and the [`quotas`] of the JVM.
//! - below them all: `keys` (the one `Access` key that the decision cache and the audit fold key on
//!   and an audit event carries, packed without allocation), `trust`, `utf16`.
//!
//! Dependencies between the modules point one way: each uses only modules after it in this order
//! (`tests/architecture_docs.rs` holds the code to it):
//!
//! registry, explain, agent, source, quotas, metrics, request, comparison, audit, client, config,
//! staleness, lockout, rules, settings, keys, trust, utf16, logging.

mod agent;
mod audit;
mod client;
pub mod comparison;
pub mod config;
pub mod explain;
mod keys;
mod lockout;
pub mod logging;
pub mod metrics;
pub mod quotas;
pub mod registry;
mod request;
mod rules;
pub mod settings;
mod source;
mod staleness;
#[cfg(test)]
mod test_support;
mod trust;
mod utf16;

pub use agent::{Agent, AgentError};
pub use audit::delivery::topic::{TopicBatch, TopicChannel, Written};
pub use config::{AgentConfig, ConfigError, PolicySource};
pub use rules::SuperUsers;
pub use source::CLOSE_DEADLINE;
pub use trust::SigningKey;

/// What the crate's own benchmarks and integration tests reach inside: not an API.
#[doc(hidden)]
pub mod internals {
    pub use crate::audit::fold::Auditor;
    pub use crate::client::testing;
}
