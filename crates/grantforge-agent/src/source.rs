//! Where the policies come from: a snapshot [`file`] (offline mode), or a GrantForge [`server`]
//! (server mode) through its protocol [`client`], with snapshots verified by the [`trust`]ed
//! signing key and kept in a [`disk_cache`] for restarts while the server is away.

pub(crate) mod client;
pub(crate) mod disk_cache;
pub(crate) mod file;
pub(crate) mod server;
pub(crate) mod trust;
