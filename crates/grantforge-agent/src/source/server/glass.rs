//! Break-glass requests taken on the agent's thread (see `source::break_glass`): each checked,
//! applied or refused, audited, answered, and lifted by the live server's next snapshot.

use std::time::Instant as Clock;

use grantforge_engine::Instant;
use grantforge_kafka::KafkaPolicies;

use super::succession::LastApplied;
use super::ServerSync;
use crate::source::break_glass::{self, Request};
use crate::source::memberships::Memberships;
use crate::source::Holder;
use crate::trust::etag_of;

impl ServerSync {
    /// Applies or refuses each break-glass request waiting (see `break_glass`): audited (an
    /// event and an ERROR naming the file, its version and who asked) and answered either way.
    pub(super) fn take_break_glass(&mut self, agent: &dyn Holder) {
        let Some(dir) = self.break_glass_dir.clone() else {
            return;
        };
        for request in dir.take() {
            let in_force = self
                .applied
                .as_ref()
                .map(|a| (a.service.as_str(), a.version));
            let checked =
                break_glass::check(&request, self.trusted.as_ref(), in_force, Instant::now());
            let (version, answer) = match checked {
                Ok(policies) => {
                    let version = policies.policy_version;
                    (
                        Some(version),
                        Ok(self.apply_break_glass(agent, &request, policies)),
                    )
                }
                Err(why) => (None, Err(why)),
            };
            let applied = answer.is_ok();
            let message = answer.unwrap_or_else(|why| {
                let refused = format!(
                    "break-glass file {} requested by {} through {} is refused: {why}",
                    request.file,
                    request.by,
                    dir.dir().display()
                );
                tracing::error!("{refused}");
                refused
            });
            self.ship(&[crate::audit::events::break_glass_event(
                &request.id,
                &request.by,
                &request.file,
                version,
                applied,
                &message,
                Instant::now(),
            )]);
            dir.answer(&request.id, applied, &message);
        }
    }

    /// Puts a checked break-glass snapshot in force (not in the disk cache: a restart does not
    /// bring it back); returns what is logged and answered.
    pub(super) fn apply_break_glass(
        &mut self,
        agent: &dyn Holder,
        request: &Request,
        policies: KafkaPolicies,
    ) -> String {
        let message = format!(
            "break-glass file {} (policy version {} of service {}) requested by {} is in force: it stays until the GrantForge server's next snapshot lifts it, or its validity ends",
            request.file, policies.policy_version, policies.service, request.by
        );
        self.applied = Some(LastApplied {
            service: policies.service.clone(),
            version: policies.policy_version,
            etag: etag_of(&request.body),
            at: Clock::now(),
            confirmed: None,
            memberships: Memberships::of(&request.body),
        });
        self.break_glass = Some(policies.policy_version);
        agent.staleness().break_glass(true);
        agent.apply(policies, &format!("break-glass file {}", request.file));
        tracing::error!("{message}");
        message
    }

    /// A snapshot from the live server is in force: a break-glass snapshot is lifted.
    pub(super) fn lift_break_glass(&mut self, agent: &dyn Holder, version: i64) {
        if let Some(break_glass) = self.break_glass.take() {
            agent.staleness().break_glass(false);
            tracing::warn!(
                "the break-glass snapshot (policy version {break_glass}) is lifted: policy version {version} from {} is in force",
                self.settings.url
            );
        }
    }
}
