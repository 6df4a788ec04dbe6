//! A policy checked against the service model and compiled (Java's `CompiledPolicy`, plus the
//! constructor checks of `Policy`, `PolicyItem`, `ResourceSpec`, `Condition` and `Validity`).

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use crate::condition::{self, Condition, ConditionEvaluator, Evaluators};
use crate::error::SnapshotError;
use crate::intern::{FxMap, Interner};
use crate::is_blank;
use crate::matcher::{RegexCache, ValueMatcher};
use crate::model::{AccessSet, ServiceModel};
use crate::record::{ConditionRef, Definition, Item, PolicyRecord, Priority, Validity};
use crate::stack::{OneOrMany, StackVec};
use crate::{ANY_VALUE, PUBLIC_GROUP};

/// A normalised request: (level id, value) root first.
pub(crate) type Levels<'a> = StackVec<(usize, Cow<'a, str>), 8>;

/// The four item lists of a policy, in the order of the document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum List {
    Allow = 0,
    AllowExceptions = 1,
    Deny = 2,
    DenyExceptions = 3,
}

const LIST_FIELDS: [&str; 4] = ["allow", "allowExceptions", "deny", "denyExceptions"];

fn lists(policy: &PolicyRecord) -> [&[Item]; 4] {
    [
        &policy.allow,
        &policy.allow_exceptions,
        &policy.deny,
        &policy.deny_exceptions,
    ]
}

/// Checks one policy against the model as the Java engine does when it is created: the record's
/// own rules, then its levels, values and access types. `index` is its place in `policies`.
pub(crate) fn check(
    model: &ServiceModel,
    policy: &PolicyRecord,
    index: usize,
    regexes: &mut RegexCache,
) -> Result<(), SnapshotError> {
    check_record(policy, index)?;
    compile_levels(model, policy, index, regexes)?;
    check_access_types(model, policy, index)
}

fn field(index: usize, rest: impl std::fmt::Display) -> String {
    format!("policies[{index}].document.{rest}")
}

/// What the Java constructors refuse: levels without values or with blank ones, items without a
/// subject or an access type, blank names, periods that do not end after they start, policies
/// without resources.
fn check_record(policy: &PolicyRecord, index: usize) -> Result<(), SnapshotError> {
    let id = policy.id;
    let fail = |rest: String, message: &str| {
        Err(SnapshotError::in_policy(id, field(index, rest), message))
    };
    for (level, values) in &policy.resources {
        if values.values.is_empty() {
            return fail(
                format!("resources.{level}.values"),
                "a resource needs at least one value",
            );
        }
        if let Some(at) = values.values.iter().position(|v| is_blank(v)) {
            return fail(
                format!("resources.{level}.values[{at}]"),
                "a resource value must not be blank",
            );
        }
    }
    for (list, items) in LIST_FIELDS.iter().zip(lists(policy)) {
        for (at, item) in items.iter().enumerate() {
            if let Err((rest, message)) = check_item(item) {
                return fail(format!("{list}[{at}]{rest}"), message);
            }
        }
    }
    for (at, period) in policy.validity.iter().enumerate() {
        if let (Some(from), Some(until)) = (period.from, period.until) {
            if until <= from {
                return fail(
                    format!("validity[{at}]"),
                    "a validity period must end after it starts",
                );
            }
        }
    }
    if policy.resources.is_empty() {
        return fail(
            "resources".to_string(),
            &format!("policy {id} names no resource"),
        );
    }
    Ok(())
}

fn check_item(item: &Item) -> Result<(), (String, &'static str)> {
    let named = [
        ("users", &item.users),
        ("groups", &item.groups),
        ("roles", &item.roles),
        ("accessTypes", &item.access_types),
    ];
    for (name, names) in named {
        if let Some(at) = names.iter().position(|n| is_blank(n)) {
            return Err((format!(".{name}[{at}]"), "a name must not be blank"));
        }
    }
    if item.users.is_empty() && item.groups.is_empty() && item.roles.is_empty() {
        return Err((
            String::new(),
            "a policy item needs at least one user, group or role",
        ));
    }
    if item.access_types.is_empty() {
        return Err((
            String::new(),
            "a policy item needs at least one access type",
        ));
    }
    if let Some(at) = item.conditions.iter().position(|c| is_blank(&c.type_name)) {
        return Err((
            format!(".conditions[{at}].type"),
            "a condition type must not be blank",
        ));
    }
    Ok(())
}

/// The compiled values of one level.
#[derive(Debug)]
pub(crate) struct CompiledLevel {
    pub(crate) level: usize,
    pub(crate) matchers: OneOrMany<ValueMatcher>,
    pub(crate) excludes: bool,
    /// `*` without exclusion: matches every value.
    pub(crate) anything: bool,
    /// `*` with exclusion: matches no value.
    pub(crate) nothing: bool,
}

impl CompiledLevel {
    /// One value matches, XOR the level excludes.
    pub(crate) fn matches(&self, value: &str) -> bool {
        self.matchers.as_slice().iter().any(|m| m.matches(value)) != self.excludes
    }
}

/// The levels of a policy, root first: they must be exactly the chain from a root down to the
/// deepest one named (ending above a leaf is fine; skipping a level or spanning two trees is not).
fn compile_levels(
    model: &ServiceModel,
    policy: &PolicyRecord,
    index: usize,
    regexes: &mut RegexCache,
) -> Result<Vec<CompiledLevel>, SnapshotError> {
    let id = policy.id;
    let mut deepest: &[usize] = &[];
    for name in policy.resources.keys() {
        let Some(level) = model.level_id(name) else {
            return Err(SnapshotError::in_policy(
                id,
                field(index, format!("resources.{name}")),
                format!("policy {id} names an unknown resource level {name}"),
            ));
        };
        let chain = model.chain_ids(level);
        if chain.len() > deepest.len() {
            deepest = chain;
        }
    }
    let complete = deepest.len() == policy.resources.len()
        && deepest
            .iter()
            .all(|&l| policy.resources.contains_key(&model.level_at(l).name));
    if !complete {
        let named: Vec<&str> = policy.resources.keys().map(String::as_str).collect();
        return Err(SnapshotError::in_policy(
            id,
            field(index, "resources"),
            format!(
                "policy {id} must give values for every level from {} down to {}, not [{}]",
                model.level_at(deepest[0]).name,
                model.level_at(deepest[deepest.len() - 1]).name,
                named.join(", ")
            ),
        ));
    }
    deepest
        .iter()
        .map(|&level| compile_level(model, policy, index, level, regexes))
        .collect()
}

fn compile_level(
    model: &ServiceModel,
    policy: &PolicyRecord,
    index: usize,
    level: usize,
    regexes: &mut RegexCache,
) -> Result<CompiledLevel, SnapshotError> {
    let definition = model.level_at(level);
    let name = &definition.name;
    let values = &policy.resources[name];
    let mut matchers = Vec::with_capacity(values.values.len());
    for (at, value) in values.values.iter().enumerate() {
        let matcher = ValueMatcher::compile_with(definition, value, values.recursive, regexes)
            .map_err(|message| {
                let rest = if message.starts_with("only path levels") {
                    format!("resources.{name}.recursive")
                } else {
                    format!("resources.{name}.values[{at}]")
                };
                SnapshotError::in_policy(policy.id, field(index, rest), message)
            })?;
        matchers.push(matcher);
    }
    let star = values.values.iter().any(|v| v == ANY_VALUE);
    Ok(CompiledLevel {
        level,
        matchers: OneOrMany::from_vec(matchers),
        excludes: values.excludes,
        anything: star && !values.excludes,
        nothing: star && values.excludes,
    })
}

fn check_access_types(
    model: &ServiceModel,
    policy: &PolicyRecord,
    index: usize,
) -> Result<(), SnapshotError> {
    let id = policy.id;
    for (list, items) in LIST_FIELDS.iter().zip(lists(policy)) {
        for (at, item) in items.iter().enumerate() {
            if let Some(t) = item
                .access_types
                .iter()
                .position(|a| !model.has_access_type(a))
            {
                return Err(SnapshotError::in_policy(
                    id,
                    field(index, format!("{list}[{at}].accessTypes[{t}]")),
                    format!(
                        "policy {id} names an unknown access type {}; the definition's access types are {}",
                        item.access_types[t],
                        known_access_types(model)
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The model's access types, in definition order, for an error that names an unknown one.
fn known_access_types(model: &ServiceModel) -> String {
    model
        .access_types()
        .iter()
        .map(|t| t.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Who asks, as ids of the engine's name tables: the user (if any policy or membership names it),
/// and the groups and roles of the request and of the snapshot.
pub(crate) struct Subject {
    pub(crate) user: Option<u32>,
    pub(crate) groups: StackVec<u32, 8>,
    pub(crate) roles: StackVec<u32, 8>,
}

/// An item with its names as sorted ids and its access types closed over their implications.
pub(crate) struct CompiledItem<C: ?Sized> {
    /// Users, then groups, then roles; each part sorted and distinct.
    names: Box<[u32]>,
    groups_at: u32,
    roles_at: u32,
    public: bool,
    /// Every access type this item grants (or denies), implications included.
    grants: AccessSet,
    conditions: Box<[Condition<C>]>,
}

impl<C: ?Sized> CompiledItem<C> {
    pub(crate) fn users(&self) -> &[u32] {
        &self.names[..self.groups_at as usize]
    }

    pub(crate) fn groups(&self) -> &[u32] {
        &self.names[self.groups_at as usize..self.roles_at as usize]
    }

    pub(crate) fn roles(&self) -> &[u32] {
        &self.names[self.roles_at as usize..]
    }

    pub(crate) fn is_public(&self) -> bool {
        self.public
    }

    /// The user, the group `public`, one of the groups or one of the roles is named.
    pub(crate) fn names(&self, subject: &Subject) -> bool {
        self.public
            || subject
                .user
                .is_some_and(|u| self.users().binary_search(&u).is_ok())
            || subject
                .groups
                .iter()
                .any(|g| self.groups().binary_search(g).is_ok())
            || subject
                .roles
                .iter()
                .any(|r| self.roles().binary_search(r).is_ok())
    }

    /// Names the subject, grants the access type and all conditions hold (`unsure` when they
    /// cannot be evaluated).
    pub(crate) fn matches(
        &self,
        subject: &Subject,
        access: usize,
        context: &C,
        unsure: bool,
    ) -> bool {
        self.names(subject)
            && self.grants.contains(access)
            && self
                .conditions
                .iter()
                .all(|c| condition::holds(c, context, unsure))
    }
}

/// A policy ready to decide.
pub(crate) struct CompiledPolicy<C: ?Sized> {
    pub(crate) id: i64,
    pub(crate) priority: Priority,
    /// Where the name lies in the engine's arena of policy names.
    pub(crate) name: (u32, u32),
    /// Root first.
    levels: OneOrMany<CompiledLevel>,
    /// Requests must reach at least this many levels: the levels below match anything.
    min_depth: usize,
    validity: Box<[Validity]>,
    items: OneOrMany<CompiledItem<C>>,
    /// Where each list ends in `items`.
    ends: [u32; 4],
}

impl<C: ?Sized> CompiledPolicy<C> {
    pub(crate) fn root(&self) -> usize {
        self.levels()[0].level
    }

    /// The levels, root first.
    pub(crate) fn levels(&self) -> &[CompiledLevel] {
        self.levels.as_slice()
    }

    pub(crate) fn applies_at(&self, time: crate::Instant) -> bool {
        self.validity.is_empty() || self.validity.iter().any(|v| v.contains(time))
    }

    /// Where [`CompiledPolicy::applies_at`] may change its answer.
    pub(crate) fn validity_boundaries(&self) -> impl Iterator<Item = crate::Instant> + '_ {
        self.validity.iter().flat_map(Validity::boundaries)
    }

    /// Whether the policy covers a normalised request: every requested level is one of the
    /// policy's with a matching value, and every level the request does not reach matches anything.
    pub(crate) fn covers(&self, request: &Levels<'_>) -> bool {
        let depth = request.len();
        let levels = self.levels();
        if depth > levels.len() || depth < self.min_depth {
            return false;
        }
        levels
            .iter()
            .zip(request.iter())
            .all(|(level, (id, value))| level.level == *id && level.matches(value))
    }

    /// Whether it covers every resource of its root: every level matches anything.
    pub(crate) fn covers_everything(&self) -> bool {
        self.min_depth == 0
    }

    /// Whether it covers no resource at all because a level excludes `*`.
    pub(crate) fn covers_nothing(&self) -> bool {
        self.levels().iter().any(|l| l.nothing)
    }

    pub(crate) fn items(&self, list: List) -> &[CompiledItem<C>] {
        let at = list as usize;
        let start = if at == 0 {
            0
        } else {
            self.ends[at - 1] as usize
        };
        &self.items.as_slice()[start..self.ends[at] as usize]
    }

    fn any(&self, list: List, subject: &Subject, access: usize, context: &C, unsure: bool) -> bool {
        self.items(list)
            .iter()
            .any(|item| item.matches(subject, access, context, unsure))
    }

    /// The deny branch: a deny item matches (unsure conditions hold) and no deny exception does
    /// (unsure conditions do not hold).
    pub(crate) fn denies(&self, subject: &Subject, access: usize, context: &C) -> bool {
        self.any(List::Deny, subject, access, context, true)
            && !self.any(List::DenyExceptions, subject, access, context, false)
    }

    /// The allow branch, asked only when the deny branch did not deny: an allow item matches
    /// (unsure conditions do not hold) and no allow exception does (unsure conditions hold).
    pub(crate) fn allows(&self, subject: &Subject, access: usize, context: &C) -> bool {
        self.any(List::Allow, subject, access, context, false)
            && !self.any(List::AllowExceptions, subject, access, context, true)
    }

    /// The indices of the items of a list that match, for explanations.
    pub(crate) fn matching(
        &self,
        list: List,
        subject: &Subject,
        access: usize,
        context: &C,
    ) -> Vec<usize> {
        let unsure = matches!(list, List::Deny | List::AllowExceptions);
        let items = self.items(list).iter().enumerate();
        items
            .filter(|(_, item)| item.matches(subject, access, context, unsure))
            .map(|(at, _)| at)
            .collect()
    }
}

/// Compiles the policies of one snapshot, sharing name tables and compiled conditions.
pub(crate) struct Compiler<'a, C: ?Sized> {
    pub(crate) model: ServiceModel,
    pub(crate) users: Interner,
    pub(crate) groups: Interner,
    pub(crate) roles: Interner,
    /// Condition name → its evaluator's name and the evaluator registered under it.
    evaluators: FxMap<String, (String, &'a Arc<dyn ConditionEvaluator<C>>)>,
    /// The evaluators some item's condition was given to (compiled or not): what a decision may read.
    pub(crate) in_use: BTreeSet<String>,
    compiled: HashMap<ConditionRef, Condition<C>>,
    regexes: RegexCache,
    missing: HashSet<String>,
    pub(crate) warnings: Vec<String>,
    /// Every policy's name, one after the other.
    pub(crate) names: String,
}

impl<'a, C: ?Sized> Compiler<'a, C> {
    pub(crate) fn new(
        model: ServiceModel,
        definition: &Definition,
        evaluators: &'a Evaluators<C>,
    ) -> Self {
        let mut by_condition = FxMap::default();
        for condition in &definition.conditions {
            // As the Java agent: only conditions whose evaluator the agent has are mapped.
            if let Some(evaluator) = evaluators.get(&condition.evaluator) {
                by_condition.insert(
                    condition.name.clone(),
                    (condition.evaluator.clone(), evaluator),
                );
            }
        }
        Compiler {
            model,
            users: Interner::default(),
            groups: Interner::default(),
            roles: Interner::default(),
            evaluators: by_condition,
            compiled: HashMap::new(),
            regexes: RegexCache::new(),
            missing: HashSet::new(),
            in_use: BTreeSet::new(),
            warnings: Vec::new(),
            names: String::new(),
        }
    }

    pub(crate) fn compile(
        &mut self,
        policy: &PolicyRecord,
        index: usize,
    ) -> Result<CompiledPolicy<C>, SnapshotError> {
        check_record(policy, index)?;
        let levels = compile_levels(&self.model, policy, index, &mut self.regexes)?;
        check_access_types(&self.model, policy, index)?;
        let mut items = Vec::with_capacity(lists(policy).iter().map(|l| l.len()).sum());
        let mut ends = [0u32; 4];
        for (at, list) in lists(policy).into_iter().enumerate() {
            for item in list {
                items.push(self.item(item, policy.id));
            }
            ends[at] = items.len() as u32;
        }
        let min_depth = levels
            .iter()
            .rposition(|l| !l.anything)
            .map_or(0, |at| at + 1);
        let name_start = self.names.len() as u32;
        self.names.push_str(&policy.name);
        Ok(CompiledPolicy {
            id: policy.id,
            priority: policy.priority,
            name: (name_start, self.names.len() as u32),
            levels: OneOrMany::from_vec(levels),
            min_depth,
            validity: policy.validity.clone().into_boxed_slice(),
            items: OneOrMany::from_vec(items),
            ends,
        })
    }

    fn item(&mut self, item: &Item, policy: i64) -> CompiledItem<C> {
        let mut names = ids(&mut self.users, &item.users);
        let groups_at = names.len() as u32;
        names.extend(ids(&mut self.groups, &item.groups));
        let roles_at = names.len() as u32;
        names.extend(ids(&mut self.roles, &item.roles));
        let mut grants = AccessSet::empty(self.model.access_count());
        for access in &item.access_types {
            if let Some(id) = self.model.access_id(access) {
                grants.union_with(self.model.grants(id));
            }
        }
        let conditions = item
            .conditions
            .iter()
            .map(|c| self.condition(c, policy))
            .collect();
        CompiledItem {
            names: names.into_boxed_slice(),
            groups_at,
            roles_at,
            public: item.groups.iter().any(|g| g == PUBLIC_GROUP),
            grants,
            conditions,
        }
    }

    /// Compiles a condition once per snapshot (identical conditions share one compilation).
    fn condition(&mut self, condition: &ConditionRef, policy: i64) -> Condition<C> {
        if let Some(done) = self.compiled.get(condition) {
            return done.clone();
        }
        let name = condition.type_name.as_str();
        let compiled = match self.evaluators.get(name) {
            None => {
                if self.missing.insert(name.to_string()) {
                    self.warnings.push(format!(
                        "condition {name} has no evaluator in this agent: allow items and deny exceptions using it never apply, deny items and allow exceptions always do"
                    ));
                }
                None
            }
            Some((evaluator_name, evaluator)) => {
                self.in_use.insert(evaluator_name.to_string());
                let values = &condition.values;
                match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    evaluator.compile(values)
                })) {
                    Ok(Ok(compiled)) => Some(Arc::from(compiled)),
                    Ok(Err(message)) => {
                        self.warnings.push(format!(
                            "policy {policy}: the values {values:?} of condition {name} do not compile ({message}); it is taken in the safe direction"
                        ));
                        None
                    }
                    Err(_) => {
                        self.warnings.push(format!(
                            "policy {policy}: the evaluator of condition {name} failed on {values:?}; it is taken in the safe direction"
                        ));
                        None
                    }
                }
            }
        };
        self.compiled.insert(condition.clone(), compiled.clone());
        compiled
    }
}

fn ids(names: &mut Interner, given: &[String]) -> Vec<u32> {
    let mut ids: Vec<u32> = given.iter().map(|name| names.intern(name)).collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matcher::normalize;
    use crate::model::tests::hive;
    use crate::record::ResourceValues;

    fn request<'a>(model: &ServiceModel, values: &[(&str, &'a str)]) -> Levels<'a> {
        let mut levels = Levels::new();
        for (name, value) in values {
            let id = model.level_id(name).unwrap();
            levels.push((id, normalize(model.level_at(id), value)));
        }
        levels
    }

    // CompiledPolicyTest.coversRequestsDownToItsDeepestLevel
    #[test]
    fn covers_requests_down_to_its_deepest_level() {
        let model = hive();
        let policy = PolicyRecord::new(1)
            .with_resource("database", ResourceValues::of(&["sales"]))
            .with_resource("table", ResourceValues::of(&["*"]))
            .with_resource("column", ResourceValues::new(&["secret"], true, false));
        let definition = Definition::default();
        let evaluators = Evaluators::<()>::new();
        let mut compiler = Compiler::new(model.clone(), &definition, &evaluators);
        let compiled = compiler.compile(&policy, 0).unwrap();
        assert_eq!(compiled.root(), model.level_id("database").unwrap());
        assert!(!compiled.levels()[0].excludes);

        let column = [
            ("database", "sales"),
            ("table", "orders"),
            ("column", "amount"),
        ];
        assert!(compiled.covers(&request(&model, &column)));
        let secret = [
            ("database", "sales"),
            ("table", "orders"),
            ("column", "secret"),
        ];
        assert!(!compiled.covers(&request(&model, &secret)));
        // The column level is an exclusion, not *, so a table-wide request is not covered.
        assert!(!compiled.covers(&request(
            &model,
            &[("database", "sales"), ("table", "orders")]
        )));
        assert!(!compiled.covers(&request(&model, &[("url", "x")])));
    }

    #[test]
    fn a_database_policy_with_stars_below_covers_the_database() {
        let model = hive();
        let definition = Definition::default();
        let evaluators = Evaluators::<()>::new();
        let mut compiler = Compiler::new(model.clone(), &definition, &evaluators);
        let stars = PolicyRecord::new(1)
            .with_resource("database", ResourceValues::of(&["hr"]))
            .with_resource("table", ResourceValues::of(&["*"]))
            .with_resource("column", ResourceValues::of(&["*"]));
        let compiled = compiler.compile(&stars, 0).unwrap();
        assert!(compiled.covers(&request(&model, &[("database", "HR")])));
        assert!(!compiled.covers_everything());
        let orders = stars
            .clone()
            .with_resource("table", ResourceValues::of(&["orders"]));
        assert!(!compiler
            .compile(&orders, 1)
            .unwrap()
            .covers(&request(&model, &[("database", "hr")])));
        let everything = stars.with_resource("database", ResourceValues::of(&["*"]));
        assert!(compiler
            .compile(&everything, 2)
            .unwrap()
            .covers_everything());
    }

    // PolicyItemTest.needsSomeoneAndAnAccessType, ConditionTest, ResourceSpecTest's refusals,
    // ValidityTest's "end after it starts", PolicyTest's "names no resource".
    #[test]
    fn refuses_records_the_java_constructors_refuse() {
        let model = hive();
        let base = || PolicyRecord::new(3).with_resource("url", ResourceValues::of(&["x"]));
        let refused =
            |policy: PolicyRecord| check(&model, &policy, 5, &mut RegexCache::new()).unwrap_err();

        let nobody = refused(base().with_allow(vec![Item::new().with_access_types(&["select"])]));
        assert!(nobody.message.contains("user, group or role"), "{nobody}");
        assert_eq!(nobody.field, "policies[5].document.allow[0]");
        assert_eq!(nobody.policy_id, Some(3));
        let nothing = refused(base().with_deny(vec![Item::new().with_users(&["a"])]));
        assert!(nothing.message.contains("access type"), "{nothing}");
        let blank = refused(base().with_allow(vec![Item::users(&["a", " "], &["select"])]));
        assert_eq!(blank.field, "policies[5].document.allow[0].users[1]");
        let condition = refused(base().with_allow(vec![
            Item::users(&["a"], &["select"]).with_condition("", &["v"]),
        ]));
        assert!(
            condition.field.ends_with("conditions[0].type"),
            "{condition}"
        );
        let empty = refused(PolicyRecord::new(3).with_resource("url", ResourceValues::of(&[])));
        assert!(empty.message.contains("at least one value"), "{empty}");
        assert_eq!(empty.field, "policies[5].document.resources.url.values");
        let spaces = refused(PolicyRecord::new(3).with_resource("url", ResourceValues::of(&[" "])));
        assert!(spaces.message.contains("blank"), "{spaces}");
        let now = crate::Instant::parse("2026-06-15T12:00:00Z").unwrap();
        let period = refused(base().with_validity(Some(now), Some(now)));
        assert!(period.message.contains("end after it starts"), "{period}");
        let none = refused(PolicyRecord::new(3));
        assert!(none.message.contains("names no resource"), "{none}");
        assert!(check(
            &model,
            &base().with_allow(vec![Item::users(&["a"], &["select"])]),
            0,
            &mut RegexCache::new()
        )
        .is_ok());
    }

    #[test]
    fn items_name_subjects_by_id_and_grant_what_their_types_imply() {
        let model = hive();
        let definition = Definition::default();
        let evaluators = Evaluators::<()>::new();
        let mut compiler = Compiler::new(model.clone(), &definition, &evaluators);
        let item = Item::new()
            .with_users(&["b", "a", "b"])
            .with_groups(&["g"])
            .with_roles(&["r"])
            .with_access_types(&["all"]);
        let compiled = compiler.item(&item, 1);
        assert_eq!(compiled.users(), &[0, 1]);
        assert_eq!(compiled.groups(), &[0]);
        assert_eq!(compiled.roles(), &[0]);
        assert!(!compiled.is_public());
        let select = model.access_id("select").unwrap();
        let subject = Subject {
            user: Some(1),
            groups: StackVec::new(),
            roles: StackVec::new(),
        };
        assert!(compiled.matches(&subject, select, &(), false));
        let stranger = Subject {
            user: Some(9),
            groups: StackVec::new(),
            roles: StackVec::new(),
        };
        assert!(!compiled.matches(&stranger, select, &(), false));
    }
}
