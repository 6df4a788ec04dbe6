//! The two kinds of failure: a snapshot that cannot be used, and a request that cannot be placed.

use std::fmt;

/// Why a snapshot was refused, by [`Snapshot::parse`](crate::Snapshot::parse) or
/// [`PolicyEngine::build`](crate::PolicyEngine::build).
///
/// A refused snapshot is refused as a whole (the Java agent keeps the policies it had), so the
/// message must let an administrator find the culprit: `field` is the JSON path of the offending
/// value (`policies[3].document.resources.topic.values`), `policy_id` the policy it belongs to
/// when known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotError {
    /// The id of the policy at fault, when the error lies in one and its id was read.
    pub policy_id: Option<i64>,
    /// The JSON path of the value at fault; empty when the document as a whole is at fault.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

impl SnapshotError {
    pub(crate) fn new(field: impl Into<String>, message: impl Into<String>) -> SnapshotError {
        SnapshotError {
            policy_id: None,
            field: field.into(),
            message: message.into(),
        }
    }

    pub(crate) fn in_policy(
        id: i64,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> SnapshotError {
        SnapshotError {
            policy_id: Some(id),
            field: field.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.field.is_empty(), self.policy_id) {
            (true, None) => write!(f, "{}", self.message),
            (true, Some(id)) => write!(f, "policy {id}: {}", self.message),
            (false, None) => write!(f, "{}: {}", self.field, self.message),
            (false, Some(id)) => write!(f, "{} (policy {id}): {}", self.field, self.message),
        }
    }
}

impl std::error::Error for SnapshotError {}

/// A request the engine cannot place in the service's resource model. Never a decision: callers
/// must refuse such a request (fail closed), as the Java agents do with the engine's exceptions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RequestError {
    /// The request names no resource level at all.
    NoResource,
    /// A name that must not be blank is blank (user, access type, group, role, or a resource value).
    Blank(String),
    /// The request names a level the service type does not have.
    UnknownLevel(String),
    /// The request names one level twice.
    RepeatedLevel(String),
    /// The requested levels are not one chain from a root (such as `table` without `database`).
    NotAChain(Vec<String>),
    /// A question about a level's resources was asked of a level that is not a root.
    NotARoot(String),
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestError::NoResource => f.write_str("an access request names a resource"),
            RequestError::Blank(what) => write!(f, "{what} must not be blank"),
            RequestError::UnknownLevel(level) => write!(f, "unknown resource level {level}"),
            RequestError::RepeatedLevel(level) => {
                write!(f, "the request names resource level {level} twice")
            }
            RequestError::NotAChain(levels) => {
                write!(
                    f,
                    "requested levels [{}] do not form a chain from a root",
                    levels.join(", ")
                )
            }
            RequestError::NotARoot(level) => {
                write!(f, "resource level {level} is not a root level")
            }
        }
    }
}

impl std::error::Error for RequestError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_field_and_the_policy() {
        let error = SnapshotError::in_policy(
            11,
            "policies[0].document.resources.topic.values",
            "is empty",
        );
        assert_eq!(
            error.to_string(),
            "policies[0].document.resources.topic.values (policy 11): is empty"
        );
        assert_eq!(
            SnapshotError::new("", "the snapshot is not a JSON object").to_string(),
            "the snapshot is not a JSON object"
        );
        assert_eq!(
            RequestError::NotAChain(vec!["table".into()]).to_string(),
            "requested levels [table] do not form a chain from a root"
        );
    }
}
