//! `docs/operations.md`, "Try server mode without GrantForge": the node settings it shows, pointed at
//! a running test server (its address and state directory for the ones in the example), give an
//! agent that applies the server's policies; without the signing-key line, plain HTTP is refused
//! naming that key.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use grantforge_agent::{registry, AgentConfig};

const SECTION: &str = "## Try server mode without GrantForge";

/// The `key=value` lines of the first properties block of the section.
fn example_settings() -> Vec<(String, String)> {
    let docs = std::fs::read_to_string(common::in_crate("../../docs/operations.md")).unwrap();
    let section = &docs[docs
        .find(SECTION)
        .expect("docs/operations.md has the section")..];
    let block = &section[section.find("```properties\n").expect("a properties block") + 14..];
    block[..block.find("```").unwrap()]
        .lines()
        .filter_map(|line| line.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn the_documented_settings_reach_the_test_server_and_need_the_signing_key_over_plain_http() {
    let server = common::server("docs-example");
    let cache = common::temp_dir("docs-example-cache");
    let state_dir = format!("{}/", server.state_dir().display());
    let url = server.base_url().trim_end_matches('/').to_string();
    let settings: BTreeMap<String, String> = example_settings()
        .into_iter()
        .map(|(key, value)| {
            let value = value
                .replace("http://127.0.0.1:8080", &url)
                .replace("/tmp/gf-server/", &state_dir)
                .replace("/tmp/gf-agent-cache", &cache.display().to_string());
            (key, value)
        })
        .collect();
    assert!(
        settings.contains_key("grantforge.signing.key.file"),
        "the example has the signing-key line: {settings:?}"
    );

    let agent = registry::open(AgentConfig::from_settings(&settings).unwrap()).unwrap();
    common::eventually(
        "the agent applies the test server's policies",
        Duration::from_secs(20),
        || common::version(&agent).is_some(),
    );
    registry::release(&agent);

    let mut without_key = settings.clone();
    without_key.remove("grantforge.signing.key.file");
    let refused = AgentConfig::from_settings(&without_key).unwrap_err();
    assert_eq!(refused.key, "grantforge.signing.key.file", "{refused}");
}
