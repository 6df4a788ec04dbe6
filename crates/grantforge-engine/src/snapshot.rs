//! Snapshot format 1: what the GrantForge server signs and agents decide with.
//!
//! The records it holds are in `record.rs`, mirroring the JSON (`PolicySnapshot` and friends on
//! the server); [`Snapshot::parse`]
//! reads them as strictly as the Java agent core's `Snapshot.parse` and refuses every snapshot
//! whose policies do not fit its own definition, so that a snapshot is either usable as a whole
//! or not at all.

use std::collections::BTreeMap;
use std::ops::{Deref, DerefMut};

use crate::error::SnapshotError;
use crate::record::{Definition, PolicyRecord};

mod parse;

/// The snapshot format this crate reads; the server raises it on incompatible changes.
pub const FORMAT: i64 = 1;

/// A snapshot of one service's policies, as the server wrote it: its head, and its ACCESS policies.
/// The head's fields read through the snapshot (`snapshot.service`).
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    /// Everything but the ACCESS policies.
    pub head: SnapshotHead,
    /// The ACCESS policies, in file order (the server writes them by ascending id).
    pub policies: Vec<PolicyRecord>,
}

/// A snapshot without its ACCESS policies: all of it that [`PolicyEngine::read`]
/// (crate::PolicyEngine::read) returns, having handed the policies over one by one as they were read.
#[derive(Clone, Debug, PartialEq)]
pub struct SnapshotHead {
    /// The service's name.
    pub service: String,
    /// The service type's name (`kafka`, `hdfs`, ...): an agent must check it is its own.
    pub service_type: String,
    /// The definition's own version; not read by the Java agent, `None` unless a whole number.
    pub type_version: Option<i64>,
    /// Whether the service is in use. The engine does not look at it: what a disabled service
    /// means is the agent's business.
    pub service_enabled: bool,
    /// The version of the service's policies, raised on every policy change.
    pub policy_version: i64,
    /// The service type as the server defines it.
    pub definition: Definition,
    /// How many other policies (DATA_MASK, ROW_FILTER, or any other type) the snapshot holds;
    /// counted, not evaluated, as in Java.
    pub other_policies: usize,
    /// Role code → the user names holding it, as the server resolved them.
    pub roles: BTreeMap<String, Vec<String>>,
    /// Group code → its members' user names; `public` is never listed (it names everyone).
    pub groups: BTreeMap<String, Vec<String>>,
}

impl Deref for Snapshot {
    type Target = SnapshotHead;

    fn deref(&self) -> &SnapshotHead {
        &self.head
    }
}

impl DerefMut for Snapshot {
    fn deref_mut(&mut self) -> &mut SnapshotHead {
        &mut self.head
    }
}

impl Snapshot {
    /// Reads a snapshot from the exact bytes the server signed (UTF-8 JSON).
    ///
    /// Strict as the Java agent: required fields must be present and of their JSON type (a
    /// string where a number belongs is an error), unknown fields are ignored, and every ACCESS
    /// policy must fit the snapshot's own definition (see [`Snapshot::validate`]).
    pub fn parse(bytes: &[u8]) -> Result<Snapshot, SnapshotError> {
        parse::parse(bytes)
    }

    /// The `serviceType` of snapshot bytes of format 1, read without checking anything else;
    /// `None` unless the bytes are a JSON object with `format` 1 and a string `serviceType`. For
    /// a caller that must tell a snapshot of another service type from a broken one of its own:
    /// an agent decides on the type before the policies, and refuses another type's snapshot as
    /// a whole, whatever its policies say.
    pub fn service_type_of(bytes: &[u8]) -> Option<String> {
        #[derive(serde::Deserialize)]
        struct Head {
            format: Option<i64>,
            #[serde(rename = "serviceType")]
            service_type: Option<String>,
        }
        let head: Head = serde_json::from_slice(without_bom(bytes)).ok()?;
        head.service_type.filter(|_| head.format == Some(FORMAT))
    }

    /// A snapshot of an enabled service at version 1, without roles or groups; for building
    /// policies in code (tests, tools) rather than reading them.
    pub fn new(
        service_type: &str,
        definition: Definition,
        policies: Vec<PolicyRecord>,
    ) -> Snapshot {
        let head = SnapshotHead {
            service: service_type.to_string(),
            service_type: service_type.to_string(),
            type_version: Some(1),
            service_enabled: true,
            policy_version: 1,
            definition,
            other_policies: 0,
            roles: BTreeMap::new(),
            groups: BTreeMap::new(),
        };
        Snapshot { head, policies }
    }

    /// Checks what the Java engine checks when it is created: the definition forms a model, and
    /// every policy names a chain of known levels from a root with valid values, items with a
    /// subject and known access types, and well-ordered validity periods.
    pub fn validate(&self) -> Result<(), SnapshotError> {
        let model = self.definition.model()?;
        let mut regexes = crate::matcher::RegexCache::new();
        for (index, policy) in self.policies.iter().enumerate() {
            crate::policy::check(&model, policy, index, &mut regexes)?;
        }
        Ok(())
    }
}

/// The bytes of a snapshot without the UTF-8 byte order mark an editor may have put first.
fn without_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
}

/// Takes a snapshot's ACCESS policies one by one as they are read, so that no whole model of them
/// is ever held: the reader opens it with the definition when the `policies` array begins after
/// it (the server's order), and hands over each policy unchecked, with its place in the array;
/// checking is the taker's (compiling checks).
pub(crate) trait PolicyStream {
    /// The definition the policies that follow are read under.
    fn open(&mut self, definition: &Definition) -> Result<(), SnapshotError>;
    /// One ACCESS policy and its index in `policies`.
    fn take(&mut self, policy: PolicyRecord, index: usize) -> Result<(), SnapshotError>;
}

/// Reads a snapshot, handing its ACCESS policies to `stream` as they are read when the definition
/// comes before them. Returns the snapshot and whether they were streamed (its own `policies` are
/// then empty). A snapshot laid out otherwise (policies before the
/// definition, a field repeated after the policies) is read whole, checked, and returned with its
/// policies: the caller takes them from there, and forgets what `stream` was given.
pub(crate) fn stream(
    bytes: &[u8],
    stream: &mut dyn PolicyStream,
) -> Result<(Snapshot, bool), SnapshotError> {
    parse::stream(bytes, stream)
}
