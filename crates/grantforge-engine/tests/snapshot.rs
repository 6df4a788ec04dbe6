//! GrantForge's agent-core `SnapshotTest` against its fixture (`Snapshots.java`, in
//! `core/grantforge-agent-core/src/test/java/org/devlive/grantforge/agent/` of
//! devlive-community/grantforge), and the strict reading rules of `Snapshot.parse`.

mod common;

use common::*;
use grantforge_engine::{
    Decision, Evaluators, Instant, MatcherKind, Outcome, PolicyEngine, PolicyRecord, PolicyVisitor,
    Priority, Snapshot, SnapshotError,
};

/// The fixture exactly as the Java test writes it (a text block, so one leading space on most lines).
fn json(version: i64, enabled: bool) -> String {
    r#"{"format": 1, "service": "warehouse", "serviceType": "hive", "typeVersion": 1, "serviceEnabled": ENABLED,
 "policyVersion": VERSION,
 "definition": {
   "resources": [
     {"name": "table", "parent": "database", "matcher": "WILDCARD", "caseSensitive": false},
     {"name": "column", "parent": "table", "matcher": "WILDCARD", "caseSensitive": false},
     {"name": "database", "parent": null, "matcher": "WILDCARD", "caseSensitive": false}],
   "accessTypes": [
     {"name": "select", "impliedGrants": []},
     {"name": "update", "impliedGrants": []},
     {"name": "all", "impliedGrants": ["select", "update"]}],
   "conditions": [{"name": "ip", "evaluator": "ip-range", "options": {}}],
   "maskTypes": [{"name": "MASK", "transformer": null}]},
 "policies": [
   {"id": "11", "name": "sales", "type": "ACCESS", "priority": "NORMAL", "document": {
     "resources": {"database": {"values": ["sales"], "excludes": false, "recursive": false},
                   "table": {"values": ["*"], "excludes": false, "recursive": false},
                   "column": {"values": ["*"], "excludes": false, "recursive": false}},
     "allow": [{"users": [], "groups": ["ops"], "roles": ["analyst"], "accessTypes": ["select"], "conditions": [],
                "maskType": null, "maskValue": null, "rowFilter": null}],
     "allowExceptions": [],
     "deny": [{"users": [], "groups": ["spies"], "roles": [], "accessTypes": ["update"], "conditions": []}],
     "denyExceptions": [], "validity": []}},
   {"id": "12", "name": "no salaries from 10.x", "type": "ACCESS", "priority": "OVERRIDE", "document": {
     "resources": {"database": {"values": ["hr"], "excludes": false, "recursive": false},
                   "table": {"values": ["salaries"], "excludes": false, "recursive": false},
                   "column": {"values": ["*"], "excludes": false, "recursive": false}},
     "allow": [{"users": ["carol"], "groups": [], "roles": [], "accessTypes": ["all"]}],
     "deny": [{"users": [], "groups": ["public"], "roles": [], "accessTypes": ["select"],
               "conditions": [{"type": "ip", "values": ["10.0.0.0/8"]}]}]}},
   {"id": "13", "name": "mask ssn", "type": "DATA_MASK", "priority": "NORMAL", "document": {
     "resources": {"database": {"values": ["sales"], "excludes": false, "recursive": false}},
     "allow": [{"users": [], "groups": ["public"], "roles": [], "accessTypes": ["select"], "maskType": "MASK"}]}},
   {"id": "14", "name": "archive", "type": "ACCESS", "priority": "NORMAL", "document": {
     "resources": {"database": {"values": ["archive"], "excludes": false, "recursive": false},
                   "table": {"values": ["*"], "excludes": false, "recursive": false},
                   "column": {"values": ["*"], "excludes": false, "recursive": false}},
     "allow": [{"users": ["dave"], "groups": [], "roles": [], "accessTypes": ["select"]}],
     "validity": [{"from": null, "until": "2020-01-01T00:00:00Z"}]}}],
 "roles": {"analyst": ["alice"]},
 "groups": {"ops": ["bob"], "spies": ["eve", "bob"]}}
"#
    .replace("ENABLED", &enabled.to_string())
    .replace("VERSION", &version.to_string())
}

/// The same snapshot as GrantForge's server writes it (`PolicySnapshots.java` in
/// `core/grantforge-service`; `docs/protocol.md`, "What the agent checks before it applies a snapshot") (sorted level keys, every field,
/// explicit nulls, no DATA_MASK policy).
const SERVER_LAYOUT: &str = r#"{"format": 1, "service": "warehouse", "serviceType": "hive", "typeVersion": 1, "serviceEnabled": true,
 "policyVersion": 7,
 "definition": {
   "resources": [
     {"name": "table", "parent": "database", "matcher": "WILDCARD", "caseSensitive": false},
     {"name": "column", "parent": "table", "matcher": "WILDCARD", "caseSensitive": false},
     {"name": "database", "parent": null, "matcher": "WILDCARD", "caseSensitive": false}],
   "accessTypes": [
     {"name": "select", "impliedGrants": []},
     {"name": "update", "impliedGrants": []},
     {"name": "all", "impliedGrants": ["select", "update"]}],
   "conditions": [{"name": "ip", "evaluator": "ip-range", "options": {}}],
   "maskTypes": [{"name": "MASK", "transformer": null}]},
 "policies": [
   {"id": "11", "name": "sales", "type": "ACCESS", "priority": "NORMAL", "document": {
     "resources": {"column": {"values": ["*"], "excludes": false, "recursive": false},
                   "database": {"values": ["sales"], "excludes": false, "recursive": false},
                   "table": {"values": ["*"], "excludes": false, "recursive": false}},
     "allow": [{"users": [], "groups": ["ops"], "roles": ["analyst"], "accessTypes": ["select"], "conditions": [],
                "maskType": null, "maskValue": null, "rowFilter": null}],
     "allowExceptions": [],
     "deny": [{"users": [], "groups": ["spies"], "roles": [], "accessTypes": ["update"], "conditions": [],
               "maskType": null, "maskValue": null, "rowFilter": null}],
     "denyExceptions": [], "validity": []}},
   {"id": "12", "name": "no salaries from 10.x", "type": "ACCESS", "priority": "OVERRIDE", "document": {
     "resources": {"column": {"values": ["*"], "excludes": false, "recursive": false},
                   "database": {"values": ["hr"], "excludes": false, "recursive": false},
                   "table": {"values": ["salaries"], "excludes": false, "recursive": false}},
     "allow": [{"users": ["carol"], "groups": [], "roles": [], "accessTypes": ["all"], "conditions": [],
                "maskType": null, "maskValue": null, "rowFilter": null}],
     "allowExceptions": [],
     "deny": [{"users": [], "groups": ["public"], "roles": [], "accessTypes": ["select"],
               "conditions": [{"type": "ip", "values": ["10.0.0.0/8"]}],
               "maskType": null, "maskValue": null, "rowFilter": null}],
     "denyExceptions": [], "validity": []}},
   {"id": "14", "name": "archive", "type": "ACCESS", "priority": "NORMAL", "document": {
     "resources": {"column": {"values": ["*"], "excludes": false, "recursive": false},
                   "database": {"values": ["archive"], "excludes": false, "recursive": false},
                   "table": {"values": ["*"], "excludes": false, "recursive": false}},
     "allow": [{"users": ["dave"], "groups": [], "roles": [], "accessTypes": ["select"], "conditions": [],
                "maskType": null, "maskValue": null, "rowFilter": null}],
     "allowExceptions": [], "deny": [], "denyExceptions": [],
     "validity": [{"from": null, "until": "2020-01-01T00:00:00Z"}]}}],
 "roles": {"analyst": ["alice"]},
 "groups": {"ops": ["bob"], "spies": ["eve", "bob"]}}"#;

/// Holds when the client address starts with one of the values' first octet (the Java test's
/// `FIRST_OCTET`), enough for 10.0.0.0/8.
fn first_octet() -> Evaluators<Context> {
    let mut evaluators = Evaluators::new();
    evaluators.register(
        "ip-range",
        evaluator(|values, context| {
            let Some(ip) = context.get("clientIp") else {
                return Ok(false);
            };
            Ok(values.iter().any(|range| {
                range
                    .find('.')
                    .is_some_and(|dot| ip.starts_with(&range[..=dot]))
            }))
        }),
    );
    evaluators
}

/// The policies a visitor saw, in order, and how often it was told to forget them.
#[derive(Default)]
struct Seen {
    policies: Vec<PolicyRecord>,
    restarts: usize,
}

impl PolicyVisitor for Seen {
    fn visit(&mut self, policy: &PolicyRecord) {
        self.policies.push(policy.clone());
    }
    fn restart(&mut self) {
        self.policies.clear();
        self.restarts += 1;
    }
}

/// `Snapshot::parse`, with `PolicyEngine::read` held to it on every input of these tests: the same
/// snapshot (its policies as the visitor saw them) or the same refusal.
fn parse(json: &str) -> Result<Snapshot, SnapshotError> {
    let parsed = Snapshot::parse(json.as_bytes());
    let mut seen = Seen::default();
    let read = PolicyEngine::<Context>::read(json.as_bytes(), &first_octet(), &mut seen);
    match (&parsed, read) {
        (Ok(snapshot), Ok((head, engine))) => {
            assert_eq!(head, snapshot.head, "the head read in one pass");
            assert_eq!(seen.policies, snapshot.policies, "the policies visited");
            assert_eq!(engine.policy_count(), snapshot.policies.len());
        }
        (Err(refusal), Err(read)) => assert_eq!(read.to_string(), refusal.to_string()),
        (parsed, read) => panic!("parse gave {parsed:?}, read gave {:?}", read.map(|r| r.0)),
    }
    parsed
}

/// The engine of a snapshot read in one pass.
fn load(json: &str, evaluators: &Evaluators<Context>) -> PolicyEngine<Context> {
    parse(json).unwrap();
    PolicyEngine::read(json.as_bytes(), evaluators, &mut Seen::default())
        .unwrap()
        .1
}

/// A request for a column, as `Snapshots.request`.
fn column<'a>(user: &'a str, access: &'a str, database: &'a str, table: &'a str) -> Ask<'a> {
    ask(user, access)
        .on("database", database)
        .on("table", table)
        .on("column", "id")
}

#[test]
fn reads_the_service_and_counts_policies() {
    let snapshot = parse(&json(7, true)).unwrap();
    assert_eq!(snapshot.service, "warehouse");
    assert_eq!(snapshot.service_type, "hive");
    assert_eq!(snapshot.type_version, Some(1));
    assert!(snapshot.service_enabled);
    assert_eq!(snapshot.policy_version, 7);
    assert_eq!(snapshot.policies.len(), 3);
    assert_eq!(snapshot.other_policies, 1);
    let engine = PolicyEngine::build(&snapshot, &first_octet()).unwrap();
    assert_eq!(
        engine.policy_count(),
        3,
        "the ACCESS policies, not the DATA_MASK one"
    );
    assert_eq!(engine.snapshot_roles_of("alice"), ["analyst"]);
    assert_eq!(engine.snapshot_groups_of("bob"), ["ops", "spies"]);
    assert!(engine.snapshot_roles_of("nobody").is_empty());
    assert!(engine.warnings().is_empty(), "{:?}", engine.warnings());

    let sales = &snapshot.policies[0];
    assert_eq!(
        (sales.id, sales.name.as_str(), sales.priority),
        (11, "sales", Priority::Normal)
    );
    assert_eq!(sales.resources["database"].values, ["sales"]);
    assert_eq!(sales.allow[0].groups, ["ops"]);
    assert_eq!(snapshot.policies[1].deny[0].conditions[0].type_name, "ip");
    assert_eq!(
        snapshot.policies[2].validity[0].until,
        Some(Instant::parse("2020-01-01T00:00:00Z").unwrap())
    );
    assert_eq!(
        snapshot.definition.resources[2].matcher,
        MatcherKind::Wildcard
    );
    assert_eq!(snapshot.definition.conditions[0].evaluator, "ip-range");
    assert_eq!(
        snapshot.definition.access_types[2].implied_grants,
        ["select", "update"]
    );
}

#[test]
fn decides_with_the_roles_and_groups_the_snapshot_gives() {
    let engine = load(&json(7, true), &first_octet());
    let analyst = column("alice", "select", "sales", "orders").decide(&engine);
    assert_eq!(analyst, Decision::allowed_by(11));
    assert!(column("bob", "select", "sales", "orders").allowed(&engine));
    assert_eq!(
        column("bob", "update", "sales", "orders").decide(&engine),
        Decision::denied_by(11)
    );
    assert_eq!(
        column("mallory", "select", "sales", "orders")
            .decide(&engine)
            .outcome,
        Outcome::NotDetermined
    );
    // Groups the system knows count as well as those the snapshot gives.
    assert!(ask("zed", "select")
        .groups(&["ops"])
        .on("database", "sales")
        .on("table", "t")
        .on("column", "c")
        .allowed(&engine));
}

#[test]
fn applies_conditions_through_the_agents_evaluators() {
    let engine = load(&json(7, true), &first_octet());
    let inside = column("carol", "select", "hr", "salaries").context("clientIp", "10.1.2.3");
    let outside = column("carol", "select", "hr", "salaries").context("clientIp", "192.168.1.1");
    assert_eq!(inside.decide(&engine), Decision::denied_by(12));
    assert_eq!(outside.decide(&engine), Decision::allowed_by(12));
    // Without the evaluator the deny holds, the safe direction.
    let without = load(&json(7, true), &Evaluators::new());
    assert_eq!(outside.decide(&without), Decision::denied_by(12));
    assert!(
        without
            .warnings()
            .iter()
            .any(|w| w.contains("condition ip")),
        "{:?}",
        without.warnings()
    );
}

#[test]
fn expired_policies_decide_nothing() {
    let engine = load(&json(7, true), &first_octet());
    let archive = column("dave", "select", "archive", "t")
        .at(Instant::parse("2026-01-01T00:00:00Z").unwrap());
    assert_eq!(archive.decide(&engine).outcome, Outcome::NotDetermined);
    let before = column("dave", "select", "archive", "t")
        .at(Instant::parse("2019-12-31T23:59:59Z").unwrap());
    assert_eq!(before.decide(&engine), Decision::allowed_by(14));
}

#[test]
fn a_service_not_in_use_is_read_as_such_for_the_agent_to_decide() {
    // The engine is generic and decides by the policies either way: what a disabled service
    // means (NOT_DETERMINED in the Java agent, "Kafka unchecked" in ours) is the agent's to decide
    // from these two fields. That it decides nothing by the policies is tested where it is decided:
    // `a_service_not_in_use_decides_nothing_by_its_policies_and_leaves_kafka_unchecked` in
    // crates/grantforge-kafka/tests/e2e_fixture.rs.
    let disabled = parse(&json(3, false)).unwrap();
    assert!(!disabled.service_enabled);
    assert_eq!(disabled.policy_version, 3);
    assert!(parse(&json(3, true)).unwrap().service_enabled);
}

fn refusal(json: &str) -> SnapshotError {
    parse(json).unwrap_err()
}

fn refused_with(json: &str, expected: &str) -> SnapshotError {
    let error = refusal(json);
    assert!(
        error.to_string().contains(expected),
        "`{error}` should mention `{expected}`"
    );
    error
}

#[test]
fn refuses_what_it_cannot_read() {
    let valid = json(1, true);
    refused_with("not json", "JSON");
    refused_with("[]", "object");
    refused_with(&valid.replace("\"format\": 1", "\"format\": 2"), "upgrade");
    refused_with(
        &valid.replace(
            "\"WILDCARD\", \"caseSensitive\": false}],",
            "\"FUZZY\", \"caseSensitive\": false}],",
        ),
        "FUZZY",
    );
    refused_with(
        &valid.replace("\"parent\": \"table\"", "\"parent\": \"nowhere\""),
        "unknown parents",
    );
    refused_with(
        &valid.replace("\"id\": \"11\"", "\"id\": \"eleven\""),
        "eleven",
    );
    refused_with(
        &valid.replace("\"until\": \"2020-01-01T00:00:00Z\"", "\"until\": \"soon\""),
        "until",
    );
    refused_with(
        &valid.replace("\"policyVersion\": 1", "\"policyVersion\": \"1\""),
        "policyVersion",
    );
    refused_with(
        &valid.replace("\"serviceEnabled\": true", "\"serviceEnabled\": 1"),
        "serviceEnabled",
    );
    let missing = refused_with(&valid.replace("\"service\": \"warehouse\",", ""), "service");
    assert!(missing.message.contains("missing"), "{missing}");
    refused_with(
        &valid.replace("\"roles\": {\"analyst\": [\"alice\"]}", "\"roles\": []"),
        "roles",
    );
    refused_with(
        &valid.replace("\"analyst\": [\"alice\"]", "\"analyst\": \"alice\""),
        "analyst",
    );
    refused_with(
        &valid.replace("\"analyst\": [\"alice\"]", "\"analyst\": [1]"),
        "analyst",
    );
    refused_with(
        &valid.replace("\"groups\": [\"ops\"]", "\"groups\": [1]"),
        "groups",
    );
    refused_with(
        &valid.replace("\"definition\": {", "\"definition\": [], \"x\": {"),
        "definition",
    );
    refusal(&valid.replace("\"policies\": [", "\"policies\": {\"x\": ["));
}

#[test]
fn missing_roles_and_groups_mean_none() {
    let bare = json(1, true)
        .replace("\"roles\": {\"analyst\": [\"alice\"]},", "\"roles\": null,")
        .replace(
            ",\n \"groups\": {\"ops\": [\"bob\"], \"spies\": [\"eve\", \"bob\"]}",
            "",
        );
    assert!(
        !bare.contains("spies\": [\"eve"),
        "the replacement must have applied"
    );
    let snapshot = parse(&bare).unwrap();
    assert!(snapshot.roles.is_empty() && snapshot.groups.is_empty());
    let engine = PolicyEngine::<Context>::build(&snapshot, &Evaluators::new()).unwrap();
    assert!(engine.snapshot_roles_of("alice").is_empty());
    assert!(engine.snapshot_groups_of("bob").is_empty());
}

#[test]
fn reads_the_server_layout_of_reference_3_6() {
    let snapshot = parse(SERVER_LAYOUT).unwrap();
    assert_eq!(
        snapshot.policies.iter().map(|p| p.id).collect::<Vec<_>>(),
        [11, 12, 14]
    );
    assert_eq!(snapshot.other_policies, 0);
    let engine = PolicyEngine::build(&snapshot, &first_octet()).unwrap();
    assert_eq!(
        column("alice", "select", "sales", "orders").decide(&engine),
        Decision::allowed_by(11)
    );
    assert_eq!(
        column("bob", "update", "sales", "orders").decide(&engine),
        Decision::denied_by(11)
    );
    assert_eq!(
        column("mallory", "select", "sales", "orders").decide(&engine),
        Decision::not_determined()
    );
    let carol = |ip| column("carol", "select", "hr", "salaries").context("clientIp", ip);
    assert_eq!(
        carol("192.168.7.9").decide(&engine),
        Decision::allowed_by(12)
    );
    assert_eq!(carol("10.9.8.7").decide(&engine), Decision::denied_by(12));
    assert_eq!(
        carol("192.168.7.9").decide(&load(SERVER_LAYOUT, &Evaluators::new())),
        Decision::denied_by(12)
    );
}

/// A small valid snapshot around one policy body, for the strictness tests below.
fn around(policy: &str) -> String {
    format!(
        r#"{{"format":1,"service":"s","serviceType":"kafka","serviceEnabled":true,"policyVersion":5,
        "definition":{{"resources":[{{"name":"topic","parent":null,"matcher":"WILDCARD","caseSensitive":true}},
                                   {{"name":"path","matcher":"PATH","caseSensitive":true}}],
                      "accessTypes":[{{"name":"read","impliedGrants":["describe"]}},{{"name":"describe"}}],
                      "conditions":[]}},
        "policies":[{{"id":"1","type":"DATA_MASK","document":{{}}}},{policy}]}}"#
    )
}

const GOOD: &str = r#"{"id":"7","name":"p","type":"ACCESS","priority":"NORMAL","document":{"resources":{"topic":{"values":["orders*"],"excludes":false,"recursive":false}},"allow":[{"users":["alice"],"accessTypes":["read"]}]}}"#;

#[test]
fn reads_policies_in_any_field_order_and_ignores_unknown_fields() {
    let snapshot = parse(&around(GOOD)).unwrap();
    assert_eq!(snapshot.policies[0].id, 7);
    assert_eq!(snapshot.other_policies, 1);
    assert_eq!(snapshot.type_version, None);
    // `type` after `document`: the document is read once the type is known.
    let late = r#"{"document":{"resources":{"topic":{"values":["a"],"excludes":false,"recursive":false}},"deny":[{"groups":["public"],"accessTypes":["read"]}]},"priority":"OVERRIDE","id":"9","type":"ACCESS","extra":[1,{"x":null}]}"#;
    let snapshot = parse(&around(late)).unwrap();
    assert_eq!(snapshot.policies[0].priority, Priority::Override);
    assert_eq!(snapshot.policies[0].deny[0].groups, ["public"]);
    // Another type's document is not read at all, as in Java.
    let other = r#"{"document":{"resources":5},"type":"ROW_FILTER"}"#;
    assert_eq!(parse(&around(other)).unwrap().other_policies, 2);
    let unknown_type = r#"{"type":"SOMETHING_NEW","id":[],"document":"x"}"#;
    assert_eq!(parse(&around(unknown_type)).unwrap().other_policies, 2);
    // Repeated names in an item are dropped, order kept.
    let repeated = GOOD.replace(r#"["alice"]"#, r#"["alice","bob","alice"]"#);
    assert_eq!(
        parse(&around(&repeated)).unwrap().policies[0].allow[0].users,
        ["alice", "bob"]
    );
    // A UTF-8 byte order mark is tolerated.
    let bom = [&b"\xEF\xBB\xBF"[..], around(GOOD).as_bytes()].concat();
    assert!(Snapshot::parse(&bom).is_ok());
}

#[test]
fn refusals_name_the_field_and_the_policy() {
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            r#""values":["orders*"]"#,
            r#""values":[]"#,
            "policies[1].document.resources.topic.values",
            "at least one value",
        ),
        (
            r#""values":["orders*"]"#,
            r#""values":["a", 3]"#,
            "policies[1].document.resources.topic.values[1]",
            "string",
        ),
        (
            r#""values":["orders*"]"#,
            r#""values":[" "]"#,
            "policies[1].document.resources.topic.values[0]",
            "blank",
        ),
        (
            r#""topic":{"#,
            r#""group":{"#,
            "policies[1].document.resources.group",
            "unknown resource level group",
        ),
        (
            r#""excludes":false,"#,
            "",
            "policies[1].document.resources.topic.excludes",
            "missing",
        ),
        (
            r#""recursive":false"#,
            r#""recursive":true"#,
            "policies[1].document.resources.topic.recursive",
            "only path levels",
        ),
        (
            r#""users":["alice"],"#,
            "",
            "policies[1].document.allow[0]",
            "user, group or role",
        ),
        (
            r#""accessTypes":["read"]"#,
            r#""accessTypes":["fly"]"#,
            "policies[1].document.allow[0].accessTypes[0]",
            "unknown access type fly",
        ),
        (
            r#""accessTypes":["read"]"#,
            r#""accessTypes":"read""#,
            "policies[1].document.allow[0].accessTypes",
            "not an array",
        ),
        (
            r#""priority":"NORMAL""#,
            r#""priority":"HIGH""#,
            "policies[1].priority",
            "HIGH",
        ),
        (
            r#""priority":"NORMAL","#,
            "",
            "policies[1].priority",
            "missing",
        ),
        (r#""id":"7""#, r#""id":7"#, "policies[1].id", "not a string"),
        (
            r#""id":"7""#,
            r#""id":"99999999999999999999""#,
            "policies[1].id",
            "not a number",
        ),
        (
            r#""type":"ACCESS""#,
            r#""type":1"#,
            "policies[1].type",
            "not a string",
        ),
        (
            r#""resources":{"#,
            r#""resources":5,"x":{"#,
            "policies[1].document.resources",
            "not an object",
        ),
        (
            r#","allow":[{"#,
            r#","validity":[{"from":"2026-01-01T00:00:00Z","until":"2025-01-01T00:00:00Z"}],"allow":[{"#,
            "policies[1].document.validity[0]",
            "end after it starts",
        ),
        (
            r#","allow":[{"#,
            r#","validity":[{"from":"yesterday"}],"allow":[{"#,
            "policies[1].document.validity[0].from",
            "ISO-8601",
        ),
        (
            r#""users":["alice"]"#,
            r#""users":["alice"],"conditions":[{"values":["x"]}]"#,
            "policies[1].document.allow[0].conditions[0].type",
            "missing",
        ),
    ];
    for (from, to, field, message) in cases {
        let text = around(&GOOD.replace(from, to));
        assert_ne!(text, around(GOOD), "{from} must occur");
        let error = refusal(&text);
        assert_eq!(error.field, *field, "{error}");
        assert!(
            error.message.contains(message),
            "`{error}` should mention `{message}`"
        );
        if !field.ends_with(".id") {
            assert_eq!(error.policy_id, Some(7), "{error}");
        }
    }
}

#[test]
fn numbers_and_booleans_must_be_exactly_that() {
    let valid = around(GOOD);
    for (from, to, field) in [
        (
            r#""policyVersion":5"#,
            r#""policyVersion":5.0"#,
            "policyVersion",
        ),
        (
            r#""policyVersion":5"#,
            r#""policyVersion":5e0"#,
            "policyVersion",
        ),
        (
            r#""policyVersion":5"#,
            r#""policyVersion":9223372036854775808"#,
            "policyVersion",
        ),
        (
            r#""policyVersion":5"#,
            r#""policyVersion":null"#,
            "policyVersion",
        ),
        (r#""format":1"#, r#""format":"1""#, "format"),
        (
            r#""serviceEnabled":true"#,
            r#""serviceEnabled":"true""#,
            "serviceEnabled",
        ),
        (
            r#""WILDCARD","caseSensitive":true"#,
            r#""WILDCARD","caseSensitive":1"#,
            "definition.resources[0].caseSensitive",
        ),
        (r#""conditions":[]"#, r#""x":[]"#, "definition.conditions"),
        (
            r#""impliedGrants":["describe"]"#,
            r#""impliedGrants":["fly"]"#,
            "definition.accessTypes",
        ),
        (
            r#"{"name":"describe"}"#,
            r#"{"name":"read"}"#,
            "definition.accessTypes",
        ),
    ] {
        let text = valid.replace(from, to);
        assert_ne!(text, valid, "{from} must occur");
        assert_eq!(refusal(&text).field, field, "{to}");
    }
    assert_eq!(
        parse(&valid.replace(
            r#""policyVersion":5"#,
            r#""policyVersion":-9223372036854775808"#
        ))
        .unwrap()
        .policy_version,
        i64::MIN
    );
    refused_with(&format!("{valid} trailing"), "JSON");
    refused_with("", "JSON");
}

#[test]
fn levels_named_twice_keep_their_first_place_and_last_definition() {
    let text = around(GOOD).replace(
        r#"{"name":"path","matcher":"PATH","caseSensitive":true}"#,
        r#"{"name":"path","matcher":"PATH","caseSensitive":true},{"name":"topic","parent":null,"matcher":"EXACT","caseSensitive":true}"#,
    );
    let snapshot = parse(&text.replace("orders*", "orders")).unwrap();
    assert_eq!(snapshot.definition.resources.len(), 2);
    assert_eq!(snapshot.definition.resources[0].matcher, MatcherKind::Exact);
}

#[test]
fn a_condition_named_twice_refuses_the_snapshot_naming_the_second() {
    let text = around(GOOD).replace(
        r#""conditions":[]"#,
        r#""conditions":[{"name":"net","evaluator":"listener"},{"name":"net","evaluator":"ip-range"}]"#,
    );
    let error = refused_with(&text, "defined twice");
    assert_eq!(error.field, "definition.conditions[1].name");
    assert!(error.message.contains("`net`"), "{error}");
}

#[test]
fn regular_expressions_rust_cannot_compile_refuse_the_snapshot() {
    let text = around(GOOD)
        .replace(r#""matcher":"WILDCARD""#, r#""matcher":"REGEX""#)
        .replace("orders*", "(?=x)x");
    let error = refused_with(&text, "Rust");
    assert_eq!(
        error.field,
        "policies[1].document.resources.topic.values[0]"
    );
}

#[test]
fn a_large_snapshot_parses_and_builds() {
    let policies: Vec<String> = (0..2000)
        .map(|i| {
            format!(
                r#"{{"id":"{i}","name":"p{i}","type":"ACCESS","priority":"NORMAL","document":{{"resources":{{"topic":{{"values":["t{i}*"],"excludes":false,"recursive":false}}}},"allow":[{{"users":["u{}"],"accessTypes":["read"]}}]}}}}"#,
                i % 7
            )
        })
        .collect();
    let text = around(&policies.join(","));
    let snapshot = parse(&text).unwrap();
    assert_eq!(snapshot.policies.len(), 2000);
    let engine = PolicyEngine::build(&snapshot, &Evaluators::new()).unwrap();
    // Users are u(i % 7): t1234x is covered by t1*, t12*, t123* and t1234* (users u1, u5, u4, u2).
    assert_eq!(
        ask("u2", "describe").on("topic", "t1234x").decide(&engine),
        Decision::allowed_by(1234)
    );
    assert_eq!(
        ask("u5", "describe").on("topic", "t12").decide(&engine),
        Decision::allowed_by(12)
    );
    assert_eq!(
        ask("u1", "describe").on("topic", "t12").decide(&engine),
        Decision::allowed_by(1)
    );
    assert_eq!(
        ask("u3", "describe").on("topic", "t1234x").decide(&engine),
        Decision::not_determined()
    );
}

#[test]
fn a_snapshot_laid_out_otherwise_is_read_whole_and_visited_once() {
    let server_order = around(GOOD);
    let at_definition = server_order.find(r#""definition""#).unwrap();
    let at_policies = server_order.find(r#""policies""#).unwrap();
    let head = &server_order[..at_definition];
    let definition = server_order[at_definition..at_policies]
        .trim_end()
        .trim_end_matches(',');
    let policies = server_order[at_policies..].trim_end().trim_end_matches('}');
    // The policies before the definition: kept until it comes, then compiled.
    let policies_first = format!("{head}{policies}, {definition}}}");
    // A definition repeated after the policies: the last one counts, so they are read again.
    let definition_again = format!("{head}{definition}, {policies}, {definition}}}");
    // The policies repeated: the last array counts.
    let policies_again = format!(r#"{head}{definition}, {policies}, "policies":[{GOOD}]}}"#);
    for (layout, restarts) in [
        (&server_order, 0),
        (&policies_first, 1),
        (&definition_again, 1),
        (&policies_again, 1),
    ] {
        let snapshot = parse(layout).unwrap();
        assert_eq!(snapshot.policies.len(), 1, "{layout}");
        let mut seen = Seen::default();
        PolicyEngine::<Context>::read(layout.as_bytes(), &Evaluators::new(), &mut seen).unwrap();
        assert_eq!(seen.policies, snapshot.policies, "{layout}");
        assert_eq!(seen.restarts, restarts, "{layout}");
    }
}

#[test]
fn a_value_refused_where_it_is_read_stays_refused_though_its_field_comes_again() {
    let server_order = around(GOOD);
    let bad_first = [
        server_order.replacen(r#""service":"s""#, r#""service":5,"service":"s""#, 1),
        server_order.replacen(
            r#""policies":["#,
            &format!(r#""policies":[{}],"policies":["#, numbered(2, "write")),
            1,
        ),
    ];
    for (layout, refused) in bad_first.iter().zip(["service", "policies[0]"]) {
        let refusal = parse(layout).unwrap_err();
        assert!(refusal.to_string().starts_with(refused), "{refusal}");
        let read = PolicyEngine::<Context>::read(
            layout.as_bytes(),
            &Evaluators::new(),
            &mut Seen::default(),
        );
        assert_eq!(read.unwrap_err().to_string(), refusal.to_string());
    }
}

/// Policy `id` of the kind `GOOD` is, on topic `t{id}`, granting `access`.
fn numbered(id: usize, access: &str) -> String {
    format!(
        r#"{{"id":"{id}","name":"p{id}","type":"ACCESS","priority":"NORMAL","document":{{"resources":{{"topic":{{"values":["t{id}"],"excludes":false,"recursive":false}}}},"allow":[{{"users":["u{id}"],"accessTypes":["{access}"]}}]}}}}"#
    )
}

#[test]
fn the_first_policy_refused_is_the_answer_however_far_the_reader_got() {
    // Policies are compiled beside the reader, in batches: the reader runs ahead of the compiler,
    // here to a broken end, and the refusal of policy 700 must still be what is said.
    let policies: Vec<String> = (2..3000)
        .map(|id| numbered(id, if id == 700 { "write" } else { "read" }))
        .collect();
    let whole = around(&policies.join(","));
    let refusal = parse(&whole).unwrap_err();
    assert_eq!(refusal.policy_id, Some(700), "{refusal}");
    let broken = &whole[..whole.len() - 3];
    assert_eq!(parse(broken).unwrap_err().to_string(), refusal.to_string());
    // And with every policy good, all are compiled and visited in order, batch after batch.
    let good: Vec<String> = (2..3000).map(|id| numbered(id, "read")).collect();
    let snapshot = parse(&around(&good.join(","))).unwrap();
    assert_eq!(snapshot.policies.len(), 2998);
}

#[test]
fn a_visitor_that_panics_makes_the_read_panic_and_nothing_hangs() {
    struct Panicking;
    impl PolicyVisitor for Panicking {
        fn visit(&mut self, policy: &PolicyRecord) {
            assert!(policy.id < 500, "a visitor's bug");
        }
        fn restart(&mut self) {}
    }
    let policies: Vec<String> = (2..3000).map(|id| numbered(id, "read")).collect();
    let json = around(&policies.join(","));
    let read = std::panic::catch_unwind(|| {
        PolicyEngine::<Context>::read(json.as_bytes(), &first_octet(), &mut Panicking).map(|_| ())
    });
    assert!(
        read.is_err(),
        "the visitor's panic is resumed on the caller's thread"
    );
}

#[test]
fn a_snapshot_that_is_not_utf8_is_refused_naming_the_byte() {
    let mut bytes = around(GOOD).into_bytes();
    let at = bytes.windows(6).position(|w| w == b"orders").unwrap();
    bytes[at] = 0xFF;
    let refusal = Snapshot::parse(&bytes).unwrap_err();
    assert_eq!(
        refusal.to_string(),
        format!("the snapshot is not valid JSON: it is not UTF-8 from byte {at}")
    );
    let read = PolicyEngine::<Context>::read(&bytes, &first_octet(), &mut Seen::default());
    assert_eq!(read.unwrap_err().to_string(), refusal.to_string());
}
