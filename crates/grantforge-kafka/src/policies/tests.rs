use super::*;
use crate::AclRow;

fn e2e() -> String {
    std::fs::read_to_string(in_crate("../../tests/fixtures/snapshots/e2e.json")).unwrap()
}

fn quoted(items: impl Iterator<Item = String>) -> String {
    items
        .map(|item| format!("\"{item}\""))
        .collect::<Vec<_>>()
        .join(",")
}

/// Policy 1 of the fixture with 3,000 topics, 3,000 users and all 13 access types: 77 KB that
/// ask for 3,000 × 3,000 × 13 = 117 M ACL rows (4.7 GB of rows before deduplication), plus the
/// fixture's other 5.
fn cross_product_snapshot() -> String {
    let values = quoted((0..3000).map(|i| format!("topic-{i}")));
    let users = quoted((0..3000).map(|i| format!("user-{i}")));
    let all = quoted(
        [
            "all",
            "read",
            "write",
            "create",
            "delete",
            "alter",
            "describe",
            "cluster_action",
            "describe_configs",
            "alter_configs",
            "idempotent_write",
            "create_tokens",
            "describe_tokens",
        ]
        .iter()
        .map(|a| a.to_string()),
    );
    let text = e2e()
        .replacen(
            "\"values\":[\"orders\"]",
            &format!("\"values\":[{values}]"),
            1,
        )
        .replacen(
            "\"users\":[\"alice\"],\"groups\":[],\"roles\":[],\"accessTypes\":[\"read\",\"write\"]",
            &format!("\"users\":[{users}],\"groups\":[],\"roles\":[],\"accessTypes\":[{all}]"),
            1,
        );
    assert!(text.len() < 80_000, "{} bytes", text.len());
    text
}

#[test]
fn a_small_snapshot_asking_for_a_hundred_million_acl_rows_loads_quickly_with_bounded_rows_and_one_warning(
) {
    let text = cross_product_snapshot();
    let started = std::time::Instant::now();
    let policies = KafkaPolicies::load(text.as_bytes(), Instant::now()).unwrap();
    let took = started.elapsed();
    eprintln!(
        "{} bytes asking for 117 M ACL rows loaded in {took:?}",
        text.len()
    );
    assert!(took < std::time::Duration::from_secs(20), "took {took:?}");
    let rows = policies.acl_view().len();
    assert!(
        rows <= ACL_VIEW_MAX_ROWS && rows > ACL_VIEW_MAX_ROWS / 2,
        "{rows} rows"
    );
    let warnings = policies.warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("cut at 1000000 rows")
            && warnings[0].contains("ask for 117000005 rows"),
        "{}",
        warnings[0]
    );
    // The view is cut, the decisions are not.
    let user = RequestContext {
        principal: Principal {
            principal_type: "User".into(),
            name: "user-2999".into(),
        },
        ..Default::default()
    };
    let action = Action {
        operation: Some(Operation::Create),
        resource_type: Some(ResourceType::Topic),
        literal: true,
        name: "topic-2999",
        log_if_allowed: false,
        log_if_denied: false,
    };
    assert!(policies.decide(&user, &action, Instant::now()).allowed());
}

#[test]
fn each_reason_says_whether_it_allows_is_checked_is_kept_and_which_policy_decided() {
    // (reason, allowed, checked, cacheable, policy id)
    let table = [
        (Reason::SuperUser, true, false, false, None),
        (Reason::ServiceDisabled, true, false, true, None),
        (Reason::NoSnapshot, false, true, false, None),
        (Reason::RefusedServiceType, false, true, false, None),
        (Reason::SnapshotTooOld, false, true, false, None),
        (Reason::Unplaced, false, true, false, None),
        (
            Reason::Policy {
                id: 7,
                allowed: true,
            },
            true,
            true,
            true,
            Some(7),
        ),
        (
            Reason::Policy {
                id: 9,
                allowed: false,
            },
            false,
            true,
            true,
            Some(9),
        ),
        (Reason::NoPolicy, false, true, true, None),
    ];
    for (reason, allowed, checked, cacheable, policy_id) in table {
        assert_eq!(
            (
                reason.allowed(),
                reason.checked(),
                reason.cacheable(),
                reason.policy_id()
            ),
            (allowed, checked, cacheable, policy_id),
            "{reason:?}"
        );
    }
    let described: std::collections::HashSet<&str> =
        table.iter().map(|(reason, ..)| reason.describe()).collect();
    assert_eq!(described.len(), table.len(), "each rule in its own words");
    assert!(Reason::NoPolicy.describe().contains("fail closed"));
}

#[test]
fn principals_are_written_as_kafka_writes_them_and_only_users_are_users() {
    let principal = |principal_type: &str, name: &str| Principal {
        principal_type: principal_type.into(),
        name: name.into(),
    };
    assert_eq!(principal("User", "alice").to_kafka_string(), "User:alice");
    assert_eq!(subject_user(&principal("User", "alice")), "alice");
    assert_eq!(
        subject_user(&principal("Group", "alice")),
        "\u{0}Group:alice",
        "a name no policy can contain, and distinct per principal"
    );
}

#[test]
fn a_kafka_level_with_a_parent_is_refused_at_load() {
    let text = e2e().replacen(
        "{\"name\":\"delegation_token\",\"parent\":null",
        "{\"name\":\"delegation_token\",\"parent\":\"user\"",
        1,
    );
    let Err(error) = KafkaPolicies::load(text.as_bytes(), Instant::now()) else {
        panic!("a delegation_token level below user must be refused");
    };
    assert!(
        error
            .to_string()
            .contains("level `delegation_token` must be a root level"),
        "{error}"
    );
}

#[test]
fn a_definition_without_one_of_kafkas_access_types_is_refused_naming_it() {
    let text = e2e()
        .replacen(
            "{\"name\":\"describe_tokens\",\"impliedGrants\":[]},",
            "",
            1,
        )
        .replacen("\"describe_tokens\",", "", 1);
    let Err(error) = KafkaPolicies::load(text.as_bytes(), Instant::now()) else {
        panic!("a definition without describe_tokens must be refused");
    };
    assert!(
        error
            .to_string()
            .contains("has no access type `describe_tokens`"),
        "{error}"
    );
}

#[test]
fn a_snapshot_of_another_service_type_is_refused_as_such_whatever_its_policies() {
    let mut snapshot: serde_json::Value = serde_json::from_str(&e2e()).unwrap();
    snapshot["serviceType"] = "hive".into();
    // A policy the kafka definition cannot compile: the engine refuses it as it reads.
    snapshot["policies"][0]["document"]["resources"] =
        serde_json::json!({"database": {"values": ["db"], "excludes": false, "recursive": false}});
    let bytes = serde_json::to_vec(&snapshot).unwrap();
    match KafkaPolicies::load(&bytes, Instant::now()) {
        Err(LoadError::WrongServiceType(service_type)) => assert_eq!(service_type, "hive"),
        other => panic!("refused as another service type, not {other:?}"),
    }
    // A broken kafka snapshot keeps its own refusal.
    snapshot["serviceType"] = "kafka".into();
    let bytes = serde_json::to_vec(&snapshot).unwrap();
    let refusal = KafkaPolicies::load(&bytes, Instant::now()).unwrap_err();
    assert!(refusal.to_string().contains("database"), "{refusal}");
}

#[test]
fn explain_asks_the_engine_the_request_decide_asks() {
    let policies = KafkaPolicies::load(e2e().as_bytes(), Instant::now()).unwrap();
    let alice = RequestContext {
        principal: Principal {
            principal_type: "User".into(),
            name: "alice".into(),
        },
        ..Default::default()
    };
    let mut describe_payments = Action {
        operation: Some(Operation::Describe),
        resource_type: Some(ResourceType::Topic),
        literal: true,
        name: "payments",
        log_if_allowed: false,
        log_if_denied: false,
    };
    let now = Instant::now();
    let explained = policies
        .explain(&alice, &describe_payments, now)
        .expect("a placed action is explained")
        .expect("the engine can place it");
    assert_eq!(
        (explained.decision.outcome, explained.decision.policy_id),
        (Outcome::Denied, Some(5))
    );
    assert_eq!(
        policies.decide(&alice, &describe_payments, now),
        Reason::Policy {
            id: 5,
            allowed: false
        }
    );
    describe_payments.literal = false;
    assert!(
        policies.explain(&alice, &describe_payments, now).is_none(),
        "refused before the policies are asked"
    );
}

#[test]
fn the_fixture_has_its_whole_acl_view_and_no_warning() {
    let policies = KafkaPolicies::load(e2e().as_bytes(), Instant::now()).unwrap();
    assert_eq!(policies.acl_view().len(), 7);
    assert!(policies.warnings().is_empty(), "{:?}", policies.warnings());
}

/// The fixture with the `validity` of its policy `id` set to `periods`.
fn with_validity(text: &str, id: i64, periods: &str) -> String {
    let policy = text
        .find(&format!("{{\"id\":\"{id}\""))
        .expect("the fixture's policy");
    let at = policy + text[policy..].find("\"validity\":[]").unwrap();
    format!(
        "{}\"validity\":{periods}{}",
        &text[..at],
        &text[at + "\"validity\":[]".len()..]
    )
}

fn noon() -> Instant {
    Instant::parse("2026-06-15T12:00:00Z").unwrap()
}

/// Whether the view lists alice's `orders` rows (policy 1) and the analysts' (policy 2).
fn shows(view: &AclView) -> (bool, bool) {
    let shown = |principal: &str| {
        view.rows()
            .any(|r: AclRow| r.principal == principal && r.name == "orders")
    };
    (shown("User:alice"), shown("Role:analyst"))
}

#[test]
fn the_acl_view_shows_a_policy_from_its_start_and_hides_it_from_its_end() {
    // Written with offsets as a server may write them: 14:00:10+02:00 is noon + 10 s, and
    // 07:00:05-05:00 is noon + 5 s.
    let text = with_validity(
        &e2e(),
        1,
        r#"[{"from":"2026-06-15T14:00:10+02:00","until":"2026-06-15T12:00:20Z"}]"#,
    );
    let text = with_validity(&text, 2, r#"[{"until":"2026-06-15T07:00:05-05:00"}]"#);
    let at = |secs| noon().plus_seconds(secs);
    let policies = KafkaPolicies::load(text.as_bytes(), noon()).unwrap();
    let loaded = policies.acl_view();
    assert_eq!(shows(&loaded), (false, true));
    assert_eq!(policies.next_acl_view_change(), Some(at(5)));

    assert!(
        policies.advance_acl_view(at(4)).is_none(),
        "no boundary passed"
    );
    let ended = policies.advance_acl_view(at(5)).expect("policy 2 ended");
    assert_eq!(shows(&ended), (false, false));
    assert_eq!(shows(&policies.acl_view()), (false, false));
    assert_eq!(
        shows(&loaded),
        (false, true),
        "a reader keeps the view it took"
    );
    assert_eq!(policies.next_acl_view_change(), Some(at(10)));

    let started = policies.advance_acl_view(at(12)).expect("policy 1 started");
    assert_eq!(shows(&started), (true, false));
    assert_eq!(policies.next_acl_view_change(), Some(at(20)));

    let over = policies.advance_acl_view(at(20)).expect("policy 1 ended");
    assert_eq!(shows(&over), (false, false));
    assert_eq!(over.len(), 7 - 2 - 1, "the fixture's other rows stay");
    assert_eq!(policies.next_acl_view_change(), None);
    assert!(policies.advance_acl_view(at(3600)).is_none());
}

#[test]
fn the_validity_changes_are_each_boundary_once_earliest_first_those_passed_too() {
    // Policy 1 began before noon; policy 2 begins at noon, and lists its periods out of order and
    // one end shared with policy 1.
    let text = with_validity(
        &e2e(),
        1,
        r#"[{"from":"2026-06-15T11:59:50Z","until":"2026-06-15T12:00:30Z"}]"#,
    );
    let text = with_validity(
        &text,
        2,
        r#"[{"from":"2026-06-15T12:00:00Z","until":"2026-06-15T12:00:30Z"},{"from":"2026-06-15T12:00:10Z"}]"#,
    );
    let policies = KafkaPolicies::load(text.as_bytes(), noon()).unwrap();
    let at = |secs| noon().plus_seconds(secs);
    assert_eq!(
        policies.validity_changes(),
        [at(-10), at(0), at(10), at(30)],
        "the clock may step back before those passed"
    );
}

#[test]
fn the_boundaries_of_a_policy_the_acl_view_cannot_show_still_change_decisions() {
    // Policy 5 (deny alice on `payments`) made "every topic but payments", from noon + 10 s: no ACL
    // can say "but", so the view leaves it out, yet it decides, and from then on differently.
    let text = e2e().replacen(
        r#""values":["payments"],"excludes":false"#,
        r#""values":["payments"],"excludes":true"#,
        1,
    );
    assert!(text.contains(r#""values":["payments"],"excludes":true"#));
    let text = with_validity(&text, 5, r#"[{"from":"2026-06-15T12:00:10Z"}]"#);
    let policies = KafkaPolicies::load(text.as_bytes(), noon()).unwrap();
    let alice = RequestContext {
        principal: Principal {
            principal_type: "User".into(),
            name: "alice".into(),
        },
        ..Default::default()
    };
    let write_orders = Action {
        operation: Some(Operation::Write),
        resource_type: Some(ResourceType::Topic),
        literal: true,
        name: "orders",
        log_if_allowed: false,
        log_if_denied: false,
    };
    let at = |secs| noon().plus_seconds(secs);
    assert_ne!(
        policies.decide(&alice, &write_orders, noon()),
        policies.decide(&alice, &write_orders, at(10)),
        "policy 5 starts deciding at noon + 10 s"
    );
    assert_eq!(
        policies.validity_changes(),
        [at(10)],
        "what the decision cache is told to expire at"
    );
    assert_eq!(
        policies.next_acl_view_change(),
        None,
        "the view never shows it"
    );
}

#[test]
fn a_disabled_service_shows_no_acl_and_never_recomputes() {
    let text = with_validity(&e2e(), 1, r#"[{"from":"2026-06-15T12:00:10Z"}]"#).replacen(
        "\"serviceEnabled\":true",
        "\"serviceEnabled\":false",
        1,
    );
    let policies = KafkaPolicies::load(text.as_bytes(), noon()).unwrap();
    assert!(!policies.service_enabled);
    assert!(policies.acl_view().is_empty());
    assert_eq!(policies.next_acl_view_change(), None);
    assert!(policies.validity_changes().is_empty());
    assert!(policies.advance_acl_view(noon().plus_seconds(60)).is_none());
    assert!(policies.acl_view().is_empty());
}

#[test]
fn engine_warnings_are_surfaced_for_the_agent_to_log() {
    let text = e2e()
            .replacen(
                "\"conditions\":[{\"name\":\"ip-range\"",
                "\"conditions\":[{\"name\":\"geo\",\"evaluator\":\"geo-ip\",\"options\":{}},{\"name\":\"ip-range\"",
                1,
            )
            .replacen(
                "\"accessTypes\":[\"read\",\"write\"],\"conditions\":[]",
                "\"accessTypes\":[\"read\",\"write\"],\"conditions\":[{\"type\":\"geo\",\"values\":[\"EU\"]}]",
                1,
            )
            .replacen(
                "\"accessTypes\":[\"describe\"],\"conditions\":[]",
                "\"accessTypes\":[\"describe\"],\"conditions\":[{\"type\":\"ip-range\",\"values\":[\"10.0.0.0/99\"]}]",
                1,
            );
    let policies = KafkaPolicies::load(text.as_bytes(), Instant::now()).unwrap();
    let warnings = policies.warnings();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("condition geo has no evaluator")),
        "{warnings:?}"
    );
    assert!(
        warnings.iter().any(|w| w.contains("10.0.0.0/99")),
        "{warnings:?}"
    );
}

#[test]
fn every_layout_of_a_snapshot_loads_the_same_policies_and_acl_view() {
    // More policies than are handed to the ACL view's thread at once.
    let topics: Vec<String> = (0..600)
        .map(|i| format!(r#"{{"id":"{}","name":"t{i}","type":"ACCESS","priority":"NORMAL","document":{{"resources":{{"topic":{{"values":["t-{i}"],"excludes":false,"recursive":false}}}},"allow":[{{"users":["u{i}"],"groups":[],"roles":[],"accessTypes":["read"]}}]}}}}"#, 1000 + i))
        .collect();
    let server_order = e2e().replacen(
        r#""policies":["#,
        &format!(r#""policies":[{},"#, topics.join(",")),
        1,
    );
    let start = server_order.find(r#""definition":"#).unwrap();
    let end = server_order.find(r#","policies":"#).unwrap();
    let definition = &server_order[start..end];
    let without = format!("{}{}", &server_order[..start], &server_order[end + 1..]);
    let close = |text: &str, tail: &str| {
        let open = text.trim_end().strip_suffix('}').unwrap();
        format!("{open},{tail}}}")
    };
    // The definition after the policies: they are kept until it comes.
    let definition_last = close(&without, definition);
    // The definition repeated after the policies: the snapshot is read again, whole.
    let definition_again = close(&server_order, definition);
    let expected = KafkaPolicies::load(server_order.as_bytes(), noon()).unwrap();
    assert!(expected.access_policies > 1 && !expected.acl_view().is_empty());
    for layout in [definition_last, definition_again] {
        let loaded = KafkaPolicies::load(layout.as_bytes(), noon()).unwrap();
        assert_eq!(loaded.access_policies, expected.access_policies);
        let (view, expected_view) = (loaded.acl_view(), expected.acl_view());
        assert!(view.rows().eq(expected_view.rows()), "{layout}");
        assert_eq!(view.asked, expected_view.asked, "no policy counted twice");
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
