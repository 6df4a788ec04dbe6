//! `docs/architecture.md`'s table of the runtime's modules held to the tree: every file of `src/`
//! is named (a folder's files in the folder's row), and every name in the table is a file.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn source_dir() -> std::path::PathBuf {
    common::in_crate("").join("src")
}

/// Each row of the table under "## The agent runtime's modules": the first cell's names, and the
/// `*.rs` names of its second cell.
fn module_rows() -> Vec<(Vec<String>, Vec<String>)> {
    let path = common::in_crate("").join("../../docs/architecture.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let section = doc
        .split("## The agent runtime's modules")
        .nth(1)
        .expect("docs/architecture.md has a section \"The agent runtime's modules\"");
    let section = section.split("\n## ").next().unwrap_or(section);
    section
        .lines()
        .filter(|line| line.starts_with("| `"))
        .map(|line| {
            let mut cells = line.trim_start_matches('|').splitn(2, " | ");
            let names = quoted(cells.next().unwrap_or(""));
            let files = quoted(cells.next().unwrap_or(""))
                .into_iter()
                .filter(|name| name.ends_with(".rs"))
                .collect();
            (names, files)
        })
        .collect()
}

fn quoted(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// What the table must name: `x.rs` for a module of one file, `x/` for a folder (with the `.rs`
/// files in it and below it, its root `x.rs` among them when it has one). Tests, `lib.rs` and the unit tests'
/// shared helpers are not modules of the product.
fn tree() -> (BTreeSet<String>, Vec<(String, BTreeSet<String>)>) {
    let mut files = BTreeSet::new();
    let mut folders = Vec::new();
    for entry in std::fs::read_dir(source_dir()).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().to_string();
        if entry.path().is_dir() {
            let mut inside: BTreeSet<String> = rust_files(&entry.path());
            if source_dir().join(format!("{name}.rs")).exists() {
                inside.insert(format!("{name}.rs"));
            }
            folders.push((format!("{name}/"), inside));
        } else if name.ends_with(".rs") && !["lib.rs", "test_support.rs"].contains(&name.as_str()) {
            let stem = name.trim_end_matches(".rs");
            if !source_dir().join(stem).is_dir() {
                files.insert(name);
            }
        }
    }
    (files, folders)
}

/// The `.rs` files below `dir` but tests, as paths from it (`server/succession.rs`).
fn rust_files(dir: &Path) -> BTreeSet<String> {
    let mut files = BTreeSet::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().to_string();
        if entry.path().is_dir() {
            files.extend(
                rust_files(&entry.path())
                    .into_iter()
                    .map(|inner| format!("{name}/{inner}")),
            );
        } else if name.ends_with(".rs") && name != "tests.rs" {
            files.insert(name);
        }
    }
    files
}

#[test]
fn the_module_table_names_every_file_of_the_runtime_and_nothing_else() {
    let rows = module_rows();
    let (files, folders) = tree();
    let named: BTreeSet<String> = rows.iter().flat_map(|(names, _)| names.clone()).collect();
    let expected: BTreeSet<String> = files
        .iter()
        .cloned()
        .chain(folders.iter().map(|(folder, _)| folder.clone()))
        .collect();
    assert_eq!(
        named, expected,
        "docs/architecture.md's module table names each file of src/ (x.rs) and each folder \
         (x/) in its first column: add a row for a new module, remove the row of one that is gone"
    );
    for (folder, inside) in &folders {
        let (_, described) = rows
            .iter()
            .find(|(names, _)| names.contains(folder))
            .expect("every folder has a row");
        let described: BTreeSet<String> = described.iter().cloned().collect();
        assert_eq!(
            &described, inside,
            "the row of {folder} names each of its files, and only those"
        );
    }
}

/// The order `lib.rs` states: each module uses only those after it.
fn stated_order() -> Vec<String> {
    let lib = std::fs::read_to_string(source_dir().join("lib.rs")).unwrap();
    let marker = "holds the code to it):";
    let after = lib
        .split(marker)
        .nth(1)
        .expect("lib.rs states the modules' order");
    after
        .lines()
        .map(|line| line.trim_start_matches("//!").trim())
        .skip_while(|line| line.is_empty())
        .take_while(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
        .trim_end_matches('.')
        .split(", ")
        .map(|name| name.trim().to_string())
        .collect()
}

/// Each module of the tree (`bin` aside: no module) and its files, from [`tree`].
fn modules() -> BTreeMap<String, Vec<PathBuf>> {
    let (files, folders) = tree();
    let mut modules = BTreeMap::new();
    for file in files {
        let module = file.trim_end_matches(".rs").to_string();
        modules.insert(module, vec![source_dir().join(file)]);
    }
    for (folder, inside) in folders {
        let module = folder.trim_end_matches('/').to_string();
        if module == "bin" {
            continue;
        }
        let paths = inside
            .iter()
            .map(|file| {
                if *file == format!("{module}.rs") {
                    source_dir().join(file)
                } else {
                    source_dir().join(&module).join(file)
                }
            })
            .collect();
        modules.insert(module, paths);
    }
    modules
}

/// The modules of `crate::` a module's files name, tests aside (a file's own code ends where its
/// unit tests begin; `tests.rs` files are tests).
fn used_modules(module: &str, files: &[PathBuf]) -> BTreeSet<String> {
    let mut used = BTreeSet::new();
    for file in files {
        let text = std::fs::read_to_string(file).unwrap();
        let own = text
            .split("#[cfg(test)]\nmod tests")
            .next()
            .unwrap_or(&text);
        for line in own.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for part in line.split("crate::").skip(1) {
                let name: String = part
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if name != module && !name.is_empty() {
                    used.insert(name);
                }
            }
        }
    }
    used
}

#[test]
fn each_module_uses_only_the_modules_after_it_in_the_order_lib_rs_states() {
    let order = stated_order();
    let modules = modules();
    let stated: BTreeSet<&String> = order.iter().collect();
    assert_eq!(
        stated,
        modules.keys().collect(),
        "lib.rs's order names every module once"
    );
    for (at, module) in order.iter().enumerate() {
        for used in used_modules(module, &modules[module]) {
            let Some(used_at) = order.iter().position(|m| *m == used) else {
                continue; // an item of lib.rs itself, such as `internals`
            };
            assert!(
                used_at > at,
                "{module} uses {used}, which comes before it in lib.rs's order: a dependency \
                 that points back up"
            );
        }
    }
}
