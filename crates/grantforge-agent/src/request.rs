//! The request path: what a Kafka request thread runs on every `authorize` call, and nothing else.
//!
//! A thread's [`lane`] keeps the snapshot in force for the thread, a front of the decision cache and
//! the accesses folded on the thread, behind a [`spin`] lock only the agent's thread ever contends
//! for; a miss asks the snapshot's shared [`decision_cache`]. Keys are packed without allocation
//! (`crate::keys`, shared with the audit's fold) and times are read from the kernel's coarse clocks ([`clock`]). [`sync`] swaps the
//! lock's primitives for loom's in the model-checking tests. [`unaudited`] asks actions without
//! audit (shadow mode, principals excluded from audit).

pub(crate) mod clock;
pub(crate) mod decision_cache;
pub(crate) mod lane;
pub(crate) mod spin;
pub(crate) mod sync;
pub(crate) mod unaudited;
