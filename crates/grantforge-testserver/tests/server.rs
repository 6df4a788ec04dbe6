//! End-to-end tests of the test server over real loopback HTTP (raw `TcpStream`, so that truncated bodies,
//! closed connections and exact headers are visible).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use grantforge_testserver::{
    etag_of, key_id_of_spki, Config, Endpoint, Fault, FaultMode, RunningServer, Server,
    ED25519_SPKI_PREFIX,
};
use ring::signature::{UnparsedPublicKey, ED25519};
use serde_json::{json, Value};

const E2E: &str = include_str!("../../../tests/fixtures/snapshots/e2e.json");

// ---------------------------------------------------------------------------------------------------------------
// A tiny HTTP client

#[derive(Debug)]
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    /// Whether the body has the announced Content-Length.
    complete: bool,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }
}

fn raw(addr: SocketAddr, request: &[u8]) -> Reply {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    stream.write_all(request).unwrap();
    let mut data = Vec::new();
    let _ = stream.read_to_end(&mut data);
    parse_reply(&data)
}

fn parse_reply(data: &[u8]) -> Reply {
    let Some(split) = data.windows(4).position(|w| w == b"\r\n\r\n") else {
        return Reply {
            status: 0,
            headers: Vec::new(),
            body: data.to_vec(),
            complete: false,
        };
    };
    let head = String::from_utf8_lossy(&data[..split]).to_string();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .map(|l| {
            let (n, v) = l.split_once(':').unwrap();
            (n.to_string(), v.trim().to_string())
        })
        .collect();
    let body = data[split + 4..].to_vec();
    let announced = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .map(|(_, v)| v.parse::<usize>().unwrap());
    let complete = announced.is_none_or(|n| n == body.len());
    Reply {
        status,
        headers,
        body,
        complete,
    }
}

fn call(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&[u8]>,
) -> Reply {
    let mut request = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (n, v) in headers {
        request.push_str(&format!("{n}: {v}\r\n"));
    }
    let body = body.unwrap_or(b"");
    if method == "POST" || !body.is_empty() {
        request.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    request.push_str("\r\n");
    let mut bytes = request.into_bytes();
    bytes.extend_from_slice(body);
    raw(addr, &bytes)
}

struct Client<'a> {
    server: &'a RunningServer,
    auth: String,
}

impl<'a> Client<'a> {
    fn new(server: &'a RunningServer) -> Self {
        Client {
            server,
            auth: format!("Bearer {}", server.token()),
        }
    }

    fn get(&self, path: &str, extra: &[(&str, &str)]) -> Reply {
        let mut headers = vec![
            ("Authorization", self.auth.as_str()),
            ("Accept", "application/json"),
        ];
        headers.extend_from_slice(extra);
        call(self.server.addr(), "GET", path, &headers, None)
    }

    fn post(&self, path: &str, body: &Value) -> Reply {
        let text = body.to_string();
        let headers = [
            ("Authorization", self.auth.as_str()),
            ("Accept", "application/json"),
            ("Content-Type", "application/json"),
        ];
        call(
            self.server.addr(),
            "POST",
            path,
            &headers,
            Some(text.as_bytes()),
        )
    }

    fn heartbeat(&self) -> Reply {
        self.post("/api/v1/agent/heartbeat", &json!({"instance":"broker-1","host":"h","agentVersion":"0.1.0","appliedPolicyVersion":null}))
    }

    fn policies(&self) -> Reply {
        self.get("/api/v1/agent/policies", &[])
    }

    fn events(&self, events: Vec<Value>) -> Reply {
        self.post(
            "/api/v1/agent/access-events",
            &json!({"instance":"broker-1","events":events}),
        )
    }

    fn test_post(&self, path: &str, body: &Value) -> Reply {
        let text = body.to_string();
        call(
            self.server.addr(),
            "POST",
            path,
            &[("Content-Type", "application/json")],
            Some(text.as_bytes()),
        )
    }

    fn test_get(&self, path: &str) -> Value {
        let reply = call(self.server.addr(), "GET", path, &[], None);
        assert_eq!(reply.status, 200, "{path}");
        reply.json()
    }

    fn fault(&self, fault: Value) {
        let reply = self.test_post("/_test/fault", &fault);
        assert_eq!(
            reply.status,
            200,
            "{}",
            String::from_utf8_lossy(&reply.body)
        );
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Fixtures

/// A fresh directory under Cargo's per-target temporary directory (emptied and reused by the next run); every
/// test uses its own name.
fn temp_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("grantforge-testserver")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The e2e fixture's policies, roles and groups as a policies file.
fn e2e_policies() -> Value {
    let snapshot: Value = serde_json::from_str(E2E).unwrap();
    json!({"policies": snapshot["policies"], "roles": snapshot["roles"], "groups": snapshot["groups"]})
}

fn start_with_file(name: &str, policies: &Value) -> (RunningServer, PathBuf) {
    let dir = temp_dir(name);
    let file = dir.join("policies.json");
    std::fs::write(&file, policies.to_string()).unwrap();
    let mut config = Config::new(dir.join("state"));
    config.policies_file = Some(file.clone());
    config.quiet = true;
    config.poll_interval = Duration::from_millis(50);
    (Server::start(config).unwrap(), file)
}

fn start(name: &str) -> RunningServer {
    start_with_file(name, &e2e_policies()).0
}

fn event(id: &str) -> Value {
    json!({"eventId": id, "occurredAt": "2030-01-01T00:00:00Z", "user": "alice", "clientIp": "10.1.2.3",
           "resource": "orders", "resourceType": "topic", "accessType": "read", "action": "FETCH",
           "outcome": "ALLOWED", "policyId": "1", "policyVersion": 1, "enforcer": "GRANTFORGE",
           "request": "FETCH v13 client consumer-1", "count": 3, "lastOccurredAt": "2030-01-01T00:00:05Z"})
}

fn verify(public_key_b64: &str, body: &[u8], signature_b64: &str) -> bool {
    let spki = STANDARD.decode(public_key_b64).unwrap();
    assert_eq!(&spki[..12], &ED25519_SPKI_PREFIX);
    let signature = STANDARD.decode(signature_b64).unwrap();
    UnparsedPublicKey::new(&ED25519, &spki[12..])
        .verify(body, &signature)
        .is_ok()
}

fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn assert_problem(reply: &Reply, status: u16, code: &str) -> Value {
    assert_eq!(
        reply.status,
        status,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    let problem = reply.json();
    assert_eq!(problem["status"], status);
    assert_eq!(problem["code"], code, "{problem}");
    assert!(
        problem["type"].is_string()
            && problem["title"].is_string()
            && problem["detail"].is_string(),
        "{problem}"
    );
    problem
}

// ---------------------------------------------------------------------------------------------------------------
// Authentication

#[test]
fn token_is_required() {
    let server = start("auth");
    let addr = server.addr();
    for path in [
        "/api/v1/agent/policies",
        "/api/v1/agent/signing-key",
        "/api/v1/agent/unknown",
    ] {
        let none = call(addr, "GET", path, &[("Accept", "application/json")], None);
        let problem = assert_problem(&none, 401, "GF-COMMON-401");
        assert_eq!(none.header("Content-Type"), Some("application/json"));
        assert_eq!(problem["instance"], path);
        assert!(none.header("X-GrantForge-Signature").is_none());
    }
    let wrong = format!("Bearer gfa_{}", "A".repeat(43));
    let lower = format!("bearer {}", server.token());
    let no_space = format!("Bearer{}", server.token());
    let basic = format!("Basic {}", server.token());
    for auth in [
        wrong.as_str(),
        lower.as_str(),
        no_space.as_str(),
        basic.as_str(),
        "Bearer ",
        server.token(),
    ] {
        let reply = call(
            addr,
            "GET",
            "/api/v1/agent/policies",
            &[("Authorization", auth)],
            None,
        );
        assert_problem(&reply, 401, "GF-COMMON-401");
        // Without an Accept header Spring answers application/problem+json.
        assert_eq!(
            reply.header("Content-Type"),
            Some("application/problem+json")
        );
    }
    let heartbeat = call(
        addr,
        "POST",
        "/api/v1/agent/heartbeat",
        &[("Content-Type", "application/json")],
        Some(b"{\"instance\":\"x\"}"),
    );
    assert_problem(&heartbeat, 401, "GF-COMMON-401");
    // The real filter strips what follows "Bearer ": surrounding whitespace is tolerated.
    let padded = format!("Bearer  {}\t", server.token());
    assert_eq!(
        call(
            addr,
            "GET",
            "/api/v1/agent/signing-key",
            &[("Authorization", padded.as_str())],
            None
        )
        .status,
        200
    );
    // The right token works; an unknown agent path with the right token is 404.
    let client = Client::new(&server);
    assert_eq!(client.get("/api/v1/agent/signing-key", &[]).status, 200);
    assert_problem(
        &client.get("/api/v1/agent/unknown", &[]),
        404,
        "GF-COMMON-404",
    );
    assert_eq!(server.request_count(Endpoint::Policies), 6 + 1);
    let state = client.test_get("/_test/state");
    assert_eq!(state["requests"]["policies"], 7);
}

// ---------------------------------------------------------------------------------------------------------------
// Heartbeat

#[test]
fn heartbeat_answers_and_records() {
    let server = start("heartbeat");
    let client = Client::new(&server);
    let body = json!({"instance":"broker-1:9092","host":"kafka-1","agentVersion":"0.1.0","appliedPolicyVersion":null,
                      "health":{"snapshotAgeSeconds":3,"queuedEvents":0,"spooledBytes":0,"droppedEvents":0,"lastError":null}});
    let reply = client.post("/api/v1/agent/heartbeat", &body);
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("Content-Type"), Some("application/json"));
    assert_eq!(
        String::from_utf8(reply.body.clone()).unwrap(),
        r#"{"policyVersion":1,"refreshSeconds":30}"#
    );
    client.post(
        "/api/v1/agent/heartbeat",
        &json!({"instance":"broker-1:9092","appliedPolicyVersion":1}),
    );
    let beats = server.heartbeats();
    assert_eq!(beats.len(), 1);
    assert_eq!(beats[0].count, 2);
    assert_eq!(beats[0].body["appliedPolicyVersion"], 1);
    let listed = client.test_get("/_test/heartbeats");
    assert_eq!(listed[0]["instance"], "broker-1:9092");
    // The health extension is kept.
    client.post("/api/v1/agent/heartbeat", &body);
    assert_eq!(
        client.test_get("/_test/heartbeats")[0]["body"]["health"]["snapshotAgeSeconds"],
        3
    );

    for bad in [
        json!({"instance":"has space"}),
        json!({"instance":""}),
        json!({}),
        json!({"instance":"é"}),
        json!({"instance":"x".repeat(129)}),
        json!({"instance":"a","appliedPolicyVersion":-1}),
    ] {
        let reply = client.post("/api/v1/agent/heartbeat", &bad);
        let problem = assert_problem(&reply, 400, "GF-COMMON-400");
        assert!(
            problem["errors"].as_array().is_some_and(|e| !e.is_empty()),
            "{problem}"
        );
    }
    assert_eq!(
        client
            .post(
                "/api/v1/agent/heartbeat",
                &json!({"instance":"x".repeat(128)})
            )
            .status,
        200
    );
    // Malformed JSON, wrong content type, wrong method.
    let auth = format!("Bearer {}", server.token());
    let malformed = call(
        server.addr(),
        "POST",
        "/api/v1/agent/heartbeat",
        &[
            ("Authorization", auth.as_str()),
            ("Content-Type", "application/json"),
        ],
        Some(b"{\"instance\":"),
    );
    assert_problem(&malformed, 400, "GF-COMMON-400");
    let text = call(
        server.addr(),
        "POST",
        "/api/v1/agent/heartbeat",
        &[
            ("Authorization", auth.as_str()),
            ("Content-Type", "text/plain"),
        ],
        Some(b"{\"instance\":\"a\"}"),
    );
    assert_problem(&text, 415, "GF-COMMON-415");
    let charset = call(
        server.addr(),
        "POST",
        "/api/v1/agent/heartbeat",
        &[
            ("Authorization", auth.as_str()),
            ("Content-Type", "application/json; charset=UTF-8"),
        ],
        Some(b"{\"instance\":\"a\"}"),
    );
    assert_eq!(charset.status, 200);
    let get = client.get("/api/v1/agent/heartbeat", &[]);
    assert_problem(&get, 405, "GF-COMMON-405");
    assert_eq!(get.header("Allow"), Some("POST"));
    assert_eq!(server.heartbeats().len(), 3); // broker-1:9092, the 128-character one, "a"
}

/// An instant as `Instant.toString()` writes it (`…:05Z`, `…:05.120Z`), with milliseconds always
/// written, so that instants order as strings.
fn sortable(instant: &str) -> String {
    let bare = instant.strip_suffix('Z').unwrap();
    match bare.split_once('.') {
        Some((seconds, fraction)) => format!("{seconds}.{fraction:0<3}Z"),
        None => format!("{bare}.000Z"),
    }
}

#[test]
fn instances_show_when_each_first_reported_each_applied_version() {
    let server = start("instances");
    let client = Client::new(&server);
    let beat = |instance: &str, applied: Value| {
        let reply = client.post(
            "/api/v1/agent/heartbeat",
            &json!({"instance": instance, "appliedPolicyVersion": applied}),
        );
        assert_eq!(reply.status, 200);
    };
    let installed_1 = client.test_get("/_test/state")["policyVersionSince"].clone();
    assert!(
        installed_1.as_str().is_some_and(|s| s.ends_with('Z')),
        "{installed_1}"
    );
    beat("controller-100", Value::Null);
    beat("broker-1", json!(1));
    let first_1 = server.instances()[0].applied[0].first_reported_at.clone();
    std::thread::sleep(Duration::from_millis(5));
    beat("broker-1", json!(1));
    let version_2 = server.set_policies_json(br#"{"policies":[]}"#).unwrap();
    assert_eq!(version_2, 2);
    let installed_2 = server.policy_version_since();
    assert_ne!(
        json!(installed_2),
        installed_1,
        "installing a version moves policyVersionSince"
    );
    assert_eq!(
        client.test_get("/_test/state")["policyVersionSince"],
        json!(installed_2)
    );
    std::thread::sleep(Duration::from_millis(5));
    beat("broker-1", json!(2));
    // A version the agent reports again, or an older one after a restart, keeps its first arrival.
    beat("broker-1", json!("1"));

    let listed = client.test_get("/_test/instances");
    let instances = listed.as_array().unwrap();
    assert_eq!(instances.len(), 2, "{listed}");
    let broker = &instances[0];
    assert_eq!(broker["instance"], "broker-1");
    assert_eq!(broker["heartbeats"], 4);
    assert_eq!(
        broker["appliedPolicyVersion"], 1,
        "the last heartbeat's version"
    );
    let applied = broker["applied"].as_array().unwrap();
    assert_eq!(applied.len(), 2, "{broker}");
    assert_eq!(applied[0]["policyVersion"], 1);
    assert_eq!(applied[0]["firstReportedAt"], json!(first_1));
    assert_eq!(applied[1]["policyVersion"], 2);
    let first_2 = applied[1]["firstReportedAt"].as_str().unwrap();
    assert!(
        sortable(first_2) >= sortable(&installed_2),
        "{first_2} < {installed_2}"
    );
    assert!(sortable(first_2) > sortable(&first_1));
    let controller = &instances[1];
    assert_eq!(controller["instance"], "controller-100");
    assert_eq!(controller["appliedPolicyVersion"], Value::Null);
    assert_eq!(controller["applied"], json!([]));
    assert_eq!(server.instances().len(), 2);
    assert_eq!(server.instances()[0].applied_policy_version, Some(1));

    // A refused heartbeat records nothing; a reset forgets the versions with the heartbeats.
    let refused = client.post(
        "/api/v1/agent/heartbeat",
        &json!({"instance": "broker-2", "appliedPolicyVersion": -1}),
    );
    assert_eq!(refused.status, 400);
    assert_eq!(server.instances().len(), 2);
    client.test_post("/_test/reset", &json!({}));
    assert_eq!(client.test_get("/_test/instances"), json!([]));
    beat("broker-1", json!(2));
    assert_eq!(server.instances()[0].applied.len(), 1);
    let post = client.test_post("/_test/instances", &json!({}));
    assert_eq!(post.status, 405);
}

// ---------------------------------------------------------------------------------------------------------------
// Policies, signing key, ETag

#[test]
fn policies_are_signed_and_cached_by_etag() {
    let server = start("policies");
    let client = Client::new(&server);
    let key = client.get("/api/v1/agent/signing-key", &[]);
    assert_eq!(key.status, 200);
    assert!(String::from_utf8_lossy(&key.body).starts_with(r#"{"keyId":""#));
    let key = key.json();
    assert_eq!(key["algorithm"], "Ed25519");
    let public_key = key["publicKey"].as_str().unwrap();
    let spki = STANDARD.decode(public_key).unwrap();
    assert_eq!(spki.len(), 44);
    assert_eq!(key["keyId"], key_id_of_spki(&spki));
    assert_eq!(public_key, server.public_key_base64());
    assert_eq!(
        std::fs::read_to_string(server.state_dir().join("signing-key.pub")).unwrap(),
        public_key
    );

    let reply = client.policies();
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("Content-Type"), Some("application/json"));
    let etag = reply.header("ETag").unwrap().to_string();
    assert_eq!(etag, etag_of(&reply.body));
    assert_eq!(etag.len(), 34);
    assert!(
        etag.starts_with('"')
            && etag.ends_with('"')
            && etag[1..33]
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    );
    assert_eq!(reply.header("X-GrantForge-Policy-Version"), Some("1"));
    assert_eq!(
        reply.header("X-GrantForge-Signing-Key"),
        key["keyId"].as_str()
    );
    let signature = reply.header("X-GrantForge-Signature").unwrap();
    assert!(verify(public_key, &reply.body, signature));
    // The exact bytes of the fixture (same content, same version): the serialisation is the server's.
    assert_eq!(
        String::from_utf8(reply.body.clone()).unwrap(),
        E2E.trim_end()
    );
    assert!(reply.body.starts_with(br#"{"format":1,"service":"kafka-demo","serviceType":"kafka","typeVersion":1,"serviceEnabled":true,"policyVersion":1,"definition":"#));

    // Same content, same bytes.
    let again = client.policies();
    assert_eq!(again.body, reply.body);
    assert_eq!(again.header("X-GrantForge-Signature"), Some(signature));

    // 304 on the same ETag: ETag and version, no body, no signature headers.
    let not_modified = client.get("/api/v1/agent/policies", &[("If-None-Match", &etag)]);
    assert_eq!(not_modified.status, 304);
    assert!(not_modified.body.is_empty());
    assert_eq!(not_modified.header("ETag"), Some(etag.as_str()));
    assert_eq!(
        not_modified.header("X-GrantForge-Policy-Version"),
        Some("1")
    );
    assert!(not_modified.header("X-GrantForge-Signature").is_none());
    assert!(not_modified.header("X-GrantForge-Signing-Key").is_none());
    // A weak validator, a list or another ETag never matches.
    for other in [
        format!("W/{etag}"),
        format!("{etag}, \"x\""),
        "\"0123\"".to_string(),
        "*".to_string(),
        etag[1..33].to_string(),
    ] {
        assert_eq!(
            client
                .get("/api/v1/agent/policies", &[("If-None-Match", &other)])
                .status,
            200,
            "{other}"
        );
    }
    let state = client.test_get("/_test/state");
    assert_eq!(state["etag"], etag.as_str());
    assert_eq!(state["keyId"], key["keyId"]);
    assert_eq!(state["policyVersion"], 1);
    assert_eq!(server.snapshot().body, reply.body);
}

#[test]
fn snapshots_are_gzipped_when_asked_and_signed_as_the_uncompressed_bytes() {
    let server = start("gzip");
    let client = Client::new(&server);
    let plain = client.policies();
    let zipped = client.get(
        "/api/v1/agent/policies",
        &[("Accept-Encoding", "br;q=0.9, gzip")],
    );
    assert_eq!(zipped.status, 200);
    assert_eq!(zipped.header("Content-Encoding"), Some("gzip"));
    assert!(plain.header("Content-Encoding").is_none());
    let mut unzipped = Vec::new();
    flate2::read::GzDecoder::new(&zipped.body[..])
        .read_to_end(&mut unzipped)
        .unwrap();
    assert_eq!(unzipped, plain.body);
    assert!(
        zipped.body.len() * 3 < plain.body.len(),
        "{}",
        zipped.body.len()
    );
    let signature = zipped.header("X-GrantForge-Signature").unwrap();
    assert!(verify(server.public_key_base64(), &unzipped, signature));
    assert_eq!(zipped.header("ETag"), Some(etag_of(&unzipped).as_str()));
    let refused = client.get("/api/v1/agent/policies", &[("Accept-Encoding", "gzip;q=0")]);
    assert!(refused.header("Content-Encoding").is_none());

    // The request log says what each answer cost on the wire.
    let log = client.test_get("/_test/requests");
    let sizes: Vec<(Option<&str>, u64)> = log
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["contentEncoding"].as_str(),
                r["responseBytes"].as_u64().unwrap(),
            )
        })
        .collect();
    let head = |reply: &Reply| head_bytes(reply);
    assert_eq!(
        sizes,
        [
            (None, head(&plain) + plain.body.len() as u64),
            (Some("gzip"), head(&zipped) + zipped.body.len() as u64),
            (None, head(&refused) + refused.body.len() as u64),
        ]
    );
}

/// The bytes of a reply's status line and headers as the server writes them.
fn head_bytes(reply: &Reply) -> u64 {
    let lines: usize = reply
        .headers
        .iter()
        .map(|(n, v)| n.len() + 2 + v.len() + 2)
        .sum();
    (format!("HTTP/1.1 {} OK\r\n", reply.status).len() + lines + 2) as u64
}

#[test]
fn policy_file_edits_bump_the_version() {
    let (server, file) = start_with_file("watch", &e2e_policies());
    let client = Client::new(&server);
    let first = client.policies();
    let etag1 = first.header("ETag").unwrap().to_string();

    let mut changed = e2e_policies();
    changed["policies"].as_array_mut().unwrap().pop();
    std::fs::write(&file, changed.to_string()).unwrap();
    wait_until("version 2", || server.policy_version() == 2);
    let second = client.policies();
    assert_eq!(second.header("X-GrantForge-Policy-Version"), Some("2"));
    assert_ne!(second.header("ETag").unwrap(), etag1);
    assert!(String::from_utf8_lossy(&second.body).contains(r#""policyVersion":2"#));
    assert!(verify(
        server.public_key_base64(),
        &second.body,
        second.header("X-GrantForge-Signature").unwrap()
    ));
    assert_eq!(client.heartbeat().json()["policyVersion"], 2);
    // The old ETag no longer gives 304.
    assert_eq!(
        client
            .get("/api/v1/agent/policies", &[("If-None-Match", &etag1)])
            .status,
        200
    );

    // A file that does not parse keeps the last good snapshot.
    std::fs::write(&file, "{\"policies\": [").unwrap();
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(server.policy_version(), 2);
    assert_eq!(client.policies().body, second.body);
    // Fixing it bumps again.
    std::fs::write(&file, e2e_policies().to_string()).unwrap();
    wait_until("version 3", || server.policy_version() == 3);

    // POST /_test/policies replaces the policies too.
    let reply = client.test_post(
        "/_test/policies",
        &json!({"service":"renamed","serviceEnabled":false,"policies":[]}),
    );
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["policyVersion"], 4);
    let snapshot: Value = client.policies().json();
    assert_eq!(snapshot["service"], "renamed");
    assert_eq!(snapshot["serviceEnabled"], false);
    assert_eq!(snapshot["policies"], json!([]));
    assert_eq!(snapshot["roles"], json!({}));
    assert_problem(
        &client.test_post("/_test/policies", &json!({"policies": "no"})),
        400,
        "GF-COMMON-400",
    );
    assert_eq!(server.policy_version(), 4);
}

#[test]
fn state_dir_is_reused_across_restarts() {
    let dir = temp_dir("restart");
    let mut config = Config::new(dir.join("state"));
    config.policies_json = Some(e2e_policies().to_string());
    config.quiet = true;
    let first = Server::start(config.clone()).unwrap();
    let (token, key, port) = (
        first.token().to_string(),
        first.public_key_base64().to_string(),
        first.port(),
    );
    assert!(token.starts_with("gfa_") && token.len() == 47);
    assert!(token[4..]
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
    assert_eq!(
        std::fs::read_to_string(dir.join("state/token")).unwrap(),
        token
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("state/port")).unwrap(),
        port.to_string()
    );
    let client = Client::new(&first);
    assert_eq!(client.events(vec![event("a")]).json()["accepted"], 1);
    first.set_policies_json(br#"{"policies":[]}"#).unwrap();
    first.stop();
    // Same content as the last one: the version stays; token, key and events survive.
    config.policies_json = Some(r#"{"policies":[]}"#.into());
    let second = Server::start(config.clone()).unwrap();
    assert_eq!(second.token(), token);
    assert_eq!(second.public_key_base64(), key);
    assert_eq!(second.policy_version(), 2);
    assert_eq!(second.events().len(), 1);
    assert_eq!(
        Client::new(&second).events(vec![event("a")]).json()["duplicates"],
        1
    );
    second.stop();
    // Other content: one more version, never back to 1.
    config.policies_json = Some(e2e_policies().to_string());
    let third = Server::start(config).unwrap();
    assert_eq!(third.policy_version(), 3);
}

// ---------------------------------------------------------------------------------------------------------------
// Access events

#[test]
fn access_events_are_recorded_once() {
    let server = start("events");
    let client = Client::new(&server);
    let batch = vec![event("e1"), event("e2"), event("e3")];
    let reply = client.events(batch.clone());
    assert_eq!(reply.status, 200);
    assert_eq!(
        String::from_utf8(reply.body.clone()).unwrap(),
        r#"{"accepted":3,"duplicates":0,"expired":0}"#
    );
    assert_eq!(
        client.events(batch).json(),
        json!({"accepted":0,"duplicates":3,"expired":0})
    );
    // Within a batch the first of an id wins; expired ones are counted apart.
    let mut old = event("old");
    old["occurredAt"] = json!("2001-01-01T00:00:00Z");
    let reply = client.events(vec![
        event("e4"),
        event("e4"),
        event("e1"),
        old,
        Value::Null,
    ]);
    assert_eq!(
        reply.json(),
        json!({"accepted":1,"duplicates":2,"expired":1})
    );
    let recorded = server.events();
    assert_eq!(recorded.len(), 4);
    assert_eq!(recorded[0], event("e1")); // as sent, extension fields included
    assert_eq!(
        client.test_get("/_test/events").as_array().unwrap().len(),
        4
    );
    // the duplicates answered are counted, so a test can see an agent resend what it had sent
    assert_eq!(client.test_get("/_test/state")["duplicates"], 5);
    let lines = std::fs::read_to_string(server.state_dir().join("events.jsonl")).unwrap();
    assert_eq!(lines.lines().count(), 4);
    assert_eq!(
        serde_json::from_str::<Value>(lines.lines().nth(3).unwrap()).unwrap()["eventId"],
        "e4"
    );
    // Empty and missing lists are fine.
    assert_eq!(client.events(vec![]).json()["accepted"], 0);
    assert_eq!(
        client
            .post("/api/v1/agent/access-events", &json!({"instance":"i"}))
            .status,
        200
    );
    // At the limits exactly: accepted.
    let mut edge = event(&"x".repeat(64));
    edge["user"] = json!("u".repeat(128));
    edge["clientIp"] = json!("1".repeat(45));
    edge["resource"] = json!("r".repeat(1000));
    edge["request"] = json!("q".repeat(5000));
    assert_eq!(client.events(vec![edge]).json()["accepted"], 1);
    let thousand: Vec<Value> = (0..1000).map(|i| event(&format!("bulk-{i}"))).collect();
    assert_eq!(client.events(thousand).json()["accepted"], 1000);
    assert_eq!(server.events().len(), 1005);
}

#[test]
fn one_invalid_event_refuses_the_batch() {
    let server = start("invalid-events");
    let client = Client::new(&server);
    // Bean Validation violations come back as field errors; what Jackson cannot read (an unknown
    // enum constant, an unparsable instant, a string for a long such as policyVersion) as a detail without `errors`.
    // Either way the answer names the field: each case says which it must be.
    const FIELD: bool = true;
    const UNREADABLE: bool = false;
    let cases: Vec<(&str, Value, bool)> = vec![
        ("user", json!("   "), FIELD),
        ("user", Value::Null, FIELD),
        ("eventId", json!("x".repeat(65)), FIELD),
        ("eventId", json!(""), FIELD),
        ("clientIp", json!("1".repeat(46)), FIELD),
        ("resource", json!("r".repeat(1001)), FIELD),
        ("resource", json!(" "), FIELD),
        ("resourceType", json!("t".repeat(65)), FIELD),
        ("accessType", json!(""), FIELD),
        ("accessType", json!("a".repeat(65)), FIELD),
        ("action", json!("a".repeat(129)), FIELD),
        ("outcome", Value::Null, FIELD),
        ("outcome", json!("MAYBE"), UNREADABLE),
        ("occurredAt", Value::Null, FIELD),
        ("occurredAt", json!("yesterday"), UNREADABLE),
        ("enforcer", json!("SOMEONE"), UNREADABLE),
        // The newest server's policyId is a String held to `\d{1,19}` (time-ordered ids): a
        // field error, and a blank or 20-digit one too.
        ("policyId", json!("eleven"), FIELD),
        ("policyId", json!(""), FIELD),
        ("policyId", json!("12345678901234567890"), FIELD),
        ("policyVersion", json!("seven"), UNREADABLE),
    ];
    for (field, value, kind) in cases {
        let mut bad = event("bad");
        bad[field] = value.clone();
        let reply = client.events(vec![event("good-1"), bad, event("good-2")]);
        let problem = assert_problem(&reply, 400, "GF-COMMON-400");
        let named = format!("events[1].{field}");
        if kind == FIELD {
            let errors = problem["errors"]
                .as_array()
                .unwrap_or_else(|| panic!("{field} = {value}: field errors expected: {problem}"));
            assert!(
                errors.iter().any(|e| e["field"] == named),
                "{field} = {value}: {problem}"
            );
        } else {
            assert!(
                problem.get("errors").is_none(),
                "{field} = {value}: {problem}"
            );
            assert!(
                problem["detail"].as_str().unwrap().contains(&named),
                "{field} = {value}: the detail names the field: {problem}"
            );
        }
    }
    // A 1001-character request is not a violation (the server cuts it).
    let mut long = event("long");
    long["request"] = json!("q".repeat(1001));
    let too_many: Vec<Value> = (0..1001).map(|i| event(&format!("m-{i}"))).collect();
    assert_problem(&client.events(too_many), 400, "GF-COMMON-400");
    assert_problem(
        &client.post(
            "/api/v1/agent/access-events",
            &json!({"instance":" ","events":[]}),
        ),
        400,
        "GF-COMMON-400",
    );
    assert_problem(
        &client.post(
            "/api/v1/agent/access-events",
            &json!({"instance":"i","events":{}}),
        ),
        400,
        "GF-COMMON-400",
    );
    assert!(server.events().is_empty());
    assert_eq!(
        std::fs::read_to_string(server.state_dir().join("events.jsonl")).unwrap(),
        ""
    );
    assert_eq!(client.events(vec![long]).json()["accepted"], 1);
}

// ---------------------------------------------------------------------------------------------------------------
// Faults

#[test]
fn fault_down_slow_status() {
    let server = start("faults-basic");
    let client = Client::new(&server);

    client.fault(json!({"mode":"down"}));
    let reply = client.heartbeat();
    assert_eq!(reply.status, 0, "no answer at all");
    assert!(reply.body.is_empty());
    assert_eq!(client.policies().status, 0);
    // Unauthenticated requests get no answer either: the server is down.
    assert_eq!(
        call(server.addr(), "GET", "/api/v1/agent/policies", &[], None).status,
        0
    );
    // /_test/ keeps working.
    assert_eq!(client.test_get("/_test/fault")["mode"], "down");

    client.fault(json!({"mode":"slow","delayMs":400}));
    let started = Instant::now();
    assert_eq!(client.heartbeat().status, 200);
    assert!(started.elapsed() >= Duration::from_millis(400));

    for (status, code) in [
        (500, "GF-COMMON-500"),
        (503, "GF-COMMON-500"),
        (401, "GF-COMMON-401"),
        (404, "GF-COMMON-404"),
        (409, "GF-SERVICE-002"),
        (400, "GF-COMMON-400"),
    ] {
        client.fault(json!({"mode":"status","status":status}));
        for reply in [
            client.heartbeat(),
            client.policies(),
            client.get("/api/v1/agent/signing-key", &[]),
            client.events(vec![event("s")]),
        ] {
            let problem = assert_problem(&reply, status, code);
            if status >= 500 {
                assert_eq!(
                    problem["detail"],
                    "An unexpected error occurred. Quote the request ID when reporting it."
                );
            }
        }
    }
    assert!(server.events().is_empty());

    // Restricted to one endpoint, limited in count.
    client.fault(json!({"mode":"status","status":500,"endpoints":["policies"],"times":2}));
    assert_eq!(client.heartbeat().status, 200);
    assert_eq!(client.policies().status, 500);
    assert_eq!(client.policies().status, 500);
    assert_eq!(client.policies().status, 200);
    assert_eq!(server.fault().mode, FaultMode::None);

    client.fault(json!({"mode":"none"}));
    assert_eq!(client.heartbeat().status, 200);
    // Bad fault requests.
    for bad in [
        json!({"mode":"status"}),
        json!({"mode":"bogus"}),
        json!({"mode":"down","endpoints":["nope"]}),
        json!({"mode":"down","x":1}),
    ] {
        assert_problem(
            &client.test_post("/_test/fault", &bad),
            400,
            "GF-COMMON-400",
        );
    }
    let records = client.test_get("/_test/requests");
    assert!(records
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["fault"] == "down" && r["status"].is_null()));
    assert!(records
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["headers"].get("authorization").is_none()));
}

#[test]
fn fault_signatures_and_keys() {
    let server = start("faults-keys");
    let client = Client::new(&server);
    let normal = client.policies();

    client.fault(json!({"mode":"wrong-signature"}));
    let reply = client.policies();
    assert_eq!(reply.status, 200);
    assert_eq!(reply.body, normal.body);
    assert_eq!(
        reply.header("X-GrantForge-Signing-Key"),
        Some(server.key_id())
    );
    let signature = reply.header("X-GrantForge-Signature").unwrap();
    assert_eq!(STANDARD.decode(signature).unwrap().len(), 64);
    assert!(!verify(server.public_key_base64(), &reply.body, signature));
    assert_eq!(client.heartbeat().status, 200, "other endpoints unaffected");

    client.fault(json!({"mode":"other-key"}));
    let reply = client.policies();
    assert_eq!(
        reply.header("X-GrantForge-Signing-Key"),
        Some(server.other_key_id())
    );
    assert_ne!(server.other_key_id(), server.key_id());
    let signature = reply.header("X-GrantForge-Signature").unwrap();
    assert!(!verify(server.public_key_base64(), &reply.body, signature));
    assert!(verify(
        server.other_public_key_base64(),
        &reply.body,
        signature
    ));
    assert_eq!(
        client.get("/api/v1/agent/signing-key", &[]).json()["keyId"],
        server.key_id()
    );

    client.fault(json!({"mode":"other-key","rotateKey":true,"endpoints":["policies"]}));
    let key = client.get("/api/v1/agent/signing-key", &[]).json();
    assert_eq!(key["keyId"], server.other_key_id());
    assert_eq!(key["publicKey"], server.other_public_key_base64());
    let reply = client.policies();
    assert!(verify(
        key["publicKey"].as_str().unwrap(),
        &reply.body,
        reply.header("X-GrantForge-Signature").unwrap()
    ));
    assert_eq!(
        client.test_get("/_test/state")["otherKeyId"],
        server.other_key_id()
    );
}

#[test]
fn fault_snapshot_contents() {
    let server = start("faults-content");
    let client = Client::new(&server);
    server
        .set_policies_json(e2e_policies().to_string().as_bytes())
        .unwrap();
    server
        .set_policies_json(e2e_policies().to_string().as_bytes())
        .unwrap();
    assert_eq!(server.policy_version(), 3);
    let check_signed = |reply: &Reply| {
        assert_eq!(reply.status, 200);
        assert_eq!(reply.header("ETag").unwrap(), etag_of(&reply.body));
        assert!(verify(
            server.public_key_base64(),
            &reply.body,
            reply.header("X-GrantForge-Signature").unwrap()
        ));
        reply.json()
    };

    client.fault(json!({"mode":"old-version"}));
    let reply = client.policies();
    assert_eq!(reply.header("X-GrantForge-Policy-Version"), Some("2"));
    assert_eq!(check_signed(&reply)["policyVersion"], 2);
    assert_eq!(
        client.heartbeat().json()["policyVersion"],
        3,
        "the heartbeat still tells agents to download"
    );
    client.fault(json!({"mode":"old-version","policyVersion":1,"endpoints":["policies"]}));
    assert_eq!(check_signed(&client.policies())["policyVersion"], 1);
    assert_eq!(client.heartbeat().json()["policyVersion"], 3);
    client.fault(json!({"mode":"old-version","endpoints":["policies","heartbeat"]}));
    assert_eq!(client.heartbeat().json()["policyVersion"], 2);
    assert_eq!(check_signed(&client.policies())["policyVersion"], 2);

    client.fault(json!({"mode":"other-service"}));
    let snapshot = check_signed(&client.policies());
    assert_eq!(snapshot["service"], "kafka-demo-other");
    assert_eq!(snapshot["serviceType"], "kafka");
    client.fault(json!({"mode":"other-service","otherService":"payments"}));
    assert_eq!(check_signed(&client.policies())["service"], "payments");

    client.fault(json!({"mode":"other-type"}));
    let snapshot = check_signed(&client.policies());
    assert_eq!(snapshot["serviceType"], "hive");
    assert_eq!(snapshot["service"], "kafka-demo");
    assert_eq!(snapshot["policyVersion"], 3);

    client.fault(json!({"mode":"none"}));
    assert_eq!(check_signed(&client.policies())["policyVersion"], 3);
}

#[test]
fn fault_truncated_huge_and_refused_events() {
    let server = start("faults-bodies");
    let client = Client::new(&server);

    client.fault(json!({"mode":"truncated"}));
    let reply = client.policies();
    assert_eq!(reply.status, 200);
    assert!(!reply.complete);
    let announced: usize = reply.header("Content-Length").unwrap().parse().unwrap();
    assert_eq!(reply.body.len(), announced / 2);
    assert!(reply.header("X-GrantForge-Signature").is_some());
    let beat = client.heartbeat();
    assert!(!beat.complete);

    client.fault(json!({"mode":"huge"}));
    let reply = client.policies();
    assert_eq!(reply.status, 200);
    assert!(reply.complete);
    assert_eq!(reply.body.len(), 64 * 1024 * 1024 + 1);
    assert_eq!(reply.header("Content-Length"), Some("67108865"));
    assert_eq!(reply.header("ETag").unwrap(), etag_of(&reply.body));
    assert!(verify(
        server.public_key_base64(),
        &reply.body,
        reply.header("X-GrantForge-Signature").unwrap()
    ));
    let parsed: Value = serde_json::from_slice(&reply.body).unwrap();
    assert_eq!(parsed["service"], "kafka-demo");
    drop(reply);
    client.fault(json!({"mode":"huge","hugeBytes":100000}));
    assert_eq!(client.policies().body.len(), 100_000);

    client.fault(json!({"mode":"fail-events-400"}));
    assert_eq!(client.heartbeat().status, 200);
    assert_problem(&client.events(vec![event("refused")]), 400, "GF-COMMON-400");
    assert!(server.events().is_empty());
    server.set_fault(Fault::none()).unwrap();
    assert_eq!(client.events(vec![event("refused")]).json()["accepted"], 1);
    // With `resource`: only a batch holding an event on it is refused, naming that event; the
    // request log says the fault was served only then.
    client.fault(json!({"mode":"fail-events-400","resource":"never"}));
    let mut never = event("never");
    never["resource"] = json!("never");
    let problem = assert_problem(
        &client.events(vec![event("taken-1"), never]),
        400,
        "GF-COMMON-400",
    );
    assert_eq!(
        problem["errors"][0]["field"], "events[1].resource",
        "{problem}"
    );
    assert_eq!(client.events(vec![event("taken-1")]).json()["accepted"], 1);
    let logged: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.endpoint.as_deref() == Some("access-events"))
        .map(|r| (r.status, r.fault))
        .collect();
    assert_eq!(
        logged[logged.len() - 2..],
        [
            (Some(400), Some(FaultMode::FailEvents400)),
            (Some(200), None)
        ]
    );
    server.set_fault(Fault::none()).unwrap();

    // The lib API sets faults too.
    server
        .set_fault(Fault::status(404).on(&[Endpoint::Heartbeat]))
        .unwrap();
    assert_problem(&client.heartbeat(), 404, "GF-COMMON-404");
    assert!(server.set_fault(Fault::status(200)).is_err());
    client.test_post("/_test/reset", &json!({}));
    assert!(server.events().is_empty());
    assert_eq!(server.fault(), Fault::none());
    assert_eq!(server.request_count(Endpoint::Heartbeat), 0);
}

// ---------------------------------------------------------------------------------------------------------------
// Robustness

#[test]
fn bad_requests_get_answers() {
    let server = start("robust");
    let addr = server.addr();
    assert_eq!(raw(addr, b"garbage\r\n\r\n").status, 400);
    assert_eq!(
        raw(addr, b"GET /x HTTP/1.1\r\nbad header\r\n\r\n").status,
        400
    );
    assert_eq!(
        raw(addr, b"GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n").status,
        400
    );
    let too_large = raw(
        addr,
        b"POST /api/v1/agent/heartbeat HTTP/1.1\r\nContent-Length: 999999999999\r\n\r\n",
    );
    assert_eq!(too_large.status, 413);
    assert_eq!(call(addr, "GET", "/", &[], None).status, 404);
    assert_eq!(call(addr, "GET", "/_test/nothing", &[], None).status, 404);
    assert_eq!(call(addr, "DELETE", "/_test/events", &[], None).status, 405);
    // A chunked body is read.
    let auth = format!("Bearer {}", server.token());
    let request = format!(
        "POST /api/v1/agent/heartbeat HTTP/1.1\r\nAuthorization: {auth}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{{\"ins\r\n10\r\ntance\":\"chunky\"}}\r\n0\r\n\r\n"
    );
    assert_eq!(raw(addr, request.as_bytes()).status, 200);
    // Binary junk and deep nesting as JSON bodies: 400, no panic.
    let client = Client::new(&server);
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    for body in [
        &b"\xff\xfe\x00"[..],
        deep.as_bytes(),
        b"null",
        b"[]",
        b"\"x\"",
    ] {
        let reply = call(
            addr,
            "POST",
            "/api/v1/agent/access-events",
            &[
                ("Authorization", auth.as_str()),
                ("Content-Type", "application/json"),
            ],
            Some(body),
        );
        assert_eq!(reply.status, 400);
    }
    // A client that connects and goes away does not hurt.
    drop(TcpStream::connect(addr).unwrap());
    let mut half = TcpStream::connect(addr).unwrap();
    half.write_all(b"POST /api/v1/agent/heartbeat HTTP/1.1\r\nContent-Length: 100\r\n\r\n{")
        .unwrap();
    drop(half);
    assert_eq!(client.heartbeat().status, 200);
}

#[test]
fn concurrent_agents() {
    let server = start("concurrent");
    std::thread::scope(|scope| {
        for t in 0..8 {
            let server = &server;
            scope.spawn(move || {
                let client = Client::new(server);
                for i in 0..10 {
                    assert_eq!(
                        client
                            .post(
                                "/api/v1/agent/heartbeat",
                                &json!({"instance": format!("b-{t}")})
                            )
                            .status,
                        200
                    );
                    assert_eq!(client.policies().status, 200);
                    let reply = client.events(vec![event(&format!("{t}-{i}")), event("shared")]);
                    assert_eq!(reply.status, 200);
                }
            });
        }
    });
    assert_eq!(server.events().len(), 81);
    assert_eq!(server.heartbeats().len(), 8);
    assert_eq!(server.request_count(Endpoint::Policies), 80);
}

#[test]
fn base_path_prefixes_the_agent_api() {
    let dir = temp_dir("prefix");
    let mut config = Config::new(dir.join("state"));
    config.base_path = "/grantforge/".into();
    config.quiet = true;
    let server = Server::start(config).unwrap();
    assert!(server.base_url().ends_with("/grantforge"));
    let client = Client::new(&server);
    assert_eq!(
        client
            .get("/grantforge/api/v1/agent/signing-key", &[])
            .status,
        200
    );
    assert_eq!(client.get("/api/v1/agent/signing-key", &[]).status, 404);
    let snapshot = client.get("/grantforge/api/v1/agent/policies", &[]).json();
    assert_eq!(snapshot["policies"], json!([]));
    assert_eq!(client.test_get("/_test/state")["policyVersion"], 1);
}

// ---------------------------------------------------------------------------------------------------------------
// The binary

fn wait_for_file(path: &Path) -> String {
    wait_until(&path.display().to_string(), || path.exists());
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn binary_prints_the_url_and_writes_the_state_dir() {
    let exe = env!("CARGO_BIN_EXE_grantforge-testserver");
    let help = std::process::Command::new(exe)
        .arg("--help")
        .output()
        .unwrap();
    assert!(help.status.success());
    let text = String::from_utf8(help.stdout).unwrap();
    assert!(
        text.contains("FOR TESTS AND DEMOS ONLY")
            && text.contains("/_test/fault")
            && text.contains("fail-events-400")
    );
    assert_eq!(
        std::process::Command::new(exe)
            .arg("--bogus")
            .output()
            .unwrap()
            .status
            .code(),
        Some(2)
    );

    let dir = temp_dir("binary");
    let policies = dir.join("policies.json");
    std::fs::write(&policies, e2e_policies().to_string()).unwrap();
    let state = dir.join("state");
    let mut child = std::process::Command::new(exe)
        .args([
            "--policies",
            policies.to_str().unwrap(),
            "--state-dir",
            state.to_str().unwrap(),
            "--refresh-seconds",
            "7",
            "--quiet",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while stdout.read(&mut byte).unwrap() == 1 && byte[0] != b'\n' {
        line.push(byte[0]);
    }
    let line = String::from_utf8(line).unwrap();
    let port = wait_for_file(&state.join("port"));
    assert_eq!(
        line,
        format!("grantforge-testserver listening on http://127.0.0.1:{port}")
    );
    let token = wait_for_file(&state.join("token"));
    let public_key = wait_for_file(&state.join("signing-key.pub"));
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let auth = format!("Bearer {token}");
    let key = call(
        addr,
        "GET",
        "/api/v1/agent/signing-key",
        &[("Authorization", auth.as_str())],
        None,
    )
    .json();
    assert_eq!(key["publicKey"], public_key);
    let beat = call(
        addr,
        "POST",
        "/api/v1/agent/heartbeat",
        &[
            ("Authorization", auth.as_str()),
            ("Content-Type", "application/json"),
        ],
        Some(b"{\"instance\":\"cli\"}"),
    );
    assert_eq!(beat.json(), json!({"policyVersion":1,"refreshSeconds":7}));
    // Editing the file bumps the version.
    std::fs::write(&policies, json!({"policies":[]}).to_string()).unwrap();
    wait_until("the binary to reload", || {
        call(addr, "GET", "/_test/state", &[], None).json()["policyVersion"] == 2
    });
    let _ = child.kill();
    let _ = child.wait();
}
