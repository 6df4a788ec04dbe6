//! # grantforge-testserver — TEST AND DEMO EQUIPMENT
//!
//! A GrantForge **test** server: it answers the four endpoints of GrantForge's agent API the way the real
//! server ([devlive-community/grantforge](https://github.com/devlive-community/grantforge)) does — same paths,
//! same bearer-token check, same validation and status codes, same snapshot format 1 bytes, ETag, Ed25519
//! signature and key id — so that the Kafka agent can be tested and demonstrated without a GrantForge
//! installation. It is **not** a GrantForge server: there is no console, no database, no tenants, one service,
//! one token, and policies come from a JSON file. Never use it to protect anything.
//!
//! It serves plain HTTP, or HTTPS ([`Tls`], `--tls-dir`) with a certificate signed by a test CA it
//! makes itself: valid for `localhost` and `127.0.0.1`, or on purpose expired or for another host.
//!
//! Beyond the real protocol it offers a test-control extension under `/_test/` (no authentication):
//! fault injection (server down, slow, error statuses, bad signatures, foreign keys, rollbacks, other service
//! or type, truncated or huge bodies, refused access events, absurd `refreshSeconds`, a stale 304, a wrong
//! `ETag` header, a replayed body of the current version), and read-outs of what agents sent.
//!
//! ## Agent API (as the real server)
//!
//! | call | answer |
//! |---|---|
//! | `POST /api/v1/agent/heartbeat` | `{"policyVersion","refreshSeconds"}` |
//! | `GET /api/v1/agent/policies` | the signed snapshot (headers `ETag`, `X-GrantForge-Policy-Version`, `X-GrantForge-Signing-Key`, `X-GrantForge-Signature`), or 304 on `If-None-Match`; gzip-compressed (`Content-Encoding: gzip`, signature and ETag of the uncompressed bytes) when `Accept-Encoding` names gzip |
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
//! | `POST /_test/policies` | replace the policies (policies-file JSON), bumping the version; with `?sameVersion=true`, keeping it (as GrantForge when memberships or the service name change) |
//! | `GET /_test/state` | `{service, policyVersion, policyVersionSince, etag, keyId, otherKeyId, fault, requests: {endpoint: count}, events, duplicates, heartbeats}` |
//! | `GET /_test/events` | every recorded access event, as sent, in arrival order |
//! | `GET /_test/heartbeats` | the last heartbeat of each instance (`instance`, `count`, `receivedAt`, `remoteAddr`, `body`) |
//! | `GET /_test/instances` | per instance: `instance`, `heartbeats`, `lastHeartbeatAt`, `appliedPolicyVersion` (of its last heartbeat), `applied: [{policyVersion, firstReportedAt}]` |
//! | `GET /_test/requests` | the last 1000 agent API requests (method, path, status, fault, headers without `Authorization`, the answer's `contentEncoding` and `responseBytes` on the wire) |
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

mod config;
mod fault;
mod handlers;
mod http;
mod keys;
mod lifecycle;
mod problem;
mod routing;
mod snapshot;
mod state;
mod store;
mod time;
mod tls;
mod validate;

pub use config::Config;
pub use fault::{Endpoint, Fault, FaultMode, DEFAULT_HUGE_BYTES, MAX_HUGE_BYTES};
pub use keys::{etag_of, key_id_of_spki, sha256_hex, SigningKey, ED25519_SPKI_PREFIX};
pub use lifecycle::{RunningServer, Server};
pub use snapshot::{build as build_snapshot, Definition, PolicySet, KAFKA_DEFINITION_JSON};
pub use state::{AppliedVersion, HeartbeatRecord, InstanceRecord, RequestRecord, SignedSnapshot};
pub use tls::{Presented, Tls, CA_FILE as TLS_CA_FILE};

/// Largest request body accepted (413 beyond).
pub const MAX_REQUEST_BODY: usize = 64 * 1024 * 1024;

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
