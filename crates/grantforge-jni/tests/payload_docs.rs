//! `docs/architecture.md`'s table of JNI payloads against the codec files it names: the layout of
//! each payload is written once, at the top of its codec file, and the table only points there.

use std::path::Path;

fn read(relative: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The rows of the table under "## JNI payloads", each split into its cells.
fn payload_rows(doc: &str) -> Vec<Vec<String>> {
    let section = doc
        .split("## JNI payloads")
        .nth(1)
        .expect("docs/architecture.md has a section \"JNI payloads\"");
    let section = section.split("\n## ").next().unwrap_or(section);
    section
        .lines()
        .filter(|line| line.starts_with("| ") && !line.starts_with("| payload |"))
        .map(|line| {
            let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
            inner
                .split(" | ")
                .map(|cell| cell.trim().to_string())
                .collect()
        })
        .collect()
}

#[test]
fn each_payload_layout_is_written_once_at_the_top_of_its_codec_file() {
    let rows = payload_rows(&read("../../docs/architecture.md"));
    assert!(rows.len() >= 9, "the table lists every payload: {rows:?}");
    for row in &rows {
        assert_eq!(
            row.len(),
            4,
            "a row names the payload, its Rust file, its Java class and its way, and restates no \
             layout (the codec file's header is the one place of it): {row:?}"
        );
        let file = row[1].trim_matches('`');
        let header: Vec<String> = read(&format!("src/{file}"))
            .lines()
            .take_while(|line| line.starts_with("//!"))
            .map(str::to_string)
            .collect();
        let opens = header
            .iter()
            .position(|line| line.trim_end() == "//! ```text");
        let opens = opens.unwrap_or_else(|| panic!("{file} opens with its layout in a text block"));
        assert!(
            header[opens + 1..]
                .iter()
                .any(|l| l.trim_end() == "//! ```"),
            "{file}: the layout block is closed in the header"
        );
    }
}
