//! One agent per policy source and JVM.
//!
//! A node that is broker and controller at once creates two authorizers; they must share one agent
//! (one snapshot, one watcher, later one heartbeat, cache directory and audit shipper). Closing one
//! leaves the other working; the agent stops when the last one closes, in whatever order.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::agent::Agent;
use crate::config::{AgentConfig, ConfigError, PolicySource};

struct Entry {
    agent: Arc<Agent>,
    opens: usize,
}

static AGENTS: Mutex<Option<HashMap<PathBuf, Entry>>> = Mutex::new(None);

/// Returns the agent for this configuration, starting it on first use.
pub fn open(config: AgentConfig) -> Result<Arc<Agent>, ConfigError> {
    let identity = identity(&config);
    let mut agents = AGENTS.lock();
    let agents = agents.get_or_insert_with(HashMap::new);
    if let Some(entry) = agents.get_mut(&identity) {
        if *entry.agent.config() != config {
            return Err(ConfigError::new(
                source_key(&config),
                format!(
                    "another authorizer in this JVM already uses {} with different grantforge.* or super.users settings; give the broker and controller the same settings",
                    identity.display()
                ),
            ));
        }
        entry.opens += 1;
        return Ok(entry.agent.clone());
    }
    let agent = Agent::start(config)?;
    agents.insert(identity, Entry { agent: agent.clone(), opens: 1 });
    Ok(agent)
}

/// Gives back one `open`; the last one stops the agent.
pub fn release(agent: &Arc<Agent>) {
    let identity = identity(agent.config());
    let mut guard = AGENTS.lock();
    let Some(agents) = guard.as_mut() else { return };
    let Some(entry) = agents.get_mut(&identity) else { return };
    if !Arc::ptr_eq(&entry.agent, agent) {
        return;
    }
    entry.opens -= 1;
    if entry.opens == 0 {
        let entry = agents.remove(&identity).expect("entry present");
        drop(guard);
        entry.agent.shutdown();
    }
}

fn identity(config: &AgentConfig) -> PathBuf {
    match &config.source {
        PolicySource::File(path, _) => path.canonicalize().unwrap_or_else(|_| path.clone()),
        PolicySource::Server(server) => server.cache_dir.canonicalize().unwrap_or_else(|_| server.cache_dir.clone()),
    }
}

fn source_key(config: &AgentConfig) -> &'static str {
    match config.source {
        PolicySource::File(..) => "grantforge.policy.file",
        PolicySource::Server(_) => "grantforge.cache.dir",
    }
}
