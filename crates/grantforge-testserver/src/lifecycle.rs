//! Starting the server ([`Server::start`]): the state directory, the policies, the bound port, and
//! the threads that accept connections and watch the policies file.

mod running;

use std::collections::{BTreeMap, VecDeque};
use std::fs::{self, OpenOptions};
use std::net::{IpAddr, SocketAddr, TcpListener, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use ring::rand::SystemRandom;

pub use running::RunningServer;

use crate::config::normalise_base_path;
use crate::fault::Fault;
use crate::keys::SigningKey;
use crate::snapshot::{Definition, PolicySet};
use crate::state::{Shared, Signed, State};
use crate::store::{
    file_signature, load_events, load_or_create_key, load_or_create_token, read_persisted_state,
    write_atomic,
};
use crate::{files, time, tls, Config, Error};

/// Most connections handled at once; more are closed at once.
const MAX_CONNECTIONS: usize = 256;

/// The server's entry point.
#[derive(Debug)]
pub struct Server;

impl Server {
    /// Prepares the state directory (token, keys), loads the policies, binds, and starts serving on background
    /// threads. Writes `port` last.
    pub fn start(config: Config) -> Result<RunningServer, Error> {
        let dir = config.state_dir.clone();
        fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create state directory {}: {e}", dir.display()))?;
        let _ = fs::remove_file(dir.join(files::PORT));
        let rng = SystemRandom::new();
        let token = load_or_create_token(&dir, &rng)?;
        let key = load_or_create_key(&dir, &rng)?;
        write_atomic(
            &dir.join(files::PUBLIC_KEY),
            key.public_key_base64().as_bytes(),
            false,
        )?;
        let (other_key, _) = SigningKey::generate(&rng)?;
        let definition = match &config.definition_json {
            Some(json) => Definition::parse(json)?,
            None => Definition::kafka()?,
        };
        let (set, file_bytes) = match &config.policies_file {
            Some(path) => {
                let bytes = fs::read(path)
                    .map_err(|e| format!("cannot read policies file {}: {e}", path.display()))?;
                let set =
                    PolicySet::parse(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
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
        let tls = config.tls.as_ref().map(tls::server_config).transpose()?;
        let listener = bind(&config.listen)?;
        let addr = listener
            .local_addr()
            .map_err(|e| format!("cannot read the bound address: {e}"))?;

        let placeholder = Arc::new(Signed::new(Vec::new(), String::new(), String::new(), 0));
        let shared = Arc::new(Shared {
            service: config.service.clone(),
            refresh_seconds: config.refresh_seconds,
            base_path: base_path.clone(),
            retention_secs: i64::from(config.retention_days) * 86_400,
            quiet: config.quiet,
            gzip: config.gzip,
            tls: tls.clone(),
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
                replaced: Vec::new(),
                fault: Fault::none(),
                events,
                event_ids,
                duplicates: 0,
                heartbeats: BTreeMap::new(),
                applied: BTreeMap::new(),
                version_since: time::now_iso(),
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
        write_atomic(
            &dir.join(files::PORT),
            addr.port().to_string().as_bytes(),
            false,
        )?;

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
        let scheme = if tls.is_some() { "https" } else { "http" };
        let root_url = format!("{scheme}://{host}:{}", addr.port());
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

fn bind(listen: &str) -> Result<TcpListener, Error> {
    let addrs: Vec<SocketAddr> = listen
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve listen address {listen:?}: {e}"))?
        .collect();
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
        let spawned = thread::Builder::new()
            .name("testserver-conn".into())
            .spawn(move || {
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
