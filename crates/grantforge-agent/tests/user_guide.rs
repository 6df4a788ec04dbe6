//! `docs/user-guide.md` links every promise to the tests that prove it. This keeps the links true:
//! each file a "Proved by" cell names exists, and each test named after it is defined in that file
//! (a Rust `fn` or a Java method), so a renamed or deleted test fails here instead of leaving a
//! promise without its proof. (The agent crate holds the tests of the docs, as it holds the
//! settings table that `docs/configuration.md` is checked against.)

mod common;

use std::path::PathBuf;

const INTEGRATION_TESTS: &str = "tests/integration/src/test/java/org/devlive/grantforge/kafka/it/";

fn repository() -> PathBuf {
    common::in_crate("").join("../..")
}

/// The backticked words of a table row's last cell.
fn proved_by(row: &str) -> Vec<&str> {
    let cells: Vec<&str> = row.trim().trim_matches('|').split(" | ").collect();
    let last = cells.last().copied().unwrap_or("");
    last.split('`').skip(1).step_by(2).collect()
}

/// A cited file: a path to a `.rs` or `.java` file, `IT/` standing for the integration tests.
fn cited_file(word: &str) -> Option<String> {
    let word = word.strip_suffix(':').unwrap_or(word);
    if !(word.ends_with(".rs") || word.ends_with(".java")) {
        return None;
    }
    Some(match word.strip_prefix("IT/") {
        Some(rest) => format!("{INTEGRATION_TESTS}{rest}"),
        None if word.contains('/') => word.to_string(),
        // A bare file name refers to a file cited before in the same guide.
        None => word.to_string(),
    })
}

fn defines(source: &str, test: &str) -> bool {
    [format!("fn {test}("), format!("void {test}(")]
        .iter()
        .any(|definition| source.contains(definition.as_str()))
}

#[test]
fn every_test_the_user_guide_cites_exists_where_it_says() {
    let root = repository();
    let guide = std::fs::read_to_string(root.join("docs/user-guide.md")).unwrap();
    let mut known: Vec<String> = Vec::new();
    let mut checked = 0;
    for row in guide
        .lines()
        .filter(|l| l.starts_with('|') && !l.contains("---"))
    {
        let mut file: Option<(String, String)> = None;
        for word in proved_by(row) {
            if let Some(cited) = cited_file(word) {
                let path = if cited.contains('/') {
                    cited
                } else {
                    known
                        .iter()
                        .find(|k| k.ends_with(&format!("/{cited}")))
                        .unwrap_or_else(|| panic!("{cited} is cited by name before its path"))
                        .clone()
                };
                let source = std::fs::read_to_string(root.join(&path)).unwrap_or_else(|e| {
                    panic!("the guide cites {path}, which cannot be read: {e}")
                });
                if !known.contains(&path) {
                    known.push(path.clone());
                }
                file = Some((path, source));
            } else if let Some((path, source)) = &file {
                assert!(
                    defines(source, word),
                    "the guide cites {word} in {path}, which defines no such test"
                );
                checked += 1;
            }
        }
    }
    assert!(
        checked >= 40,
        "only {checked} tests were cited: did the table layout change?"
    );
}

#[test]
fn a_renamed_test_is_caught() {
    assert!(defines("fn a_test() {}", "a_test"));
    assert!(defines("    void aTest() throws Exception {", "aTest"));
    assert!(!defines("fn a_test_longer() {}", "a_test"));
    assert_eq!(
        proved_by("| a `b` | `x.rs`: `t1`, `t2` |"),
        ["x.rs", "t1", "t2"]
    );
    assert_eq!(
        cited_file("IT/A.java").unwrap(),
        format!("{INTEGRATION_TESTS}A.java")
    );
}

/// Whether the integration test `class` (a `*` standing for a release's digits) runs on `release`:
/// the class of that release exists, or the class names the release (a parameterized test).
fn runs_on(class: &str, release: &str) -> bool {
    let digits = release.replace('.', "");
    let file = repository()
        .join(INTEGRATION_TESTS)
        .join(format!("{}.java", class.replace('*', &digits)));
    match std::fs::read_to_string(&file) {
        Ok(source) => class.contains('*') || source.contains(&format!("\"{release}\"")),
        Err(_) => false,
    }
}

/// The cells of a table row, empty ones too (`| |`).
fn columns(row: &str) -> Vec<&str> {
    row.trim()
        .trim_matches('|')
        .split('|')
        .map(str::trim)
        .collect()
}

/// Checks the table of `section` in `docs/compatibility.md`, whose columns are a first one, one
/// per release (its header a version, `4.3.1`) and the test last: every "yes" of a release names a
/// test class that runs on it. Returns the number of such cells.
fn every_yes_names_a_test_of_its_release(section: &str) -> usize {
    let compatibility =
        std::fs::read_to_string(repository().join("docs/compatibility.md")).unwrap();
    let table = compatibility
        .split(&format!("## {section}"))
        .nth(1)
        .unwrap_or_else(|| panic!("docs/compatibility.md has a section \"{section}\""));
    let mut rows = table
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'));
    let header = columns(rows.next().expect("a header row"));
    let releases = &header[1..header.len() - 1];
    assert!(
        releases
            .iter()
            .all(|r| r.split('.').count() == 3 && r.chars().all(|c| c.is_ascii_digit() || c == '.')),
        "{section}: the columns between the first and the last are releases: {header:?}"
    );
    let mut cells = 0;
    for row in rows.skip(1) {
        let cells_of_row = columns(row);
        assert_eq!(
            cells_of_row.len(),
            header.len(),
            "{section}: a row of {} columns: {row}",
            header.len()
        );
        let classes: Vec<&str> = proved_by(row)
            .into_iter()
            .filter(|w| w.chars().next().is_some_and(char::is_uppercase))
            .collect();
        assert!(!classes.is_empty(), "the row names its test: {row}");
        for (release, cell) in releases.iter().zip(&cells_of_row[1..]) {
            if *cell == "yes" {
                assert!(
                    classes.iter().any(|class| runs_on(class, release)),
                    "{release} says yes, but none of {classes:?} runs on it: {row}"
                );
                cells += 1;
            }
        }
    }
    cells
}

#[test]
fn every_cell_of_the_transport_table_names_a_test_of_its_release() {
    let cells = every_yes_names_a_test_of_its_release("Listeners and principals");
    assert!(cells >= 30, "only {cells} cells: did the table change?");
}

#[test]
fn every_cell_of_the_client_kinds_table_names_a_test_of_its_release() {
    let cells = every_yes_names_a_test_of_its_release("Client kinds");
    assert!(cells >= 8, "only {cells} cells: did the table change?");
}

/// `docs/snapshot-format.md`'s example is a whole snapshot: with the definition put in, it loads
/// and decides as the page says.
#[test]
fn the_snapshot_formats_example_loads_and_decides_as_the_page_says() {
    let page = std::fs::read_to_string(repository().join("docs/snapshot-format.md")).unwrap();
    let example = page
        .split("```json\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .expect("docs/snapshot-format.md has a json example");
    let placeholder = "\"<the contents of crates/grantforge-kafka/kafka-service-type.json>\"";
    assert!(
        example.contains(placeholder),
        "the example's definition is the placeholder"
    );
    let definition = std::fs::read_to_string(
        repository().join("crates/grantforge-kafka/kafka-service-type.json"),
    )
    .unwrap();
    let snapshot = example.replace(placeholder, &definition);
    let file = std::env::temp_dir().join(format!("gf-snapshot-format-{}.json", std::process::id()));
    std::fs::write(&file, snapshot).unwrap();
    let ask = |host: &str| {
        let args: Vec<String> = [
            "--snapshot",
            file.to_str().unwrap(),
            "--principal",
            "User:shop",
            "--operation",
            "WRITE",
            "--topic",
            "orders-eu",
            "--host",
            host,
        ]
        .iter()
        .map(|a| a.to_string())
        .collect();
        grantforge_agent::explain::run(&args, "")
    };
    // what the page says of it: the shop writes orders-* from 10.0.0.0/8, and from nowhere else
    let (inside, outside) = (ask("10.1.2.3"), ask("192.168.1.1"));
    std::fs::remove_file(&file).unwrap();
    assert_eq!(inside.0, 0, "{}", inside.1);
    assert!(
        inside.1.contains("decision: ALLOWED by policy 1"),
        "{}",
        inside.1
    );
    assert!(outside.1.contains("decision: DENIED"), "{}", outside.1);
}

/// Every example of `docs/explain.md` is the tool's output, byte for byte: each block that starts
/// `$ explain --snapshot e2e.json …` or `client-kinds.json` (or feeds `--batch` with `printf`) is run on the fixture and
/// compared; `| jq .` compares the JSON as `jq` prints it.
#[test]
fn the_examples_of_the_explain_page_are_the_tools_output() {
    let page = std::fs::read_to_string(repository().join("docs/explain.md")).unwrap();
    let fixtures = repository().join("tests/fixtures/snapshots");
    let mut compared = 0;
    for block in page.split("```\n").skip(1).step_by(2) {
        let Some(command) = block.strip_prefix("$ ") else {
            continue;
        };
        let (first, rest) = command.split_once('\n').unwrap();
        let (stdin, line, expected) = match first.strip_prefix("printf -- \"") {
            Some(printed) => {
                let printed = printed.split("\" \\").next().unwrap().replace("\\n", "\n");
                let (piped, expected) = rest.split_once('\n').unwrap();
                (printed, piped.trim().trim_start_matches("| "), expected)
            }
            None => (String::new(), first, rest),
        };
        let Some(line) = line.strip_prefix("explain ") else {
            continue;
        };
        let (line, jq) = match line.strip_suffix(" | jq .") {
            Some(line) => (line, true),
            None => (line, false),
        };
        let args: Vec<String> = line
            .split(' ')
            .map(|word| match word {
                // the demo's policies, and those `ClientKinds*Test` runs real clients of each kind with
                "e2e.json" | "client-kinds.json" => fixtures.join(word).display().to_string(),
                word => word.to_string(),
            })
            .collect();
        let (code, output) = grantforge_agent::explain::run(&args, &stdin);
        assert_eq!(code, 0, "{first}: {output}");
        let output = if jq {
            let value: serde_json::Value = serde_json::from_str(&output).unwrap();
            serde_json::to_string_pretty(&value).unwrap() + "\n"
        } else {
            output
        };
        assert_eq!(
            output, expected,
            "docs/explain.md shows other output for: {first}"
        );
        compared += 1;
    }
    assert!(
        compared >= 5,
        "only {compared} examples compared: did the page change?"
    );
}

fn read(page: &str) -> String {
    std::fs::read_to_string(repository().join(page)).unwrap_or_else(|e| panic!("{page}: {e}"))
}

/// The first number of a table cell, bold or not, without its thousands separators.
fn number_in(cell: &str) -> String {
    cell.trim_start_matches(|c: char| !c.is_ascii_digit())
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .filter(|c| *c != ',')
        .collect()
}

/// The cache-hit figures the README and the guide quote are those of the summary of
/// `docs/benchmarks.md`: the agent now, and StandardAuthorizer in the same run.
#[test]
fn the_readme_and_the_guide_quote_the_benchmarks_summary() {
    let benchmarks = read("docs/benchmarks.md");
    let row = benchmarks
        .lines()
        .find(|l| l.starts_with("| cache hit, 1 thread"))
        .expect("docs/benchmarks.md's summary has the row `| cache hit, 1 thread`");
    let cells: Vec<&str> = row.trim_matches('|').split(" | ").collect();
    let (agent, anchor) = (number_in(cells[3]), number_in(cells[4]));
    assert!(!agent.is_empty() && !anchor.is_empty(), "{row}");
    for page in ["README.md", "docs/user-guide.md"] {
        let text = read(page).replace('\n', " ").replace("  ", " ");
        for figure in [&agent, &anchor] {
            assert!(
                text.contains(&format!("about {figure} ns")),
                "{page} must quote the summary of docs/benchmarks.md: about {agent} ns for a cache \
                 hit against about {anchor} ns for StandardAuthorizer"
            );
        }
    }
}

/// The default of a key, in seconds, from `docs/configuration.md` (held to the settings table by
/// `settings.rs`).
fn default_seconds(configuration: &str, key: &str) -> u64 {
    let row = configuration
        .lines()
        .find(|l| l.starts_with(&format!("| `{key}` |")))
        .unwrap_or_else(|| panic!("docs/configuration.md has no row for {key}"));
    let millis: u64 = number_in(row.split(" | ").nth(1).unwrap()).parse().unwrap();
    millis / 1000
}

/// How soon a change applies, as the README and the guide say it, follows from the defaults: a
/// changed file within its poll interval, a server's change within a heartbeat and the jitter.
#[test]
fn how_soon_a_change_applies_is_what_the_defaults_make_it() {
    let configuration = read("docs/configuration.md");
    let poll = default_seconds(&configuration, "grantforge.policy.file.poll.interval.ms");
    let heartbeat = default_seconds(&configuration, "grantforge.refresh.interval.ms");
    let jitter = default_seconds(&configuration, "grantforge.download.jitter.ms");
    let readme = read("README.md").replace('\n', " ").replace("  ", " ");
    for (said, what) in [
        (
            format!("within {poll} s of a changed file"),
            "the file's poll interval",
        ),
        (
            format!(
                "within {} s of a policy edit on the server at the defaults",
                heartbeat + jitter
            ),
            "the heartbeat plus the jitter",
        ),
        (format!("heartbeat ({heartbeat} s,"), "the heartbeat"),
        (format!("up to {jitter} s"), "the jitter"),
    ] {
        assert!(
            readme.contains(&said),
            "README.md must say `{said}`: {what}"
        );
    }
    let guide = read("docs/user-guide.md").replace('\n', " ");
    let at_defaults = format!("at the defaults it takes up to {} s", heartbeat + jitter);
    assert!(
        guide.contains(&at_defaults),
        "docs/user-guide.md must say `{at_defaults}`"
    );
}

const GETTING_STARTED: &str = "docs/examples/getting-started";

/// `docs/getting-started.md` shows the node's `server.properties` whole: the file that
/// `GettingStartedTest` starts real nodes from.
#[test]
fn the_getting_started_page_shows_the_tested_server_properties_whole() {
    let page = read("docs/getting-started.md");
    let shown = page
        .split("```properties\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("docs/getting-started.md shows a properties block");
    assert_eq!(
        shown,
        read(&format!("{GETTING_STARTED}/server.properties")),
        "docs/getting-started.md must show {GETTING_STARTED}/server.properties as it is"
    );
}

/// The getting-started policy file carries the agent's own definition of the `kafka` type, and
/// decides as the page says: alice writes orders, bob does not.
#[test]
fn the_getting_started_policies_carry_the_definition_and_refuse_bob() {
    let file = repository().join(format!("{GETTING_STARTED}/policies.json"));
    let policies: serde_json::Value =
        serde_json::from_str(&read(&format!("{GETTING_STARTED}/policies.json"))).unwrap();
    let definition: serde_json::Value =
        serde_json::from_str(&read("crates/grantforge-kafka/kafka-service-type.json")).unwrap();
    assert_eq!(
        policies["definition"], definition,
        "{GETTING_STARTED}/policies.json's definition must be crates/grantforge-kafka/kafka-service-type.json"
    );
    let ask = |user: &str| {
        let args: Vec<String> = [
            "--snapshot",
            file.to_str().unwrap(),
            "--principal",
            user,
            "--operation",
            "WRITE",
            "--topic",
            "orders",
        ]
        .iter()
        .map(|a| a.to_string())
        .collect();
        grantforge_agent::explain::run(&args, "")
    };
    let (alice, bob) = (ask("User:alice"), ask("User:bob"));
    assert!(
        alice.1.contains("decision: ALLOWED by policy 1"),
        "{}",
        alice.1
    );
    assert!(bob.1.contains("decision: DENIED"), "{}", bob.1);
}

/// The row of `page`'s table that starts with `| <first> |`, cut into cells.
fn table_row<'a>(page: &'a str, first: &str) -> Vec<&'a str> {
    let row = page
        .lines()
        .find(|l| l.starts_with(&format!("| {first} |")))
        .unwrap_or_else(|| panic!("no table row `| {first} |`"));
    columns(row)
}

/// The `+N MiB` figures of a cell, in order.
fn mib_growths(cell: &str) -> Vec<String> {
    cell.split('+')
        .skip(1)
        .map(|part| {
            part.split(" MiB")
                .next()
                .unwrap_or_default()
                .trim()
                .to_string()
        })
        .collect()
}

/// The sizing table of `docs/production.md` quotes "One load, stage by stage" of
/// `docs/benchmarks.md`, column by column: the file, what a snapshot keeps, and a load's peak
/// (reading the file, then the load).
#[test]
fn the_sizing_table_quotes_the_measured_load() {
    let (production, benchmarks) = (read("docs/production.md"), read("docs/benchmarks.md"));
    let sizes = ["10,000", "50,000", "200,000", "1,000,000"];
    let files = table_row(&benchmarks, "file size");
    let reads = table_row(&benchmarks, "read the file");
    let loads = table_row(&benchmarks, "**the agent's load, two threads**");
    let kept = table_row(&benchmarks, "kept by its result");
    for (column, size) in sizes.iter().enumerate().map(|(i, s)| (i + 1, s)) {
        let sizing = table_row(&production, size);
        assert_eq!(sizing[1], files[column], "{size}: the snapshot file");
        assert_eq!(sizing[2], kept[column], "{size}: kept in native memory");
        let peak: Vec<String> = mib_growths(reads[column])
            .into_iter()
            .chain(mib_growths(loads[column].trim_matches('*')))
            .collect();
        assert_eq!(mib_growths(sizing[3]), peak, "{size}: a load's peak");
    }
}
