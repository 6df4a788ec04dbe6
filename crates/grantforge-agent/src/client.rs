//! The GrantForge agent protocol, client side (`docs/protocol.md`): heartbeat, conditional
//! snapshot download, signing key, access events. Synchronous, on the agent's own thread; never
//! on a Kafka request thread. TLS verification is always on; redirects are never followed; no proxy
//! is used (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` and the like are ignored: a variable meant for
//! other programs must not route the token and the snapshots through a host nobody configured).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use ureq::http::Response;
use ureq::tls::{Certificate, PemItem, RootCerts, TlsConfig};
use ureq::{Body, Timeout};

use crate::config::{ConfigError, ServerSettings};
use crate::settings;

/// A snapshot as it came from the server: the exact body and the headers that vouch for it. (Its
/// ETag is not here: it is `trust::etag_of(body)`, whatever a header or a file says.)
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Download {
    pub body: Vec<u8>,
    pub key_id: String,
    pub signature: String,
}

/// Sent as `User-Agent`.
pub const USER_AGENT: &str = concat!("grantforge-agent-kafka/", env!("CARGO_PKG_VERSION"));

/// Why a call did not give a usable answer. Never contains the token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallError {
    /// Connection refused, reset, timed out: the server is away.
    Unreachable(String),
    /// An HTTP status other than the expected ones, with the problem's `code` and `detail`.
    Status { status: u16, detail: String },
    /// An answer the agent cannot use (missing header, not JSON, body too large, truncated).
    Invalid(String),
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::Unreachable(e) => write!(f, "the server cannot be reached: {e}"),
            CallError::Status { status, detail } => write!(
                f,
                "the server answered {status}{}: {detail}",
                status_hint(*status)
            ),
            CallError::Invalid(e) => write!(f, "the server's answer is unusable: {e}"),
        }
    }
}

fn status_hint(status: u16) -> String {
    match status {
        401 => format!(
            " (the token in {} is missing, wrong, revoked or expired; issue a new one)",
            settings::TOKEN_FILE.key
        ),
        404 => " (the token's service was deleted in GrantForge)".to_string(),
        409 => " (GrantForge has no plugin for the service's type; install the kafka service type)"
            .to_string(),
        _ => String::new(),
    }
}

/// What a heartbeat answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Heartbeat {
    pub policy_version: i64,
    pub refresh_seconds: Option<i64>,
}

/// What a snapshot request answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PolicyAnswer {
    /// 304: the held snapshot is current.
    Unchanged,
    Download(Download),
}

/// How long a call may take (`grantforge.connect.timeout.ms`, `grantforge.read.timeout.ms`,
/// `grantforge.snapshot.timeout.ms`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    pub connect: Duration,
    /// An answer's headers, each read of a body (a stalled answer fails after this long), and the
    /// whole body of an answer other than a snapshot.
    pub read: Duration,
    /// A snapshot's whole body: tens of megabytes, that may take longer than `read` to arrive
    /// while data keeps coming.
    pub snapshot: Duration,
}

pub struct ServerClient {
    http: ureq::Agent,
    base: String,
    authorization: String,
    snapshot_timeout: Duration,
    max_body: u64,
}

impl ServerClient {
    pub fn new(
        settings: &ServerSettings,
        timeouts: Timeouts,
        max_body: u64,
    ) -> Result<ServerClient, ConfigError> {
        let Timeouts { connect, read, .. } = timeouts;
        let tls = TlsConfig::builder()
            .root_certs(root_certs(settings.ca_pem.as_deref())?)
            .build();
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .max_redirects_will_error(false)
            .timeout_resolve(Some(connect))
            .timeout_connect(Some(connect))
            .timeout_send_request(Some(read))
            .timeout_recv_response(Some(read))
            .timeout_recv_body(Some(read))
            .timeout_send_body(Some(read))
            .timeout_per_read(Some(read))
            .user_agent(USER_AGENT)
            .tls_config(tls)
            .proxy(None)
            .build();
        Ok(ServerClient {
            http: config.into(),
            base: settings.url.clone(),
            authorization: format!("Bearer {}", settings.token.expose()),
            snapshot_timeout: timeouts.snapshot,
            max_body,
        })
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// A GET with the headers every call carries.
    fn get(&self, path: &str) -> ureq::RequestBuilder<ureq::typestate::WithoutBody> {
        self.http
            .get(self.url(path))
            .header("Authorization", &self.authorization)
            .header("Accept", "application/json")
    }

    /// A JSON POST with the headers every call carries; the answer must be a JSON object.
    fn post_json(&self, path: &str, body: &Value) -> Result<Value, CallError> {
        let response = self
            .http
            .post(self.url(path))
            .header("Authorization", &self.authorization)
            .header("Accept", "application/json")
            .header("Content-Type", "application/json")
            .send(body.to_string().as_bytes())
            .map_err(unreachable)?;
        self.json(expect_ok(response)?)
    }

    pub fn heartbeat(&self, body: &Value) -> Result<Heartbeat, CallError> {
        testing::maybe_panic(&self.base, testing::Call::Heartbeat);
        let answer = self.post_json("api/v1/agent/heartbeat", body)?;
        let policy_version = answer["policyVersion"].as_i64().ok_or_else(|| {
            CallError::Invalid("the heartbeat answer has no numeric policyVersion".to_string())
        })?;
        Ok(Heartbeat {
            policy_version,
            refresh_seconds: answer["refreshSeconds"].as_i64(),
        })
    }

    /// `GET /policies`, conditional on the ETag held. The answer's `ETag` header is not used: the
    /// agent derives a snapshot's ETag from its verified body (`trust::etag_of`).
    pub fn policies(&self, etag: Option<&str>) -> Result<PolicyAnswer, CallError> {
        let mut request = self.get("api/v1/agent/policies");
        if let Some(etag) = etag {
            request = request.header("If-None-Match", etag);
        }
        let response = request
            .config()
            .timeout_recv_body(Some(self.snapshot_timeout))
            .build()
            .call()
            .map_err(unreachable)?;
        if response.status().as_u16() == 304 {
            return Ok(PolicyAnswer::Unchanged);
        }
        let mut response = expect_ok(response)?;
        let header = |name: &str| -> Result<String, CallError> {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
                .ok_or_else(|| {
                    CallError::Invalid(format!("the snapshot came without the {name} header"))
                })
        };
        let (key_id, signature) = (
            header("X-GrantForge-Signing-Key")?,
            header("X-GrantForge-Signature")?,
        );
        let body = read_limited(&mut response, BodyLimit::Snapshot(self.max_body))?;
        Ok(PolicyAnswer::Download(Download {
            body,
            key_id,
            signature,
        }))
    }

    /// The server's signing key, Base64 SPKI.
    pub fn signing_key(&self) -> Result<String, CallError> {
        let response = self
            .get("api/v1/agent/signing-key")
            .call()
            .map_err(unreachable)?;
        let answer = self.json(expect_ok(response)?)?;
        answer["publicKey"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| {
                CallError::Invalid("the signing-key answer has no publicKey".to_string())
            })
    }

    /// `POST /access-events`; the answer `{accepted, duplicates, expired}`.
    pub fn send_events(&self, body: &Value) -> Result<Value, CallError> {
        testing::maybe_panic(&self.base, testing::Call::AccessEvents);
        self.post_json("api/v1/agent/access-events", body)
    }

    fn json(&self, mut response: Response<Body>) -> Result<Value, CallError> {
        let bytes = read_limited(&mut response, BodyLimit::Json)?;
        let value: Value = serde_json::from_slice(&bytes)
            .map_err(|e| CallError::Invalid(format!("not JSON: {e}")))?;
        if value.is_object() {
            Ok(value)
        } else {
            Err(CallError::Invalid(
                "the answer is not a JSON object".to_string(),
            ))
        }
    }
}

fn unreachable(error: ureq::Error) -> CallError {
    CallError::Unreachable(match tls_error(&error) {
        Some(rustls::Error::InvalidCertificate(cause)) => refused_certificate(cause, &error),
        Some(rustls::Error::InvalidMessage(_) | rustls::Error::InappropriateMessage { .. }) => {
            format!(
                "it does not answer TLS ({error}); check that {} names the server's https address (or http:// for a server without TLS)",
                settings::SERVER_URL.key
            )
        }
        _ => error.to_string(),
    })
}

/// The TLS error behind a failed call: ureq reports it itself or inside an I/O error.
fn tls_error(error: &ureq::Error) -> Option<&rustls::Error> {
    match error {
        ureq::Error::Rustls(tls) => Some(tls),
        ureq::Error::Io(io) => io.get_ref()?.downcast_ref::<rustls::Error>(),
        _ => None,
    }
}

/// Why the server's certificate was refused, and what fixes it. Nothing was sent to that server:
/// the token goes only after its certificate verifies.
fn refused_certificate(cause: &rustls::CertificateError, error: &ureq::Error) -> String {
    use rustls::CertificateError::*;
    match cause {
        UnknownIssuer => format!(
            "its certificate is signed by a CA this agent does not trust ({error}); give the CA's certificate in {}",
            settings::SSL_CA_FILE.key
        ),
        NotValidForName | NotValidForNameContext { .. } => format!(
            "its certificate is for another host ({error}); {} must name a host the certificate holds",
            settings::SERVER_URL.key
        ),
        Expired | ExpiredContext { .. } | NotValidYet | NotValidYetContext { .. } => format!(
            "its certificate is outside its validity period ({error}); renew the server's certificate (or check this host's clock)"
        ),
        _ => format!("its certificate is refused ({error})"),
    }
}

/// 2xx passes; anything else becomes `Status` with the problem's `code` and `detail` (or the
/// first 300 characters of the body).
fn expect_ok(mut response: Response<Body>) -> Result<Response<Body>, CallError> {
    let status = response.status().as_u16();
    if (200..300).contains(&status) {
        return Ok(response);
    }
    let body = read_limited(&mut response, BodyLimit::Problem).unwrap_or_default();
    let detail = match serde_json::from_slice::<Value>(&body) {
        Ok(problem) if problem.is_object() => {
            let code = problem["code"].as_str().unwrap_or("");
            let text = problem["detail"]
                .as_str()
                .or(problem["title"].as_str())
                .unwrap_or("");
            format!("{code} {text}").trim().to_string()
        }
        _ => String::from_utf8_lossy(&body).chars().take(300).collect(),
    };
    Err(CallError::Status { status, detail })
}

/// How much of an answer the agent reads, and what an operator can do about a larger one.
#[derive(Clone, Copy, Debug)]
enum BodyLimit {
    /// A snapshot: the operator's `grantforge.snapshot.max.bytes`.
    Snapshot(u64),
    /// Heartbeat, signing-key and access-event answers: a few hundred bytes from GrantForge.
    Json,
    /// An error answer, read for its `code` and `detail` only.
    Problem,
}

impl BodyLimit {
    fn bytes(self) -> u64 {
        match self {
            BodyLimit::Snapshot(bytes) => bytes,
            BodyLimit::Json => 1 << 20,
            BodyLimit::Problem => 64 * 1024,
        }
    }

    fn exceeded(self) -> CallError {
        let bytes = self.bytes();
        CallError::Invalid(match self {
            BodyLimit::Snapshot(_) => format!(
                "the snapshot is larger than {} ({bytes} bytes); raise that limit if the service is that large",
                settings::SNAPSHOT_MAX_BYTES.key
            ),
            BodyLimit::Json | BodyLimit::Problem => format!(
                "the body is larger than {bytes} bytes, the most the agent reads of an answer that is not a snapshot; check that {} names a GrantForge server",
                settings::SERVER_URL.key
            ),
        })
    }

    fn too_slow(self) -> CallError {
        CallError::Invalid(match self {
            BodyLimit::Snapshot(_) => format!(
                "the snapshot took longer than {} to arrive; raise it if the link to the server is this slow for a service this large",
                settings::SNAPSHOT_TIMEOUT.key
            ),
            BodyLimit::Json | BodyLimit::Problem => format!(
                "the body took longer than {} to arrive",
                settings::READ_TIMEOUT.key
            ),
        })
    }
}

fn read_limited(response: &mut Response<Body>, limit: BodyLimit) -> Result<Vec<u8>, CallError> {
    response
        .body_mut()
        .with_config()
        .limit(limit.bytes())
        .read_to_vec()
        .map_err(|e| match e {
            ureq::Error::BodyExceedsLimit(_) => limit.exceeded(),
            ureq::Error::Timeout(Timeout::RecvBody) => limit.too_slow(),
            ureq::Error::Timeout(Timeout::PerRead) => CallError::Invalid(format!(
                "the body stalled: nothing arrived for {}",
                settings::READ_TIMEOUT.key
            )),
            other => CallError::Invalid(format!("the body could not be read completely: {other}")),
        })
}

/// Mozilla's roots, plus the private CAs of `grantforge.ssl.ca.file` when given.
fn root_certs(ca_pem: Option<&[u8]>) -> Result<RootCerts, ConfigError> {
    let Some(pem) = ca_pem else {
        return Ok(RootCerts::WebPki);
    };
    let mut certs: Vec<Certificate<'static>> = webpki_root_certs::TLS_SERVER_ROOT_CERTS
        .iter()
        .map(|der| Certificate::from_der(der.as_ref()))
        .collect();
    let mut extra = 0;
    for item in ureq::tls::parse_pem(pem) {
        match item {
            Ok(PemItem::Certificate(cert)) => {
                certs.push(cert);
                extra += 1;
            }
            Ok(_) => {}
            Err(e) => {
                return Err(ConfigError::new(
                    settings::SSL_CA_FILE.key,
                    format!("is not a PEM file of certificates: {e}"),
                ))
            }
        }
    }
    if extra == 0 {
        return Err(ConfigError::new(
            settings::SSL_CA_FILE.key,
            "holds no PEM certificate; give the CA certificate(s) of the GrantForge server",
        ));
    }
    Ok(RootCerts::Specific(Arc::new(certs)))
}

/// Test equipment, not an API: makes the next calls of this process's clients of one server panic,
/// so tests can show that the agent's thread survives a panic in a round. Nothing is armed unless a
/// test arms it; a call then costs one uncontended lock.
#[doc(hidden)]
pub mod testing {
    use parking_lot::Mutex;

    /// The calls a panic can be injected into.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Call {
        Heartbeat,
        AccessEvents,
    }

    static ARMED: Mutex<Vec<(String, Call, u32)>> = Mutex::new(Vec::new());

    fn same_server(a: &str, b: &str) -> bool {
        a.trim_end_matches('/') == b.trim_end_matches('/')
    }

    /// The next `times` calls of `call` to the server at `server_url` panic (before any I/O).
    pub fn panic_in_next_calls(server_url: &str, call: Call, times: u32) {
        ARMED.lock().push((server_url.to_string(), call, times));
    }

    pub(super) fn maybe_panic(base: &str, call: Call) {
        let fire = {
            let mut armed = ARMED.lock();
            match armed
                .iter_mut()
                .find(|(url, c, left)| *c == call && *left > 0 && same_server(url, base))
            {
                Some(entry) => {
                    entry.2 -= 1;
                    true
                }
                None => false,
            }
        };
        if fire {
            panic!(
                "injected panic in the {call:?} call to {}",
                base.trim_end_matches('/')
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpListener;
    use std::path::PathBuf;

    use super::*;
    use crate::config::Token;

    /// A loopback server that answers one request with `head` and `body`; returns its base URL.
    fn answer_once(head: &'static str, body: Vec<u8>) -> String {
        answer_in_pieces(head, body, 1, Duration::ZERO)
    }

    /// As [`answer_once`], the body sent in `pieces` parts with `pause` before each.
    fn answer_in_pieces(
        head: &'static str,
        body: Vec<u8>,
        pieces: usize,
        pause: Duration,
    ) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream);
            let (mut line, mut length) = (String::new(), 0);
            while reader.read_line(&mut line).unwrap() > 2 {
                if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = value.trim().parse().unwrap();
                }
                line.clear();
            }
            // The whole request is read before answering: unread bytes would make the close a reset.
            std::io::copy(&mut (&mut reader).take(length), &mut std::io::sink()).unwrap();
            let mut stream = reader.into_inner();
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\n{head}Content-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.flush();
            for piece in body.chunks(body.len().div_ceil(pieces).max(1)) {
                std::thread::sleep(pause);
                if stream
                    .write_all(piece)
                    .and_then(|()| stream.flush())
                    .is_err()
                {
                    return;
                }
            }
        });
        url
    }

    fn client(url: String, max_body: u64) -> ServerClient {
        let timeout = Duration::from_secs(30);
        let timeouts = Timeouts {
            connect: timeout,
            read: timeout,
            snapshot: timeout,
        };
        client_with(url, max_body, timeouts)
    }

    fn client_with(url: String, max_body: u64, timeouts: Timeouts) -> ServerClient {
        let settings = ServerSettings {
            url,
            token: Token::for_tests("secret"),
            token_file: PathBuf::from("token"),
            instance: "broker-1".into(),
            host: "host".into(),
            cache_dir: PathBuf::from("cache"),
            signing_key: None,
            ca_pem: None,
            renamed_to: None,
            agent_version: "0.1.0".into(),
        };
        ServerClient::new(&settings, timeouts, max_body).unwrap()
    }

    const SIGNED: &str = "X-GrantForge-Signing-Key: k1\r\nX-GrantForge-Signature: c2ln\r\n";

    /// A snapshot of 64 KiB sent in ten parts 100 ms apart, to a client whose read timeout is
    /// 300 ms and snapshot timeout `snapshot`.
    fn trickled_snapshot(snapshot: Duration) -> Result<PolicyAnswer, CallError> {
        let url = answer_in_pieces(SIGNED, vec![b'{'; 64 << 10], 10, Duration::from_millis(100));
        let timeouts = Timeouts {
            connect: Duration::from_secs(5),
            read: Duration::from_millis(300),
            snapshot,
        };
        client_with(url, 64 << 20, timeouts).policies(None)
    }

    #[test]
    fn a_snapshot_may_take_longer_than_the_read_timeout_while_data_keeps_coming() {
        match trickled_snapshot(Duration::from_secs(30)) {
            Ok(PolicyAnswer::Download(download)) => assert_eq!(download.body.len(), 64 << 10),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_snapshot_slower_than_its_own_timeout_is_refused_naming_it() {
        let error = trickled_snapshot(Duration::from_millis(500))
            .unwrap_err()
            .to_string();
        assert!(error.contains(settings::SNAPSHOT_TIMEOUT.key), "{error}");
    }

    #[test]
    fn a_snapshot_that_stalls_longer_than_the_read_timeout_is_refused_naming_it() {
        let url = answer_in_pieces(SIGNED, vec![b'{'; 1024], 2, Duration::from_secs(2));
        let timeouts = Timeouts {
            connect: Duration::from_secs(5),
            read: Duration::from_millis(300),
            snapshot: Duration::from_secs(30),
        };
        let started = std::time::Instant::now();
        let error = client_with(url, 64 << 20, timeouts)
            .policies(None)
            .unwrap_err()
            .to_string();
        assert!(error.contains(settings::READ_TIMEOUT.key), "{error}");
        assert!(started.elapsed() < Duration::from_secs(2), "{error}");
    }

    #[test]
    fn a_json_answer_over_1_mib_is_refused_naming_the_server_url_not_the_snapshot_limit() {
        let mut body = b"{\"policyVersion\": 1".to_vec();
        body.resize((1 << 20) + 1, b' ');
        body.push(b'}');
        let url = answer_once("Content-Type: application/json\r\n", body);
        let error = client(url, 64 << 20)
            .heartbeat(&serde_json::json!({}))
            .unwrap_err()
            .to_string();
        assert!(error.contains("larger than 1048576 bytes"), "{error}");
        assert!(error.contains(settings::SERVER_URL.key), "{error}");
        assert!(!error.contains(settings::SNAPSHOT_MAX_BYTES.key), "{error}");
    }

    #[test]
    fn a_snapshot_over_its_limit_is_refused_naming_the_snapshot_limit() {
        let head = "X-GrantForge-Signing-Key: k1\r\nX-GrantForge-Signature: c2ln\r\n";
        let url = answer_once(head, vec![b' '; 2048]);
        let error = match client(url, 1024).policies(None) {
            Err(error) => error.to_string(),
            Ok(answer) => panic!("a 2 KiB snapshot passed a 1 KiB limit: {answer:?}"),
        };
        assert!(error.contains("(1024 bytes)"), "{error}");
        assert!(error.contains(settings::SNAPSHOT_MAX_BYTES.key), "{error}");
    }
}
