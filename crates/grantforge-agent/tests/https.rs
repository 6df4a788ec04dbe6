//! Server mode over HTTPS, against the test server's own CA (`Tls`): a private CA given in
//! `grantforge.ssl.ca.file` is trusted; an unknown CA, a certificate for another host, an expired
//! one and a plain-HTTP answer on an `https` URL are each refused with an error naming the cause,
//! before any request (and so the token) reaches the server. Over verified HTTPS alone the server's
//! signing key is trusted on first use and pinned, and a changed key is refused.

mod common;

use std::path::Path;
use std::time::Duration;

use common::*;
use grantforge_agent::{registry, AgentConfig};
use grantforge_testserver::{Config, Presented, RunningServer, Server, Tls, TLS_CA_FILE};

/// A test server presenting `presents`, its CA in `<state dir>/tls`.
fn https_server(name: &str, presents: Presented) -> RunningServer {
    https_server_in(&temp_dir(&format!("{name}-server")), presents)
}

fn https_server_in(state: &Path, presents: Presented) -> RunningServer {
    let mut config = Config::new(state);
    config.policies_json = Some(policies(None));
    config.refresh_seconds = 1;
    config.quiet = true;
    config.tls = Some(Tls {
        dir: state.join("tls"),
        presents,
    });
    Server::start(config).unwrap()
}

fn ca_file(server: &RunningServer) -> String {
    server
        .state_dir()
        .join("tls")
        .join(TLS_CA_FILE)
        .display()
        .to_string()
}

/// An agent of `server` with `extra` settings never applies a snapshot, its last error names
/// `cause`, and the server saw no request of the agent API.
fn refused(name: &str, server: &RunningServer, extra: &[(&str, &str)], cause: &str) {
    let agent = agent(server, &temp_dir(&format!("{name}-cache")), extra);
    eventually(&format!("the error names {cause:?}"), PATIENCE, || {
        agent.stats().last_error.contains(cause)
    });
    println!("{name}: {}", agent.stats().last_error);
    assert!(!agent.await_snapshot(Duration::from_millis(500)));
    assert!(
        requests_after(server, 0).is_empty(),
        "no request (and so no token) reached the server"
    );
    registry::release(&agent);
}

#[test]
fn a_private_ca_in_the_ca_file_is_trusted() {
    let server = https_server("https-valid", Presented::Valid);
    assert!(server.base_url().starts_with("https://127.0.0.1:"));
    let ca = ca_file(&server);
    let agent = agent(
        &server,
        &temp_dir("https-valid-cache"),
        &[("grantforge.ssl.ca.file", &ca)],
    );
    assert!(
        agent.await_snapshot(PATIENCE),
        "{}",
        agent.stats().last_error
    );
    assert!(may_read(&agent, "orders") && !may_read(&agent, "reports"));
    registry::release(&agent);
}

#[test]
fn a_certificate_of_an_unknown_ca_is_refused_naming_the_ca_file() {
    let server = https_server("https-unknown-ca", Presented::Valid);
    refused("https-unknown-ca", &server, &[], "grantforge.ssl.ca.file");
}

#[test]
fn a_certificate_for_another_host_is_refused() {
    let server = https_server("https-other-host", Presented::OtherHost);
    let ca = ca_file(&server);
    refused(
        "https-other-host",
        &server,
        &[("grantforge.ssl.ca.file", &ca)],
        "certificate is for another host",
    );
}

#[test]
fn an_expired_certificate_is_refused() {
    let server = https_server("https-expired", Presented::Expired);
    let ca = ca_file(&server);
    refused(
        "https-expired",
        &server,
        &[("grantforge.ssl.ca.file", &ca)],
        "outside its validity period",
    );
}

#[test]
fn a_plain_http_answer_on_an_https_url_is_refused() {
    let server = common::server("https-plain");
    let url = server.base_url().replacen("http://", "https://", 1);
    refused(
        "https-plain",
        &server,
        &[("grantforge.server.url", &url)],
        "does not answer TLS",
    );
}

#[test]
fn the_disk_cache_keeps_deciding_while_the_certificate_is_refused() {
    let state = temp_dir("https-cache-server");
    let cache = temp_dir("https-cache-cache");
    let valid = https_server_in(&state, Presented::Valid);
    let ca = ca_file(&valid);
    let first = agent(&valid, &cache, &[("grantforge.ssl.ca.file", &ca)]);
    assert!(
        first.await_snapshot(PATIENCE),
        "{}",
        first.stats().last_error
    );
    registry::release(&first);
    drop(valid);

    // The same server (token, signing key, CA) restarted with an expired certificate.
    let expired = https_server_in(&state, Presented::Expired);
    let second = agent(&expired, &cache, &[("grantforge.ssl.ca.file", &ca)]);
    assert!(
        second.await_snapshot(PATIENCE),
        "the verified snapshot of the disk cache"
    );
    assert!(may_read(&second, "orders") && !may_read(&second, "reports"));
    eventually("the refusal is the last error", PATIENCE, || {
        second
            .stats()
            .last_error
            .contains("outside its validity period")
    });
    assert!(requests_after(&expired, 0).is_empty());
    registry::release(&second);
}

/// Without `grantforge.signing.key.file`, over HTTPS with a verified certificate, the agent trusts
/// the server's key on first use and pins it in its cache; a snapshot signed by another key is then
/// refused, the pinned file named, and the snapshot in force stays, across a restart too.
#[test]
fn over_https_the_first_key_is_pinned_and_a_changed_key_is_refused() {
    let server = https_server("https-tofu", Presented::Valid);
    let cache = temp_dir("https-tofu-cache");
    let ca = ca_file(&server);
    let tofu = || {
        let mut settings = settings(&server, &cache, &[("grantforge.ssl.ca.file", &ca)]);
        settings.remove("grantforge.signing.key.file");
        registry::open(AgentConfig::from_settings(&settings).unwrap()).unwrap()
    };
    let first = tofu();
    assert!(
        first.await_snapshot(PATIENCE),
        "{}",
        first.stats().last_error
    );
    assert!(may_read(&first, "orders"));
    let applied = version(&first);

    server.set_fault(fault(r#"{"mode":"other-key"}"#)).unwrap();
    server
        .set_policies_json(policies(Some("signed-elsewhere")).as_bytes())
        .unwrap();
    let refused_for = "was pinned on first use in";
    eventually("the other key is refused", PATIENCE, || {
        first.stats().last_error.contains(refused_for)
    });
    assert_eq!(version(&first), applied, "the snapshot in force stays");
    assert!(!may_read(&first, "signed-elsewhere"));
    registry::release(&first);

    // Restarted on the same cache: the pin holds, the other key is not trusted afresh.
    let second = tofu();
    eventually("the other key is refused after a restart", PATIENCE, || {
        second.stats().last_error.contains(refused_for)
    });
    assert_eq!(version(&second), applied, "the verified disk cache decides");
    assert!(may_read(&second, "orders") && !may_read(&second, "signed-elsewhere"));
    registry::release(&second);
}
