//! What the agent's unit tests share: a request context, an action and an agent.

use std::sync::Arc;

use grantforge_kafka::{Action, KafkaContext, Operation, Principal, RequestContext, ResourceType};

use crate::{Agent, AgentConfig};

/// `user` (a `User`) from 10.0.0.1 on listener `L`, client id `c`, a Produce request (version 9).
pub(crate) fn context(user: &str) -> RequestContext {
    RequestContext {
        principal: Principal {
            principal_type: "User".into(),
            name: user.into(),
        },
        conditions: KafkaContext {
            client_address: Some("10.0.0.1".parse().unwrap()),
            listener: "L".into(),
            client_id: "c".into(),
        },
        request_type: 0,
        request_version: 9,
    }
}

/// WRITE on the literal topic, audited whichever way it goes.
pub(crate) fn write(topic: &str) -> Action<'_> {
    Action {
        operation: Some(Operation::Write),
        resource_type: Some(ResourceType::Topic),
        literal: true,
        name: topic,
        log_if_allowed: true,
        log_if_denied: true,
    }
}

/// An agent on the e2e fixture (`tests/fixtures/snapshots/e2e.json`), with `extra` settings.
pub(crate) fn e2e_agent(extra: &[(&str, &str)]) -> Arc<Agent> {
    let fixture = in_crate("../../tests/fixtures/snapshots/e2e.json")
        .display()
        .to_string();
    let settings: std::collections::BTreeMap<String, String> =
        [("grantforge.policy.file", fixture.as_str())]
            .iter()
            .chain(extra)
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
    Agent::start(AgentConfig::from_settings(&settings).unwrap()).unwrap()
}

/// A file of this crate's checkout, found when the test runs (cargo sets `CARGO_MANIFEST_DIR` for
/// it, as for the build): CI reuses a test binary built from the same bytes in another checkout,
/// and it must read this checkout's files (`scripts/content-mtimes`).
pub(crate) fn in_crate(relative: &str) -> std::path::PathBuf {
    let dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .expect("run by cargo, which sets CARGO_MANIFEST_DIR");
    std::path::Path::new(&dir).join(relative)
}
