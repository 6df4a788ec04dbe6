//! What the quota table logs, read from the process's log queue: a test binary of its own, so
//! that no other test drains the queue or logs into it meanwhile.

mod common;

use std::time::Duration;

use common::{drain_logs_until, log_lines};
use grantforge_agent::logging::{self, LogLevel, LogRecord};
use grantforge_agent::quotas::{self, Entity, QuotaType};

/// What the queue holds once `done` holds for it, or after 10 s.
fn drain_until(done: impl Fn(&[LogRecord]) -> bool) -> Vec<LogRecord> {
    let mut records = Vec::new();
    drain_logs_until(&mut records, Duration::from_secs(10), done);
    records
}

#[test]
fn one_warn_per_oversubscribed_user_and_one_info_per_burst_of_changes_never_per_request() {
    logging::install();
    let quotas = quotas::shared();
    let produce = QuotaType::Produce;
    // A burst: 200 users with a total each, one of them oversubscribed by its sub-quota.
    for i in 0..200 {
        quotas.update(&Entity::user(&format!("user{i}")), produce, 4096.0);
    }
    quotas.update(&Entity::user_client("user7", "big"), produce, 4090.0);
    let summary = drain_until(|r| !log_lines(r, LogLevel::Info, "quotas changed").is_empty());
    assert_eq!(
        log_lines(&summary, LogLevel::Info, "quotas changed"),
        ["quotas changed: 201 quota entities (201 producer_byte_rate, 0 consumer_byte_rate, 0 request_percentage, 0 controller_mutation_rate); users reserving sub-quotas: 1"],
        "one line for the burst, after it: {summary:?}"
    );

    // Requests: many resolutions of the oversubscribed user's shared group, and of others.
    for _ in 0..1000 {
        assert!(quotas.resolve(produce, "user7", "small").oversubscribed);
        assert!(!quotas.resolve(produce, "user8", "any").oversubscribed);
    }
    assert_eq!(quotas.stats().oversubscribed, 1);
    // The summary thread waits 500 ms of quiet: give a wrong INFO line the time to show.
    std::thread::sleep(Duration::from_millis(800));
    let requests = logging::drain();
    let warned = log_lines(&requests, LogLevel::Warn, "user7");
    assert_eq!(warned.len(), 1, "one WARN naming user7: {requests:?}");
    assert!(
        warned[0].contains("producer_byte_rate sub-quotas reserved for user user7")
            && warned[0].contains("its other clients share 49,"),
        "{}",
        warned[0]
    );
    assert_eq!(
        requests.len(),
        1,
        "nothing else is logged per request: {requests:?}"
    );

    // A change of the type may change the answer: the WARN comes again, once.
    quotas.update(&Entity::user_client("user7", "big"), produce, 4095.0);
    for _ in 0..100 {
        quotas.resolve(produce, "user7", "small");
    }
    let after = drain_until(|r| !log_lines(r, LogLevel::Info, "quotas changed").is_empty());
    assert_eq!(
        log_lines(&after, LogLevel::Warn, "user7").len(),
        1,
        "{after:?}"
    );
    assert_eq!(
        log_lines(&after, LogLevel::Info, "quotas changed").len(),
        1,
        "{after:?}"
    );
}
