//! One agent per policy source and JVM.
//!
//! A node that is broker and controller at once creates two authorizers; they must share one agent
//! (one snapshot, one watcher, later one heartbeat, cache directory and audit shipper). Closing one
//! leaves the other working; the agent stops when the last one closes, in whatever order.

use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::agent::{Agent, AgentError};
use crate::config::{AgentConfig, ConfigError, PolicySource};

struct Entry {
    identity: PathBuf,
    agent: Arc<Agent>,
    opens: usize,
}

static AGENTS: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

/// Returns the agent for this configuration, starting it on first use.
pub fn open(config: AgentConfig) -> Result<Arc<Agent>, AgentError> {
    let identity = identity(&config);
    let mut agents = AGENTS.lock();
    if let Some(entry) = agents.iter_mut().find(|e| e.identity == identity) {
        if *entry.agent.config() != config {
            return Err(AgentError::Config(ConfigError::new(
                source_key(&config),
                format!(
                    "another authorizer in this JVM already uses {} with different grantforge.* or super.users settings; give the broker and controller the same settings",
                    identity.display()
                ),
            )));
        }
        entry.opens += 1;
        return Ok(entry.agent.clone());
    }
    let agent = Agent::start(config)?;
    agents.push(Entry {
        identity,
        agent: agent.clone(),
        opens: 1,
    });
    Ok(agent)
}

/// Gives back one `open`; the last one stops the agent.
pub fn release(agent: &Arc<Agent>) {
    let mut agents = AGENTS.lock();
    let Some(at) = agents.iter().position(|e| Arc::ptr_eq(&e.agent, agent)) else {
        return;
    };
    agents[at].opens -= 1;
    if agents[at].opens == 0 {
        let entry = agents.swap_remove(at);
        drop(agents);
        entry.agent.shutdown();
    }
}

/// Where the agent's state lives, as one absolute path without links: the policy file, or the
/// cache directory. The directory is created first: on a first boot it does not exist yet, and a
/// relative or linked path would otherwise name one agent two ways (one before, one after the
/// first authorizer created it).
fn identity(config: &AgentConfig) -> PathBuf {
    let path = match &config.source {
        PolicySource::File(path, _) => path,
        PolicySource::Server(server) => {
            // A failure here is reported, naming the key, when the agent opens the directory.
            let _ = std::fs::create_dir_all(&server.cache_dir);
            &server.cache_dir
        }
    };
    path.canonicalize()
        .unwrap_or_else(|_| std::path::absolute(path).unwrap_or_else(|_| path.clone()))
}

fn source_key(config: &AgentConfig) -> &'static str {
    match config.source {
        PolicySource::File(..) => crate::settings::POLICY_FILE.key,
        PolicySource::Server(_) => crate::settings::CACHE_DIR.key,
    }
}
