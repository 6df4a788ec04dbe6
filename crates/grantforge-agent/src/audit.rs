//! The audit: accesses Kafka asks to report, [`fold`]ed per window, turned into access
//! [`events`], and delivered to GrantForge or the log ([`delivery`]: batches, a bounded disk spool).

pub(crate) mod delivery;
pub(crate) mod events;
pub(crate) mod fold;
