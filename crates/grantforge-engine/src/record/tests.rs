//! The tests of snapshot format 1's types: validity periods, resource values, priorities, level
//! maps and definitions.

use super::*;

fn now() -> Instant {
    Instant::parse("2026-06-15T12:00:00Z").unwrap()
}

// ValidityTest.startsInclusiveEndsExclusiveAndMayBeOpen (the "end after it starts" check is
// a snapshot check: see policy.rs).
#[test]
fn starts_inclusive_ends_exclusive_and_may_be_open() {
    let period = Validity {
        from: Some(now()),
        until: Some(now().plus_seconds(10)),
    };
    assert!(period.contains(now()));
    assert!(!period.contains(now().plus_seconds(10)));
    assert!(!period.contains(now().plus_seconds(-1)));
    assert!(Validity::default().contains(now()));
}

#[test]
fn the_next_validity_change_is_the_earliest_start_or_end_after_now() {
    let at = |offset: i64| now().plus_seconds(offset);
    let policies = [
        PolicyRecord::new(1),
        PolicyRecord::new(2).with_validity(Some(at(-60)), Some(at(30))),
        PolicyRecord::new(3)
            .with_validity(None, Some(at(-5)))
            .with_validity(Some(at(10)), None),
        PolicyRecord::new(4).with_validity(Some(at(20)), Some(at(40))),
    ];
    assert_eq!(next_validity_change(&policies, now()), Some(at(10)));
    assert_eq!(next_validity_change(&policies, at(10)), Some(at(20)));
    assert_eq!(next_validity_change(&policies, at(20)), Some(at(30)));
    assert_eq!(next_validity_change(&policies, at(39)), Some(at(40)));
    assert_eq!(next_validity_change(&policies, at(40)), None);
    assert_eq!(next_validity_change(&policies[..1], now()), None);
    assert_eq!(next_validity_change(&[], now()), None);
}

#[test]
fn a_boundary_at_now_has_taken_effect_and_offsets_compare_as_instants() {
    // 14:00 at +02:00 is 12:00Z, which is `now()`: already in effect, not ahead.
    let starts = Instant::parse("2026-06-15T14:00:00+02:00").unwrap();
    // 07:00 at -05:00 is 12:00:01Z, one second ahead, though its clock reads earlier.
    let ends = Instant::parse("2026-06-15T07:00:01-05:00").unwrap();
    let policy = PolicyRecord::new(1).with_validity(Some(starts), Some(ends));
    assert!(policy.applies_at(now()));
    assert_eq!(
        next_validity_change([&policy], now()),
        Some(now().plus_seconds(1))
    );
    assert!(!policy.applies_at(now().plus_seconds(1)));
}

// PolicyTest.appliesWhileEnabledAndWithinAPeriod (snapshots carry no enabled flag).
#[test]
fn applies_while_within_a_period() {
    let item = Item::users(&["a"], &["read"]);
    let policy = PolicyRecord::new(7)
        .with_priority(Priority::Override)
        .with_resource("path", ResourceValues::of(&["/"]))
        .with_allow(vec![item.clone()])
        .with_allow_exceptions(vec![item.clone()])
        .with_deny(vec![item.clone()])
        .with_deny_exceptions(vec![item]);
    assert_eq!(policy.id, 7);
    assert_eq!(policy.priority, Priority::Override);
    assert!(policy.resources.contains_key("path"));
    assert_eq!(
        policy.allow.len()
            + policy.allow_exceptions.len()
            + policy.deny.len()
            + policy.deny_exceptions.len(),
        4
    );
    assert!(policy.applies_at(now()));
    let later = PolicyRecord::new(2).with_validity(Some(now().plus_seconds(1)), None);
    assert!(!later.applies_at(now()));
    assert!(later.applies_at(now().plus_seconds(1)));
}

// ResourceSpecTest.holdsValuesExclusionAndRecursion (the refusals are snapshot checks).
#[test]
fn holds_values_exclusion_and_recursion() {
    let spec = ResourceValues::new(&["/a", "/b"], true, true);
    assert_eq!(spec.values, ["/a", "/b"]);
    assert!(spec.excludes && spec.recursive);
    assert!(ResourceValues::of(&["*"]).matches_anything());
    assert!(!ResourceValues::new(&["*"], true, false).matches_anything());
    assert!(!ResourceValues::of(&["a*"]).matches_anything());
}

// PriorityTest: the two priorities, by their snapshot names, OVERRIDE above NORMAL.
#[test]
fn priorities_in_order() {
    assert_eq!("NORMAL".parse::<Priority>(), Ok(Priority::Normal));
    assert_eq!("OVERRIDE".parse::<Priority>(), Ok(Priority::Override));
    assert!("override".parse::<Priority>().is_err());
    assert!(Priority::Override > Priority::Normal);
    assert_eq!(Priority::default(), Priority::Normal);
    assert_eq!(Priority::Override.to_string(), "OVERRIDE");
}

#[test]
fn level_maps_read_like_btree_maps() {
    let mut map: LevelMap = [
        ("table".to_string(), ResourceValues::of(&["t"])),
        ("database".to_string(), ResourceValues::of(&["d"])),
    ]
    .into();
    assert_eq!(map.keys().collect::<Vec<_>>(), ["database", "table"]);
    assert_eq!(map["table"].values, ["t"]);
    assert_eq!(
        map.insert("table".into(), ResourceValues::of(&["u"]))
            .unwrap()
            .values,
        ["t"]
    );
    assert!(map.contains_key("database") && !map.contains_key("column"));
    let tree: BTreeMap<String, ResourceValues> = map.clone().into();
    assert_eq!(LevelMap::from(tree), map);
    assert_eq!(map.iter().len(), 2);
    assert_eq!(
        (&map).into_iter().next_back().map(|(k, _)| k.as_str()),
        Some("table")
    );
    assert_eq!(map.remove("database").unwrap().values, ["d"]);
    assert_eq!(
        format!("{map:?}"),
        r#"{"table": ResourceValues { values: ["u"], excludes: false, recursive: false }}"#
    );
}

#[test]
fn definitions_take_levels_parents_first_in_any_order() {
    use crate::model::MatcherKind;
    let definition = Definition::new(
        vec![
            ResourceLevel::new("table", Some("database"), MatcherKind::Wildcard, false),
            ResourceLevel::new("column", Some("table"), MatcherKind::Wildcard, false),
            ResourceLevel::new("database", None, MatcherKind::Wildcard, false),
        ],
        vec![AccessTypeDefinition::new("select", &[])],
    );
    let model = definition.model().unwrap();
    assert_eq!(model.chain("column").unwrap().len(), 3);
    let mut orphan = definition.clone();
    orphan.resources[0].parent = Some("nowhere".into());
    let error = orphan.model().unwrap_err();
    assert!(
        error
            .message
            .contains("[table, column] have unknown parents"),
        "{error}"
    );
    assert_eq!(error.field, "definition.resources");
}
