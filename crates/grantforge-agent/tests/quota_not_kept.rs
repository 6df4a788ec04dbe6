//! What the quota table logs and counts when the shim's view of answers is full: a test binary of
//! its own, so that no other test drains the process's log queue meanwhile.

use std::time::Duration;

use grantforge_agent::logging::{self, LogLevel};
use grantforge_agent::quotas::{self, Entity, NotKept, QuotaType};

#[test]
fn answers_the_view_cannot_keep_are_counted_and_each_fill_is_logged_once() {
    logging::install();
    let quotas = quotas::shared();
    let produce = QuotaType::Produce;
    let before = quotas.stats().not_kept;
    for i in 0..500 {
        quotas.not_kept(produce, "flooder\nforged", NotKept::UserShareFull);
        quotas.not_kept(produce, &format!("user{i}"), NotKept::TypeFull);
        quotas.not_kept(produce, "long", NotKept::LongNames);
    }
    assert_eq!(quotas.stats().not_kept, before + 1500);
    std::thread::sleep(Duration::from_millis(100));
    let records = logging::drain();
    let infos: Vec<&str> = records
        .iter()
        .filter(|r| r.level == LogLevel::Info)
        .map(|r| r.message.as_str())
        .collect();
    assert_eq!(
        infos.len(),
        2,
        "one line per fill, never one per question: {infos:?}"
    );
    assert!(infos.iter().any(|m| m.starts_with(
        "user flooder\\nforged holds its share of the request path's view of producer_byte_rate"
    )));
    assert!(infos
        .iter()
        .any(|m| m.starts_with("the request path's view of producer_byte_rate answers is full")));

    // A change of the type empties the view: its next fill is logged again.
    quotas.update(&Entity::user("someone"), produce, 5000.0);
    quotas.not_kept(produce, "user1", NotKept::TypeFull);
    std::thread::sleep(Duration::from_millis(100));
    let again = logging::drain();
    assert_eq!(
        again
            .iter()
            .filter(|r| r.message.contains("answers is full"))
            .count(),
        1,
        "{again:?}"
    );
}
