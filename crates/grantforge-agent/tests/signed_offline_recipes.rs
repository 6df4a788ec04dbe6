//! The recipes of `docs/operations.md` ("Signed offline mode: the `.sig` file") run as written, in
//! bash, and an agent in signed offline mode then applies the policy file they signed: from the
//! GrantForge test server over loopback HTTP with curl, and with a key of one's own with OpenSSL.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use grantforge_agent::{registry, AgentConfig};

/// The shell block that follows `<!-- recipe: NAME` in `docs/operations.md`.
fn recipe(name: &str) -> String {
    let docs = std::fs::read_to_string(common::in_crate("../../docs/operations.md")).unwrap();
    let marker = format!("<!-- recipe: {name} ");
    let after = &docs[docs
        .find(&marker)
        .unwrap_or_else(|| panic!("docs/operations.md has no recipe {name}"))..];
    let block = &after[after
        .find("```sh\n")
        .expect("a sh block follows the marker")
        + 6..];
    block[..block.find("```").expect("the block ends")].to_string()
}

/// Runs `script` in bash in `dir`, stopping at its first failing command.
fn run_in(dir: &Path, script: &str, env: &[(&str, &str)]) {
    let output = Command::new("bash")
        .args(["-euo", "pipefail", "-c", script])
        .current_dir(dir)
        .envs(env.iter().copied())
        .output()
        .expect("bash runs");
    assert!(
        output.status.success(),
        "the recipe fails:\n{script}\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Opens an agent in signed offline mode on `dir`'s files as the recipe names them; returns the
/// policy version it applied.
fn signed_offline_agent_applies(dir: &Path) -> Result<i64, String> {
    let settings: BTreeMap<String, String> = [
        ("grantforge.policy.file", dir.join("policies.json")),
        (
            "grantforge.signing.key.file",
            dir.join("grantforge-signing-key.pub"),
        ),
        ("grantforge.cache.dir", dir.join("cache")),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.display().to_string()))
    .collect();
    let agent = registry::open(AgentConfig::from_settings(&settings).map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    let version = agent.policies().map(|p| p.policy_version);
    registry::release(&agent);
    version.ok_or_else(|| "no policies in force".to_string())
}

#[test]
fn the_recipe_with_openssl_signs_a_file_the_agent_applies() {
    let dir = common::temp_dir("recipe-openssl");
    std::fs::copy(
        common::in_crate("../../tests/fixtures/snapshots/e2e.json"),
        dir.join("policies.json"),
    )
    .unwrap();
    run_in(&dir, &recipe("sign-offline-with-openssl"), &[]);
    assert_eq!(signed_offline_agent_applies(&dir), Ok(1));

    // the signature is of these bytes: one more and the file is refused
    let mut edited = std::fs::read(dir.join("policies.json")).unwrap();
    edited.push(b'\n');
    std::fs::write(dir.join("policies.json"), edited).unwrap();
    let refused = signed_offline_agent_applies(&dir).unwrap_err();
    assert!(refused.contains("does not verify"), "{refused}");
}

#[test]
fn the_recipe_from_a_server_downloads_a_file_the_agent_applies() {
    let server = common::server("recipe-server");
    let dir = common::temp_dir("recipe-server-files");
    let token_file = server.state_dir().join("token");
    run_in(
        &dir,
        &recipe("sign-offline-from-server"),
        &[
            ("GRANTFORGE_URL", server.base_url().trim_end_matches('/')),
            ("GRANTFORGE_TOKEN_FILE", &token_file.display().to_string()),
        ],
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("grantforge-signing-key.pub")).unwrap(),
        std::fs::read_to_string(common::signing_key_file(&server)).unwrap(),
        "the key is the server's"
    );
    assert!(signed_offline_agent_applies(&dir).unwrap() >= 1);
}
