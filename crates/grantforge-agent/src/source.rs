//! Where the policies come from: a snapshot [`file`] (offline mode), or a GrantForge [`server`]
//! (server mode) through its protocol [`client`], with snapshots verified by the [`trust`]ed
//! signing key and kept in a [`disk_cache`] for restarts while the server is away.

pub(crate) mod client;
pub(crate) mod disk_cache;
pub(crate) mod file;
pub(crate) mod server;
pub(crate) mod trust;

/// Whether a verified snapshot of `next` (service, policy version) may follow the one applied: the
/// same service, and no rollback. Server mode and a signed policy file hold snapshots to this one
/// rule; the reason says which part failed.
pub(crate) fn may_follow(applied: (&str, i64), next: (&str, i64)) -> Result<(), String> {
    let ((service, version), (next_service, next_version)) = (applied, next);
    if next_service != service {
        return Err(format!(
            "it is of service `{next_service}`, but this agent serves `{service}`"
        ));
    }
    if next_version < version {
        return Err(format!(
            "its policy version {next_version} is older than the applied {version} (no rollback)"
        ));
    }
    Ok(())
}
