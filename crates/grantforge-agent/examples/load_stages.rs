//! Where the time and memory of loading one snapshot go, stage by stage: what the agent does when a
//! policy file (or a download) is applied, on the file `SnapshotScaleBenchmark` loads
//! (`benchmarks/run.sh load-stages` writes it with `ScaleSnapshotFile` and runs this per size).
//!
//! `cargo run --release -p grantforge-agent --example load_stages -- <snapshot.json> <key.pub>`
//!
//! Each stage prints its wall time, the resident set's growth while it ran up to its peak (the
//! kernel's high-water mark, reset before the stage) and what it keeps after. The agent's own load
//! (`KafkaPolicies::load`: one pass, policy by policy) runs first; then the same work in separate
//! passes over a parsed model, to tell its parts apart: parsing, the compiled engine and the ACL
//! view alone, both (`KafkaPolicies::from_snapshot`), and freeing the model.

use std::time::{Duration, Instant as Clock};

use grantforge_agent::SigningKey;
use grantforge_engine::{Instant, PolicyEngine, Snapshot};
use grantforge_kafka::{acl_view, kafka_evaluators, KafkaPolicies, ACL_VIEW_MAX_ROWS};

/// `VmRSS` or `VmHWM` of this process, in KiB.
fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|k| k.parse().ok())
        .unwrap_or(0)
}

/// Resets the high-water mark to the resident set now (`clear_refs` 5, Linux 4.0 and later).
fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn give_back_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of glibc's arenas; it takes no pointer.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Runs one stage and prints its line: `stage, ms, peak growth MiB, kept MiB`.
fn stage<T>(name: &str, run: impl FnOnce() -> T) -> T {
    give_back_freed_memory();
    reset_peak();
    let before = status_kib("VmRSS:");
    let start = Clock::now();
    let value = run();
    let took = start.elapsed();
    let peak = status_kib("VmHWM:");
    let after = status_kib("VmRSS:");
    report(
        name,
        took,
        peak.saturating_sub(before),
        after as i64 - before as i64,
    );
    value
}

fn report(name: &str, took: Duration, peak_kib: u64, kept_kib: i64) {
    println!(
        "{name}\t{:.1}\t{:.1}\t{:.1}",
        took.as_secs_f64() * 1000.0,
        peak_kib as f64 / 1024.0,
        kept_kib as f64 / 1024.0
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [file, key_file] = args.as_slice() else {
        eprintln!("usage: load_stages <snapshot.json> <key.pub>");
        std::process::exit(2);
    };
    let key = SigningKey::from_base64(std::fs::read_to_string(key_file).unwrap().trim()).unwrap();
    let signature = std::fs::read_to_string(format!("{file}.sig")).unwrap();
    let start_rss = status_kib("VmRSS:");
    println!("stage\tms\tpeak growth MiB\tkept MiB");

    let bytes = stage("read", || std::fs::read(file).unwrap());
    let verified = stage("verify", || key.verifies(&bytes, signature.trim()));
    assert!(verified, "{file} does not verify under {key_file}");
    let now = Instant::now();
    // What the agent runs: read, compile, index and gather the ACL view's blocks in one pass.
    drop(stage("one pass: read, compile, index and ACL view", || {
        KafkaPolicies::load(&bytes, now).unwrap()
    }));
    // The same work in separate passes over a parsed model, stage by stage.
    let snapshot = stage("parse", || Snapshot::parse(&bytes).unwrap());
    drop(stage("(alone) compile and index", || {
        PolicyEngine::build(&snapshot, &kafka_evaluators()).unwrap()
    }));
    drop(stage("(alone) ACL view", || {
        acl_view(&snapshot, now, ACL_VIEW_MAX_ROWS)
    }));
    let policies = stage("compile, index and ACL view", || {
        KafkaPolicies::from_snapshot(&snapshot, now).unwrap()
    });
    stage("free the bytes and the parsed model", || {
        drop(snapshot);
        drop(bytes);
        give_back_freed_memory();
    });
    let kept = status_kib("VmRSS:") as i64 - start_rss as i64;
    println!(
        "kept by the loaded policies\t\t\t{:.1}",
        kept as f64 / 1024.0
    );
    drop(policies);
}
