//! Feeds arbitrary bytes to `PolicyEngine::read` and holds it to `Snapshot::parse` then
//! `PolicyEngine::build` (the check is `tests/read_vs_parse`, which `cargo test` also runs on the
//! kept corpus).
#![no_main]

#[path = "../../tests/read_vs_parse/mod.rs"]
mod read_vs_parse;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| read_vs_parse::check(data));
