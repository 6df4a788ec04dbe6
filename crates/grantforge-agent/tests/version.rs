//! The agent's version is defined once, as the project's version in the root `pom.xml`: the JAR's
//! name and manifest come from it, and everything else must agree with it — the crates' version
//! (`Cargo.toml`, which the `User-Agent` and the heartbeat's `agentVersion` carry), every module's
//! parent version, the JAR named in the docs, and the changelog's next release.

mod common;

use std::path::{Path, PathBuf};

fn repository() -> PathBuf {
    common::in_crate("").join("../..")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The first `<version>` element of a POM: the project's own in the root, the parent's in a module.
fn first_version(pom: &str) -> &str {
    let start = pom.find("<version>").expect("a <version>") + "<version>".len();
    let end = start + pom[start..].find("</version>").expect("</version>");
    &pom[start..end]
}

fn project_version() -> String {
    first_version(&read(&repository().join("pom.xml"))).to_string()
}

#[test]
fn the_crates_carry_the_projects_version() {
    assert_eq!(
        env!("CARGO_PKG_VERSION"),
        project_version(),
        "set [workspace.package] version in Cargo.toml to the version of pom.xml"
    );
}

#[test]
fn every_module_names_the_projects_version_as_its_parents() {
    let version = project_version();
    let modules = [
        "java-shim/pom.xml",
        "tests/integration/pom.xml",
        "benchmarks/pom.xml",
        "tests/kafka-dists/kafka-3.7.2/pom.xml",
        "tests/kafka-dists/kafka-3.9.2/pom.xml",
        "tests/kafka-dists/kafka-4.1.2/pom.xml",
        "tests/kafka-dists/kafka-4.3.1/pom.xml",
        "tests/kafka-dists/kafka-4.4.0/pom.xml",
    ];
    for module in modules {
        let pom = read(&repository().join(module));
        let parent = &pom[pom
            .find("<parent>")
            .unwrap_or_else(|| panic!("{module}: a <parent>"))..];
        assert_eq!(first_version(parent), version, "{module}'s parent version");
    }
}

#[test]
fn the_docs_name_the_jar_of_this_version() {
    let jar = format!("grantforge-agent-kafka-{}.jar", project_version());
    let mut docs = vec![repository().join("README.md")];
    for entry in std::fs::read_dir(repository().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        // benchmarks.md records what was measured, with the JAR of its day
        if path.extension().is_some_and(|e| e == "md") && !path.ends_with("benchmarks.md") {
            docs.push(path);
        }
    }
    for doc in docs {
        let text = read(&doc);
        for (at, _) in text.match_indices("grantforge-agent-kafka-") {
            let named = &text[at..];
            let end = named.find(".jar").map_or(0, |e| e + ".jar".len());
            let named = &named[..end];
            if named
                .chars()
                .nth("grantforge-agent-kafka-".len())
                .is_some_and(|c| c.is_ascii_digit())
            {
                assert_eq!(named, jar, "{}", doc.display());
            }
        }
    }
}

#[test]
fn the_changelog_names_the_next_release() {
    let changelog = read(&repository().join("CHANGELOG.md"));
    let heading = changelog
        .lines()
        .find(|l| l.starts_with("## "))
        .expect("a release heading");
    assert!(
        heading.contains(&project_version()),
        "CHANGELOG.md's first heading `{heading}` names {}",
        project_version()
    );
}
