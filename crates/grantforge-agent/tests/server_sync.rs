//! Server mode against the project's GrantForge test server over loopback HTTP: what is verified
//! is applied, what is not is never applied, and the disk cache carries a restart.

mod common;

use std::time::{Duration, Instant};

use common::*;
use grantforge_agent::{registry, AgentConfig};
use grantforge_kafka::Operation;
use grantforge_testserver::{Endpoint, FaultMode};

#[test]
fn applies_verified_snapshots_and_follows_policy_changes() {
    let server = server("changes");
    let cache = temp_dir("changes-cache");
    let agent = agent(&server, &cache, &[]);
    assert!(agent.await_snapshot(PATIENCE));
    assert!(may_read(&agent, "orders") && !may_read(&agent, "reports"));
    server
        .set_policies_json(policies(Some("reports")).as_bytes())
        .unwrap();
    eventually("the change reaches the agent", PATIENCE, || {
        may_read(&agent, "reports")
    });
    assert!(cache.join("snapshot.json").exists());
    assert!(
        !cache.join("signing-key.pin").exists(),
        "the configured key is used: nothing is pinned on first use"
    );
    registry::release(&agent);
}

#[test]
fn never_applies_what_it_cannot_verify_or_use() {
    let server = server("faults");
    let agent = agent(&server, &temp_dir("faults-cache"), &[]);
    assert!(agent.await_snapshot(PATIENCE));
    // Each round: the fault (on the policies only: the heartbeat must announce the new version so
    // the agent downloads it; OLDER is a version before the applied one), the mode the server logs
    // for it, and the agent's last refresh error naming the check that refused it.
    let rounds = [
        (
            r#"{"mode":"wrong-signature"}"#,
            FaultMode::WrongSignature,
            "its signature does not verify",
        ),
        (
            r#"{"mode":"other-key"}"#,
            FaultMode::OtherKey,
            "but grantforge.signing.key.file pins key",
        ),
        (
            // The default old version is the applied one, with the new content.
            r#"{"mode":"old-version"}"#,
            FaultMode::OldVersion,
            "but other content",
        ),
        (
            r#"{"mode":"old-version","policyVersion":OLDER}"#,
            FaultMode::OldVersion,
            "(no rollback)",
        ),
        (
            r#"{"mode":"other-service"}"#,
            FaultMode::OtherService,
            "but this agent serves",
        ),
        (
            r#"{"mode":"truncated","endpoints":["policies"]}"#,
            FaultMode::Truncated,
            "the body could not be read completely",
        ),
    ];
    for (i, (json, mode, refused_for)) in rounds.iter().enumerate() {
        let applied = version(&agent);
        let json = json.replace("OLDER", &(applied.unwrap() - 1).to_string());
        let json = json.as_str();
        let before = last_seq(&server);
        server.set_fault(fault(json)).unwrap();
        server
            .set_policies_json(policies(Some(&format!("t{i}"))).as_bytes())
            .unwrap();
        eventually(&format!("{json} is served to the agent"), PATIENCE, || {
            served(&server, before, "policies", *mode, 200)
        });
        eventually(
            &format!("{json}: the agent refused it: {refused_for}"),
            PATIENCE,
            || agent.stats().last_error.contains(refused_for),
        );
        assert_eq!(
            version(&agent),
            applied,
            "{json}: the applied snapshot stays in force"
        );
        assert!(!may_read(&agent, &format!("t{i}")), "{json}");
        server.clear_fault();
        eventually(json, PATIENCE, || may_read(&agent, &format!("t{i}")));
    }
    registry::release(&agent);
}

#[test]
fn a_snapshot_of_another_service_type_refuses_everything() {
    let server = server("type");
    let agent = agent(&server, &temp_dir("type-cache"), &[]);
    assert!(agent.await_snapshot(PATIENCE));
    assert!(may_read(&agent, "orders"));
    server.set_fault(fault(r#"{"mode":"other-type"}"#)).unwrap();
    server
        .set_policies_json(policies(Some("x")).as_bytes())
        .unwrap();
    eventually("everything refused", PATIENCE, || {
        !may_read(&agent, "orders")
    });
    server.clear_fault();
    eventually("a kafka snapshot decides again", PATIENCE, || {
        may_read(&agent, "x")
    });
    registry::release(&agent);
}

#[test]
fn starts_from_the_verified_disk_cache_when_the_server_is_away_and_refuses_a_tampered_one() {
    let server = server("cache");
    let cache = temp_dir("cache-cache");
    let first = agent(&server, &cache, &[]);
    assert!(first.await_snapshot(PATIENCE));
    registry::release(&first);
    let key_file = signing_key_file(&server);
    let (code, answer) = explain_alice_reads_orders(&cache, &key_file);
    assert_eq!(code, 0, "{answer}");
    assert!(
        answer.contains("decision: ALLOWED by policy 1"),
        "explain reads the verified cache: {answer}"
    );
    server.set_fault(fault(r#"{"mode":"down"}"#)).unwrap();

    // The cache is applied while the agent is configured, before its thread asks the (away)
    // server anything: in force as soon as `open` returns. How long that takes is measured by the
    // benchmarks, not promised here.
    let second = agent(&server, &cache, &[]);
    assert!(
        version(&second).is_some(),
        "the cache is applied at configure time"
    );
    assert!(may_read(&second, "orders"));
    registry::release(&second);

    let snapshot = cache.join("snapshot.json");
    let tampered = std::fs::read_to_string(&snapshot)
        .unwrap()
        .replace("\"alice\"", "\"mallory\"");
    std::fs::write(&snapshot, tampered).unwrap();
    let (code, answer) = explain_alice_reads_orders(&cache, &key_file);
    assert_eq!(
        code, 1,
        "explain refuses a cache that does not verify: {answer}"
    );
    assert!(answer.contains("does not verify"), "{answer}");
    let before = last_seq(&server);
    let third = agent(&server, &cache, &[]);
    assert_eq!(version(&third), None, "a tampered cache is never used");
    eventually("the agent's round finds the server away", PATIENCE, || {
        went_unanswered(&server, before)
    });
    assert_eq!(version(&third), None, "nor later");
    assert!(!may_read(&third, "orders"));
    let moved_aside = std::fs::read_dir(&cache)
        .unwrap()
        .filter_map(Result::ok)
        .any(|e| e.file_name().to_string_lossy().starts_with("rejected-"));
    assert!(
        moved_aside,
        "the tampered cache is kept aside for inspection"
    );
    registry::release(&third);
}

#[test]
fn a_pinned_key_refuses_snapshots_signed_by_another() {
    let server = server("pinned");
    let key_file = temp_dir("pinned-key").join("key.pub");
    std::fs::write(&key_file, server.other_public_key_base64()).unwrap();
    let agent = agent(
        &server,
        &temp_dir("pinned-cache"),
        &[("grantforge.signing.key.file", key_file.to_str().unwrap())],
    );
    // The snapshot was served whole and refused for its key: not merely never asked for.
    eventually("the snapshot is downloaded", PATIENCE, || {
        requests_after(&server, 0).iter().any(|r| {
            r.endpoint.as_deref() == Some("policies") && r.status == Some(200) && r.fault.is_none()
        })
    });
    eventually("it is refused for its key", PATIENCE, || {
        agent
            .stats()
            .last_error
            .contains("but grantforge.signing.key.file pins key")
    });
    assert_eq!(
        version(&agent),
        None,
        "signed by a key other than the pinned one"
    );
    assert!(!may_read(&agent, "orders"));
    registry::release(&agent);
}

#[test]
fn folded_accesses_and_refusals_reach_the_server_and_counts_add_up() {
    let server = server("audit");
    let agent = agent(&server, &temp_dir("audit-cache"), FAST_AUDIT);
    assert!(agent.await_snapshot(PATIENCE));
    let looped = Instant::now();
    for _ in 0..10_000 {
        assert!(access(&agent, "alice", "orders", Operation::Write));
    }
    // Fold windows of 500 ms: the loop, however slow the machine, spans this many at most.
    let windows = looped.elapsed().as_millis() / 500 + 2;
    let refused_at = Instant::now();
    assert!(!access(&agent, "bob", "orders", Operation::Write));
    eventually("bob's refusal reaches the server", PATIENCE, || {
        counted(&server, "bob", "DENIED", "orders") == 1
    });
    // A measurement, not a promise (docs/benchmarks.md): with a 300 ms flush, about that.
    println!("refusal to server: {:?}", refused_at.elapsed());
    eventually(
        "alice's accesses are folded and delivered",
        PATIENCE,
        || counted(&server, "alice", "ALLOWED", "orders") == 10_000,
    );
    let events = server
        .events()
        .iter()
        .filter(|e| e["user"] == "alice")
        .count();
    assert!(
        events as u128 <= windows,
        "10,000 accesses become one event per fold window ({windows} at most), not {events}"
    );
    registry::release(&agent);
}

#[test]
fn nothing_is_lost_while_the_server_is_away() {
    let server = server("outage");
    let cache = temp_dir("outage-cache");
    let agent = agent(&server, &cache, FAST_AUDIT);
    assert!(agent.await_snapshot(PATIENCE));
    server.set_fault(fault(r#"{"mode":"down"}"#)).unwrap();
    let spooled = || {
        std::fs::read_dir(cache.join("audit-spool"))
            .map(|d| d.count())
            .unwrap_or(0)
    };
    // Five rounds, each waiting until its events wait in the spool: several batches to deliver.
    for _ in 0..5 {
        let batches = spooled();
        for _ in 0..100 {
            access(&agent, "alice", "orders", Operation::Read);
        }
        access(&agent, "bob", "orders", Operation::Write);
        eventually(
            "the round's events wait in the spool while the server is away",
            PATIENCE,
            || spooled() > batches,
        );
    }
    assert_eq!(counted(&server, "alice", "ALLOWED", "orders"), 0);
    server.clear_fault();
    eventually("the spool is delivered", PATIENCE, || {
        counted(&server, "alice", "ALLOWED", "orders") == 500
    });
    eventually("every refusal too", PATIENCE, || {
        counted(&server, "bob", "DENIED", "orders") == 5
    });
    registry::release(&agent);
}

#[test]
fn a_refused_batch_is_split_and_the_rest_delivered() {
    let server = server("split");
    let agent = agent(&server, &temp_dir("split-cache"), FAST_AUDIT);
    assert!(agent.await_snapshot(PATIENCE));
    let before = last_seq(&server);
    // The server never takes the event on `orders-us`: every batch holding it is refused.
    server
        .set_fault(fault(
            r#"{"mode":"fail-events-400","resource":"orders-us"}"#,
        ))
        .unwrap();
    let good = ["orders", "orders-eu", "orders-asia"];
    for topic in ["orders", "orders-eu", "orders-us", "orders-asia"] {
        access(&agent, "alice", topic, Operation::Read);
    }
    eventually("the three others are delivered", PATIENCE, || {
        good.iter()
            .all(|t| counted(&server, "alice", "ALLOWED", t) == 1)
    });
    eventually(
        "the refused event is dropped and counted, the others counted as sent",
        PATIENCE,
        || {
            let stats = agent.stats();
            stats.audit_dropped == 1 && stats.audit_sent == 3
        },
    );
    assert_eq!(counted(&server, "alice", "ALLOWED", "orders-us"), 0);
    // The bad event is accessed between others in one quick loop, so its batch holds at least one
    // more (a flush boundary cannot fall on both sides of it): refused whole, then halved down to
    // the event alone, while the half without it is taken.
    let batches: Vec<_> = requests_after(&server, before)
        .into_iter()
        .filter(|r| r.endpoint.as_deref() == Some("access-events"))
        .map(|r| r.status)
        .collect();
    let refused = batches.iter().filter(|s| **s == Some(400)).count();
    assert!(
        refused >= 2,
        "the batch holding it and the event alone are refused: {batches:?}"
    );
    assert!(batches.contains(&Some(200)), "{batches:?}");
    registry::release(&agent);
}

// Hardening: nothing the server says can freeze the agent, stop the audit, or be taken on trust.

#[test]
fn a_heartbeat_asking_never_to_come_back_is_held_to_ten_refresh_intervals() {
    let server = server("refresh-max");
    let agent = agent(
        &server,
        &temp_dir("refresh-max-cache"),
        &[("grantforge.refresh.interval.ms", "300")],
    );
    assert!(agent.await_snapshot(PATIENCE));
    let before = last_seq(&server);
    server
        .set_fault(fault(
            r#"{"mode":"refresh-seconds","refreshSeconds":9223372036854775807}"#,
        ))
        .unwrap();
    eventually("the agent got refreshSeconds = 2^63 - 1", PATIENCE, || {
        served(&server, before, "heartbeat", FaultMode::RefreshSeconds, 200)
    });
    let heartbeats = server.request_count(Endpoint::Heartbeat);
    let next = server
        .set_policies_json(policies(Some("later")).as_bytes())
        .unwrap();
    // The round is held to 10 × 300 ms = 3 s; unheld, the agent would never come back. How soon
    // it does is not timed here (a busy machine): only that it does.
    eventually(
        "the next version is applied within the clamp",
        PATIENCE,
        || version(&agent) == Some(next),
    );
    assert!(may_read(&agent, "later"));
    assert!(
        server.request_count(Endpoint::Heartbeat) > heartbeats,
        "the agent's thread still runs its rounds"
    );
    registry::release(&agent);
}

#[test]
fn a_304_that_contradicts_the_heartbeat_is_followed_by_a_full_download() {
    let server = server("stale-304");
    let agent = agent(&server, &temp_dir("stale-304-cache"), &[]);
    assert!(agent.await_snapshot(PATIENCE));
    let before = last_seq(&server);
    server
        .set_fault(fault(r#"{"mode":"stale-not-modified"}"#))
        .unwrap();
    let next = server
        .set_policies_json(policies(Some("fresh")).as_bytes())
        .unwrap();
    eventually(
        "a stale 304 is served for the announced version",
        PATIENCE,
        || {
            served(
                &server,
                before,
                "policies",
                FaultMode::StaleNotModified,
                304,
            )
        },
    );
    // The download follows the 304 in the same round (shown below from the server's log).
    eventually(
        "the announced version is applied within a round",
        PATIENCE,
        || version(&agent) == Some(next),
    );
    assert!(may_read(&agent, "fresh"));
    let policies_calls: Vec<_> = requests_after(&server, before)
        .into_iter()
        .filter(|r| r.endpoint.as_deref() == Some("policies"))
        .collect();
    let stale = policies_calls
        .iter()
        .position(|r| r.status == Some(304))
        .expect("the 304");
    assert!(policies_calls[stale].headers.contains_key("if-none-match"));
    let full = &policies_calls[stale + 1];
    let same_round = requests_after(&server, policies_calls[stale].seq)
        .into_iter()
        .take_while(|r| r.seq < full.seq)
        .all(|r| r.endpoint.as_deref() != Some("heartbeat"));
    assert!(same_round, "no heartbeat between the 304 and the download");
    assert_eq!(full.status, Some(200), "{policies_calls:?}");
    assert!(
        !full.headers.contains_key("if-none-match"),
        "the download after the 304 is unconditional: {full:?}"
    );
    registry::release(&agent);
}

/// The `If-None-Match` values of the policies requests after `after`.
fn if_none_match_after(
    server: &grantforge_testserver::RunningServer,
    after: u64,
) -> Vec<Option<String>> {
    requests_after(server, after)
        .into_iter()
        .filter(|r| r.endpoint.as_deref() == Some("policies"))
        .map(|r| r.headers.get("if-none-match").cloned())
        .collect()
}

#[test]
fn the_applied_etag_is_the_bodys_not_the_servers_header_nor_the_caches() {
    let server = server("etag");
    let cache = temp_dir("etag-cache");
    server.set_fault(fault(r#"{"mode":"wrong-etag"}"#)).unwrap();
    let first = agent(&server, &cache, &[]);
    assert!(first.await_snapshot(PATIENCE));
    assert!(
        served(&server, 0, "policies", FaultMode::WrongEtag, 200),
        "the snapshot came under an ETag header that is not its body's"
    );
    let body_etag = server.etag();
    let before = last_seq(&server);
    let second_version = server
        .set_policies_json(policies(Some("two")).as_bytes())
        .unwrap();
    eventually("version two is applied", PATIENCE, || {
        version(&first) == Some(second_version)
    });
    assert_eq!(
        if_none_match_after(&server, before),
        vec![Some(body_etag)],
        "If-None-Match names the body's ETag, not the header's"
    );
    registry::release(&first);

    // The metadata file is not signed: an ETag written there is not believed either.
    let meta_file = cache.join("snapshot.meta.json");
    let mut meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&meta_file).unwrap()).unwrap();
    meta["etag"] = serde_json::Value::from("\"tampered\"");
    std::fs::write(&meta_file, meta.to_string()).unwrap();
    let body_etag = server.etag();
    let second = agent(&server, &cache, &[]);
    assert!(
        version(&second).is_some(),
        "the cache is applied at configure time"
    );
    let before = last_seq(&server);
    let third_version = server
        .set_policies_json(policies(Some("three")).as_bytes())
        .unwrap();
    eventually("version three is applied", PATIENCE, || {
        version(&second) == Some(third_version)
    });
    assert_eq!(
        if_none_match_after(&server, before),
        vec![Some(body_etag)],
        "If-None-Match names the cached body's ETag, not the metadata's"
    );

    // And the server, which derives its ETag the same way, answers 304 to it.
    server.clear_fault();
    let applied_etag = server.etag();
    let before = last_seq(&server);
    server
        .set_fault(fault(r#"{"mode":"old-version","endpoints":["heartbeat"]}"#))
        .unwrap();
    eventually(
        "a conditional request with the applied ETag gets 304",
        PATIENCE,
        || {
            requests_after(&server, before).iter().any(|r| {
                r.status == Some(304)
                    && r.fault.is_none()
                    && r.headers.get("if-none-match") == Some(&applied_etag)
            })
        },
    );
    assert_eq!(version(&second), Some(third_version));
    registry::release(&second);
}

#[test]
fn the_audit_is_delivered_while_snapshots_are_refused() {
    // The server answers every time; only its snapshots cannot be used: forged, larger than the
    // agent takes, or cut short.
    for (name, fault_json, mode) in [
        (
            "refused-audit",
            r#"{"mode":"wrong-signature"}"#,
            FaultMode::WrongSignature,
        ),
        (
            "huge-audit",
            r#"{"mode":"huge","hugeBytes":300000}"#,
            FaultMode::Huge,
        ),
        (
            "cut-audit",
            r#"{"mode":"truncated","endpoints":["policies"]}"#,
            FaultMode::Truncated,
        ),
    ] {
        let server = server(name);
        let settings = [FAST_AUDIT, &[("grantforge.snapshot.max.bytes", "200000")]].concat();
        let agent = agent(&server, &temp_dir(&format!("{name}-cache")), &settings);
        assert!(agent.await_snapshot(PATIENCE));
        let before = last_seq(&server);
        server.set_fault(fault(fault_json)).unwrap();
        server
            .set_policies_json(policies(Some("forged")).as_bytes())
            .unwrap();
        eventually("the unusable snapshot is served", PATIENCE, || {
            served(&server, before, "policies", mode, 200)
        });
        assert!(!access(&agent, "bob", "orders", Operation::Write));
        eventually(
            &format!("{name}: bob's refusal reaches the server while its snapshots are refused"),
            PATIENCE,
            || counted(&server, "bob", "DENIED", "orders") == 1,
        );
        assert!(
            !may_read(&agent, "forged"),
            "{name}: the refused snapshot is still not applied"
        );
        registry::release(&agent);
    }
}

#[test]
fn the_last_refresh_error_is_set_while_a_problem_lasts_and_cleared_when_it_is_over() {
    let server = server("last-error");
    let agent = agent(&server, &temp_dir("last-error-cache"), &[]);
    assert!(agent.await_snapshot(PATIENCE));
    assert_eq!(agent.stats().last_error, "");

    server
        .set_fault(fault(r#"{"mode":"wrong-signature"}"#))
        .unwrap();
    server
        .set_policies_json(policies(Some("m1")).as_bytes())
        .unwrap();
    eventually(
        "a refused snapshot is the last refresh error",
        PATIENCE,
        || {
            agent
                .stats()
                .last_error
                .contains("was refused: its signature does not verify")
        },
    );
    server.clear_fault();
    eventually(
        "the next snapshot is applied and the error cleared",
        PATIENCE,
        || may_read(&agent, "m1") && agent.stats().last_error.is_empty(),
    );

    server.set_fault(fault(r#"{"mode":"down"}"#)).unwrap();
    eventually(
        "an unreachable server is the last refresh error",
        PATIENCE,
        || agent.stats().last_error.contains("cannot be reached"),
    );
    server.clear_fault();
    eventually(
        "the error is cleared once the server answers",
        PATIENCE,
        || agent.stats().last_error.is_empty(),
    );
    registry::release(&agent);
}

#[test]
fn a_service_type_refusal_survives_a_restart_and_only_an_installed_kafka_snapshot_lifts_it() {
    let server = server("type-restart");
    let cache = temp_dir("type-restart-cache");
    let marker = cache.join("refused-service-type");
    let first = agent(&server, &cache, &[]);
    assert!(first.await_snapshot(PATIENCE));
    assert!(may_read(&first, "orders"));
    let before = last_seq(&server);
    server.set_fault(fault(r#"{"mode":"other-type"}"#)).unwrap();
    server
        .set_policies_json(policies(Some("x")).as_bytes())
        .unwrap();
    eventually("the other type is served", PATIENCE, || {
        served(&server, before, "policies", FaultMode::OtherType, 200)
    });
    eventually("everything refused", PATIENCE, || {
        !may_read(&first, "orders")
    });
    registry::release(&first);

    // A restart with the server away: the older kafka snapshot of the cache does not serve again.
    server.set_fault(fault(r#"{"mode":"down"}"#)).unwrap();
    let before = last_seq(&server);
    let second = agent(&server, &cache, &[]);
    eventually("the agent's round finds the server away", PATIENCE, || {
        went_unanswered(&server, before)
    });
    assert_eq!(
        version(&second),
        None,
        "the cached kafka snapshot is not put in force"
    );
    assert!(
        !may_read(&second, "orders"),
        "after a restart everything is refused as before it"
    );
    assert_eq!(
        std::fs::read_to_string(&marker).unwrap(),
        "hive",
        "the refusal is recorded in the cache directory"
    );

    // The server back, still serving the other type: still refused.
    let before = last_seq(&server);
    server.set_fault(fault(r#"{"mode":"other-type"}"#)).unwrap();
    eventually("the other type is served again", PATIENCE, || {
        served(&server, before, "policies", FaultMode::OtherType, 200)
    });
    assert!(!may_read(&second, "orders") && !may_read(&second, "x"));
    assert!(marker.exists());

    // Only an installed kafka snapshot lifts the refusal, and the record of it.
    server.clear_fault();
    eventually("a kafka snapshot decides again", PATIENCE, || {
        may_read(&second, "x")
    });
    assert!(may_read(&second, "orders"));
    eventually(
        "the record of the refusal is removed once a kafka snapshot is installed",
        PATIENCE,
        || !marker.exists(),
    );
    registry::release(&second);
}

#[test]
fn plain_http_without_a_signing_key_file_is_refused_naming_that_key() {
    let server = server("http-tofu");
    let mut settings = settings(&server, &temp_dir("http-tofu-cache"), &[]);
    settings.remove("grantforge.signing.key.file");
    assert!(server.base_url().starts_with("http://"));
    let err = AgentConfig::from_settings(&settings).unwrap_err();
    assert_eq!(err.key, "grantforge.signing.key.file", "{err}");
    assert!(
        err.message.contains("trust on first use is refused"),
        "{err}"
    );
    assert_eq!(
        server.request_count(Endpoint::SigningKey),
        0,
        "the key was not fetched"
    );
}

#[test]
fn close_keeps_the_audit_in_the_spool_when_the_server_holds_up_the_agents_thread() {
    let server = server("close-held-up");
    let cache = temp_dir("close-held-up-cache");
    let agent = agent(&server, &cache, FAST_AUDIT);
    assert!(agent.await_snapshot(PATIENCE));
    server
        .set_fault(fault(
            r#"{"mode": "slow", "endpoints": ["heartbeat"], "delayMs": 20000}"#,
        ))
        .unwrap();
    // The next round (every second here) starts, and waits on the heartbeat.
    std::thread::sleep(Duration::from_millis(2500));
    for _ in 0..5 {
        assert!(access(&agent, "alice", "orders", Operation::Write));
    }
    assert!(!access(&agent, "bob", "orders", Operation::Write));
    registry::release(&agent);
    // The process may end now: the six accesses must be on disk.
    let spooled: u64 = std::fs::read_dir(cache.join("audit-spool"))
        .map(|dir| {
            dir.filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
                .map(|e| {
                    let batch: Vec<serde_json::Value> =
                        serde_json::from_slice(&std::fs::read(e.path()).unwrap()).unwrap();
                    batch
                        .iter()
                        .map(|event| event["count"].as_u64().unwrap())
                        .sum::<u64>()
                })
                .sum()
        })
        .unwrap_or(0);
    assert_eq!(
        spooled, 6,
        "alice's 5 accesses and bob's refusal, spooled at close"
    );
    assert_eq!(server.events().len(), 0, "none could be delivered");
}

#[test]
fn events_the_server_does_not_take_are_sent_again_after_a_back_off() {
    let server = server("events-back-off");
    // Heartbeats every 8 s, and answered: only the events endpoint fails.
    let settings = [FAST_AUDIT, &[("grantforge.refresh.interval.ms", "8000")]].concat();
    let agent = agent(&server, &temp_dir("events-back-off-cache"), &settings);
    assert!(agent.await_snapshot(PATIENCE));
    server
        .set_fault(fault(
            r#"{"mode":"status","status":500,"endpoints":["access-events"]}"#,
        ))
        .unwrap();
    let before = last_seq(&server);
    let started = Instant::now();
    let mut refused = 0;
    while started.elapsed() < Duration::from_secs(6) {
        // A refusal of a topic of its own each time: an event to send at every tick.
        assert!(!access(
            &agent,
            "bob",
            &format!("t{refused}"),
            Operation::Write
        ));
        refused += 1;
        std::thread::sleep(Duration::from_millis(50));
    }
    let posts = requests_after(&server, before)
        .iter()
        .filter(|r| r.endpoint.as_deref() == Some("access-events"))
        .count();
    // Back-offs of 1, 2 and 4 s (each ±20 %) in 6 s; a tick (250 ms) would have sent 24 times.
    assert!(
        (2..=5).contains(&posts),
        "{posts} deliveries of events in 6 s, {refused} refusals"
    );
    server.clear_fault();
    eventually(
        "the spooled refusals are delivered once the server takes them",
        PATIENCE,
        || counted(&server, "bob", "DENIED", "t0") == 1,
    );
    registry::release(&agent);
}
