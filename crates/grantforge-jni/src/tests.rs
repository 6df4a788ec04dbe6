//! The exports as the shim calls them, against the e2e snapshot fixture.

use std::path::PathBuf;
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};

use grantforge_agent::logging::LogLevel;

use super::*;
use crate::export::BridgeError;
use crate::request_encoder::VERSION;
use crate::wire::put_str;

#[test]
fn zero_and_foreign_handles_are_refused() {
    assert!(matches!(shell(0), Err(BridgeError::BadHandle)));
    let not_a_shell = Box::leak(Box::new([0u64; 4]));
    assert!(matches!(
        shell(not_a_shell.as_ptr() as jlong),
        Err(BridgeError::BadHandle)
    ));
}

const READ: u8 = 3;
const WRITE: u8 = 4;
const DELETE: u8 = 6;
const TOPIC: u8 = 2;
const LITERAL: u8 = 3;

fn e2e() -> String {
    std::fs::read_to_string(in_crate("../../tests/fixtures/snapshots/e2e.json")).unwrap()
}

/// A policy file of its own per test: one agent per file in the registry.
fn policy_file(test: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gf-jni-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("policies.json");
    std::fs::write(&file, text).unwrap();
    file
}

fn settings(pairs: &[(&str, &str)]) -> Vec<u8> {
    let mut bytes = Vec::new();
    for (key, value) in pairs {
        put_str(&mut bytes, key);
        put_str(&mut bytes, value);
    }
    bytes
}

fn open(file: &std::path::Path) -> jlong {
    open_shell(&settings(&[
        ("grantforge.policy.file", file.to_str().unwrap()),
        ("super.users", "User:admin"),
    ]))
    .unwrap()
    .0
}

/// A request in the layout of `RequestEncoder.java` (see `request_encoder.rs`).
fn request(user: &str, actions: &[(u8, &str)]) -> Vec<u8> {
    request_flagged(user, actions, 0)
}

/// A request whose actions Kafka asks as accesses (`logIfDenied`), not as a listing's filter: the
/// questions shadow and compare modes compare.
fn access_request(user: &str, actions: &[(u8, &str)]) -> Vec<u8> {
    request_flagged(user, actions, 2)
}

fn request_flagged(user: &str, actions: &[(u8, &str)], flags: u8) -> Vec<u8> {
    let mut context = Vec::new();
    put_str(&mut context, "User");
    put_str(&mut context, user);
    context.extend_from_slice(&[4, 127, 0, 0, 1]);
    put_str(&mut context, "SASL_PLAINTEXT");
    put_str(&mut context, "client");
    context.extend_from_slice(&0i16.to_le_bytes());
    context.extend_from_slice(&9i16.to_le_bytes());
    let mut bytes = vec![VERSION];
    bytes.extend_from_slice(&(context.len() as u32).to_le_bytes());
    bytes.extend_from_slice(&context);
    bytes.extend_from_slice(&(actions.len() as u32).to_le_bytes());
    for (operation, name) in actions {
        bytes.extend_from_slice(&[*operation, TOPIC, LITERAL, flags]);
        put_str(&mut bytes, name);
    }
    bytes
}

/// Calls the export as the shim does, with `bytes` as the thread's buffer.
fn authorize(handle: jlong, bytes: &mut [u8]) -> jlong {
    let length = bytes.len() as jint;
    Java_org_devlive_grantforge_kafka_agent_jni_NativeAgent_authorize(
        ptr::null_mut(),
        ptr::null_mut(),
        handle,
        bytes.as_mut_ptr() as jlong,
        length,
        length,
    )
}

#[test]
fn after_close_a_handle_answers_nothing_and_the_agent_is_freed() {
    let handle = open(&policy_file("close", &e2e()));
    let write_orders = || request("alice", &[(WRITE, "orders")]);
    assert_eq!(authorize(handle, &mut write_orders()), 1);
    assert_eq!(
        authorize(handle, &mut request("admin", &[(DELETE, "orders")])),
        1,
        "a super user"
    );
    assert_eq!(acl_count(handle, u64::MAX).unwrap(), 7);
    let agent = with_agent(handle, |agent| Ok(Arc::downgrade(agent))).unwrap();

    close_shell(shell(handle).unwrap());
    assert!(
        agent.upgrade().is_none(),
        "the agent (its token, its snapshots) is freed"
    );
    assert_eq!(authorize(handle, &mut write_orders()), 0);
    assert_eq!(
        authorize(handle, &mut request("admin", &[(DELETE, "orders")])),
        0,
        "not even a super user"
    );
    assert!(matches!(
        acl_count(handle, u64::MAX),
        Err(BridgeError::Closed)
    ));
    close_shell(shell(handle).unwrap());
    assert_eq!(
        authorize(handle, &mut write_orders()),
        0,
        "closing twice changes nothing"
    );
}

#[test]
fn closing_while_other_threads_authorize_is_safe() {
    let handle = open(&policy_file("close-racing", &e2e()));
    let agent = with_agent(handle, |agent| Ok(Arc::downgrade(agent))).unwrap();
    let closed = Arc::new(AtomicBool::new(false));
    let callers: Vec<_> = (0..4)
        .map(|_| {
            let closed = Arc::clone(&closed);
            std::thread::spawn(move || {
                let mut calls = 0u64;
                loop {
                    let was_closed = closed.load(Ordering::SeqCst);
                    let answer = authorize(handle, &mut request("alice", &[(WRITE, "orders")]));
                    calls += 1;
                    if was_closed {
                        assert_eq!(answer, 0, "a call that starts after close is refused");
                        return calls;
                    }
                    assert!(answer == 0 || answer == 1);
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(50));
    close_shell(shell(handle).unwrap());
    closed.store(true, Ordering::SeqCst);
    assert!(
        agent.upgrade().is_none(),
        "close waited for the calls in flight, then freed the agent"
    );
    for caller in callers {
        assert!(caller.join().unwrap() > 0);
    }
}

#[test]
fn seventy_thousand_actions_in_one_call_are_answered() {
    let handle = open(&policy_file("many-actions", &e2e()));
    let actions: Vec<(u8, &str)> = (0..70_000)
        .map(|i| (if i % 2 == 0 { READ } else { DELETE }, "orders"))
        .collect();
    let mut bytes = request("alice", &actions);
    assert_eq!(authorize(handle, &mut bytes), RESULTS_IN_BUFFER);
    for (i, answer) in bytes[..70_000].iter().enumerate() {
        assert_eq!(*answer, u8::from(i % 2 == 0), "action {i}");
    }
    close_shell(shell(handle).unwrap());
}

#[test]
fn the_no_snapshot_warning_names_the_start_timeout() {
    assert_eq!(
        no_snapshot_warning(4000),
        "GrantForge agent has no policy snapshot after 4000 ms (grantforge.start.timeout.ms); listeners open now and refuse every request but the super users' until one arrives"
    );
}

#[test]
fn open_answers_the_start_timeout_and_refuses_a_blank_one_naming_the_key() {
    let file = policy_file("start-timeout", &e2e());
    let file = file.to_str().unwrap();
    let (handle, timeout) = open_shell(&settings(&[
        ("grantforge.policy.file", file),
        ("grantforge.start.timeout.ms", "4500"),
    ]))
    .unwrap();
    assert_eq!(timeout, Duration::from_millis(4500));
    close_shell(shell(handle).unwrap());
    for blank in ["", " "] {
        let err = open_shell(&settings(&[
            ("grantforge.policy.file", file),
            ("grantforge.start.timeout.ms", blank),
        ]))
        .unwrap_err();
        assert!(err.starts_with("grantforge.start.timeout.ms:"), "{err}");
    }
    let (handle, timeout) = open_shell(&settings(&[("grantforge.policy.file", file)])).unwrap();
    assert_eq!(timeout, Duration::from_secs(30), "the default");
    close_shell(shell(handle).unwrap());
}

#[test]
fn snapshot_warnings_are_logged_once_at_warn_when_the_snapshot_is_applied() {
    logging::install();
    let text = e2e().replacen(
        "\"accessTypes\":[\"describe\"],\"conditions\":[]",
        "\"accessTypes\":[\"describe\"],\"conditions\":[{\"type\":\"ip-range\",\"values\":[\"10.0.0.0/99\"]}]",
        1,
    );
    let handle = open(&policy_file("warnings", &text));
    let warnings: Vec<_> = logging::drain()
        .into_iter()
        .filter(|r| r.level == LogLevel::Warn && r.message.contains("10.0.0.0/99"))
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0]
            .message
            .starts_with("policy version 1: policy 3: the values"),
        "{}",
        warnings[0].message
    );
    close_shell(shell(handle).unwrap());
}

#[test]
fn a_disabled_service_counts_no_acl_and_leaves_kafka_unchecked() {
    let text = e2e().replacen("\"serviceEnabled\":true", "\"serviceEnabled\":false", 1);
    let handle = open(&policy_file("disabled", &text));
    assert_eq!(
        acl_count(handle, u64::MAX).unwrap(),
        0,
        "aclCount() lists nothing"
    );
    assert_eq!(
        authorize(handle, &mut request("bob", &[(WRITE, "orders")])),
        1,
        "Kafka is unchecked"
    );
    close_shell(shell(handle).unwrap());
}

/// Calls `compare` as the shim does: the request, Kafka's answers after it, and room for the flags.
fn compare(handle: jlong, request: &[u8], kafka: &[u8], decider: jint) -> (jlong, Vec<u8>) {
    let mut buffer = request.to_vec();
    buffer.extend_from_slice(kafka);
    buffer.extend(std::iter::repeat_n(0xff, kafka.len()));
    let answer = Java_org_devlive_grantforge_kafka_agent_jni_NativeAgent_compare(
        ptr::null_mut(),
        ptr::null_mut(),
        handle,
        buffer.as_mut_ptr() as jlong,
        buffer.len() as jint,
        request.len() as jint,
        decider,
    );
    (answer, buffer[request.len() + kafka.len()..].to_vec())
}

#[test]
fn compare_writes_each_actions_flags_after_kafkas_answers_and_asks_for_new_disagreements_only() {
    let handle = open(&policy_file("compare", &e2e()));
    // alice may write orders and is denied payments (policy 5); Kafka allows both.
    let asked = access_request("alice", &[(WRITE, "orders"), (WRITE, "payments")]);
    let (answer, flags) = compare(handle, &asked, &[1, 1], 0);
    assert_eq!(answer, 2, "1 + one disagreement whose Kafka ACL is wanted");
    assert_eq!(flags, [1, 2 | 4]);
    let (again, flags) = compare(handle, &asked, &[1, 1], 0);
    assert_eq!(again, 2, "still wanted: the shim has not told it yet");
    assert_eq!(flags, [1, 2 | 4]);
    let (after_told, flags) = {
        let mut buffer = asked.clone();
        buffer.extend_from_slice(&[1, 1, 0, 0]);
        with_agent(handle, |agent| {
            let mut memo = request_encoder::ContextMemo::default();
            let mut slots = ActionSlots::default();
            let (context, actions) =
                decode_authorize(&buffer[..asked.len()], &mut memo, &mut slots).unwrap();
            agent.describe_kafka_basis(
                context,
                &actions[1],
                true,
                grantforge_agent::comparison::Decider::Kafka,
                "ALLOW ACL",
            );
            Ok(())
        })
        .unwrap();
        compare(handle, &asked, &[1, 1], 0)
    };
    assert_eq!(after_told, 1, "nothing more to tell");
    assert_eq!(flags, [1, 2]);
}

#[test]
fn compare_fails_closed_on_a_malformed_answer_or_decider_and_writes_no_flags() {
    let handle = open(&policy_file("compare-malformed", &e2e()));
    let asked = access_request("alice", &[(WRITE, "orders")]);
    assert_eq!(compare(handle, &asked, &[7], 0), (0, vec![0xff]));
    assert_eq!(compare(handle, &asked, &[1], 9), (0, vec![0xff]));
    let (answer, flags) = compare(handle, &asked, &[0], 1);
    assert_eq!(
        answer, 2,
        "GrantForge allows what Kafka refused: a disagreement, its ACL wanted"
    );
    assert_eq!(flags, [1 | 2 | 4]);
}

/// A file of this crate's checkout, found when the test runs (cargo sets `CARGO_MANIFEST_DIR` for
/// it, as for the build): CI reuses a test binary built from the same bytes in another checkout,
/// and it must read this checkout's files (`scripts/content-mtimes`).
pub(crate) fn in_crate(relative: &str) -> std::path::PathBuf {
    let dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .expect("run by cargo, which sets CARGO_MANIFEST_DIR");
    std::path::Path::new(&dir).join(relative)
}
