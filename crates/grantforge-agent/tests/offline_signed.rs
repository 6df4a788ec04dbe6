//! Offline mode with a signing key: the policy file is used only if its signature verifies, and no
//! older signed file is used after a newer one, across restarts too.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use grantforge_agent::{registry, AgentConfig};
use ring::rand::SystemRandom;
use ring::signature::{Ed25519KeyPair, KeyPair};

const SPKI_PREFIX: [u8; 12] = [
    0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
];

fn setup(name: &str) -> (PathBuf, PathBuf, Ed25519KeyPair) {
    let dir = std::env::temp_dir().join(format!(
        "gf-signed-{name}-{}-{:?}",
        std::process::id(),
        Instant::now()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let policies = dir.join("policies.json");
    std::fs::copy(
        common::in_crate("../../tests/fixtures/snapshots/e2e.json"),
        &policies,
    )
    .unwrap();
    let pair = Ed25519KeyPair::from_pkcs8(
        Ed25519KeyPair::generate_pkcs8(&SystemRandom::new())
            .unwrap()
            .as_ref(),
    )
    .unwrap();
    let mut spki = SPKI_PREFIX.to_vec();
    spki.extend_from_slice(pair.public_key().as_ref());
    let key_file = dir.join("key.pub");
    std::fs::write(&key_file, STANDARD.encode(spki)).unwrap();
    (policies, key_file, pair)
}

/// The settings of an agent of the signed `policies`, its state in a directory beside them.
fn signed_settings(policies: &Path, key_file: &Path) -> BTreeMap<String, String> {
    [
        ("grantforge.policy.file", policies.display().to_string()),
        (
            "grantforge.signing.key.file",
            key_file.display().to_string(),
        ),
        (
            "grantforge.cache.dir",
            policies.with_file_name("state").display().to_string(),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

fn open(policies: &Path, key_file: &Path) -> Result<(), String> {
    open_with(signed_settings(policies, key_file))
}

fn open_with(settings: BTreeMap<String, String>) -> Result<(), String> {
    let agent = registry::open(AgentConfig::from_settings(&settings).map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    registry::release(&agent);
    Ok(())
}

#[test]
fn a_signed_policy_file_is_used_and_an_unsigned_or_forged_one_is_not() {
    let (policies, key_file, pair) = setup("signed");
    let sig_file = PathBuf::from(format!("{}.sig", policies.display()));

    let missing = open(&policies, &key_file).unwrap_err();
    assert!(
        missing.contains("grantforge.signing.key.file") && missing.contains(".sig"),
        "{missing}"
    );

    let bytes = std::fs::read(&policies).unwrap();
    std::fs::write(&sig_file, STANDARD.encode(pair.sign(&bytes).as_ref())).unwrap();
    open(&policies, &key_file).unwrap();

    let mut tampered = bytes.clone();
    tampered.extend_from_slice(b" ");
    std::fs::write(&policies, &tampered).unwrap();
    let forged = open(&policies, &key_file).unwrap_err();
    assert!(
        forged.contains("grantforge.policy.file") && forged.contains("does not verify"),
        "{forged}"
    );
}

/// Writes `bytes` as the policy file with its signature, as an operator's copy would.
fn write_signed(policies: &Path, pair: &Ed25519KeyPair, bytes: &[u8]) {
    std::fs::write(
        PathBuf::from(format!("{}.sig", policies.display())),
        STANDARD.encode(pair.sign(bytes).as_ref()),
    )
    .unwrap();
    std::fs::write(policies, bytes).unwrap();
}

/// Waits (at most 20 s) until the agent's log has a record containing `needle`.
fn logged(needle: &str) -> String {
    let deadline = Instant::now() + std::time::Duration::from_secs(20);
    loop {
        if let Some(record) = grantforge_agent::logging::drain()
            .into_iter()
            .find(|r| r.message.contains(needle))
        {
            return record.message;
        }
        assert!(
            Instant::now() < deadline,
            "nothing logged containing {needle:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn a_signed_policy_file_cannot_roll_back_or_change_service() {
    grantforge_agent::logging::install();
    let (policies, key_file, pair) = setup("rollback");
    let original = std::fs::read_to_string(&policies).unwrap();
    let version = |v: i64| {
        original.replacen(
            "\"policyVersion\":1,",
            &format!("\"policyVersion\":{v},"),
            1,
        )
    };
    write_signed(&policies, &pair, version(5).as_bytes());
    let mut settings = signed_settings(&policies, &key_file);
    settings.insert(
        "grantforge.policy.file.poll.interval.ms".into(),
        "20".into(),
    );
    let agent = registry::open(AgentConfig::from_settings(&settings).unwrap()).unwrap();
    let applied = || {
        agent
            .policies()
            .map(|p| (p.service.clone(), p.policy_version))
    };
    assert_eq!(applied(), Some(("kafka-demo".to_string(), 5)));

    // An older, properly signed file (say, last month's copy put back): seen, refused, logged.
    write_signed(&policies, &pair, version(4).as_bytes());
    let refusal = logged("no rollback");
    assert!(
        refusal.contains("policy version 4 is older than the applied 5")
            && refusal.contains("policy version 5 stays in force"),
        "{refusal}"
    );
    assert_eq!(applied(), Some(("kafka-demo".to_string(), 5)));

    // A properly signed file of another service: seen, refused, logged.
    write_signed(
        &policies,
        &pair,
        version(6)
            .replacen(
                "\"service\":\"kafka-demo\"",
                "\"service\":\"kafka-other\"",
                1,
            )
            .as_bytes(),
    );
    let refusal = logged("kafka-other");
    assert!(
        refusal.contains("this agent serves `kafka-demo`"),
        "{refusal}"
    );
    assert_eq!(applied(), Some(("kafka-demo".to_string(), 5)));

    // A newer version of the same service is applied.
    write_signed(&policies, &pair, version(6).as_bytes());
    let deadline = Instant::now() + std::time::Duration::from_secs(20);
    while applied() != Some(("kafka-demo".to_string(), 6)) {
        assert!(Instant::now() < deadline, "version 6 was not applied");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    registry::release(&agent);
}

/// The fixture with its policy version set to `version`.
fn at_version(policies: &Path, version: i64) -> String {
    std::fs::read_to_string(policies).unwrap().replacen(
        "\"policyVersion\":1,",
        &format!("\"policyVersion\":{version},"),
        1,
    )
}

#[test]
fn an_older_signed_policy_file_put_in_place_before_a_restart_is_refused() {
    let (policies, key_file, pair) = setup("restart");
    let [v4, v5, v6] = [4, 5, 6].map(|v| at_version(&policies, v));
    write_signed(&policies, &pair, v5.as_bytes());
    open(&policies, &key_file).unwrap();

    // Last month's copy, properly signed, put back while the broker is down.
    write_signed(&policies, &pair, v4.as_bytes());
    let refused = open(&policies, &key_file).unwrap_err();
    assert!(
        refused.contains("grantforge.policy.file")
            && refused.contains("policy version 4 is older than the applied 5")
            && refused.contains("policy-file-applied"),
        "{refused}"
    );

    write_signed(&policies, &pair, v5.as_bytes());
    open(&policies, &key_file).expect("the same version starts again");
    write_signed(&policies, &pair, v6.as_bytes());
    open(&policies, &key_file).expect("a newer version is used");
    write_signed(&policies, &pair, v5.as_bytes());
    assert!(
        open(&policies, &key_file).is_err(),
        "6 is now the highest applied"
    );
}

#[test]
fn a_signed_policy_file_needs_a_directory_for_its_high_water_mark() {
    let (policies, key_file, pair) = setup("no-state");
    let bytes = std::fs::read(&policies).unwrap();
    write_signed(&policies, &pair, &bytes);
    let mut settings = signed_settings(&policies, &key_file);
    settings.remove("grantforge.cache.dir");
    let missing = open_with(settings).unwrap_err();
    assert!(
        missing.contains("grantforge.cache.dir")
            && missing.contains("grantforge.signing.key.file")
            && missing.contains("roll the policies back"),
        "{missing}"
    );
}

#[test]
fn a_garbled_high_water_mark_is_refused_not_taken_as_none() {
    let (policies, key_file, pair) = setup("garbled");
    let bytes = std::fs::read(&policies).unwrap();
    write_signed(&policies, &pair, &bytes);
    open(&policies, &key_file).unwrap();
    let state = policies.with_file_name("state").join("policy-file-applied");
    std::fs::write(&state, b"{}").unwrap();
    let refused = open(&policies, &key_file).unwrap_err();
    assert!(
        refused.contains("grantforge.cache.dir") && refused.contains("remove it"),
        "{refused}"
    );
}
