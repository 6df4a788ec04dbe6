//! How a verified snapshot relates to the one applied (first, the same body, a newer version, or
//! a body of the same version that replaces it), and what may follow: the same service or its
//! configured new name, no rollback, and a replaced body only from the live server, never one this
//! version served and replaced before.

use std::time::Instant as Clock;

use grantforge_kafka::KafkaPolicies;

use super::ServerSync;
use crate::config::ConfigError;
use crate::settings::{self, CACHE_DIR};
use crate::source::disk_cache::SnapshotCache;
use crate::source::memberships::{Memberships, ReplacedBodies};

/// What was applied last, to compare the next snapshot with.
#[derive(Clone, Debug)]
pub(super) struct LastApplied {
    pub(super) service: String,
    pub(super) version: i64,
    /// `etag_of` the verified body: what `If-None-Match` names and what "other content" means.
    pub(super) etag: String,
    pub(super) at: Clock,
    /// When the live server last confirmed this body current: applied, 304, or the same body;
    /// `None` for a body from the disk cache, whose memberships are of unknown age.
    pub(super) confirmed: Option<Clock>,
    /// What it says about roles, groups and `serviceEnabled`, to name what a body of the same
    /// version with other content changes.
    pub(super) memberships: Memberships,
}

/// How a verified snapshot relates to the one applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Succession {
    /// Nothing is applied yet.
    First,
    /// The very body in force.
    Same,
    /// A body of the applied version with other content (memberships changed).
    Replaces,
    /// A newer policy version.
    Newer,
}

/// The bodies replaced at the applied version, as the cache directory keeps them across restarts.
/// An unreadable record stops the start (the operator fixes or removes it) rather than forgetting
/// what a replay would bring back.
pub(super) fn replaced_bodies(cache: &SnapshotCache) -> Result<ReplacedBodies, ConfigError> {
    let path = cache.replaced_bodies_path();
    let unusable = |why: String| {
        ConfigError::new(
            CACHE_DIR.key,
            format!(
                "{} {why}; make it readable by Kafka's account, or remove it (a replay of a body replaced before is then not recognised until the next policy version)",
                path.display()
            ),
        )
    };
    match cache.replaced_bodies() {
        Ok(None) => Ok(ReplacedBodies::default()),
        Ok(Some(bytes)) => ReplacedBodies::from_json(&bytes)
            .map_err(|e| unusable(format!("is not a record of replaced bodies: {e}"))),
        Err(e) => Err(unusable(format!("cannot be read: {e}"))),
    }
}

impl ServerSync {
    /// How a verified snapshot relates to the one applied, or why it may not follow it: the same
    /// service (or the new name of [`settings::SERVICE_RENAMED_TO`]), no rollback, and a body of
    /// the applied version with other content only as [`ServerSync::may_replace`] allows.
    pub(super) fn succession(
        &self,
        applied: &LastApplied,
        policies: &KafkaPolicies,
        etag: &str,
        announced: Option<i64>,
    ) -> Result<Succession, String> {
        let service = self.followed_service(applied, &policies.service, announced)?;
        crate::source::may_follow(
            (service, applied.version),
            (&policies.service, policies.policy_version),
        )?;
        if policies.policy_version != applied.version {
            return Ok(Succession::Newer);
        }
        if etag == applied.etag {
            return Ok(Succession::Same);
        }
        self.may_replace(applied, etag, announced)?;
        Ok(Succession::Replaces)
    }

    /// The service a snapshot of `next` must be of: the applied one's, or `next` itself when it is
    /// the configured new name after a rename and comes from the live server. A rename otherwise
    /// gets an ERROR that names both names and the fix: the token is bound to the service id, so
    /// the same token serving another name is a rename (`ServiceAdministration.update`).
    pub(super) fn followed_service<'a>(
        &self,
        applied: &'a LastApplied,
        next: &'a str,
        announced: Option<i64>,
    ) -> Result<&'a str, String> {
        if next == applied.service {
            return Ok(&applied.service);
        }
        if announced.is_some() && self.settings.renamed_to.as_deref() == Some(next) {
            return Ok(next);
        }
        Err(format!(
            "it is of service `{next}`, but this agent serves `{}`; the agent token is the same, so the service was probably renamed in GrantForge from `{}` to `{next}` (a rename keeps the token and the policy version). If so, set {}={next} and restart the broker; until then the policies of `{}` stay in force",
            applied.service,
            applied.service,
            settings::SERVICE_RENAMED_TO.key,
            applied.service
        ))
    }

    /// A body of the applied version with other content: GrantForge rebuilt it because role
    /// holders, group members or `serviceEnabled` changed, which does not move the version. Taken
    /// only from the live server while its heartbeat announces that very version (a 200 of the
    /// applied version after a heartbeat announced another is a server contradicting itself), and
    /// never a body this version served before and replaced since: that is a replay of what was
    /// revoked.
    pub(super) fn may_replace(
        &self,
        applied: &LastApplied,
        etag: &str,
        announced: Option<i64>,
    ) -> Result<(), String> {
        let version = applied.version;
        match announced {
            None => Err(format!(
                "it has the applied policy version {version} but other content; only the live server replaces a body at the same version"
            )),
            Some(announced) if announced != version => Err(format!(
                "it has the applied policy version {version} but other content, while the server's heartbeat announces version {announced}"
            )),
            Some(_) if self.replaced.contains(version, etag) => Err(format!(
                "it has the applied policy version {version} and content that version served before and replaced since (ETag {etag}): a replayed older body, possibly from before a revocation"
            )),
            Some(_) => Ok(()),
        }
    }

    /// After a body of the applied version replaced another: one INFO naming what changed, and
    /// the replaced body remembered so a replay of it is refused.
    pub(super) fn tell_replaced(&mut self, succession: Succession, next: &LastApplied) {
        let Some(before) = self.applied.as_ref() else {
            return;
        };
        if before.service != next.service {
            tracing::warn!(
                "GrantForge service `{}` is now named `{}` ({}); the agent follows the new name",
                before.service,
                next.service,
                settings::SERVICE_RENAMED_TO.key
            );
        }
        if succession != Succession::Replaces {
            return;
        }
        tracing::info!(
            "GrantForge server {} changed the snapshot of policy version {} without a new version: {} (ETag {} → {}); applied",
            self.settings.url,
            next.version,
            before.memberships.changes_to(&next.memberships),
            before.etag,
            next.etag
        );
        self.replaced.replaced(before.version, &before.etag.clone());
        if let Err(e) = self.cache.save_replaced_bodies(&self.replaced.to_json()) {
            tracing::warn!(
                "cannot write {}: {e}; after a restart a replay of the replaced body would not be recognised",
                self.cache.replaced_bodies_path().display()
            );
        }
    }
}
