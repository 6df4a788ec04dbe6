//! The agent's own thread against the project's GrantForge test server, with the agent's log
//! records read back: it survives a panic in a round, and what it says about a problem it says
//! once. (A test binary of its own: it installs the log queue, which is process-wide.)

mod common;

use std::sync::Mutex;

use common::*;
use grantforge_agent::internals::testing::{panic_in_next_calls, Call};
use grantforge_agent::logging::{self, LogLevel, LogRecord};
use grantforge_agent::registry;
use grantforge_kafka::Operation;
use grantforge_testserver::{Endpoint, FaultMode};

/// Every record drained so far: the queue is drained by whichever test looks first, so they
/// are kept here for all of them.
static SEEN: Mutex<Vec<LogRecord>> = Mutex::new(Vec::new());

/// The agent's log queue, with panics also printed: the queue's panic hook keeps them from
/// stderr, which would hide why a test failed.
fn install_logging() {
    logging::install();
}

fn records_with(text: &str) -> Vec<LogRecord> {
    let mut seen = SEEN.lock().unwrap();
    seen.extend(logging::drain());
    seen.iter()
        .filter(|r| r.message.contains(text))
        .cloned()
        .collect()
}

#[test]
fn the_agents_thread_survives_panics_in_its_rounds_and_logs_each_once() {
    install_logging();
    let server = server("panics");
    let agent = agent(&server, &temp_dir("panics-cache"), FAST_AUDIT);
    assert!(agent.await_snapshot(PATIENCE));
    let url = server.base_url().to_string();

    panic_in_next_calls(&url, Call::Heartbeat, 3);
    let next = server
        .set_policies_json(policies(Some("after-panics")).as_bytes())
        .unwrap();
    eventually(
        "the next version is applied after three rounds that panicked",
        PATIENCE,
        || version(&agent) == Some(next),
    );
    let source = records_with(&format!("the agent's thread failed while keeping the policies current: injected panic in the Heartbeat call to {url}"));
    assert_eq!(source.len(), 1, "three panics, one line: {source:?}");
    assert_eq!(source[0].level, LogLevel::Error);

    panic_in_next_calls(&url, Call::AccessEvents, 2);
    assert!(!access(&agent, "bob", "orders", Operation::Write));
    eventually(
        "bob's refusal is delivered after two deliveries that panicked",
        PATIENCE,
        || counted(&server, "bob", "DENIED", "orders") == 1,
    );
    let audit = records_with(&format!("the agent's thread failed while delivering the audit: injected panic in the AccessEvents call to {url}"));
    assert_eq!(audit.len(), 1, "two panics, one line: {audit:?}");
    assert_eq!(audit[0].level, LogLevel::Error);
    let all = records_with("injected panic");
    assert_eq!(
        all.len(),
        2,
        "five panics on the agent's thread, two lines in all (the panic hook adds none): {all:?}"
    );

    let last = server
        .set_policies_json(policies(Some("still-running")).as_bytes())
        .unwrap();
    eventually(
        "the thread still keeps the policies current",
        PATIENCE,
        || version(&agent) == Some(last),
    );
    registry::release(&agent);
}

#[test]
fn plain_http_is_warned_about_once_at_start() {
    install_logging();
    let server = server("clear-token");
    let url = format!("{}/", server.base_url());
    let agent = agent(&server, &temp_dir("clear-token-cache"), &[]);
    assert!(agent.await_snapshot(PATIENCE));
    // Two more rounds after the start: a warning of each round would show by then.
    let heartbeats = server.request_count(Endpoint::Heartbeat);
    eventually("two more rounds", PATIENCE, || {
        server.request_count(Endpoint::Heartbeat) >= heartbeats + 2
    });
    let warnings = records_with(&format!(
        "grantforge.server.url {url} is plain HTTP: the agent token travels in clear"
    ));
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0].level, LogLevel::Warn);
    registry::release(&agent);
}

#[test]
fn a_304_that_contradicts_the_heartbeat_is_logged_once() {
    install_logging();
    let server = server("stale-304-log");
    let agent = agent(&server, &temp_dir("stale-304-log-cache"), &[]);
    assert!(agent.await_snapshot(PATIENCE));
    let applied = version(&agent).unwrap();
    let before = last_seq(&server);
    // The heartbeat announces an older version, the snapshot is still the applied one: every
    // round gets a 304 that contradicts the heartbeat, and downloads again.
    server
        .set_fault(fault(r#"{"mode":"old-version","endpoints":["heartbeat"]}"#))
        .unwrap();
    eventually("three rounds with a contradicting 304", PATIENCE, || {
        requests_after(&server, before)
            .iter()
            .filter(|r| r.endpoint.as_deref() == Some("policies") && r.status == Some(304))
            .count()
            >= 3
    });
    assert!(served(
        &server,
        before,
        "heartbeat",
        FaultMode::OldVersion,
        200
    ));
    let url = format!("{}/", server.base_url());
    let lines = records_with(&format!(
        "GrantForge server {url} answered 304 Not Modified for the applied policy version {applied}, but its heartbeat announces policy version {}",
        applied - 1
    ));
    assert_eq!(lines.len(), 1, "one line, not one per round: {lines:?}");
    assert_eq!(
        version(&agent),
        Some(applied),
        "the same snapshot stays in force"
    );
    registry::release(&agent);
}

#[test]
fn a_refused_snapshot_is_logged_once_while_downloads_are_put_off_by_the_jitter() {
    install_logging();
    let server = server("jitter-refused-log");
    let agent = agent(
        &server,
        &temp_dir("jitter-refused-log-cache"),
        &[("grantforge.download.jitter.ms", "1000")],
    );
    assert!(agent.await_snapshot(PATIENCE));
    let before = last_seq(&server);
    server
        .set_fault(fault(r#"{"mode":"wrong-signature"}"#))
        .unwrap();
    server
        .set_policies_json(policies(Some("jitter-refused")).as_bytes())
        .unwrap();
    eventually("three refused downloads", PATIENCE, || {
        requests_after(&server, before)
            .iter()
            .filter(|r| r.fault == Some(FaultMode::WrongSignature) && r.status == Some(200))
            .count()
            >= 3
    });
    let url = server.base_url().trim_end_matches('/').to_string();
    let refused = records_with(&format!(
        "a snapshot from {url}/ was refused: its signature does not verify"
    ));
    assert_eq!(refused.len(), 1, "one line, not one per round: {refused:?}");
    let recovered = records_with(&format!("GrantForge server {url}/ answers again"));
    assert!(
        recovered.is_empty(),
        "a round that only puts the download off is no recovery: {recovered:?}"
    );
    registry::release(&agent);
}
