//! What the agent logs when GrantForge changes a snapshot at the same policy version, read from the
//! process's log queue: a test binary of its own, so that no other test drains the queue or logs
//! into it meanwhile.

mod common;

use std::time::Duration;

use common::*;
use grantforge_agent::logging::{self, LogLevel};
use grantforge_agent::registry;
use serde_json::Value;

fn fixture_with(change: impl FnOnce(&mut Value)) -> Vec<u8> {
    let mut json: Value = serde_json::from_str(&policies(None)).unwrap();
    change(&mut json);
    json.to_string().into_bytes()
}

#[test]
fn one_info_names_the_roles_that_changed_and_one_error_names_a_rename_and_its_fix() {
    logging::install();
    let server = server("logs");
    let agent = agent(
        &server,
        &temp_dir("logs-cache"),
        &[("grantforge.revalidate.interval.ms", "1000")],
    );
    assert!(agent.await_snapshot(PATIENCE));
    let mut records = Vec::new();

    let ended = fixture_with(|p| p["roles"]["analyst"] = serde_json::json!([]));
    server.set_policies_at_same_version_json(&ended).unwrap();
    let changed = "without a new version";
    drain_logs_until(&mut records, PATIENCE, |r| {
        !log_lines(r, LogLevel::Info, changed).is_empty()
    });
    let info = log_lines(&records, LogLevel::Info, changed);
    assert_eq!(info.len(), 1, "{records:?}");
    assert!(info[0].contains(": roles analyst (ETag "), "{}", info[0]);
    assert!(
        !info[0].contains("alice"),
        "codes, never members: {}",
        info[0]
    );

    let renamed = fixture_with(|p| p["service"] = "kafka-prod".into());
    server.set_policies_at_same_version_json(&renamed).unwrap();
    let fix = "grantforge.service.renamed.to=kafka-prod";
    drain_logs_until(&mut records, PATIENCE, |r| {
        !log_lines(r, LogLevel::Error, fix).is_empty()
    });
    // Several more rounds (1 s each, the refusal's back-off at most 1 s): still one ERROR.
    std::thread::sleep(Duration::from_secs(4));
    records.extend(logging::drain());
    let errors = log_lines(&records, LogLevel::Error, "kafka-prod");
    assert_eq!(errors.len(), 1, "one ERROR for the rename: {errors:?}");
    assert!(
        errors[0].contains("`kafka-demo`") && errors[0].contains(fix),
        "{}",
        errors[0]
    );
    assert_eq!(
        log_lines(&records, LogLevel::Info, changed).len(),
        1,
        "the refused rename is no change applied"
    );
    registry::release(&agent);
}
