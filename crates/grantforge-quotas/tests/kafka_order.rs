//! The quota types in the order of Kafka's `ClientQuotaType` (`tests/fixtures/jni/kafka-codes.txt`,
//! written from the newest supported release and checked against every release by the integration
//! tests' `KafkaVocabularyTest`). The shim passes a type as its position in Kafka's enum, so a type
//! declared out of Kafka's order would be a different type, silently.

use grantforge_quotas::QuotaType;

#[test]
fn quota_types_are_in_the_order_of_kafkas_client_quota_type() {
    let fixture =
        std::fs::read_to_string(in_crate("../../tests/fixtures/jni/kafka-codes.txt")).unwrap();
    let kafkas: Vec<(String, usize)> = fixture
        .lines()
        .filter_map(|line| line.strip_prefix("ClientQuotaType "))
        .map(|rest| {
            let (name, ordinal) = rest
                .split_once(' ')
                .expect("`ClientQuotaType NAME ordinal`");
            (name.to_string(), ordinal.parse().unwrap())
        })
        .collect();
    assert_eq!(kafkas.len(), QuotaType::COUNT, "Kafka's types: {kafkas:?}");
    for (name, ordinal) in kafkas {
        let ours = QuotaType::from_ordinal(ordinal).map(QuotaType::kafka_name);
        assert_eq!(
            ours,
            Some(name.as_str()),
            "ClientQuotaType position {ordinal}"
        );
    }
}

/// `docs/quotas.md` names every type the resolution knows, where it says how each is resolved: a
/// type added to `QuotaType` is added there too.
#[test]
fn every_quota_type_is_in_the_quota_docs() {
    let doc = std::fs::read_to_string(in_crate("../../docs/quotas.md")).unwrap();
    let start = doc
        .find("For each quota type on its own — ")
        .expect("docs/quotas.md says how each type is resolved");
    let listed = &doc[start..start + doc[start..].find(" — a connection").unwrap()];
    for quota_type in QuotaType::ALL {
        assert!(
            listed.contains(&format!("`{}`", quota_type.config_key())),
            "docs/quotas.md lists `{}` in: {listed}",
            quota_type.config_key()
        );
    }
}

/// A file of this crate's checkout, found when the test runs (cargo sets `CARGO_MANIFEST_DIR` for
/// it, as for the build): CI reuses a test binary built from the same bytes in another checkout,
/// and it must read this checkout's files (`scripts/content-mtimes`).
fn in_crate(relative: &str) -> std::path::PathBuf {
    let dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .expect("run by cargo, which sets CARGO_MANIFEST_DIR");
    std::path::Path::new(&dir).join(relative)
}
