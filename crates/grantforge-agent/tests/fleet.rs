//! What a fleet of agents costs one server. Snapshots travel gzip-compressed when the server
//! compresses them: the agent asks for it, checks the signature over the decompressed bytes (what
//! the server signs), and bounds the decompressed size by `grantforge.snapshot.max.bytes`, so a
//! small compressed body cannot expand without limit. And a changed version is downloaded after a
//! random wait (`grantforge.download.jitter.ms`), so a fleet does not download in the same second.

mod common;

use std::time::Duration;

use common::*;
use grantforge_agent::registry;
use grantforge_testserver::FaultMode;

const WAIT: Duration = Duration::from_secs(30);

#[test]
fn snapshots_travel_gzipped_and_are_verified_as_the_uncompressed_bytes() {
    let server = server("gzip");
    let agent = agent(&server, &temp_dir("gzip-cache"), &[]);
    assert!(agent.await_snapshot(WAIT));
    let before = last_seq(&server);
    server
        .set_policies_json(policies(Some("zipped")).as_bytes())
        .unwrap();
    eventually("the new policy applies", WAIT, || {
        may_read(&agent, "zipped")
    });

    let download = requests_after(&server, before)
        .into_iter()
        .find(|r| r.endpoint.as_deref() == Some("policies") && r.status == Some(200))
        .expect("the new version was downloaded");
    assert!(
        download.headers["accept-encoding"].contains("gzip"),
        "{download:?}"
    );
    assert_eq!(download.content_encoding.as_deref(), Some("gzip"));
    let on_the_wire = download.response_bytes.unwrap();
    let uncompressed = server.snapshot().body.len() as u64;
    assert!(
        on_the_wire * 3 < uncompressed,
        "{on_the_wire} bytes on the wire for a {uncompressed}-byte snapshot"
    );
    registry::release(&agent);
}

#[test]
fn a_compression_bomb_is_refused_by_its_decompressed_size() {
    let server = server("gzip-bomb");
    let limit = 4 << 20;
    let agent = agent(
        &server,
        &temp_dir("gzip-bomb-cache"),
        &[("grantforge.snapshot.max.bytes", &limit.to_string())],
    );
    assert!(agent.await_snapshot(WAIT));
    let applied = version(&agent);
    let before = last_seq(&server);
    server
        .set_fault(fault(&format!(
            r#"{{"mode":"huge","hugeBytes":{}}}"#,
            8 << 20
        )))
        .unwrap();
    server
        .set_policies_json(policies(Some("bomb")).as_bytes())
        .unwrap();
    eventually("the bomb is refused", WAIT, || {
        agent
            .stats()
            .last_error
            .contains("grantforge.snapshot.max.bytes")
    });

    // Proof that the bomb was what the agent read: a small gzip body that expands past the limit.
    let served = requests_after(&server, before)
        .into_iter()
        .find(|r| r.fault == Some(FaultMode::Huge) && r.status == Some(200))
        .expect("the huge snapshot was served");
    assert_eq!(served.content_encoding.as_deref(), Some("gzip"));
    assert!(served.response_bytes.unwrap() < limit / 16, "{served:?}");
    assert_eq!(version(&agent), applied, "nothing changed");
    assert!(!may_read(&agent, "bomb"));
    registry::release(&agent);
}

/// The heartbeats the agent sent after `after` before its first download.
fn heartbeats_before_the_download(
    server: &grantforge_testserver::RunningServer,
    after: u64,
) -> usize {
    let requests = requests_after(server, after);
    let download = requests
        .iter()
        .position(|r| r.endpoint.as_deref() == Some("policies"))
        .expect("a download");
    requests[..download]
        .iter()
        .filter(|r| r.endpoint.as_deref() == Some("heartbeat"))
        .count()
}

/// Waits for the agent's next heartbeat; returns its sequence number in the server's log.
fn after_the_next_heartbeat(server: &grantforge_testserver::RunningServer) -> u64 {
    let start = last_seq(server);
    let heartbeat = || {
        requests_after(server, start)
            .into_iter()
            .rfind(|r| r.endpoint.as_deref() == Some("heartbeat"))
    };
    eventually("a heartbeat", WAIT, || heartbeat().is_some());
    heartbeat().unwrap().seq
}

#[test]
fn a_changed_version_is_downloaded_after_a_random_wait_and_the_first_snapshot_at_once() {
    for (jitter, heartbeats) in [("1000", 2), ("0", 1)] {
        let server = server(&format!("jitter-{jitter}"));
        let agent = agent(
            &server,
            &temp_dir(&format!("jitter-{jitter}-cache")),
            &[("grantforge.download.jitter.ms", jitter)],
        );
        assert!(agent.await_snapshot(WAIT));
        assert_eq!(
            heartbeats_before_the_download(&server, 0),
            1,
            "the first snapshot is fetched at once"
        );
        // Changed right after a heartbeat, so that no heartbeat is under way while it changes (a
        // round is a second long): every heartbeat logged after `before` knows the new version.
        let before = after_the_next_heartbeat(&server);
        server
            .set_policies_json(policies(Some("spread")).as_bytes())
            .unwrap();
        eventually("the change applies", WAIT, || may_read(&agent, "spread"));
        // With a jitter, the heartbeat that announces the version ends the round with the random
        // wait, and the next round downloads.
        assert_eq!(
            heartbeats_before_the_download(&server, before),
            heartbeats,
            "jitter {jitter} ms"
        );
        registry::release(&agent);
    }
}
