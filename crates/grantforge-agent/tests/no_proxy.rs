//! The agent uses no proxy: the proxy variables of the environment are meant for other programs.
//! (A test binary of its own: it sets process-wide environment variables.)

mod common;

use common::*;
use grantforge_agent::registry;
use grantforge_testserver::Endpoint;

#[test]
fn proxy_environment_variables_are_ignored() {
    // Nothing listens there: a client that followed these would never reach the server.
    for var in [
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
    ] {
        std::env::set_var(var, "http://127.0.0.1:9");
    }
    for var in ["NO_PROXY", "no_proxy"] {
        std::env::remove_var(var);
    }
    let server = server("no-proxy");
    let agent = agent(&server, &temp_dir("no-proxy-cache"), &[]);
    assert!(
        agent.await_snapshot(PATIENCE),
        "the snapshot is fetched directly, not through HTTP_PROXY"
    );
    assert!(server.request_count(Endpoint::Heartbeat) > 0);
    assert!(may_read(&agent, "orders"));
    registry::release(&agent);
}
