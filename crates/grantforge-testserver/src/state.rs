//! What the server holds while it runs: the policies and the signed snapshot made of them, the
//! fault, and what agents sent (events, heartbeats, requests), behind one lock in [`Shared`].

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::fs::{self, File};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant as Clock, SystemTime};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::fault::{Endpoint, Fault, FaultMode};
use crate::http::{self, Request, Response};
use crate::keys::{etag_of, sha256_hex, SigningKey};
use crate::snapshot::{self, Definition, PolicySet};
use crate::store::{file_signature, write_atomic};
use crate::{files, time};

/// How many agent requests `/_test/requests` keeps.
const RECENT_REQUESTS: usize = 1000;

/// The last heartbeat of one instance.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct HeartbeatRecord {
    /// The instance name.
    pub instance: String,
    /// How many heartbeats it sent.
    pub count: u64,
    /// When the last one arrived (ISO-8601).
    pub received_at: String,
    /// The client address.
    pub remote_addr: Option<String>,
    /// The last body, as sent (with any extension such as `health`).
    pub body: Value,
}

/// What one instance reported about the policy versions it applied, as `/_test/instances` lists it:
/// when each version was first reported, so a test can tell when every instance of a fleet applied a
/// version, on the server's clock and as an operator of the real server would see it (the real
/// server learns this only from heartbeats, the next one after the agent applied a version).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct InstanceRecord {
    /// The instance name.
    pub instance: String,
    /// How many heartbeats it sent.
    pub heartbeats: u64,
    /// When the last one arrived (ISO-8601).
    pub last_heartbeat_at: String,
    /// The `appliedPolicyVersion` of the last heartbeat (`None`: nothing applied yet).
    pub applied_policy_version: Option<i64>,
    /// Every version it reported, oldest first, with the arrival of the first heartbeat reporting it.
    pub applied: Vec<AppliedVersion>,
}

/// A policy version one instance reported, and when it first did.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct AppliedVersion {
    /// The version.
    pub policy_version: i64,
    /// The arrival of the first heartbeat that reported it (ISO-8601, milliseconds).
    pub first_reported_at: String,
}

/// One agent API request, as `/_test/requests` lists it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RequestRecord {
    /// Sequence number.
    pub seq: u64,
    /// When it arrived.
    pub at: String,
    /// Method.
    pub method: String,
    /// Path.
    pub path: String,
    /// Endpoint name, if it is one.
    pub endpoint: Option<String>,
    /// Status answered; `None` when the connection was closed without an answer.
    pub status: Option<u16>,
    /// The fault applied, if any.
    pub fault: Option<FaultMode>,
    /// Whether the token was accepted.
    pub authorized: bool,
    /// Request headers (lower-case names, repeated ones joined by `, `), without `Authorization`.
    pub headers: BTreeMap<String, String>,
    /// The answer's `Content-Encoding` (`gzip` when the body was compressed).
    #[serde(default)]
    pub content_encoding: Option<String>,
    /// Bytes of the answer as written to the connection (status line, headers and body); `None`
    /// when the connection was closed without an answer.
    #[serde(default)]
    pub response_bytes: Option<u64>,
}

/// The snapshot the server currently serves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignedSnapshot {
    /// The exact body bytes.
    pub body: Vec<u8>,
    /// The ETag (with quotes).
    pub etag: String,
    /// The policy version.
    pub policy_version: i64,
    /// The signing key id.
    pub key_id: String,
    /// The Base64 signature.
    pub signature: String,
}

pub(crate) struct Signed {
    pub(crate) body: Arc<Vec<u8>>,
    pub(crate) etag: String,
    pub(crate) signature: String,
    pub(crate) version: i64,
    /// The body gzip-compressed, made on the first request that accepts gzip: a fleet of agents
    /// downloading one version costs one compression.
    pub(crate) gzipped: OnceLock<Arc<Vec<u8>>>,
}

impl Signed {
    pub(crate) fn new(body: Vec<u8>, etag: String, signature: String, version: i64) -> Signed {
        Signed {
            body: Arc::new(body),
            etag,
            signature,
            version,
            gzipped: OnceLock::new(),
        }
    }

    pub(crate) fn gzipped(&self) -> Arc<Vec<u8>> {
        Arc::clone(
            self.gzipped
                .get_or_init(|| Arc::new(http::gzip(&self.body))),
        )
    }
}

/// The versions one instance reported applying, from its heartbeats.
#[derive(Default)]
pub(crate) struct Applied {
    /// The `appliedPolicyVersion` of its last heartbeat.
    pub(crate) last: Option<i64>,
    /// Each version it reported, with the arrival of the first heartbeat that did.
    pub(crate) first_reported: BTreeMap<i64, String>,
}

pub(crate) struct State {
    pub(crate) set: PolicySet,
    pub(crate) version: i64,
    pub(crate) current: Arc<Signed>,
    /// The snapshots the current version served before a change at the same version, oldest
    /// first: what fault `replay` serves again.
    pub(crate) replaced: Vec<Arc<Signed>>,
    pub(crate) fault: Fault,
    pub(crate) events: Vec<Value>,
    pub(crate) event_ids: HashSet<String>,
    /// Events answered as duplicates since the start (or the last reset): an agent that resent what
    /// the server already had shows here, though the events themselves are kept once.
    pub(crate) duplicates: u64,
    pub(crate) heartbeats: BTreeMap<String, HeartbeatRecord>,
    /// Per instance: the versions it reported applying.
    pub(crate) applied: BTreeMap<String, Applied>,
    /// When the current version was installed (ISO-8601).
    pub(crate) version_since: String,
    pub(crate) requests: BTreeMap<String, u64>,
    pub(crate) recent: VecDeque<RequestRecord>,
    pub(crate) watched: Option<(Option<SystemTime>, u64)>,
    pub(crate) watched_bytes: Option<Vec<u8>>,
    pub(crate) last_content_check: Option<Clock>,
}

pub(crate) struct Shared {
    pub(crate) service: String,
    pub(crate) refresh_seconds: i64,
    pub(crate) base_path: String,
    pub(crate) retention_secs: i64,
    pub(crate) quiet: bool,
    pub(crate) gzip: bool,
    /// HTTPS: the certificate presented; plain HTTP without.
    pub(crate) tls: Option<Arc<rustls::ServerConfig>>,
    pub(crate) state_dir: PathBuf,
    pub(crate) policies_file: Option<PathBuf>,
    pub(crate) poll_interval: Duration,
    pub(crate) definition: Definition,
    pub(crate) token: String,
    pub(crate) key: SigningKey,
    pub(crate) other_key: SigningKey,
    pub(crate) state: Mutex<State>,
    pub(crate) events_log: Mutex<Option<File>>,
    pub(crate) stop: AtomicBool,
    pub(crate) seq: AtomicU64,
    pub(crate) request_ids: AtomicU64,
    pub(crate) active: AtomicUsize,
}

impl Shared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(crate) fn log(&self, message: &str) {
        if !self.quiet {
            eprintln!("grantforge-testserver: {message}");
        }
    }

    pub(crate) fn service_name<'a>(&'a self, set: &'a PolicySet) -> &'a str {
        set.service.as_deref().unwrap_or(&self.service)
    }

    pub(crate) fn content_hash(&self, set: &PolicySet) -> String {
        sha256_hex(&snapshot::build(
            set,
            &self.definition,
            self.service_name(set),
            "kafka",
            0,
        ))
    }

    pub(crate) fn sign_current(&self, set: &PolicySet, version: i64) -> Signed {
        let body = snapshot::build(
            set,
            &self.definition,
            self.service_name(set),
            "kafka",
            version,
        );
        let (etag, signature) = (etag_of(&body), self.key.sign_base64(&body));
        Signed::new(body, etag, signature, version)
    }

    pub(crate) fn persist_version(&self, version: i64, hash: &str) {
        let text = json!({"policyVersion": version, "contentSha256": hash}).to_string();
        if let Err(e) = write_atomic(&self.state_dir.join(files::STATE), text.as_bytes(), false) {
            self.log(&e.0);
        }
    }

    pub(crate) fn install(&self, st: &mut State, set: PolicySet) {
        let hash = self.content_hash(&set);
        st.version += 1;
        st.replaced.clear();
        st.set = set;
        st.current = Arc::new(self.sign_current(&st.set, st.version));
        st.version_since = time::now_iso();
        self.persist_version(st.version, &hash);
        self.log(&format!(
            "policies changed: version {}, ETag {}",
            st.version, st.current.etag
        ));
    }

    /// Rebuilds the snapshot from `set` without moving the policy version, as GrantForge does when
    /// role holders, group members, `serviceEnabled` or the service's name change: only a policy
    /// edit moves `policyVersion` (`PolicySnapshots`, `RoleHolders`). The body it served so far is
    /// kept for fault `replay`.
    pub(crate) fn install_at_same_version(&self, st: &mut State, set: PolicySet) {
        let hash = self.content_hash(&set);
        st.set = set;
        let next = Arc::new(self.sign_current(&st.set, st.version));
        let before = std::mem::replace(&mut st.current, next);
        st.replaced.push(before);
        self.persist_version(st.version, &hash);
        self.log(&format!(
            "policies changed at the same version {}: ETag {}",
            st.version, st.current.etag
        ));
    }

    pub(crate) fn reset(&self) {
        let mut st = self.lock();
        st.events.clear();
        st.event_ids.clear();
        st.duplicates = 0;
        st.heartbeats.clear();
        st.applied.clear();
        st.requests.clear();
        st.recent.clear();
        st.fault = Fault::none();
        let mut log = self.events_log.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(file) = log.as_mut() {
            if let Err(e) = file.set_len(0) {
                drop(log);
                self.log(&format!("cannot truncate {}: {e}", files::EVENTS));
            }
        }
    }

    /// Every instance that sent a heartbeat, by name, with the versions it reported.
    pub(crate) fn instances(&self) -> Vec<InstanceRecord> {
        let st = self.lock();
        st.heartbeats
            .values()
            .map(|beat| {
                let applied = st.applied.get(&beat.instance);
                InstanceRecord {
                    instance: beat.instance.clone(),
                    heartbeats: beat.count,
                    last_heartbeat_at: beat.received_at.clone(),
                    applied_policy_version: applied.and_then(|a| a.last),
                    applied: applied
                        .into_iter()
                        .flat_map(|a| &a.first_reported)
                        .map(|(version, at)| AppliedVersion {
                            policy_version: *version,
                            first_reported_at: at.clone(),
                        })
                        .collect(),
                }
            })
            .collect()
    }

    pub(crate) fn poll_policies_file(&self) {
        let Some(path) = &self.policies_file else {
            return;
        };
        let signature = file_signature(path);
        let mut st = self.lock();
        let small = signature.is_some_and(|(_, len)| len <= 1 << 20);
        let recheck = small
            && st
                .last_content_check
                .is_none_or(|t| t.elapsed() >= Duration::from_secs(1));
        if signature == st.watched && !recheck {
            return;
        }
        if signature != st.watched && signature.is_none() {
            self.log(&format!(
                "policies file {} is gone; keeping version {}",
                path.display(),
                st.version
            ));
        }
        st.watched = signature;
        st.last_content_check = Some(Clock::now());
        if signature.is_none() {
            return;
        }
        let bytes = match fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) => {
                self.log(&format!("cannot read {}: {e}", path.display()));
                return;
            }
        };
        if st.watched_bytes.as_deref() == Some(bytes.as_slice()) {
            return;
        }
        let parsed = PolicySet::parse(&bytes);
        st.watched_bytes = Some(bytes);
        match parsed {
            Ok(set) => self.install(&mut st, set),
            Err(e) => self.log(&format!(
                "{}: {e}; keeping version {}",
                path.display(),
                st.version
            )),
        }
    }

    pub(crate) fn record_request(
        &self,
        request: &Request,
        endpoint: Option<Endpoint>,
        status: Option<u16>,
        fault: Option<FaultMode>,
        authorized: bool,
        answer: Option<(&Response, bool)>,
    ) {
        let mut headers: BTreeMap<String, String> = BTreeMap::new();
        for (name, value) in &request.headers {
            let name = name.to_ascii_lowercase();
            if name == "authorization" {
                continue;
            }
            headers
                .entry(name)
                .and_modify(|v| {
                    v.push_str(", ");
                    v.push_str(value);
                })
                .or_insert_with(|| value.clone());
        }
        let record = RequestRecord {
            seq: self.seq.fetch_add(1, Ordering::SeqCst) + 1,
            at: time::now_iso(),
            method: request.method.clone(),
            path: request.path.clone(),
            endpoint: endpoint.map(|e| e.name().to_string()),
            status,
            fault,
            authorized,
            headers,
            content_encoding: answer
                .and_then(|(r, _)| r.header_value("Content-Encoding"))
                .map(str::to_string),
            response_bytes: answer.map(|(r, truncate)| http::wire_bytes(r, truncate)),
        };
        let mut st = self.lock();
        if st.recent.len() >= RECENT_REQUESTS {
            st.recent.pop_front();
        }
        st.recent.push_back(record);
    }
}
