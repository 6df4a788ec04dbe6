//! Java's `ENGT/PolicyEngineTest`, test by test, plus the engine behaviours the port adds
//! (explanations, subject enrichment, request errors).

mod common;

use common::*;
use grantforge_engine::{
    Branch, Decision, Evaluators, Item, Outcome, PolicyEngine, PolicyRecord, Priority,
    RequestError, ResourceValues, Snapshot,
};

fn users(access: &str, names: &[&str]) -> Item {
    Item::users(names, &[access])
}

#[test]
fn denials_win_over_allowances_and_exceptions_carve_them_out() {
    let allow_all = table(5, "sales", "*")
        .with_allow(vec![users("select", &["alice", "bob"])])
        .with_allow_exceptions(vec![users("select", &["bob"])]);
    let deny_orders = table(3, "sales", "orders")
        .with_deny(vec![users("select", &["alice", "carol"])])
        .with_deny_exceptions(vec![users("select", &["carol"])]);
    let hive = engine(hive(), vec![allow_all, deny_orders]);

    assert_eq!(
        table_request("alice", "select", "sales", "items").decide(&hive),
        Decision::allowed_by(5)
    );
    assert_eq!(
        table_request("alice", "select", "sales", "orders").decide(&hive),
        Decision::denied_by(3)
    );
    // Bob is an exception to the allowance; Carol to the denial, but nothing allows her.
    assert_eq!(
        table_request("bob", "select", "sales", "items")
            .decide(&hive)
            .outcome,
        Outcome::NotDetermined
    );
    assert_eq!(
        table_request("carol", "select", "sales", "orders")
            .decide(&hive)
            .policy_id,
        None
    );
    assert!(!table_request("alice", "update", "sales", "items").allowed(&hive));
}

#[test]
fn override_policies_decide_before_normal_ones() {
    let normal_deny = table(1, "*", "*").with_deny(vec![users("select", &["alice"])]);
    let override_allow = table(2, "hr", "*")
        .with_priority(Priority::Override)
        .with_allow(vec![users("select", &["alice"])]);
    let normal_allow = table(3, "*", "*").with_allow(vec![users("select", &["bob"])]);
    let override_deny = table(4, "hr", "salaries")
        .with_priority(Priority::Override)
        .with_deny(vec![users("select", &["bob"])]);
    let hive = engine(
        hive(),
        vec![normal_deny, override_allow, normal_allow, override_deny],
    );

    assert_eq!(
        table_request("alice", "select", "hr", "people").decide(&hive),
        Decision::allowed_by(2)
    );
    assert_eq!(
        table_request("alice", "select", "sales", "items").decide(&hive),
        Decision::denied_by(1)
    );
    assert_eq!(
        table_request("bob", "select", "hr", "salaries").decide(&hive),
        Decision::denied_by(4)
    );
    assert_eq!(
        table_request("bob", "select", "hr", "people").decide(&hive),
        Decision::allowed_by(3)
    );
}

#[test]
fn groups_roles_public_and_implied_access_types_grant_too() {
    let policy = table(1, "sales", "*").with_allow(vec![
        Item::new()
            .with_groups(&["analysts"])
            .with_access_types(&["select"]),
        Item::new()
            .with_roles(&["auditor"])
            .with_access_types(&["all"]),
    ]);
    let open = table(2, "public", "*").with_allow(vec![Item::new()
        .with_groups(&["public"])
        .with_access_types(&["select"])]);
    let hive = engine(hive(), vec![policy, open]);

    assert!(table_request("x", "select", "sales", "t")
        .groups(&["analysts"])
        .allowed(&hive));
    assert!(!table_request("x", "update", "sales", "t")
        .groups(&["analysts"])
        .allowed(&hive));
    assert!(table_request("x", "drop", "sales", "t")
        .roles(&["auditor"])
        .allowed(&hive));
    assert!(table_request("anyone", "select", "public", "t").allowed(&hive));
    assert_eq!(
        table_request("x", "unknown", "sales", "t")
            .roles(&["auditor"])
            .decide(&hive)
            .outcome,
        Outcome::NotDetermined
    );
}

#[test]
fn resources_match_with_wildcards_exclusions_case_and_levels() {
    let wildcard = table(1, "sal?s", "ord*").with_allow(vec![users("select", &["alice"])]);
    let excluded = PolicyRecord::new(2)
        .with_resource("database", ResourceValues::new(&["secret"], true, false))
        .with_resource("table", ResourceValues::of(&["*"]))
        .with_resource("column", ResourceValues::of(&["*"]))
        .with_allow(vec![users("select", &["bob"])]);
    let columns = PolicyRecord::new(3)
        .with_resource("database", ResourceValues::of(&["hr"]))
        .with_resource("table", ResourceValues::of(&["people"]))
        .with_resource("column", ResourceValues::of(&["name"]))
        .with_allow(vec![users("select", &["carol"])]);
    let database_only = PolicyRecord::new(4)
        .with_resource("database", ResourceValues::of(&["hr"]))
        .with_allow(vec![users("drop", &["dave"])]);
    let hive = engine(hive(), vec![wildcard, excluded, columns, database_only]);

    assert!(table_request("alice", "select", "SALES", "Orders2026").allowed(&hive));
    assert!(!table_request("alice", "select", "sales", "items").allowed(&hive));
    assert!(table_request("bob", "select", "public", "x").allowed(&hive));
    assert!(!table_request("bob", "select", "Secret", "x").allowed(&hive));
    // A policy for a column does not cover the table, which is wider than the column.
    assert!(!table_request("carol", "select", "hr", "people").allowed(&hive));
    assert!(table_request("carol", "select", "hr", "people")
        .on("column", "name")
        .allowed(&hive));
    // A policy for the database does not cover its tables.
    assert!(ask("dave", "drop").on("database", "hr").allowed(&hive));
    assert!(!table_request("dave", "drop", "hr", "people").allowed(&hive));
}

fn path<'a>(user: &'a str, access: &'a str, path: &'a str) -> Ask<'a> {
    ask(user, access).on("path", path)
}

#[test]
fn paths_match_by_segment_and_recursive_values_cover_what_lies_below() {
    let recursive = PolicyRecord::new(1)
        .with_resource("path", ResourceValues::new(&["/data/sales/"], false, true))
        .with_allow(vec![users("read", &["alice"])]);
    let segment = PolicyRecord::new(2)
        .with_resource("path", ResourceValues::of(&["/logs/*/today"]))
        .with_allow(vec![users("read", &["bob"])]);
    let everything = PolicyRecord::new(3)
        .with_resource("path", ResourceValues::new(&["/"], false, true))
        .with_allow(vec![users("execute", &["carol"])]);
    let wildcard_recursive = PolicyRecord::new(4)
        .with_resource("path", ResourceValues::new(&["/home/*"], false, true))
        .with_allow(vec![users("write", &["dave"])]);
    let hdfs = engine(
        hdfs(),
        vec![recursive, segment, everything, wildcard_recursive],
    );

    assert!(path("alice", "read", "/data/sales").allowed(&hdfs));
    assert!(path("alice", "read", "/data/sales/2026/q1.csv").allowed(&hdfs));
    assert!(!path("alice", "read", "/data/salesman").allowed(&hdfs));
    assert!(path("bob", "read", "/logs/app/today/").allowed(&hdfs));
    assert!(!path("bob", "read", "/logs/app/x/today").allowed(&hdfs));
    assert!(!path("bob", "read", "/logs/app/today/file").allowed(&hdfs));
    assert!(path("carol", "execute", "/anything/at/all").allowed(&hdfs));
    assert!(path("dave", "write", "/home/dave/notes").allowed(&hdfs));
    assert!(!path("dave", "write", "/home").allowed(&hdfs));
}

#[test]
fn exact_and_regular_expression_levels() {
    let topic = PolicyRecord::new(1)
        .with_resource("topic", ResourceValues::of(&["Orders"]))
        .with_allow(vec![users("consume", &["alice"])]);
    let topics = engine(exact(), vec![topic]);
    assert!(ask("alice", "consume")
        .on("topic", "Orders")
        .allowed(&topics));
    assert!(!ask("alice", "consume")
        .on("topic", "orders")
        .allowed(&topics));
    assert!(!ask("alice", "consume")
        .on("topic", "Orders2")
        .allowed(&topics));

    let urls = PolicyRecord::new(2)
        .with_resource(
            "url",
            ResourceValues::of(&["hdfs://cluster/(raw|clean)/.*"]),
        )
        .with_allow(vec![users("select", &["alice"])]);
    let hive = engine(hive(), vec![urls]);
    assert!(ask("alice", "select")
        .on("url", "hdfs://cluster/raw/x")
        .allowed(&hive));
    assert!(!ask("alice", "select")
        .on("url", "hdfs://cluster/tmp/x")
        .allowed(&hive));
}

#[test]
fn conditions_must_hold_and_fail_safely() {
    let office = |item: Item| item.with_condition("network", &["office"]);
    let unknown = |item: Item| item.with_condition("mystery", &["x"]);
    let allow = table(1, "sales", "*").with_allow(vec![
        office(users("select", &["alice"])),
        unknown(users("select", &["bob"])),
    ]);
    let deny = table(2, "hr", "*")
        .with_deny(vec![unknown(users("select", &["alice"]))])
        .with_allow(vec![users("select", &["alice"])]);
    let definition = with_conditions(hive(), &["network", "mystery"]);
    let mut evaluators = Evaluators::new();
    evaluators.register(
        "network",
        evaluator(|values, context| Ok(context.get("network").is_some_and(|n| values.contains(n)))),
    );
    let hive = engine_with(definition.clone(), vec![allow.clone(), deny], &evaluators);

    assert!(table_request("alice", "select", "sales", "t")
        .context("network", "office")
        .allowed(&hive));
    assert!(!table_request("alice", "select", "sales", "t")
        .context("network", "home")
        .allowed(&hive));
    // Without an evaluator, an allowance does not apply but a denial does.
    assert!(!table_request("bob", "select", "sales", "t").allowed(&hive));
    assert_eq!(
        table_request("alice", "select", "hr", "t").decide(&hive),
        Decision::denied_by(2)
    );
    assert!(
        hive.warnings().iter().any(|w| w.contains("mystery")),
        "{:?}",
        hive.warnings()
    );
    // What a decision can read of the context goes through the evaluators in use, and only
    // through them: `mystery` has none, so nothing is read for it (a decision cache keys on this).
    assert_eq!(hive.evaluators_in_use(), ["network"]);
    assert!(
        engine_with(definition.clone(), vec![], &evaluators)
            .evaluators_in_use()
            .is_empty(),
        "defined but used by no item: nothing is read"
    );

    let mut broken = Evaluators::new();
    broken.register("network", evaluator(|_, _| Err("broken".to_string())));
    let failing = engine_with(definition.clone(), vec![allow.clone()], &broken);
    assert!(!table_request("alice", "select", "sales", "t")
        .context("network", "office")
        .allowed(&failing));

    let mut panicking = Evaluators::new();
    panicking.register("network", evaluator(|_, _| panic!("an evaluator bug")));
    let panics = engine_with(definition, vec![allow], &panicking);
    assert!(!table_request("alice", "select", "sales", "t")
        .context("network", "office")
        .allowed(&panics));
}

#[test]
fn policies_apply_only_while_enabled_and_valid() {
    // Snapshots hold enabled policies only; a disabled one is simply absent.
    let windowed = table(2, "hr", "*")
        .with_validity(Some(now().plus_seconds(-60)), Some(now().plus_seconds(60)))
        .with_validity(Some(now().plus_seconds(3600)), None)
        .with_allow(vec![users("select", &["alice"])]);
    let hive = engine(hive(), vec![windowed]);

    assert!(!table_request("alice", "select", "sales", "t").allowed(&hive));
    assert!(table_request("alice", "select", "hr", "t").allowed(&hive));
    assert!(!table_request("alice", "select", "hr", "t")
        .at(now().plus_seconds(600))
        .allowed(&hive));
    assert!(table_request("alice", "select", "hr", "t")
        .at(now().plus_seconds(7200))
        .allowed(&hive));
    assert!(!table_request("alice", "select", "hr", "t")
        .at(now().plus_seconds(-60).plus_millis(-1))
        .allowed(&hive));
    assert!(table_request("alice", "select", "hr", "t")
        .at(now().plus_seconds(-60))
        .allowed(&hive));
}

#[test]
fn the_instants_a_decision_may_change_at_are_every_policys_boundaries() {
    let at = |secs| now().plus_seconds(secs);
    let windowed = table(2, "hr", "*")
        .with_validity(Some(at(-60)), Some(at(60)))
        .with_validity(Some(at(3600)), None)
        .with_allow(vec![users("select", &["alice"])]);
    // Excluding, and ending where policy 2's first period does: each instant is listed once.
    let mut excluding = table(3, "sales", "*").with_validity(Some(at(0)), Some(at(60)));
    excluding.resources.get_mut("database").unwrap().excludes = true;
    let excluding = excluding.with_deny(vec![users("select", &["bob"])]);
    let always = table(4, "ops", "*").with_allow(vec![users("select", &["carol"])]);
    let hive = engine(hive(), vec![windowed, excluding, always]);

    assert_eq!(hive.validity_changes(), [at(-60), at(0), at(60), at(3600)]);
}

#[test]
fn the_smallest_deciding_policy_is_reported() {
    let policies = vec![
        table(9, "*", "*").with_allow(vec![users("select", &["alice"])]),
        table(4, "sales", "*").with_allow(vec![users("select", &["alice"])]),
    ];
    assert_eq!(
        table_request("alice", "select", "sales", "t").decide(&engine(hive(), policies)),
        Decision::allowed_by(4)
    );
    assert_eq!(
        table_request("alice", "select", "sales", "t").decide(&engine(hive(), vec![])),
        Decision::not_determined()
    );
}

fn refused(policy: PolicyRecord) -> String {
    let snapshot = Snapshot::new("hive", hive(), vec![policy]);
    let built = PolicyEngine::<Context>::build(&snapshot, &Evaluators::new()).unwrap_err();
    assert_eq!(
        Some(built.clone()),
        snapshot.validate().err(),
        "validate and build must agree"
    );
    built.to_string()
}

#[test]
fn refuses_policies_and_requests_that_do_not_fit_the_model() {
    let unknown_level =
        refused(PolicyRecord::new(1).with_resource("schema", ResourceValues::of(&["x"])));
    assert!(
        unknown_level.contains("unknown resource level schema"),
        "{unknown_level}"
    );
    let gap = refused(PolicyRecord::new(1).with_resource("table", ResourceValues::of(&["x"])));
    assert!(
        gap.contains("every level from database down to table"),
        "{gap}"
    );
    let fly = refused(table(1, "x", "y").with_allow(vec![users("fly", &["a"])]));
    assert!(fly.contains("unknown access type fly"), "{fly}");
    assert!(
        fly.contains("the definition's access types are select, update, drop, all"),
        "an unknown access type lists the valid ones: {fly}"
    );
    assert!(
        fly.contains("policies[0].document.allow[0].accessTypes[0]"),
        "{fly}"
    );
    let recursive = refused(
        PolicyRecord::new(1).with_resource("database", ResourceValues::new(&["x"], false, true)),
    );
    assert!(
        recursive.contains("only path levels can be recursive"),
        "{recursive}"
    );
    let regex = refused(PolicyRecord::new(1).with_resource("url", ResourceValues::of(&["(["])));
    assert!(regex.contains("not a regular expression"), "{regex}");
    let two_trees = refused(
        PolicyRecord::new(1)
            .with_resource("database", ResourceValues::of(&["x"]))
            .with_resource("url", ResourceValues::of(&["x"])),
    );
    assert!(two_trees.contains("every level from"), "{two_trees}");

    let hive = engine(hive(), vec![]);
    let not_a_chain = ask("a", "select")
        .on("table", "t")
        .try_decide(&hive)
        .unwrap_err();
    assert!(
        not_a_chain.to_string().contains("do not form a chain"),
        "{not_a_chain}"
    );
    let unknown = ask("a", "select")
        .on("schema", "t")
        .try_decide(&hive)
        .unwrap_err();
    assert!(
        unknown
            .to_string()
            .contains("unknown resource level schema"),
        "{unknown}"
    );
    // Step 1 runs before the access type is looked up: an unknown level still fails.
    assert_eq!(
        ask("a", "fly").on("schema", "t").try_decide(&hive),
        Err(RequestError::UnknownLevel("schema".into()))
    );
}

// AccessRequestTest.describesWhoWantsWhatHowAndWhen: what a request must name.
#[test]
fn describes_who_wants_what_how_and_when() {
    let hdfs = engine(hdfs(), vec![]);
    assert_eq!(
        ask("a", "read").try_decide(&hdfs),
        Err(RequestError::NoResource)
    );
    assert!(matches!(
        ask(" ", "read").on("path", "/").try_decide(&hdfs),
        Err(RequestError::Blank(_))
    ));
    assert!(matches!(
        ask("a", "").on("path", "/").try_decide(&hdfs),
        Err(RequestError::Blank(_))
    ));
    assert!(matches!(
        ask("a", "read").on("path", "").try_decide(&hdfs),
        Err(RequestError::Blank(_))
    ));
    assert!(matches!(
        ask("a", "read")
            .on("path", "/")
            .groups(&["\t"])
            .try_decide(&hdfs),
        Err(RequestError::Blank(_))
    ));
    assert!(matches!(
        ask("a", "read")
            .on("path", "/")
            .roles(&[""])
            .try_decide(&hdfs),
        Err(RequestError::Blank(_))
    ));
    assert_eq!(
        ask("a", "read")
            .on("path", "/")
            .on("path", "/x")
            .try_decide(&hdfs),
        Err(RequestError::RepeatedLevel("path".into()))
    );
    assert_eq!(
        ask("a", "read").on("path", "/").decide(&hdfs),
        Decision::not_determined()
    );
}

#[test]
fn requested_levels_may_come_in_any_order() {
    let hive = engine(
        hive(),
        vec![table(1, "sales", "orders").with_allow(vec![users("select", &["alice"])])],
    );
    assert!(ask("alice", "select")
        .on("column", "id")
        .on("table", "orders")
        .on("database", "sales")
        .allowed(&hive));
    let gap = ask("alice", "select")
        .on("column", "id")
        .on("database", "sales")
        .try_decide(&hive);
    assert!(matches!(gap, Err(RequestError::NotAChain(_))), "{gap:?}");
}

#[test]
fn implied_access_types_deny_what_they_imply_but_not_the_reverse() {
    let definition = grantforge_engine::Definition::new(
        vec![grantforge_engine::ResourceLevel::new(
            "topic",
            None,
            grantforge_engine::MatcherKind::Wildcard,
            true,
        )],
        vec![
            grantforge_engine::AccessTypeDefinition::new("describe", &[]),
            grantforge_engine::AccessTypeDefinition::new("write", &["describe"]),
            grantforge_engine::AccessTypeDefinition::new("all", &["write"]),
        ],
    );
    let topic = |id| PolicyRecord::new(id).with_resource("topic", ResourceValues::of(&["orders"]));
    let kafka = engine(
        definition,
        vec![
            topic(1).with_allow(vec![users("all", &["alice", "bob"])]),
            topic(2).with_deny(vec![users("write", &["alice"])]),
            topic(3).with_deny(vec![users("describe", &["bob"])]),
        ],
    );
    assert_eq!(
        ask("alice", "describe")
            .on("topic", "orders")
            .decide(&kafka),
        Decision::denied_by(2)
    );
    assert_eq!(
        ask("alice", "write").on("topic", "orders").decide(&kafka),
        Decision::denied_by(2)
    );
    assert_eq!(
        ask("bob", "write").on("topic", "orders").decide(&kafka),
        Decision::allowed_by(1)
    );
    assert_eq!(
        ask("bob", "describe").on("topic", "orders").decide(&kafka),
        Decision::denied_by(3)
    );
}

#[test]
fn the_snapshot_gives_users_their_groups_and_roles() {
    let policy = table(1, "sales", "*").with_allow(vec![
        Item::new()
            .with_groups(&["ops"])
            .with_access_types(&["select"]),
        Item::new()
            .with_roles(&["admin"])
            .with_access_types(&["all"]),
    ]);
    let mut snapshot = Snapshot::new("hive", hive(), vec![policy]);
    snapshot.groups.insert("ops".into(), vec!["bob".into()]);
    snapshot
        .roles
        .insert("admin".into(), vec!["carol".into(), "bob".into()]);
    snapshot.roles.insert("unused".into(), vec!["bob".into()]);
    let hive = PolicyEngine::build(&snapshot, &Evaluators::new()).unwrap();
    assert!(table_request("bob", "select", "sales", "t").allowed(&hive));
    assert!(table_request("carol", "drop", "sales", "t").allowed(&hive));
    assert!(!table_request("dave", "select", "sales", "t").allowed(&hive));
    // Groups the caller supplies count as well as the snapshot's.
    assert!(table_request("zed", "select", "sales", "t")
        .groups(&["ops"])
        .allowed(&hive));
    assert_eq!(hive.snapshot_groups_of("bob"), ["ops"]);
    assert_eq!(hive.snapshot_roles_of("bob"), ["admin", "unused"]);
    assert!(hive.snapshot_roles_of("nobody").is_empty());
    // A blank code the snapshot gives a user is refused as Java refuses the enriched request,
    // for that user only.
    snapshot.roles.insert(" ".into(), vec!["erin".into()]);
    let blank = PolicyEngine::build(&snapshot, &Evaluators::new()).unwrap();
    assert_eq!(
        table_request("erin", "select", "sales", "t").try_decide(&blank),
        Err(RequestError::Blank(
            "a group or role the snapshot gives erin".into()
        ))
    );
    assert!(table_request("bob", "select", "sales", "t").allowed(&blank));
}

#[test]
fn explanations_name_the_deciding_policies_and_their_items() {
    let allow = table(5, "sales", "*")
        .with_name("sales readers")
        .with_allow(vec![
            users("select", &["carol"]),
            users("select", &["alice", "bob"]),
        ])
        .with_allow_exceptions(vec![users("select", &["bob"])]);
    let deny = table(3, "sales", "orders")
        .with_deny(vec![users("select", &["alice", "carol"])])
        .with_deny_exceptions(vec![users("select", &["carol"])]);
    let override_allow = table(7, "sales", "orders")
        .with_priority(Priority::Override)
        .with_allow(vec![users("select", &["dave"])]);
    let hive = engine(hive(), vec![allow, deny, override_allow]);

    let alice = hive
        .explain(&table_request("alice", "select", "sales", "orders").request())
        .unwrap();
    assert_eq!(alice.decision, Decision::denied_by(3));
    assert_eq!(alice.deciding_priority, Some(Priority::Normal));
    let branches: Vec<(i64, Branch)> = alice.policies.iter().map(|p| (p.id, p.branch)).collect();
    assert_eq!(branches, [(3, Branch::Deny), (5, Branch::Allow)]);
    assert_eq!(alice.policies[1].name, "sales readers");
    assert_eq!(alice.policies[1].allow, [1]);

    let carol = hive
        .explain(&table_request("carol", "select", "sales", "orders").request())
        .unwrap();
    assert_eq!(carol.decision, Decision::allowed_by(5));
    assert_eq!(carol.policies[0].branch, Branch::DenyExcepted);
    assert_eq!(
        (
            carol.policies[0].deny.clone(),
            carol.policies[0].deny_exceptions.clone()
        ),
        (vec![0], vec![0])
    );

    let bob = hive
        .explain(&table_request("bob", "select", "sales", "items").request())
        .unwrap();
    assert_eq!(bob.decision, Decision::not_determined());
    assert_eq!(bob.deciding_priority, None);
    assert_eq!(bob.policies[0].branch, Branch::AllowExcepted);
    assert_eq!(bob.policies[0].allow_exceptions, [0]);

    let dave = hive
        .explain(&table_request("dave", "select", "sales", "orders").request())
        .unwrap();
    assert_eq!(
        (dave.decision, dave.deciding_priority),
        (Decision::allowed_by(7), Some(Priority::Override))
    );
    assert_eq!(dave.policies[0].priority, Priority::Override);
}

#[test]
fn indexes_choose_the_narrower_side_without_changing_decisions() {
    // Many `*` policies for other users: the subject index narrows; many users on one value: the
    // value index does.
    let mut policies: Vec<PolicyRecord> = (0..300)
        .map(|i| table(i, "*", "*").with_allow(vec![users("select", &[&format!("user{i}")])]))
        .collect();
    policies.extend(
        (300..600).map(|i| {
            table(i, &format!("db{i}"), "*").with_allow(vec![users("select", &["alice"])])
        }),
    );
    policies.push(table(1000, "*", "*").with_deny(vec![Item::new()
            .with_groups(&["public"])
            .with_access_types(&["drop"])]));
    let hive = engine(hive(), policies);
    assert_eq!(
        table_request("user7", "select", "x", "t").decide(&hive),
        Decision::allowed_by(7)
    );
    assert_eq!(
        table_request("alice", "select", "db450", "t").decide(&hive),
        Decision::allowed_by(450)
    );
    assert_eq!(
        table_request("alice", "select", "db45", "t").decide(&hive),
        Decision::not_determined()
    );
    assert_eq!(
        table_request("user7", "drop", "x", "t").decide(&hive),
        Decision::denied_by(1000)
    );
    assert_eq!(
        table_request("user7", "all", "x", "t").decide(&hive),
        Decision::not_determined()
    );
}

#[test]
fn any_resource_of_a_root_counts_for_holds_on_some_resource() {
    let definition = with_conditions(hive(), &["network"]);
    let policies = vec![
        table(1, "sales", "orders").with_allow(vec![users("select", &["alice", "bob", "dave"])]),
        table(2, "*", "*").with_deny(vec![users("select", &["bob"])]),
        table(3, "hr", "*")
            .with_priority(Priority::Override)
            .with_allow(vec![users("select", &["bob"])]),
        table(4, "*", "*")
            .with_priority(Priority::Override)
            .with_deny(vec![users("select", &["carol"])]),
        table(5, "x", "*").with_allow(vec![users("select", &["carol"])]),
        table(6, "sales", "*").with_deny(vec![users("select", &["dave"])]),
        table(7, "y", "*").with_allow(vec![
            users("update", &["erin"]).with_condition("network", &["office"])
        ]),
        table(8, "z", "*")
            .with_allow(vec![users("select", &["frank"])])
            .with_deny(vec![users("select", &["frank"])]),
    ];
    let mut evaluators = Evaluators::new();
    evaluators.register(
        "network",
        evaluator(|values, context| Ok(context.get("network").is_some_and(|n| values.contains(n)))),
    );
    let hive = engine_with(definition, policies, &evaluators);
    let office: Context = [("network".to_string(), "office".to_string())].into();
    let holds = |user: &str, access: &str, context: &Context| {
        hive.holds_on_some_resource("database", access, user, &[], &[], now(), context)
            .unwrap()
    };
    assert!(holds("alice", "select", &Context::new()));
    // A NORMAL deny of everything cancels NORMAL allows, not OVERRIDE ones.
    assert!(holds("bob", "select", &Context::new()));
    // An OVERRIDE deny of everything cancels everything.
    assert!(!holds("carol", "select", &Context::new()));
    // A deny of some resources only never does.
    assert!(holds("dave", "select", &Context::new()));
    assert!(holds("erin", "update", &office));
    assert!(!holds("erin", "update", &Context::new()));
    assert!(!holds("alice", "update", &Context::new()));
    assert!(!holds("alice", "fly", &Context::new()));
    // A policy that denies the subject itself allows nothing anywhere.
    assert!(!holds("frank", "select", &Context::new()));
    assert_eq!(
        hive.holds_on_some_resource("table", "select", "alice", &[], &[], now(), &Context::new()),
        Err(RequestError::NotARoot("table".into()))
    );
    assert_eq!(
        hive.holds_on_some_resource(
            "schema",
            "select",
            "alice",
            &[],
            &[],
            now(),
            &Context::new()
        ),
        Err(RequestError::UnknownLevel("schema".into()))
    );
}
