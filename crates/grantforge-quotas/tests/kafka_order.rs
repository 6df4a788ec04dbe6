//! The quota types in the order of Kafka's `ClientQuotaType` (`tests/fixtures/jni/kafka-codes.txt`,
//! written from the newest supported release and checked against every release by the integration
//! tests' `KafkaVocabularyTest`). The shim passes a type as its position in Kafka's enum, so a type
//! declared out of Kafka's order would be a different type, silently.

use grantforge_quotas::QuotaType;

#[test]
fn quota_types_are_in_the_order_of_kafkas_client_quota_type() {
    let fixture = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/jni/kafka-codes.txt"
    ))
    .unwrap();
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
