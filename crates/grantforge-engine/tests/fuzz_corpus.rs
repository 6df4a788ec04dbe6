//! The fuzz target's kept corpus, replayed on stable in every test run: each input must read as it
//! parses (`read_vs_parse::check`), so what the fuzzer once reached stays a regression test without
//! nightly.

mod read_vs_parse;

#[test]
fn every_input_of_the_fuzz_corpus_reads_as_it_parses() {
    let corpus = in_crate("").join("fuzz/corpus/snapshot_parse");
    let mut inputs = 0;
    for entry in std::fs::read_dir(&corpus).expect("the kept corpus") {
        let path = entry.expect("a corpus entry").path();
        let data = std::fs::read(&path).expect("a corpus input");
        let replayed = std::panic::catch_unwind(|| read_vs_parse::check(&data));
        assert!(replayed.is_ok(), "{} fails the check", path.display());
        inputs += 1;
    }
    // An emptied or moved corpus must not pass as a replayed one.
    assert!(inputs > 100, "only {inputs} inputs in {}", corpus.display());
}

/// A file of this crate's checkout, found when the test runs (cargo sets `CARGO_MANIFEST_DIR` for
/// it, as for the build): CI reuses a test binary built from the same bytes in another checkout,
/// and it must read this checkout's files (`scripts/content-mtimes`).
fn in_crate(relative: &str) -> std::path::PathBuf {
    let dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .expect("run by cargo, which sets CARGO_MANIFEST_DIR");
    std::path::Path::new(&dir).join(relative)
}
