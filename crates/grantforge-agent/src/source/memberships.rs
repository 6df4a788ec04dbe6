//! What a snapshot says about who holds what, and what a server replaced at one policy version.
//!
//! GrantForge moves `policyVersion` only when a policy is edited. Role holders (computed "valid
//! now" when the snapshot is built: an access request's role ends and its scheduler revokes it),
//! group members, disabled accounts, `serviceEnabled` and the service's name change the body at
//! the same version. Server mode therefore revalidates the snapshot in force on a schedule of its
//! own, and may replace it by a body of the same version with other content: [`Memberships`] names
//! what changed in the one INFO line, and [`ReplacedBodies`] remembers what each version served
//! before, so a replayed pre-revocation body is refused.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::hash::{DefaultHasher, Hash, Hasher};

use serde::Deserialize;

/// How many replaced bodies are remembered for the applied version: GrantForge rebuilds a body
/// when memberships change, at most every few minutes, so this covers days of one version.
pub(crate) const REPLACED_KEPT: usize = 256;

/// A digest per role and per group, and `serviceEnabled`: enough to name what changed without
/// keeping the member lists (which the compiled policies hold already).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Memberships {
    service_enabled: bool,
    roles: BTreeMap<String, u64>,
    groups: BTreeMap<String, u64>,
}

/// The fields read from a verified body; the rest (policies, definition) is skipped.
#[derive(Deserialize)]
struct Sections {
    #[serde(rename = "serviceEnabled", default)]
    service_enabled: bool,
    #[serde(default)]
    roles: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    groups: BTreeMap<String, Vec<String>>,
}

impl Memberships {
    /// Read from a body that was verified and loaded already (so it parses); an unreadable one
    /// gives empty memberships, which only makes the INFO line say less.
    pub(crate) fn of(body: &[u8]) -> Memberships {
        let Ok(sections) = serde_json::from_slice::<Sections>(body) else {
            return Memberships::default();
        };
        Memberships {
            service_enabled: sections.service_enabled,
            roles: digests(sections.roles),
            groups: digests(sections.groups),
        }
    }

    /// What changed from `self` to `next`, in words for the log: `roles analyst, ops; service
    /// enabled true → false`; names codes, never members.
    pub(crate) fn changes_to(&self, next: &Memberships) -> String {
        let mut parts = Vec::new();
        let roles = changed_codes(&self.roles, &next.roles);
        if !roles.is_empty() {
            parts.push(format!("roles {}", roles.join(", ")));
        }
        let groups = changed_codes(&self.groups, &next.groups);
        if !groups.is_empty() {
            parts.push(format!("groups {}", groups.join(", ")));
        }
        if self.service_enabled != next.service_enabled {
            parts.push(format!(
                "service enabled {} → {}",
                self.service_enabled, next.service_enabled
            ));
        }
        if parts.is_empty() {
            "neither roles, groups nor serviceEnabled (other content)".to_string()
        } else {
            parts.join("; ")
        }
    }
}

fn digests(sets: BTreeMap<String, Vec<String>>) -> BTreeMap<String, u64> {
    sets.into_iter()
        .map(|(code, mut members)| {
            members.sort_unstable();
            let mut hasher = DefaultHasher::new();
            members.hash(&mut hasher);
            (code, hasher.finish())
        })
        .collect()
}

/// Codes added, removed or with other members, sorted.
fn changed_codes(before: &BTreeMap<String, u64>, after: &BTreeMap<String, u64>) -> Vec<String> {
    let codes: BTreeSet<&String> = before
        .keys()
        .chain(after.keys())
        .filter(|code| before.get(*code) != after.get(*code))
        .collect();
    codes.into_iter().cloned().collect()
}

/// The ETags of bodies that the applied policy version served and that were replaced since, most
/// recent last, at most [`REPLACED_KEPT`]. Versions never go back (no rollback), so only the
/// applied version's history is needed: a newer version starts an empty one.
#[derive(Debug, Default)]
pub(crate) struct ReplacedBodies {
    version: Option<i64>,
    etags: VecDeque<String>,
}

impl ReplacedBodies {
    /// Read back from [`ReplacedBodies::to_json`]; the error says what is wrong.
    pub(crate) fn from_json(bytes: &[u8]) -> Result<ReplacedBodies, String> {
        #[derive(Deserialize)]
        struct Saved {
            #[serde(rename = "policyVersion")]
            version: i64,
            etags: Vec<String>,
        }
        let saved: Saved = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        let skip = saved.etags.len().saturating_sub(REPLACED_KEPT);
        Ok(ReplacedBodies {
            version: Some(saved.version),
            etags: saved.etags.into_iter().skip(skip).collect(),
        })
    }

    /// `{"policyVersion": 7, "etags": ["\"…\"", …]}`, oldest first.
    pub(crate) fn to_json(&self) -> Vec<u8> {
        serde_json::json!({"policyVersion": self.version, "etags": self.etags})
            .to_string()
            .into_bytes()
    }

    /// Whether `etag` was served at `version` and replaced since.
    pub(crate) fn contains(&self, version: i64, etag: &str) -> bool {
        self.version == Some(version) && self.etags.iter().any(|e| e == etag)
    }

    /// Remembers that the body `etag` of `version` was replaced.
    pub(crate) fn replaced(&mut self, version: i64, etag: &str) {
        if self.version != Some(version) {
            self.version = Some(version);
            self.etags.clear();
        }
        if self.etags.len() == REPLACED_KEPT {
            self.etags.pop_front();
        }
        self.etags.push_back(etag.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(enabled: bool, analyst: &[&str], ops: &[&str]) -> Vec<u8> {
        serde_json::json!({
            "format": 1, "serviceEnabled": enabled, "policies": [{"id": "1"}],
            "roles": {"analyst": analyst, "auditor": ["dave"]}, "groups": {"ops": ops},
        })
        .to_string()
        .into_bytes()
    }

    #[test]
    fn names_the_role_group_and_service_enabled_changes_never_the_members() {
        let before = Memberships::of(&body(true, &["alice", "bob"], &["carol"]));
        let role_ended = Memberships::of(&body(true, &["bob"], &["carol"]));
        assert_eq!(before.changes_to(&role_ended), "roles analyst");
        let all = Memberships::of(&body(false, &["bob"], &[]));
        assert_eq!(
            before.changes_to(&all),
            "roles analyst; groups ops; service enabled true → false"
        );
        let reordered = Memberships::of(&body(true, &["bob", "alice"], &["carol"]));
        assert_eq!(
            before.changes_to(&reordered),
            "neither roles, groups nor serviceEnabled (other content)"
        );
    }

    #[test]
    fn a_replaced_body_is_remembered_for_its_version_only_and_within_a_bound() {
        let mut replaced = ReplacedBodies::default();
        replaced.replaced(7, "\"a\"");
        assert!(replaced.contains(7, "\"a\"") && !replaced.contains(8, "\"a\""));
        for i in 0..REPLACED_KEPT {
            replaced.replaced(7, &format!("\"{i}\""));
        }
        assert!(!replaced.contains(7, "\"a\""), "the oldest falls out");
        assert!(replaced.contains(7, "\"0\""));
        replaced.replaced(8, "\"b\"");
        assert!(!replaced.contains(7, "\"0\"") && replaced.contains(8, "\"b\""));
        let back = ReplacedBodies::from_json(&replaced.to_json()).unwrap();
        assert!(back.contains(8, "\"b\"") && !back.contains(7, "\"0\""));
        assert!(ReplacedBodies::from_json(b"{}").is_err());
    }
}
