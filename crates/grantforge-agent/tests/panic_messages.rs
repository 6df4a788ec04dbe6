//! The agent's panic hook queues a panic for the broker's log; a test that fails must still show
//! its message. (Four test binaries install the hook: their failures once said nothing.)

use std::process::Command;

const CHILD: &str = "GF_PANIC_MESSAGES_CHILD";

#[test]
fn a_failed_assertion_shows_its_message_with_the_agents_logging_installed() {
    if std::env::var_os(CHILD).is_some() {
        grantforge_agent::logging::install();
        assert_eq!(1 + 1, 3, "the message a developer must see");
    }
    let run = Command::new(std::env::current_exe().unwrap())
        .args([
            "a_failed_assertion_shows_its_message_with_the_agents_logging_installed",
            "--exact",
        ])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let shown = format!(
        "{}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(!run.status.success(), "{shown}");
    assert!(
        shown.contains("the message a developer must see"),
        "the failure's message is shown: {shown}"
    );
}
