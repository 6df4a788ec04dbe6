//! The server's limits on event fields, in UTF-16 code units (`docs/protocol.md`, "Access
//! events"), and what they leave of a name: the audit keeps names no longer than these, so a
//! client's 1 MiB group id costs the broker at most this much per folded group.

pub(crate) const EVENT_ID: usize = 64;
pub(crate) const USER: usize = 128;
pub(crate) const CLIENT_IP: usize = 45;
pub(crate) const RESOURCE: usize = 1000;
/// `resourceType` and `accessType`.
pub(crate) const NAME: usize = 64;
pub(crate) const ACTION: usize = 128;
pub(crate) const REQUEST: usize = 1000;
/// The client id and listener only appear inside `request`: kept to a quarter of it.
pub(crate) const REQUEST_PART: usize = REQUEST / 4;

pub(crate) use crate::utf16::clamp;

pub const OVERFLOW_RESOURCE: &str = "(names not kept: past this principal's audit share)";
