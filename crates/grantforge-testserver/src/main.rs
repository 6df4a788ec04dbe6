//! `grantforge-testserver`: the command-line wrapper around [`grantforge_testserver::Server`].
//! Test and demo equipment only; see `--help`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use grantforge_testserver::{Config, Presented, Server, Tls};

const HELP: &str = "\
grantforge-testserver - a GrantForge agent-API server FOR TESTS AND DEMOS ONLY

It answers GrantForge's agent protocol exactly as the real GrantForge server does (same paths,
Bearer token check, validation, status codes, snapshot format 1 bytes, ETag, Ed25519 signature),
for one `kafka` service whose policies come from a JSON file. It is NOT a GrantForge server:
no console, no database, one service, one token. Never use it to protect anything.

USAGE:
    grantforge-testserver --policies FILE --state-dir DIR [OPTIONS]

OPTIONS:
    --policies FILE        Policies file, watched every 200 ms; every change that parses bumps the
                           policy version, a file that does not parse keeps the last good one:
                           {\"service\"?: NAME, \"serviceEnabled\"?: true, \"policies\": [...],
                            \"roles\"?: {code: [user]}, \"groups\"?: {code: [user]}}
                           Policies as in snapshot format 1 (a whole snapshot file also works).
    --state-dir DIR        Created if needed. Holds token (gfa_...), signing-key.pkcs8 (private),
                           signing-key.pub (Base64 SPKI, as GET /signing-key gives it), port,
                           events.jsonl (accepted access events), state.json (policy version).
                           Token and key are reused when present.
    --listen ADDR          Address to bind [default: 127.0.0.1:0, a free port]
    --service NAME         Service name, unless the policies file names one [default: kafka-demo]
    --refresh-seconds N    refreshSeconds of heartbeat answers [default: 30]
    --base-path PATH       Serve the agent API below PATH (e.g. /grantforge) [default: none]
    --definition FILE      Service type definition to serve instead of the built-in `kafka` one
    --retention-days N     Access events older than this count as expired [default: 90]
    --quiet                No request log on stderr
    --no-gzip              Serve snapshots uncompressed even to requests that accept gzip
    --tls-dir DIR          Serve HTTPS: DIR holds a test CA made on first use (ca.pem, the file an
                           agent trusts; ca-key.pem), which signs the server's certificate at start
    --tls-certificate WHICH  With --tls-dir: valid (localhost and 127.0.0.1), expired, or
                           other-host (grantforge.example.com) [default: valid]
    -h, --help             This text
    -V, --version          The version

On start it prints one line to stdout and nothing else afterwards:
    grantforge-testserver listening on http://127.0.0.1:PORT   (https:// with --tls-dir)
(the request log goes to stderr). DIR/port is written once the server accepts connections.

AGENT API (Authorization: Bearer <token> required; RFC 9457 problem JSON on errors):
    POST /api/v1/agent/heartbeat      -> {\"policyVersion\", \"refreshSeconds\"}
    GET  /api/v1/agent/policies       -> signed snapshot; 304 when If-None-Match equals the ETag
    GET  /api/v1/agent/signing-key    -> {\"keyId\", \"algorithm\": \"Ed25519\", \"publicKey\"}
    POST /api/v1/agent/access-events  -> {\"accepted\", \"duplicates\", \"expired\"}

TEST CONTROL (an extension of this test server only; no token needed):
    POST /_test/fault      {\"mode\": MODE, ...}; {\"mode\": \"none\"} clears it. Modes:
        down             every endpoint: close the connection without answering
        slow             every endpoint: sleep delayMs (default 1000) first
        status           every endpoint: answer status (400-599) with problem JSON
                         (401 GF-COMMON-401, 404 GF-COMMON-404, 409 GF-SERVICE-002, 500 ...)
        truncated        every endpoint: full Content-Length, half the body, then close
        wrong-signature  policies: valid Base64 signature over other bytes
        other-key        policies: signed by a second key, header names its key id;
                         with \"rotateKey\": true /signing-key serves that key too
        old-version      policies: version policyVersion (default current-1), the heartbeat
                         still reports the current one (unless endpoints names heartbeat)
        other-service    policies: snapshot of service otherService (default NAME-other)
        other-type       policies: snapshot with serviceType serviceType (default hive)
        huge             policies: signed body of hugeBytes (default 64 MiB + 1) bytes
        fail-events-400  access-events: 400, nothing recorded (with resource: only batches
                         holding an event on that resource)
        refresh-seconds  heartbeat: refreshSeconds = refreshSeconds (default 2^63-1)
        stale-not-modified  policies: 304 to any request with If-None-Match
        wrong-etag       policies: the current snapshot under an ETag that is not the body's
      Options: \"endpoints\": [\"heartbeat\"|\"policies\"|\"signing-key\"|\"access-events\"]
               restricts the fault; \"times\": N applies it to N requests, then clears it.
    GET  /_test/fault      the current fault
    POST /_test/policies   replace the policies (policies-file JSON), bumping the version
    GET  /_test/state      {service, policyVersion, etag, keyId, otherKeyId, fault,
                            requests: {endpoint: count}, events, heartbeats}
    GET  /_test/events     recorded access events (as sent), a JSON array
    GET  /_test/heartbeats last heartbeat per instance (with extra fields such as health)
    GET  /_test/requests   the last 1000 agent API requests (headers without Authorization)
    POST /_test/reset      forget events, heartbeats and counts; clear the fault

EXAMPLE:
    grantforge-testserver --policies tests/fixtures/snapshots/e2e.json --state-dir /tmp/gf
    curl -s -H \"Authorization: Bearer $(cat /tmp/gf/token)\" \\
         http://127.0.0.1:$(cat /tmp/gf/port)/api/v1/agent/policies
    curl -s -d '{\"mode\":\"status\",\"status\":503}' http://127.0.0.1:$(cat /tmp/gf/port)/_test/fault
";

fn usage_error(message: &str) -> ExitCode {
    eprintln!("grantforge-testserver: {message}\nTry --help.");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut policies: Option<PathBuf> = None;
    let mut state_dir: Option<PathBuf> = None;
    let mut config = Config::new("");
    let mut tls_dir: Option<PathBuf> = None;
    let mut presents = Presented::Valid;
    while let Some(arg) = args.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        let takes_value = matches!(
            name.as_str(),
            "--policies"
                | "--state-dir"
                | "--listen"
                | "--service"
                | "--refresh-seconds"
                | "--base-path"
                | "--definition"
                | "--retention-days"
                | "--tls-dir"
                | "--tls-certificate"
        );
        let value = if takes_value {
            match inline.or_else(|| args.next()) {
                Some(v) => v,
                None => return usage_error(&format!("{name} needs a value")),
            }
        } else if inline.is_some() {
            return usage_error(&format!("{name} takes no value"));
        } else {
            String::new()
        };
        match name.as_str() {
            "-h" | "--help" => {
                print!("{HELP}");
                return ExitCode::SUCCESS;
            }
            "-V" | "--version" => {
                println!(
                    "grantforge-testserver {} (test and demo equipment)",
                    env!("CARGO_PKG_VERSION")
                );
                return ExitCode::SUCCESS;
            }
            "--quiet" => config.quiet = true,
            "--no-gzip" => config.gzip = false,
            "--policies" => policies = Some(PathBuf::from(value)),
            "--state-dir" => state_dir = Some(PathBuf::from(value)),
            "--listen" => config.listen = value,
            "--service" => {
                if value.is_empty() {
                    return usage_error("--service must not be empty");
                }
                config.service = value;
            }
            "--refresh-seconds" => match value.parse::<i64>() {
                Ok(n) if n >= 0 => config.refresh_seconds = n,
                _ => return usage_error("--refresh-seconds needs a number of seconds"),
            },
            "--retention-days" => match value.parse::<u32>() {
                Ok(n) if n > 0 => config.retention_days = n,
                _ => return usage_error("--retention-days needs a positive number of days"),
            },
            "--base-path" => config.base_path = value,
            "--tls-dir" => tls_dir = Some(PathBuf::from(value)),
            "--tls-certificate" => match Presented::parse(&value) {
                Some(which) => presents = which,
                None => {
                    return usage_error("--tls-certificate is valid, expired or other-host");
                }
            },
            "--definition" => match std::fs::read_to_string(&value) {
                Ok(text) => config.definition_json = Some(text),
                Err(e) => return usage_error(&format!("cannot read --definition {value}: {e}")),
            },
            other => return usage_error(&format!("unknown argument {other}")),
        }
    }
    let Some(policies) = policies else {
        return usage_error("--policies FILE is required");
    };
    let Some(state_dir) = state_dir else {
        return usage_error("--state-dir DIR is required");
    };
    config.tls = tls_dir.map(|dir| Tls { dir, presents });
    config.policies_file = Some(policies);
    config.state_dir = state_dir;
    config.poll_interval = Duration::from_millis(200);
    let quiet = config.quiet;
    let mut server = match Server::start(config) {
        Ok(server) => server,
        Err(e) => {
            eprintln!("grantforge-testserver: {e}");
            return ExitCode::from(1);
        }
    };
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "grantforge-testserver listening on {}",
        server.base_url()
    );
    let _ = out.flush();
    drop(out);
    if !quiet {
        eprintln!(
            "grantforge-testserver: TEST SERVER ONLY; service {} (key id {}), state in {}",
            server.service(),
            server.key_id(),
            server.state_dir().display()
        );
    }
    server.wait();
    ExitCode::SUCCESS
}
