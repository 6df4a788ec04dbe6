//! `docs/architecture.md`'s tables of the JNI boundary held to the code: its methods against the
//! Java declarations and the library's exports; its payloads against the codec files they name (the
//! layout of each payload is written once, at the top of its codec file, and the table only points
//! there).

fn read(relative: &str) -> String {
    let path = in_crate("").join(relative);
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

/// The names in the first column of the table under "## The JNI boundary": `NativeAgent`'s as
/// written, the quota table's with `NativeQuotas.` before them.
fn documented_methods(doc: &str) -> Vec<String> {
    let section = doc
        .split("## The JNI boundary")
        .nth(1)
        .expect("docs/architecture.md has a section \"The JNI boundary\"");
    let section = section.split("\n## ").next().unwrap_or(section);
    let mut names = Vec::new();
    for line in section.lines().filter(|l| l.starts_with("| `")) {
        let first_cell = line
            .trim_start_matches('|')
            .split(" | ")
            .next()
            .unwrap_or("");
        for quoted in first_cell.split('`').skip(1).step_by(2) {
            let name = quoted.split('(').next().unwrap_or(quoted).trim();
            names.push(name.to_string());
        }
    }
    names
}

/// The native methods a Java class declares (`static native ... name(`), with `prefix` before each.
fn declared_methods(java: &str, prefix: &str) -> Vec<String> {
    java.lines()
        .filter(|line| line.contains("static native ") && !line.trim_start().starts_with('*'))
        .filter_map(|line| line.split('(').next()?.split_whitespace().last())
        .map(|name| format!("{prefix}{name}"))
        .collect()
}

/// The methods the library exports for `class` (`Java_..._<class>_<name>`), with `prefix` before each.
fn exported_methods(rust: &str, class: &str, prefix: &str) -> Vec<String> {
    let marker = format!("_jni_{class}_");
    rust.lines()
        .filter(|line| line.contains("extern \"system\" fn Java_"))
        .filter_map(|line| {
            let after = line.split(&marker).nth(1)?;
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect();
            Some(format!("{prefix}{name}"))
        })
        .collect()
}

fn sorted(mut names: Vec<String>) -> Vec<String> {
    names.sort();
    names
}

#[test]
fn the_jni_method_table_names_every_native_method_once_and_nothing_else() {
    let jni = "../../java-shim/src/main/java/org/devlive/grantforge/kafka/agent/jni";
    let declared = sorted(
        [
            declared_methods(&read(&format!("{jni}/NativeAgent.java")), ""),
            declared_methods(&read(&format!("{jni}/NativeQuotas.java")), "NativeQuotas."),
        ]
        .concat(),
    );
    let exported = sorted(
        [
            exported_methods(&read("src/lib.rs"), "NativeAgent", ""),
            exported_methods(&read("src/lib.rs"), "NativeQuotas", "NativeQuotas."),
        ]
        .concat(),
    );
    let documented = sorted(documented_methods(&read("../../docs/architecture.md")));
    assert!(
        declared.len() >= 26,
        "the Java classes declare every method: {declared:?}"
    );
    assert_eq!(
        exported, declared,
        "the library exports exactly the methods NativeAgent.java and NativeQuotas.java declare"
    );
    assert_eq!(
        documented, declared,
        "docs/architecture.md's JNI method table names each native method once (NativeQuotas' as \
         `NativeQuotas.name`): add a row for a new one, remove the row of one that is gone"
    );
}

/// A file of this crate's checkout, found when the test runs (cargo sets `CARGO_MANIFEST_DIR` for
/// it, as for the build): CI reuses a test binary built from the same bytes in another checkout,
/// and it must read this checkout's files (`scripts/content-mtimes`).
fn in_crate(relative: &str) -> std::path::PathBuf {
    let dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .expect("run by cargo, which sets CARGO_MANIFEST_DIR");
    std::path::Path::new(&dir).join(relative)
}
