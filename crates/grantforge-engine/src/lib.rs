//! GrantForge's policy engine, ported from the Java engine (`org.devlive.grantforge.policy.engine`)
//! and the agent core's snapshot reader (`org.devlive.grantforge.agent.Snapshot`).
//!
//! The crate is pure: no I/O, no logging, nothing Kafka-specific. It reads a snapshot of format 1
//! from the exact bytes the server signed ([`Snapshot::parse`]), compiles and indexes its access
//! policies once ([`PolicyEngine::build`]), or does both in one pass, policy by policy, without
//! holding the parsed policies ([`PolicyEngine::read`]), and then answers [`AccessRequest`]s with
//! GrantForge's own semantics:
//!
//! * OVERRIDE policies decide before NORMAL ones; within one priority any matching, non-excepted deny
//!   wins over every allow, across policies;
//! * inside one policy the deny branch is asked first (deny items minus deny exceptions), then the
//!   allow branch (allow items minus allow exceptions);
//! * implied access types grant on both sides (a deny of `write` also denies `describe` when `write`
//!   implies it);
//! * the smallest deciding policy id is reported, so decisions do not depend on policy order;
//! * a condition whose evaluator is missing or fails is taken in the safe direction.
//!
//! Structural problems of a request (unknown level, levels that do not form a chain, blank names)
//! are [`RequestError`]s, never decisions, so that callers fail closed on them deliberately.
//!
//! ```
//! use grantforge_engine::{AccessRequest, Decision, Evaluators, Instant, PolicyEngine, Snapshot};
//!
//! let json = br#"{"format": 1, "service": "demo", "serviceType": "kafka", "serviceEnabled": true,
//!   "policyVersion": 3,
//!   "definition": {"resources": [{"name": "topic", "parent": null, "matcher": "WILDCARD", "caseSensitive": true}],
//!                  "accessTypes": [{"name": "read", "impliedGrants": ["describe"]}, {"name": "describe"}],
//!                  "conditions": []},
//!   "policies": [{"id": "7", "name": "orders", "type": "ACCESS", "priority": "NORMAL", "document": {
//!     "resources": {"topic": {"values": ["orders*"], "excludes": false, "recursive": false}},
//!     "allow": [{"users": [], "groups": ["ops"], "roles": [], "accessTypes": ["read"]}]}}],
//!   "roles": {}, "groups": {"ops": ["alice"]}}"#;
//! let snapshot = Snapshot::parse(json)?;
//! let engine: PolicyEngine<()> = PolicyEngine::build(&snapshot, &Evaluators::new())?;
//! let resource = [("topic", "orders-eu")];
//! let request = AccessRequest::new(&resource, "describe", "alice", Instant::now(), &());
//! assert_eq!(engine.evaluate(&request)?, Decision::allowed_by(7));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]
// The API is what this file re-exports: an item `pub` elsewhere but not reachable from here is
// `pub(crate)`, and clippy's gate (`-D warnings`) fails on one that is not.
#![warn(unreachable_pub)]

mod condition;
mod engine;
mod error;
mod index;
mod intern;
mod matcher;
mod model;
mod policy;
mod record;
mod snapshot;
mod stack;
mod time;

pub use condition::{CompiledCondition, ConditionEvaluator, Evaluators};
pub use engine::{
    AccessRequest, Branch, Decision, Explanation, Outcome, PolicyEngine, PolicyExplanation,
    PolicyVisitor,
};
pub use error::{RequestError, SnapshotError};
pub use matcher::wildcard_matches;
pub use model::{
    AccessTypeDefinition, MatcherKind, ResourceLevel, ServiceModel, ServiceModelBuilder,
};
pub use record::{
    next_validity_change, ConditionDefinition, ConditionRef, Definition, Item, LevelIter, LevelMap,
    PolicyRecord, Priority, ResourceValues, Validity,
};
pub use snapshot::{Snapshot, SnapshotHead, FORMAT};
pub use time::Instant;

/// The group every user belongs to: an item naming it names everyone (`PolicyItem.PUBLIC`).
pub const PUBLIC_GROUP: &str = "public";

/// The value that matches every value of a level, on every matcher kind (`ResourceSpec.ANY`).
pub const ANY_VALUE: &str = "*";

/// Whether Java's `Checks.text` would refuse a name: every UTF-16 unit is
/// `Character.isWhitespace` (an empty string is blank too).
///
/// Java's notion differs from Rust's `char::is_whitespace`: the no-break spaces (U+00A0, U+2007,
/// U+202F) and NEL (U+0085) are not whitespace in Java, while the information separators
/// U+001C..U+001F are.
pub fn is_blank(text: &str) -> bool {
    text.chars().all(java_whitespace)
}

fn java_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{000B}' | '\u{000C}' | '\r' | '\u{001C}'..='\u{001F}'
            | ' ' | '\u{1680}' | '\u{2000}'..='\u{2006}' | '\u{2008}'..='\u{200A}'
            | '\u{2028}' | '\u{2029}' | '\u{205F}' | '\u{3000}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    // ChecksTest.copiesAndRefusesMissingOrBlankValues: the blank rule of Checks.text.
    #[test]
    fn copies_and_refuses_missing_or_blank_values() {
        assert!(is_blank(" "));
        assert!(is_blank(""));
        assert!(is_blank("\t\n\u{001F}\u{3000}"));
        assert!(!is_blank("a"));
        assert!(!is_blank("\u{00A0}"));
        assert!(!is_blank(" x "));
    }
}
