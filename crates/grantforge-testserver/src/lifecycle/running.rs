//! A started server ([`RunningServer`]): its addresses and keys, the test controls in-process, and
//! stopping it.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::Value;

use crate::fault::{Endpoint, Fault};
use crate::snapshot::PolicySet;
use crate::state::{HeartbeatRecord, InstanceRecord, RequestRecord, Shared, SignedSnapshot};
use crate::Error;

/// A started server; stops when dropped.
pub struct RunningServer {
    pub(super) base_url: String,
    pub(super) root_url: String,
    pub(super) addr: SocketAddr,
    pub(super) shared: Arc<Shared>,
    pub(super) accept: Option<JoinHandle<()>>,
    pub(super) watcher: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for RunningServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningServer")
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

impl RunningServer {
    /// The agent's `grantforge.server.url`: `http://127.0.0.1:PORT` plus the base path, no trailing slash.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// `http://127.0.0.1:PORT`, where `/_test/` lives.
    pub fn root_url(&self) -> &str {
        &self.root_url
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The bound port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// The agent token.
    pub fn token(&self) -> &str {
        &self.shared.token
    }

    /// The signing key's Base64 SPKI (what `grantforge.signing.key.file` should hold).
    pub fn public_key_base64(&self) -> &str {
        self.shared.key.public_key_base64()
    }

    /// The signing key's id.
    pub fn key_id(&self) -> &str {
        self.shared.key.key_id()
    }

    /// The second key pair (used by the `other-key` fault): its Base64 SPKI.
    pub fn other_public_key_base64(&self) -> &str {
        self.shared.other_key.public_key_base64()
    }

    /// The second key pair's id.
    pub fn other_key_id(&self) -> &str {
        self.shared.other_key.key_id()
    }

    /// The state directory.
    pub fn state_dir(&self) -> &Path {
        &self.shared.state_dir
    }

    /// Sets the fault (validated).
    pub fn set_fault(&self, fault: Fault) -> Result<(), Error> {
        fault.validate()?;
        self.shared.lock().fault = fault;
        Ok(())
    }

    /// Clears the fault.
    pub fn clear_fault(&self) {
        self.shared.lock().fault = Fault::none();
    }

    /// The current fault (`none` once a `times`-limited fault is used up).
    pub fn fault(&self) -> Fault {
        self.shared.lock().fault.clone()
    }

    /// Every recorded access event, as sent, in arrival order.
    pub fn events(&self) -> Vec<Value> {
        self.shared.lock().events.clone()
    }

    /// The last heartbeat of each instance.
    pub fn heartbeats(&self) -> Vec<HeartbeatRecord> {
        self.shared.lock().heartbeats.values().cloned().collect()
    }

    /// Every instance that sent a heartbeat, with the policy versions it reported applying and when
    /// it first reported each (`GET /_test/instances`).
    pub fn instances(&self) -> Vec<InstanceRecord> {
        self.shared.instances()
    }

    /// The recent agent API requests, oldest first.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.shared.lock().recent.iter().cloned().collect()
    }

    /// How many requests reached an endpoint (including refused ones).
    pub fn request_count(&self, endpoint: Endpoint) -> u64 {
        self.shared
            .lock()
            .requests
            .get(endpoint.name())
            .copied()
            .unwrap_or(0)
    }

    /// The service name the snapshot carries now.
    pub fn service(&self) -> String {
        let st = self.shared.lock();
        self.shared.service_name(&st.set).to_string()
    }

    /// The current policy version.
    pub fn policy_version(&self) -> i64 {
        self.shared.lock().version
    }

    /// When the current version was installed (ISO-8601, milliseconds), as `/_test/state` says.
    pub fn policy_version_since(&self) -> String {
        self.shared.lock().version_since.clone()
    }

    /// The current ETag.
    pub fn etag(&self) -> String {
        self.shared.lock().current.etag.clone()
    }

    /// The snapshot served now (without faults).
    pub fn snapshot(&self) -> SignedSnapshot {
        let current = Arc::clone(&self.shared.lock().current);
        SignedSnapshot {
            body: current.body.to_vec(),
            etag: current.etag.clone(),
            policy_version: current.version,
            key_id: self.shared.key.key_id().to_string(),
            signature: current.signature.clone(),
        }
    }

    /// Replaces the policies from policies-file JSON, bumping the version; returns the new version.
    pub fn set_policies_json(&self, json: &[u8]) -> Result<i64, Error> {
        let set = PolicySet::parse(json)?;
        Ok(self.set_policies(set))
    }

    /// Replaces the policies, bumping the version; returns the new version.
    pub fn set_policies(&self, set: PolicySet) -> i64 {
        let mut st = self.shared.lock();
        self.shared.install(&mut st, set);
        st.version
    }

    /// Replaces the policies from policies-file JSON **without** moving the version, as GrantForge
    /// does when role holders, group members, `serviceEnabled` or the service name change; the
    /// body served so far is what fault `replay` serves. Returns the (unchanged) version.
    pub fn set_policies_at_same_version_json(&self, json: &[u8]) -> Result<i64, Error> {
        let set = PolicySet::parse(json)?;
        let mut st = self.shared.lock();
        self.shared.install_at_same_version(&mut st, set);
        Ok(st.version)
    }

    /// Forgets events (truncating `events.jsonl`), heartbeats and request counts, and clears the fault.
    pub fn reset(&self) {
        self.shared.reset();
    }

    /// Blocks until the server stops (it stops only through [`RunningServer::stop`] or drop from another owner;
    /// the binary uses this to run until killed).
    pub fn wait(&mut self) {
        if let Some(handle) = self.accept.take() {
            let _ = handle.join();
        }
    }

    /// Stops accepting, stops watching the file, and frees the port. Requests in flight finish on their own.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if self.shared.stop.swap(true, Ordering::SeqCst) {
            return;
        }
        let wake = match self.addr.ip() {
            IpAddr::V4(ip) if ip.is_unspecified() => {
                SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), self.addr.port())
            }
            IpAddr::V6(ip) if ip.is_unspecified() => {
                SocketAddr::new(IpAddr::V6(Ipv6Addr::LOCALHOST), self.addr.port())
            }
            _ => self.addr,
        };
        let _ = TcpStream::connect_timeout(&wake, Duration::from_secs(1));
        if let Some(handle) = self.accept.take() {
            let _ = handle.join();
        }
        if let Some(handle) = self.watcher.take() {
            let _ = handle.join();
        }
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        self.shutdown();
    }
}
