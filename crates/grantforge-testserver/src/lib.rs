//! # grantforge-testserver — TEST AND DEMO EQUIPMENT
//!
//! A GrantForge **test** server: it answers the four endpoints of GrantForge's agent API the way the real
//! server ([devlive-community/grantforge](https://github.com/devlive-community/grantforge)) does — same paths,
//! same bearer-token check, same validation and status codes, same snapshot format 1 bytes, ETag, Ed25519
//! signature and key id — so that the Kafka agent can be tested and demonstrated without a GrantForge
//! installation. It is **not** a GrantForge server: there is no console, no database, no tenants, one service,
//! one token, and policies come from a JSON file. Never use it to protect anything.
//!
//! Beyond the real protocol it offers a test-control extension under `/_test/` (no authentication):
//! fault injection (server down, slow, error statuses, bad signatures, foreign keys, rollbacks, other service
//! or type, truncated or huge bodies, refused access events, absurd `refreshSeconds`, a stale 304, a wrong
//! `ETag` header), and read-outs of what agents sent.
//!
//! ## Agent API (as the real server)
//!
//! | call | answer |
//! |---|---|
//! | `POST /api/v1/agent/heartbeat` | `{"policyVersion","refreshSeconds"}` |
//! | `GET /api/v1/agent/policies` | the signed snapshot (headers `ETag`, `X-GrantForge-Policy-Version`, `X-GrantForge-Signing-Key`, `X-GrantForge-Signature`), or 304 on `If-None-Match` |
//! | `GET /api/v1/agent/signing-key` | `{"keyId","algorithm":"Ed25519","publicKey"}` |
//! | `POST /api/v1/agent/access-events` | `{"accepted","duplicates","expired"}` |
//!
//! Every call needs `Authorization: Bearer <token>` (case-sensitive `Bearer`, one space; the rest is stripped
//! of whitespace as the real filter does), otherwise 401 with problem JSON code `GF-COMMON-401`. Errors are
//! RFC 9457 problem JSON (`type`, `title`, `status`, `detail`, `instance`, `code`, `messageKey`, `requestId`,
//! and `errors` for validation failures). POST bodies must be `application/json` (else 415), wrong methods get
//! 405, as with Spring.
//!
//! ## Test-control extension (`/_test/`, this server only)
//!
//! | call | effect |
//! |---|---|
//! | `POST /_test/fault` | set the fault, see [`Fault`] / [`FaultMode`]; `{"mode":"none"}` clears it |
//! | `GET /_test/fault` | the current fault |
//! | `POST /_test/policies` | replace the policies (policies-file JSON), bumping the version |
//! | `GET /_test/state` | `{service, policyVersion, etag, keyId, otherKeyId, fault, requests: {endpoint: count}, events, heartbeats}` |
//! | `GET /_test/events` | every recorded access event, as sent, in arrival order |
//! | `GET /_test/heartbeats` | the last heartbeat of each instance (`instance`, `count`, `receivedAt`, `remoteAddr`, `body`) |
//! | `GET /_test/requests` | the last 1000 agent API requests (method, path, status, fault, headers without `Authorization`) |
//! | `POST /_test/reset` | forget events (and truncate `events.jsonl`), heartbeats, request counts; clear the fault |
//!
//! ## In-process use
//!
//! ```no_run
//! use grantforge_testserver::{Config, Fault, Server};
//! let dir = std::env::temp_dir().join("gf-test");
//! let mut config = Config::new(&dir);
//! config.policies_json = Some(r#"{"policies":[]}"#.into());
//! let server = Server::start(config).unwrap();
//! println!("{} {}", server.base_url(), server.token());
//! server.set_fault(Fault::status(503)).unwrap();
//! server.stop();
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod fault;
mod http;
mod keys;
mod snapshot;
mod time;
mod validate;

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant as Clock, SystemTime};

use ring::rand::SystemRandom;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub use fault::{Endpoint, Fault, FaultMode, DEFAULT_HUGE_BYTES, MAX_HUGE_BYTES};
pub use keys::{etag_of, key_id_of_spki, sha256_hex, SigningKey, ED25519_SPKI_PREFIX};
pub use snapshot::{build as build_snapshot, Definition, PolicySet, KAFKA_DEFINITION_JSON};

use http::{Body, Request, Response};
use validate::{FieldError, Invalid};

/// Largest request body accepted (413 beyond).
pub const MAX_REQUEST_BODY: usize = 64 * 1024 * 1024;

/// Most connections handled at once; more are closed at once.
const MAX_CONNECTIONS: usize = 256;

/// How many agent requests `/_test/requests` keeps.
const RECENT_REQUESTS: usize = 1000;

/// The detail GrantForge gives for every 5xx.
const INTERNAL_DETAIL: &str = "An unexpected error occurred. Quote the request ID when reporting it.";

/// File names inside the state directory.
pub mod files {
    /// The agent token (`gfa_…`), no trailing newline; reused when present.
    pub const TOKEN: &str = "token";
    /// The Ed25519 private key, PKCS#8 DER; reused when present.
    pub const PRIVATE_KEY: &str = "signing-key.pkcs8";
    /// Base64 SPKI of the public key, exactly the `publicKey` of `GET /api/v1/agent/signing-key`.
    pub const PUBLIC_KEY: &str = "signing-key.pub";
    /// The bound port (written last: its presence means the server is ready).
    pub const PORT: &str = "port";
    /// Accepted access events, one JSON object per line, as the agent sent them.
    pub const EVENTS: &str = "events.jsonl";
    /// `{"policyVersion","contentSha256"}`: keeps the policy version across restarts.
    pub const STATE: &str = "state.json";
}

/// An error starting or driving the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(pub String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl From<String> for Error {
    fn from(s: String) -> Self {
        Error(s)
    }
}

/// How to run the server.
#[derive(Clone, Debug)]
pub struct Config {
    /// The policies file, watched for changes (every `poll_interval`). When `None`, `policies_json` (or an
    /// empty policy set) is used and only `POST /_test/policies` changes it.
    pub policies_file: Option<PathBuf>,
    /// Initial policies when there is no file.
    pub policies_json: Option<String>,
    /// Where the token, keys, port, events and version live; created if needed.
    pub state_dir: PathBuf,
    /// Address to bind (default `127.0.0.1:0`: a free loopback port).
    pub listen: String,
    /// The service name, unless the policies file names one (default `kafka-demo`).
    pub service: String,
    /// `refreshSeconds` of heartbeat answers (default 30).
    pub refresh_seconds: i64,
    /// A path prefix for the agent API, such as `/grantforge` (default none). `/_test/` stays at the root.
    pub base_path: String,
    /// A service type definition to serve instead of the embedded `kafka` one.
    pub definition_json: Option<String>,
    /// Access events older than this many days are counted `expired` (default 90, as GrantForge).
    pub retention_days: u32,
    /// How often the policies file is checked (default 200 ms).
    pub poll_interval: Duration,
    /// No request log on stderr.
    pub quiet: bool,
}

impl Config {
    /// Defaults, with this state directory.
    pub fn new(state_dir: impl Into<PathBuf>) -> Self {
        Config {
            policies_file: None,
            policies_json: None,
            state_dir: state_dir.into(),
            listen: "127.0.0.1:0".into(),
            service: "kafka-demo".into(),
            refresh_seconds: 30,
            base_path: String::new(),
            definition_json: None,
            retention_days: 90,
            poll_interval: Duration::from_millis(200),
            quiet: false,
        }
    }
}

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

struct Signed {
    body: Arc<Vec<u8>>,
    etag: String,
    signature: String,
    version: i64,
}

struct State {
    set: PolicySet,
    version: i64,
    current: Arc<Signed>,
    fault: Fault,
    events: Vec<Value>,
    event_ids: HashSet<String>,
    heartbeats: BTreeMap<String, HeartbeatRecord>,
    requests: BTreeMap<String, u64>,
    recent: VecDeque<RequestRecord>,
    watched: Option<(Option<SystemTime>, u64)>,
    watched_bytes: Option<Vec<u8>>,
    last_content_check: Option<Clock>,
}

struct Shared {
    service: String,
    refresh_seconds: i64,
    base_path: String,
    retention_secs: i64,
    quiet: bool,
    state_dir: PathBuf,
    policies_file: Option<PathBuf>,
    poll_interval: Duration,
    definition: Definition,
    token: String,
    key: SigningKey,
    other_key: SigningKey,
    state: Mutex<State>,
    events_log: Mutex<Option<File>>,
    stop: AtomicBool,
    seq: AtomicU64,
    request_ids: AtomicU64,
    active: AtomicUsize,
}

/// What to do with a connection after routing.
enum Outcome {
    Respond(Response),
    Truncate(Response),
    Close,
}

/// The server's entry point.
pub struct Server;

impl Server {
    /// Prepares the state directory (token, keys), loads the policies, binds, and starts serving on background
    /// threads. Writes `port` last.
    pub fn start(config: Config) -> Result<RunningServer, Error> {
        let dir = config.state_dir.clone();
        fs::create_dir_all(&dir).map_err(|e| format!("cannot create state directory {}: {e}", dir.display()))?;
        let _ = fs::remove_file(dir.join(files::PORT));
        let rng = SystemRandom::new();
        let token = load_or_create_token(&dir, &rng)?;
        let key = load_or_create_key(&dir, &rng)?;
        write_atomic(&dir.join(files::PUBLIC_KEY), key.public_key_base64().as_bytes(), false)?;
        let (other_key, _) = SigningKey::generate(&rng)?;
        let definition = match &config.definition_json {
            Some(json) => Definition::parse(json)?,
            None => Definition::kafka()?,
        };
        let (set, file_bytes) = match &config.policies_file {
            Some(path) => {
                let bytes = fs::read(path).map_err(|e| format!("cannot read policies file {}: {e}", path.display()))?;
                let set = PolicySet::parse(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
                (set, Some(bytes))
            }
            None => match &config.policies_json {
                Some(json) => (PolicySet::parse(json.as_bytes())?, None),
                None => (PolicySet::empty(), None),
            },
        };
        let watched = config.policies_file.as_deref().map(file_signature);
        let base_path = normalise_base_path(&config.base_path)?;
        let (events, event_ids) = load_events(&dir.join(files::EVENTS));
        let events_file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join(files::EVENTS))
            .map_err(|e| format!("cannot open {}: {e}", dir.join(files::EVENTS).display()))?;
        let listener = bind(&config.listen)?;
        let addr = listener.local_addr().map_err(|e| format!("cannot read the bound address: {e}"))?;

        let placeholder = Arc::new(Signed { body: Arc::new(Vec::new()), etag: String::new(), signature: String::new(), version: 0 });
        let shared = Arc::new(Shared {
            service: config.service.clone(),
            refresh_seconds: config.refresh_seconds,
            base_path: base_path.clone(),
            retention_secs: i64::from(config.retention_days) * 86_400,
            quiet: config.quiet,
            state_dir: dir.clone(),
            policies_file: config.policies_file.clone(),
            poll_interval: config.poll_interval,
            definition,
            token,
            key,
            other_key,
            state: Mutex::new(State {
                set: PolicySet::empty(),
                version: 0,
                current: placeholder,
                fault: Fault::none(),
                events,
                event_ids,
                heartbeats: BTreeMap::new(),
                requests: BTreeMap::new(),
                recent: VecDeque::new(),
                watched: watched.flatten(),
                watched_bytes: file_bytes,
                last_content_check: None,
            }),
            events_log: Mutex::new(Some(events_file)),
            stop: AtomicBool::new(false),
            seq: AtomicU64::new(0),
            request_ids: AtomicU64::new(0),
            active: AtomicUsize::new(0),
        });
        {
            // The version survives restarts: the same content keeps it, other content bumps it.
            let persisted = read_persisted_state(&dir.join(files::STATE));
            let hash = shared.content_hash(&set);
            let version = match persisted {
                Some((v, h)) if h == hash => v,
                Some((v, _)) => v + 1,
                None => 1,
            };
            let mut st = shared.lock();
            st.set = set;
            st.version = version;
            st.current = Arc::new(shared.sign_current(&st.set, version));
            shared.persist_version(version, &hash);
        }
        write_atomic(&dir.join(files::PORT), addr.port().to_string().as_bytes(), false)?;

        let accept = {
            let shared = Arc::clone(&shared);
            thread::Builder::new()
                .name("testserver-accept".into())
                .spawn(move || accept_loop(listener, shared))
                .map_err(|e| format!("cannot start a thread: {e}"))?
        };
        let watcher = match shared.policies_file {
            Some(_) => {
                let shared = Arc::clone(&shared);
                Some(
                    thread::Builder::new()
                        .name("testserver-watch".into())
                        .spawn(move || {
                            while !shared.stop.load(Ordering::SeqCst) {
                                thread::sleep(shared.poll_interval);
                                shared.poll_policies_file();
                            }
                        })
                        .map_err(|e| format!("cannot start a thread: {e}"))?,
                )
            }
            None => None,
        };
        let host = match addr.ip() {
            IpAddr::V4(ip) if ip.is_unspecified() => "127.0.0.1".to_string(),
            IpAddr::V6(ip) if ip.is_unspecified() => "[::1]".to_string(),
            IpAddr::V4(ip) => ip.to_string(),
            IpAddr::V6(ip) => format!("[{ip}]"),
        };
        let root_url = format!("http://{host}:{}", addr.port());
        Ok(RunningServer {
            base_url: format!("{root_url}{base_path}"),
            root_url,
            addr,
            shared,
            accept: Some(accept),
            watcher,
        })
    }
}

/// A started server; stops when dropped.
pub struct RunningServer {
    base_url: String,
    root_url: String,
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
    watcher: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for RunningServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningServer").field("base_url", &self.base_url).finish_non_exhaustive()
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

    /// The recent agent API requests, oldest first.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.shared.lock().recent.iter().cloned().collect()
    }

    /// How many requests reached an endpoint (including refused ones).
    pub fn request_count(&self, endpoint: Endpoint) -> u64 {
        self.shared.lock().requests.get(endpoint.name()).copied().unwrap_or(0)
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
            IpAddr::V4(ip) if ip.is_unspecified() => SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), self.addr.port()),
            IpAddr::V6(ip) if ip.is_unspecified() => SocketAddr::new(IpAddr::V6(Ipv6Addr::LOCALHOST), self.addr.port()),
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

fn normalise_base_path(path: &str) -> Result<String, Error> {
    let trimmed = path.trim().trim_end_matches('/');
    if trimmed.is_empty() {
        return Ok(String::new());
    }
    if !trimmed.starts_with('/') || trimmed.contains(['?', '#', ' ']) || trimmed.starts_with("/_test") {
        return Err(Error(format!("base path {path:?} must start with / and not be /_test")));
    }
    Ok(trimmed.to_string())
}

fn bind(listen: &str) -> Result<TcpListener, Error> {
    let addrs: Vec<SocketAddr> =
        listen.to_socket_addrs().map_err(|e| format!("cannot resolve listen address {listen:?}: {e}"))?.collect();
    let mut last = None;
    for addr in addrs {
        match TcpListener::bind(addr) {
            Ok(listener) => return Ok(listener),
            Err(e) => last = Some(e),
        }
    }
    Err(Error(format!(
        "cannot listen on {listen}: {}",
        last.map_or_else(|| "no address".to_string(), |e| e.to_string())
    )))
}

fn write_atomic(path: &Path, bytes: &[u8], private: bool) -> Result<(), Error> {
    let mut tmp_name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    tmp_name.push(".tmp");
    let tmp = path.with_file_name(tmp_name);
    let result = (|| -> std::io::Result<()> {
        let mut options = OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(if private { 0o600 } else { 0o644 });
        }
        let mut file = options.open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&tmp, path)
    })();
    let _ = private;
    result.map_err(|e| Error(format!("cannot write {}: {e}", path.display())))
}

fn load_or_create_token(dir: &Path, rng: &SystemRandom) -> Result<String, Error> {
    let path = dir.join(files::TOKEN);
    match fs::read_to_string(&path) {
        Ok(text) => {
            let token = text.trim().to_string();
            if keys::token_shape_ok(&token) {
                Ok(token)
            } else {
                Err(Error(format!(
                    "{} does not hold a usable token (gfa_ followed by visible ASCII, at most 128 characters); remove it",
                    path.display()
                )))
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let token = keys::new_token(rng)?;
            write_atomic(&path, token.as_bytes(), true)?;
            Ok(token)
        }
        Err(e) => Err(Error(format!("cannot read {}: {e}", path.display()))),
    }
}

fn load_or_create_key(dir: &Path, rng: &SystemRandom) -> Result<SigningKey, Error> {
    let path = dir.join(files::PRIVATE_KEY);
    match fs::read(&path) {
        Ok(der) => SigningKey::from_pkcs8(&der).map_err(|e| Error(format!("{}: {e}; remove it", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let (key, der) = SigningKey::generate(rng)?;
            write_atomic(&path, &der, true)?;
            Ok(key)
        }
        Err(e) => Err(Error(format!("cannot read {}: {e}", path.display()))),
    }
}

fn read_persisted_state(path: &Path) -> Option<(i64, String)> {
    let value: Value = serde_json::from_slice(&fs::read(path).ok()?).ok()?;
    Some((value.get("policyVersion")?.as_i64()?, value.get("contentSha256")?.as_str()?.to_string()))
}

fn load_events(path: &Path) -> (Vec<Value>, HashSet<String>) {
    let mut events = Vec::new();
    let mut ids = HashSet::new();
    if let Ok(file) = File::open(path) {
        for line in BufReader::new(file).lines().map_while(Result::ok) {
            if let Ok(event) = serde_json::from_str::<Value>(&line) {
                if let Some(id) = event.get("eventId").and_then(Value::as_str) {
                    if ids.insert(id.to_string()) {
                        events.push(event);
                    }
                }
            }
        }
    }
    (events, ids)
}

fn file_signature(path: &Path) -> Option<(Option<SystemTime>, u64)> {
    fs::metadata(path).ok().map(|m| (m.modified().ok(), m.len()))
}

fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    for conn in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            break;
        }
        let Ok(stream) = conn else {
            thread::sleep(Duration::from_millis(20));
            continue;
        };
        if shared.active.load(Ordering::SeqCst) >= MAX_CONNECTIONS {
            continue; // dropped: closed at once
        }
        shared.active.fetch_add(1, Ordering::SeqCst);
        let worker = Arc::clone(&shared);
        let spawned = thread::Builder::new().name("testserver-conn".into()).spawn(move || {
            struct Active(Arc<Shared>);
            impl Drop for Active {
                fn drop(&mut self) {
                    self.0.active.fetch_sub(1, Ordering::SeqCst);
                }
            }
            let guard = Active(worker);
            guard.0.serve(stream);
        });
        if spawned.is_err() {
            shared.active.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// Java's `Character.isWhitespace`, which `String.strip()` uses.
fn java_whitespace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | '\u{1C}'..='\u{1F}')
        || (u32::from(c) > 0xff && c.is_whitespace() && !matches!(c, '\u{2007}' | '\u{202F}'))
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Whether an `Accept` header admits `application/problem+json`.
fn accepts_problem_json(accept: &str) -> bool {
    accept.split(',').any(|range| {
        let media = range.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
        media == "*/*" || media == "application/*" || media == "application/problem+json"
    })
}

fn json_response(status: u16, value: &impl Serialize) -> Response {
    Response::new(status)
        .header("Content-Type", "application/json")
        .body(serde_json::to_vec(value).unwrap_or_default())
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct HeartbeatAnswer {
    policy_version: i64,
    refresh_seconds: i64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SigningKeyAnswer<'a> {
    key_id: &'a str,
    algorithm: &'a str,
    public_key: &'a str,
}

#[derive(Serialize)]
struct IngestedAnswer {
    accepted: usize,
    duplicates: usize,
    expired: usize,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Problem<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    title: &'a str,
    status: u16,
    detail: &'a str,
    instance: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    errors: Option<&'a [FieldError]>,
    code: &'a str,
    message_key: &'a str,
    request_id: &'a str,
}

/// GrantForge's error code and message key for a status (`CommonErrorCode.forStatus`).
fn error_code(status: u16) -> (&'static str, &'static str) {
    match status {
        401 => ("GF-COMMON-401", "error.common.unauthenticated"),
        403 => ("GF-COMMON-403", "error.common.forbidden"),
        404 => ("GF-COMMON-404", "error.common.not-found"),
        405 => ("GF-COMMON-405", "error.common.method-not-allowed"),
        409 => ("GF-COMMON-409", "error.common.conflict"),
        415 => ("GF-COMMON-415", "error.common.unsupported-media-type"),
        // 400 and every other 4xx
        400..=499 => ("GF-COMMON-400", "error.common.bad-request"),
        _ => ("GF-COMMON-500", "error.common.internal"),
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn log(&self, message: &str) {
        if !self.quiet {
            eprintln!("grantforge-testserver: {message}");
        }
    }

    fn service_name<'a>(&'a self, set: &'a PolicySet) -> &'a str {
        set.service.as_deref().unwrap_or(&self.service)
    }

    fn content_hash(&self, set: &PolicySet) -> String {
        sha256_hex(&snapshot::build(set, &self.definition, self.service_name(set), "kafka", 0))
    }

    fn sign_current(&self, set: &PolicySet, version: i64) -> Signed {
        let body = snapshot::build(set, &self.definition, self.service_name(set), "kafka", version);
        Signed { etag: etag_of(&body), signature: self.key.sign_base64(&body), body: Arc::new(body), version }
    }

    fn persist_version(&self, version: i64, hash: &str) {
        let text = json!({"policyVersion": version, "contentSha256": hash}).to_string();
        if let Err(e) = write_atomic(&self.state_dir.join(files::STATE), text.as_bytes(), false) {
            self.log(&e.0);
        }
    }

    fn install(&self, st: &mut State, set: PolicySet) {
        let hash = self.content_hash(&set);
        st.version += 1;
        st.set = set;
        st.current = Arc::new(self.sign_current(&st.set, st.version));
        self.persist_version(st.version, &hash);
        self.log(&format!("policies changed: version {}, ETag {}", st.version, st.current.etag));
    }

    fn reset(&self) {
        let mut st = self.lock();
        st.events.clear();
        st.event_ids.clear();
        st.heartbeats.clear();
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

    fn poll_policies_file(&self) {
        let Some(path) = &self.policies_file else { return };
        let signature = file_signature(path);
        let mut st = self.lock();
        let small = signature.is_some_and(|(_, len)| len <= 1 << 20);
        let recheck = small && st.last_content_check.is_none_or(|t| t.elapsed() >= Duration::from_secs(1));
        if signature == st.watched && !recheck {
            return;
        }
        if signature != st.watched && signature.is_none() {
            self.log(&format!("policies file {} is gone; keeping version {}", path.display(), st.version));
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
            Err(e) => self.log(&format!("{}: {e}; keeping version {}", path.display(), st.version)),
        }
    }

    fn serve(&self, mut stream: TcpStream) {
        let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
        let _ = stream.set_write_timeout(Some(Duration::from_secs(120)));
        let _ = stream.set_nodelay(true);
        let request = match http::read_request(&mut stream, MAX_REQUEST_BODY) {
            Ok(request) => request,
            Err(http::ReadError::Gone) => return,
            Err(http::ReadError::Bad(why)) => {
                let response = self.bare_problem(400, &why, "");
                let _ = http::write_response(&mut stream, &response, false);
                self.log(&format!("malformed request: {why}"));
                return;
            }
            Err(http::ReadError::TooLarge) => {
                let response = self.bare_problem(413, "request body too large", "");
                let _ = http::write_response(&mut stream, &response, false);
                self.log("request body too large");
                return;
            }
        };
        let started = Clock::now();
        let routed = catch_unwind(AssertUnwindSafe(|| self.route(&request)));
        let (outcome, endpoint, fault, authorized) = match routed {
            Ok(result) => result,
            Err(_) => (Outcome::Respond(self.problem(&request, 500, None, None)), None, None, false),
        };
        let status = match &outcome {
            Outcome::Respond(r) | Outcome::Truncate(r) => Some(r.status),
            Outcome::Close => None,
        };
        let written = match &outcome {
            Outcome::Respond(r) => http::write_response(&mut stream, r, false),
            Outcome::Truncate(r) => http::write_response(&mut stream, r, true),
            Outcome::Close => {
                http::close(&stream);
                Ok(())
            }
        };
        let is_agent = !request.path.starts_with("/_test");
        if is_agent {
            self.record_request(&request, endpoint, status, fault, authorized);
        }
        self.log(&format!(
            "{} {} -> {}{}{} ({} ms)",
            request.method,
            request.path,
            status.map_or_else(|| "closed".to_string(), |s| s.to_string()),
            fault.map_or_else(String::new, |f| format!(" [fault {}]", serde_json::to_string(&f).unwrap_or_default())),
            if written.is_err() { " [write failed]" } else { "" },
            started.elapsed().as_millis()
        ));
    }

    fn record_request(&self, request: &Request, endpoint: Option<Endpoint>, status: Option<u16>, fault: Option<FaultMode>, authorized: bool) {
        let mut headers: BTreeMap<String, String> = BTreeMap::new();
        for (name, value) in &request.headers {
            let name = name.to_ascii_lowercase();
            if name == "authorization" {
                continue;
            }
            headers.entry(name).and_modify(|v| {
                v.push_str(", ");
                v.push_str(value);
            }).or_insert_with(|| value.clone());
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
        };
        let mut st = self.lock();
        if st.recent.len() >= RECENT_REQUESTS {
            st.recent.pop_front();
        }
        st.recent.push_back(record);
    }

    fn next_request_id(&self) -> String {
        format!("test-{:08x}", self.request_ids.fetch_add(1, Ordering::SeqCst).wrapping_add(1))
    }

    /// A problem answer for a request that could not even be parsed.
    fn bare_problem(&self, status: u16, detail: &str, instance: &str) -> Response {
        let (code, key) = error_code(status);
        let id = self.next_request_id();
        let body = Problem {
            kind: "about:blank",
            title: http::reason(status),
            status,
            detail,
            instance,
            errors: None,
            code,
            message_key: key,
            request_id: &id,
        };
        Response::new(status)
            .header("Content-Type", "application/problem+json")
            .body(serde_json::to_vec(&body).unwrap_or_default())
    }

    /// An RFC 9457 problem answer, rendered as GrantForge's `ProblemDetailsAdvice` renders it.
    fn problem(&self, request: &Request, status: u16, detail: Option<&str>, errors: Option<&[FieldError]>) -> Response {
        let (code, key) = error_code(status);
        let default_detail = match status {
            400 => "Invalid request content.",
            401 => "authentication required",
            404 => "not found",
            _ if status >= 500 => INTERNAL_DETAIL,
            _ => http::reason(status),
        };
        let detail = if status >= 500 { INTERNAL_DETAIL } else { detail.unwrap_or(default_detail) };
        self.problem_with_code(request, status, code, key, detail, errors)
    }

    fn problem_with_code(
        &self,
        request: &Request,
        status: u16,
        code: &str,
        key: &str,
        detail: &str,
        errors: Option<&[FieldError]>,
    ) -> Response {
        let id = self.next_request_id();
        let body = Problem {
            kind: "about:blank",
            title: http::reason(status),
            status,
            detail,
            instance: &request.path,
            errors,
            code,
            message_key: key,
            request_id: &id,
        };
        let content_type = match request.header("accept") {
            Some(accept) if !accepts_problem_json(accept) => "application/json",
            _ => "application/problem+json",
        };
        Response::new(status)
            .header("Content-Type", content_type)
            .header("X-Request-Id", id.clone())
            .body(serde_json::to_vec(&body).unwrap_or_default())
    }

    fn authorized(&self, request: &Request) -> bool {
        let Some(header) = request.header("authorization") else { return false };
        let Some(rest) = header.strip_prefix("Bearer ") else { return false };
        let secret = rest.trim_matches(java_whitespace);
        keys::token_shape_ok(secret) && constant_time_eq(secret.as_bytes(), self.token.as_bytes())
    }

    /// Takes the fault for this endpoint and phase, counting down `times`.
    fn take_fault(&self, endpoint: Endpoint, before_auth: bool) -> Option<Fault> {
        let mut st = self.lock();
        let fault = &mut st.fault;
        if !fault.applies(endpoint) || fault.before_auth() != before_auth {
            return None;
        }
        let taken = fault.clone();
        match fault.times {
            Some(n) if n <= 1 => *fault = Fault::none(),
            Some(n) => fault.times = Some(n - 1),
            None => {}
        }
        Some(taken)
    }

    #[allow(clippy::type_complexity)]
    fn route(&self, request: &Request) -> (Outcome, Option<Endpoint>, Option<FaultMode>, bool) {
        if request.path == "/_test" || request.path.starts_with("/_test/") {
            return (Outcome::Respond(self.route_test(request)), None, None, false);
        }
        let relative = if self.base_path.is_empty() {
            Some(request.path.as_str())
        } else {
            request.path.strip_prefix(self.base_path.as_str()).filter(|rest| rest.starts_with('/'))
        };
        let Some(relative) = relative.filter(|p| *p == "/api/v1/agent" || p.starts_with("/api/v1/agent/")) else {
            let response = self.problem(request, 404, Some(&format!("no endpoint {}", request.path)), None);
            return (Outcome::Respond(response), None, None, false);
        };
        let endpoint = Endpoint::from_path(relative);
        {
            let mut st = self.lock();
            *st.requests.entry(endpoint.map_or("other", Endpoint::name).to_string()).or_insert(0) += 1;
        }
        let (outcome, fault, authorized) = self.route_agent(request, endpoint);
        let outcome = match outcome {
            Outcome::Respond(r) => Outcome::Respond(with_security_headers(r)),
            Outcome::Truncate(r) => Outcome::Truncate(with_security_headers(r)),
            Outcome::Close => Outcome::Close,
        };
        (outcome, endpoint, fault, authorized)
    }

    fn route_agent(&self, request: &Request, endpoint: Option<Endpoint>) -> (Outcome, Option<FaultMode>, bool) {
        let mut applied = None;
        if let Some(fault) = endpoint.and_then(|e| self.take_fault(e, true)) {
            applied = Some(fault.mode);
            match fault.mode {
                FaultMode::Down => return (Outcome::Close, applied, false),
                FaultMode::Slow => thread::sleep(Duration::from_millis(fault.delay_ms.unwrap_or(1000))),
                FaultMode::Status => {
                    let status = fault.status.unwrap_or(500);
                    let response = if status == 409 {
                        self.problem_with_code(
                            request,
                            409,
                            "GF-SERVICE-002",
                            "error.service.type-unavailable",
                            "no active plugin provides the service type kafka",
                            None,
                        )
                    } else if status == 404 {
                        self.problem(request, 404, Some("no service 1"), None)
                    } else {
                        self.problem(request, status, None, None)
                    };
                    return (Outcome::Respond(response), applied, false);
                }
                _ => {}
            }
        }
        if !self.authorized(request) {
            return (Outcome::Respond(self.problem(request, 401, None, None)), applied, false);
        }
        let Some(endpoint) = endpoint else {
            let response = self.problem(request, 404, Some(&format!("no endpoint {}", request.path)), None);
            return (Outcome::Respond(response), applied, true);
        };
        if request.method != endpoint.method() {
            let detail = format!("Method '{}' is not supported.", request.method);
            let response = self.problem(request, 405, Some(&detail), None).header("Allow", endpoint.method());
            return (Outcome::Respond(response), applied, true);
        }
        if endpoint.method() == "POST" {
            let media = request.header("content-type").map(|ct| ct.split(';').next().unwrap_or("").trim().to_ascii_lowercase());
            let json = media.as_deref().is_some_and(|m| m == "application/json" || (m.starts_with("application/") && m.ends_with("+json")));
            if !json {
                let detail = format!("Content-Type '{}' is not supported.", media.as_deref().unwrap_or("application/octet-stream"));
                return (Outcome::Respond(self.problem(request, 415, Some(&detail), None)), applied, true);
            }
        }
        let fault = self.take_fault(endpoint, false);
        if let Some(f) = &fault {
            applied = Some(f.mode);
        }
        let response = match endpoint {
            Endpoint::Heartbeat => self.heartbeat(request, fault.as_ref()),
            Endpoint::Policies => self.policies(request, fault.as_ref()),
            Endpoint::SigningKey => self.signing_key(),
            Endpoint::AccessEvents => self.access_events(request, fault.as_ref()),
        };
        let truncate = fault.as_ref().is_some_and(|f| f.mode == FaultMode::Truncated);
        (if truncate { Outcome::Truncate(response) } else { Outcome::Respond(response) }, applied, true)
    }

    fn read_json(&self, request: &Request) -> Result<Value, Response> {
        serde_json::from_slice(&request.body)
            .map_err(|e| self.problem(request, 400, Some(&format!("Failed to read request: {e}")), None))
    }

    fn invalid(&self, request: &Request, invalid: Invalid) -> Response {
        match invalid {
            Invalid::Unreadable(why) => self.problem(request, 400, Some(&format!("Failed to read request: {why}")), None),
            Invalid::Fields(errors) => self.problem(request, 400, None, Some(&errors)),
        }
    }

    fn heartbeat(&self, request: &Request, fault: Option<&Fault>) -> Response {
        let body = match self.read_json(request) {
            Ok(body) => body,
            Err(response) => return response,
        };
        let heartbeat = match validate::heartbeat(&body) {
            Ok(h) => h,
            Err(invalid) => return self.invalid(request, invalid),
        };
        let mut st = self.lock();
        let count = st.heartbeats.get(&heartbeat.instance).map_or(0, |r| r.count) + 1;
        st.heartbeats.insert(
            heartbeat.instance.clone(),
            HeartbeatRecord {
                instance: heartbeat.instance,
                count,
                received_at: time::now_iso(),
                remote_addr: request.peer.map(|p| p.ip().to_string()),
                body,
            },
        );
        let version = match fault {
            Some(f) if f.mode == FaultMode::OldVersion => f.policy_version.unwrap_or(st.version - 1),
            _ => st.version,
        };
        let refresh_seconds = match fault {
            Some(f) if f.mode == FaultMode::RefreshSeconds => f.refresh_seconds.unwrap_or(i64::MAX),
            _ => self.refresh_seconds,
        };
        json_response(200, &HeartbeatAnswer { policy_version: version, refresh_seconds })
    }

    fn policies(&self, request: &Request, fault: Option<&Fault>) -> Response {
        let (current, set) = {
            let st = self.lock();
            let needs_set = fault.is_some_and(|f| matches!(f.mode, FaultMode::OldVersion | FaultMode::OtherService | FaultMode::OtherType));
            (Arc::clone(&st.current), if needs_set { Some(st.set.clone()) } else { None })
        };
        let service_of = |set: &PolicySet| self.service_name(set).to_string();
        let mode = fault.map_or(FaultMode::None, |f| f.mode);
        if mode == FaultMode::StaleNotModified && request.header("if-none-match").is_some() {
            return Response::new(304).header("ETag", current.etag.clone()).header("X-GrantForge-Policy-Version", current.version.to_string());
        }
        let mut key_id = self.key.key_id().to_string();
        let (body, etag, version, signature): (Body, String, i64, String) = match (mode, fault, set) {
            (FaultMode::WrongSignature, _, _) => {
                let mut other = current.body.to_vec();
                other.push(b' ');
                (Body::Shared(Arc::clone(&current.body)), current.etag.clone(), current.version, self.key.sign_base64(&other))
            }
            (FaultMode::OtherKey, _, _) => {
                key_id = self.other_key.key_id().to_string();
                let signature = self.other_key.sign_base64(&current.body);
                (Body::Shared(Arc::clone(&current.body)), current.etag.clone(), current.version, signature)
            }
            (FaultMode::OldVersion, Some(f), Some(set)) => {
                let version = f.policy_version.unwrap_or(current.version - 1);
                let body = snapshot::build(&set, &self.definition, &service_of(&set), "kafka", version);
                (Body::Owned(body), String::new(), version, String::new())
            }
            (FaultMode::OtherService, Some(f), Some(set)) => {
                let other = f.other_service.clone().unwrap_or_else(|| format!("{}-other", service_of(&set)));
                let body = snapshot::build(&set, &self.definition, &other, "kafka", current.version);
                (Body::Owned(body), String::new(), current.version, String::new())
            }
            (FaultMode::OtherType, Some(f), Some(set)) => {
                let kind = f.service_type.clone().unwrap_or_else(|| "hive".into());
                let body = snapshot::build(&set, &self.definition, &service_of(&set), &kind, current.version);
                (Body::Owned(body), String::new(), current.version, String::new())
            }
            (FaultMode::Huge, Some(f), _) => {
                let wanted = usize::try_from(f.huge_bytes.unwrap_or(DEFAULT_HUGE_BYTES)).unwrap_or(usize::MAX);
                let base = &current.body;
                let body = if wanted <= base.len() || base.first() != Some(&b'{') {
                    base.to_vec()
                } else {
                    let mut padded = Vec::with_capacity(wanted);
                    padded.push(b'{');
                    padded.resize(1 + wanted - base.len(), b' ');
                    padded.extend_from_slice(&base[1..]);
                    padded
                };
                (Body::Owned(body), String::new(), current.version, String::new())
            }
            _ => (Body::Shared(Arc::clone(&current.body)), current.etag.clone(), current.version, current.signature.clone()),
        };
        let etag = if etag.is_empty() { etag_of(&body) } else { etag };
        // `wrong-etag`: the header names other bytes; the server still compares with the body's ETag.
        let header_etag = if mode == FaultMode::WrongEtag { etag_of(&[&body[..], b" "].concat()) } else { etag.clone() };
        if request.header("if-none-match") == Some(etag.as_str()) {
            return Response::new(304).header("ETag", header_etag).header("X-GrantForge-Policy-Version", version.to_string());
        }
        let signature = if signature.is_empty() { self.key.sign_base64(&body) } else { signature };
        Response::new(200)
            .header("ETag", header_etag)
            .header("Content-Type", "application/json")
            .header("X-GrantForge-Policy-Version", version.to_string())
            .header("X-GrantForge-Signing-Key", key_id)
            .header("X-GrantForge-Signature", signature)
            .shared_body(body)
    }

    fn signing_key(&self) -> Response {
        let rotated = {
            let st = self.lock();
            st.fault.mode == FaultMode::OtherKey && st.fault.rotate_key
        };
        let key = if rotated { &self.other_key } else { &self.key };
        json_response(
            200,
            &SigningKeyAnswer { key_id: key.key_id(), algorithm: "Ed25519", public_key: key.public_key_base64() },
        )
    }

    fn access_events(&self, request: &Request, fault: Option<&Fault>) -> Response {
        if fault.is_some_and(|f| f.mode == FaultMode::FailEvents400) {
            let errors = [FieldError { field: "events".into(), message: "refused by the test server's fail-events-400 fault".into() }];
            return self.problem(request, 400, None, Some(&errors));
        }
        let body = match self.read_json(request) {
            Ok(body) => body,
            Err(response) => return response,
        };
        let batch = match validate::batch(&body) {
            Ok(batch) => batch,
            Err(invalid) => return self.invalid(request, invalid),
        };
        // AccessAudit.record: expired first, then the first of each event id in the batch, then ids stored before.
        let oldest = time::now().0.saturating_sub(self.retention_secs);
        let total = batch.events.len();
        let mut expired = 0;
        let mut seen = HashSet::new();
        let mut fresh = Vec::new();
        for event in batch.events {
            if event.occurred_at.0 < oldest {
                expired += 1;
            } else if seen.insert(event.event_id.clone()) {
                fresh.push(event);
            }
        }
        let repeated = total - expired - fresh.len();
        let mut st = self.lock();
        let mut accepted = Vec::new();
        let mut known = 0;
        for event in fresh {
            if st.event_ids.contains(&event.event_id) {
                known += 1;
            } else {
                st.event_ids.insert(event.event_id);
                accepted.push(event.raw);
            }
        }
        if !accepted.is_empty() {
            let mut lines = Vec::new();
            for event in &accepted {
                lines.extend_from_slice(event.to_string().as_bytes());
                lines.push(b'\n');
            }
            let mut log = self.events_log.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(file) = log.as_mut() {
                if let Err(e) = file.write_all(&lines).and_then(|()| file.flush()) {
                    self.log(&format!("cannot append to {}: {e}", files::EVENTS));
                }
            }
        }
        let answer = IngestedAnswer { accepted: accepted.len(), duplicates: repeated + known, expired };
        self.log(&format!(
            "access events from {}: {} accepted, {} duplicates, {} expired",
            batch.instance, answer.accepted, answer.duplicates, answer.expired
        ));
        st.events.extend(accepted);
        json_response(200, &answer)
    }

    fn route_test(&self, request: &Request) -> Response {
        let method = request.method.as_str();
        let allowed: &[&str] = match request.path.as_str() {
            "/_test/state" | "/_test/events" | "/_test/heartbeats" | "/_test/requests" => &["GET"],
            "/_test/fault" => &["GET", "POST"],
            "/_test/policies" | "/_test/reset" => &["POST"],
            _ => return self.problem(request, 404, Some(&format!("no test endpoint {}", request.path)), None),
        };
        if !allowed.contains(&method) {
            let detail = format!("Method '{method}' is not supported.");
            return self.problem(request, 405, Some(&detail), None).header("Allow", allowed.join(", "));
        }
        match (method, request.path.as_str()) {
            ("GET", "/_test/state") => {
                let st = self.lock();
                let mut requests: BTreeMap<String, u64> = Endpoint::ALL.iter().map(|e| (e.name().to_string(), 0)).collect();
                requests.extend(st.requests.iter().map(|(k, v)| (k.clone(), *v)));
                json_response(
                    200,
                    &json!({
                        "service": self.service_name(&st.set),
                        "policyVersion": st.version,
                        "etag": st.current.etag,
                        "keyId": self.key.key_id(),
                        "otherKeyId": self.other_key.key_id(),
                        "fault": st.fault,
                        "requests": requests,
                        "events": st.events.len(),
                        "heartbeats": st.heartbeats.len(),
                    }),
                )
            }
            ("GET", "/_test/events") => json_response(200, &self.lock().events),
            ("GET", "/_test/heartbeats") => json_response(200, &self.lock().heartbeats.values().collect::<Vec<_>>()),
            ("GET", "/_test/requests") => json_response(200, &self.lock().recent),
            ("GET", "/_test/fault") => json_response(200, &self.lock().fault),
            ("POST", "/_test/fault") => match Fault::from_json(&request.body) {
                Ok(fault) => {
                    self.log(&format!("fault set: {}", serde_json::to_string(&fault).unwrap_or_default()));
                    self.lock().fault = fault.clone();
                    json_response(200, &fault)
                }
                Err(why) => self.problem(request, 400, Some(&why), None),
            },
            ("POST", "/_test/policies") => match PolicySet::parse(&request.body) {
                Ok(set) => {
                    let mut st = self.lock();
                    self.install(&mut st, set);
                    json_response(200, &json!({"policyVersion": st.version, "etag": st.current.etag}))
                }
                Err(why) => self.problem(request, 400, Some(&why), None),
            },
            ("POST", "/_test/reset") => {
                self.reset();
                json_response(200, &json!({"reset": true}))
            }
            _ => self.problem(request, 404, None, None),
        }
    }
}

/// The headers Spring Security adds to every answer of the agent chain.
fn with_security_headers(response: Response) -> Response {
    let mut response = response
        .header("X-Content-Type-Options", "nosniff")
        .header("X-XSS-Protection", "0")
        .header("X-Frame-Options", "DENY");
    if response.status != 304 && response.header_value("Cache-Control").is_none() {
        response = response
            .header("Cache-Control", "no-cache, no-store, max-age=0, must-revalidate")
            .header("Pragma", "no-cache")
            .header("Expires", "0");
    }
    response
}
