//! The audit: accesses Kafka asks to report, [`fold`]ed per window, turned into access
//! [`events`] (clients' [`names`] escaped or cut as the server takes them), and delivered to GrantForge or the log ([`delivery`]: batches, a bounded disk spool),
//! with an account per user of what became events and what was lost ([`ledger`]).

pub(crate) mod delivery;
pub(crate) mod events;
pub(crate) mod fold;
pub(crate) mod ledger;
pub(crate) mod limits;
pub(crate) mod names;
pub(crate) mod routes;
pub(crate) mod sinks;
pub(crate) mod standard;
