//! How to run the server ([`Config`]), and the checks of what it says.

use std::path::PathBuf;
use std::time::Duration;

use crate::tls::Tls;
use crate::Error;

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
    /// Snapshots are gzip-compressed for requests that accept it (default true); false serves them
    /// as they are, whatever the request accepts.
    pub gzip: bool,
    /// Serve HTTPS instead of HTTP (default none).
    pub tls: Option<Tls>,
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
            gzip: true,
            tls: None,
        }
    }
}

pub(crate) fn normalise_base_path(path: &str) -> Result<String, Error> {
    let trimmed = path.trim().trim_end_matches('/');
    if trimmed.is_empty() {
        return Ok(String::new());
    }
    if !trimmed.starts_with('/')
        || trimmed.contains(['?', '#', ' '])
        || trimmed.starts_with("/_test")
    {
        return Err(Error(format!(
            "base path {path:?} must start with / and not be /_test"
        )));
    }
    Ok(trimmed.to_string())
}
