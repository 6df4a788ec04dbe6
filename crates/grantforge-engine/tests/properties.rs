//! Laws every engine obeys on random snapshots and requests (Java's `PolicyEngineProperties`, on
//! three models instead of one), checked against a naive reference written straight from the
//! algorithm of GrantForge's `PolicyEngine.evaluate` (`core/grantforge-policy-engine`; the rules are
//! at the top of this crate's `lib.rs`): no index, no interning, no precompiled matchers, globs by
//! backtracking over characters.

mod read_vs_parse;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use grantforge_engine::{
    AccessRequest, AccessTypeDefinition, CompiledCondition, ConditionDefinition,
    ConditionEvaluator, Decision, Definition, Evaluators, Instant, Item, MatcherKind, PolicyEngine,
    PolicyRecord, Priority, ResourceLevel, ResourceValues, Snapshot,
};
use proptest::prelude::*;

/// 10,000 cases per property; `GF_PROPTEST_CASES` lowers it where each run must be short (the
/// mutation runs of `scripts/mutants`, which rebuild and rerun the tests for every mutant).
fn cases() -> u32 {
    std::env::var("GF_PROPTEST_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(10_000)
}

// ---------------------------------------------------------------------------------------------
// Random input

/// SplitMix64: cases are generated from one seed, cheaply, and reproduced from it.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
    fn some<T: Clone>(&mut self, items: &[T], max: usize) -> Vec<T> {
        let count = self.below(max + 1);
        let mut chosen: Vec<T> = Vec::new();
        for _ in 0..count {
            chosen.push(self.pick(items).clone());
        }
        chosen
    }
}

/// What conditions look at: two flags.
#[derive(Clone, Copy, Debug, Default)]
struct Ctx {
    a: bool,
    b: bool,
}

const USERS: &[&str] = &["alice", "bob", "carol"];
const GROUPS: &[&str] = &["staff", "ops", "public"];
const ROLES: &[&str] = &["admin", "auditor"];
const CONDITIONS: &[&str] = &[
    "flag-a",
    "flag-b",
    "broken",
    "uncompilable",
    "absent",
    "undeclared",
];

fn t0() -> Instant {
    Instant::parse("2026-06-15T12:00:00Z").unwrap()
}

fn definition(kind: usize) -> Definition {
    let mut definition = match kind {
        0 => Definition::new(
            vec![ResourceLevel::new("path", None, MatcherKind::Path, true)],
            vec![
                AccessTypeDefinition::new("read", &[]),
                AccessTypeDefinition::new("write", &[]),
                AccessTypeDefinition::new("execute", &[]),
            ],
        ),
        1 => Definition::new(
            vec![
                ResourceLevel::new("table", Some("database"), MatcherKind::Wildcard, false),
                ResourceLevel::new("database", None, MatcherKind::Wildcard, false),
                ResourceLevel::new("column", Some("table"), MatcherKind::Wildcard, false),
                ResourceLevel::new("url", None, MatcherKind::Regex, false),
            ],
            vec![
                AccessTypeDefinition::new("select", &[]),
                AccessTypeDefinition::new("update", &[]),
                AccessTypeDefinition::new("alter", &["update"]),
                AccessTypeDefinition::new("all", &["select", "alter"]),
            ],
        ),
        _ => Definition::new(
            vec![
                ResourceLevel::new("topic", None, MatcherKind::Wildcard, true),
                ResourceLevel::new("group", None, MatcherKind::Wildcard, true),
                ResourceLevel::new("cluster", None, MatcherKind::Exact, true),
            ],
            vec![
                AccessTypeDefinition::new("describe", &[]),
                AccessTypeDefinition::new("read", &["describe"]),
                AccessTypeDefinition::new("write", &["describe"]),
                AccessTypeDefinition::new("all", &["read", "write"]),
            ],
        ),
    };
    definition.conditions = vec![
        ConditionDefinition::new("flag-a", "flag-a"),
        ConditionDefinition::new("flag-b", "flag-b"),
        ConditionDefinition::new("broken", "broken"),
        ConditionDefinition::new("uncompilable", "uncompilable"),
        ConditionDefinition::new("absent", "nobody-registers-this"),
    ];
    definition
}

fn level<'d>(definition: &'d Definition, name: &str) -> &'d ResourceLevel {
    definition
        .resources
        .iter()
        .find(|l| l.name == name)
        .unwrap()
}

/// The chain from a root down to `name`, root first.
fn chain<'d>(definition: &'d Definition, name: &str) -> Vec<&'d ResourceLevel> {
    let mut chain = vec![level(definition, name)];
    while let Some(parent) = &chain[0].parent {
        chain.insert(0, level(definition, parent));
    }
    chain
}

/// A value for a level: patterns for policies, plain (but possibly odd) values for requests.
fn value(rng: &mut Rng, level: &ResourceLevel, pattern: bool) -> String {
    match level.matcher {
        MatcherKind::Path => {
            let mut path = String::new();
            for _ in 0..rng.below(4) {
                let mut segment = rng.pick(&["a", "b", "ab", "data", "X", "é"]).to_string();
                if pattern && rng.one_in(5) {
                    segment = rng.pick(&["*", "a?", "*b", "?"]).to_string();
                }
                path.push('/');
                path.push_str(&segment);
            }
            if path.is_empty() {
                "/".to_string()
            } else if rng.one_in(5) {
                path + "/"
            } else {
                path
            }
        }
        MatcherKind::Regex => {
            if pattern {
                rng.pick(&["a.*", "(a|b)+", "[ab]?c", ".*", "A|B", "é+", "a|ab"])
                    .to_string()
            } else {
                rng.pick(&["a", "ab", "abab", "c", "bc", "A", "É", "x"])
                    .to_string()
            }
        }
        _ => {
            // `*` and `?` are wildcards in WILDCARD patterns and plain characters everywhere else.
            let alphabet: &[&str] = &["a", "b", "A", "é", "É", "ß", "*", "?", "."];
            let length = 1 + rng.below(3);
            let text: String = (0..length).map(|_| *rng.pick(alphabet)).collect();
            if pattern && rng.one_in(6) {
                "*".to_string()
            } else if !pattern && text == "*" {
                "a*".to_string()
            } else {
                text
            }
        }
    }
}

fn item(rng: &mut Rng, access_types: &[String]) -> Item {
    let mut item = Item::new().with_access_types(
        &rng.some(access_types, 2)
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    if item.access_types.is_empty() {
        item.access_types.push(rng.pick(access_types).clone());
    }
    match rng.below(4) {
        0 => item.groups = vec![rng.pick(GROUPS).to_string()],
        1 => item.roles = vec![rng.pick(ROLES).to_string()],
        _ => item.users = rng.some(USERS, 2).iter().map(|u| u.to_string()).collect(),
    }
    if item.users.is_empty() && item.groups.is_empty() && item.roles.is_empty() {
        item.users.push(rng.pick(USERS).to_string());
    }
    dedup(&mut item.users);
    dedup(&mut item.access_types);
    if rng.one_in(4) {
        let name = *rng.pick(CONDITIONS);
        item = item.with_condition(name, &["x"]);
    }
    item
}

fn dedup(names: &mut Vec<String>) {
    let mut seen = BTreeSet::new();
    names.retain(|n| seen.insert(n.clone()));
}

fn items(rng: &mut Rng, access_types: &[String], max: usize) -> Vec<Item> {
    (0..rng.below(max + 1))
        .map(|_| item(rng, access_types))
        .collect()
}

/// A level to end a chain at. REGEX levels are rarer: they delegate to the regex crate, whose
/// compilation dominates unoptimised test builds.
fn deepest(rng: &mut Rng, definition: &Definition) -> String {
    loop {
        let level = rng.pick(&definition.resources);
        if level.matcher != MatcherKind::Regex || rng.one_in(4) {
            return level.name.clone();
        }
    }
}

fn policy(rng: &mut Rng, definition: &Definition, id: i64) -> PolicyRecord {
    let access_types: Vec<String> = definition
        .access_types
        .iter()
        .map(|a| a.name.clone())
        .collect();
    let deepest = deepest(rng, definition);
    let mut policy = PolicyRecord::new(id).with_priority(if rng.one_in(4) {
        Priority::Override
    } else {
        Priority::Normal
    });
    for level in chain(definition, &deepest) {
        let values: Vec<String> = (0..1 + rng.below(2))
            .map(|_| value(rng, level, true))
            .collect();
        let values: Vec<&str> = values.iter().map(String::as_str).collect();
        let recursive = level.matcher == MatcherKind::Path && rng.one_in(2);
        policy = policy.with_resource(
            &level.name,
            ResourceValues::new(&values, rng.one_in(7), recursive),
        );
    }
    policy.allow = items(rng, &access_types, 2);
    policy.allow_exceptions = items(rng, &access_types, 1);
    policy.deny = items(rng, &access_types, 1);
    policy.deny_exceptions = items(rng, &access_types, 1);
    if rng.one_in(5) {
        let t = t0();
        let (from, until) = match rng.below(3) {
            0 => (Some(t.plus_seconds(-100)), Some(t.plus_seconds(100))),
            1 => (Some(t.plus_seconds(50)), None),
            _ => (None, Some(t.plus_seconds(-10))),
        };
        policy = policy.with_validity(from, until);
    }
    policy
}

fn snapshot(rng: &mut Rng, kind: usize, size: usize) -> Snapshot {
    let definition = definition(kind);
    let mut ids: Vec<i64> = (1..=size as i64 * 2).collect();
    let policies = (0..size)
        .map(|_| {
            let id = ids.swap_remove(rng.below(ids.len()));
            policy(rng, &definition, id)
        })
        .collect();
    let mut snapshot = Snapshot::new("test", definition, policies);
    for (code, members) in [("staff", &["bob"][..]), ("ops", &["carol", "alice"][..])] {
        if rng.one_in(2) {
            snapshot.groups.insert(
                code.to_string(),
                members.iter().map(|m| m.to_string()).collect(),
            );
        }
    }
    if rng.one_in(2) {
        snapshot
            .roles
            .insert("admin".to_string(), vec!["carol".to_string()]);
    }
    snapshot
}

/// A request, owned.
#[derive(Clone, Debug)]
struct Req {
    resource: Vec<(String, String)>,
    access: String,
    user: String,
    groups: Vec<String>,
    roles: Vec<String>,
    time: Instant,
    ctx: Ctx,
}

impl Req {
    fn with<T>(&self, ask: impl FnOnce(&AccessRequest<'_, Ctx>) -> T) -> T {
        let resource: Vec<(&str, &str)> = self
            .resource
            .iter()
            .map(|(l, v)| (l.as_str(), v.as_str()))
            .collect();
        let request = AccessRequest {
            resource: &resource,
            access_type: &self.access,
            user: &self.user,
            groups: &self.groups,
            roles: &self.roles,
            time: self.time,
            context: &self.ctx,
        };
        ask(&request)
    }
}

fn request(rng: &mut Rng, definition: &Definition) -> Req {
    let deepest = deepest(rng, definition);
    let mut resource: Vec<(String, String)> = chain(definition, &deepest)
        .into_iter()
        .map(|l| (l.name.clone(), value(rng, l, false)))
        .collect();
    match rng.below(30) {
        0 => resource.push(("nowhere".to_string(), "x".to_string())),
        1 if resource.len() > 1 => {
            resource.remove(0);
        }
        2 => resource[0].1 = " ".to_string(),
        _ => {}
    }
    if rng.one_in(2) {
        resource.reverse();
    }
    let mut access_types: Vec<String> = definition
        .access_types
        .iter()
        .map(|a| a.name.clone())
        .collect();
    access_types.push("unknown".to_string());
    let time = match rng.below(4) {
        0 => t0().plus_seconds(60),
        1 => t0().plus_seconds(-50),
        _ => t0(),
    };
    Req {
        resource,
        access: rng.pick(&access_types).clone(),
        user: rng.pick(&["alice", "bob", "carol", "dave"]).to_string(),
        groups: rng
            .some(&["staff", "ops", "public", "nobody"], 2)
            .iter()
            .map(|g| g.to_string())
            .collect(),
        roles: rng
            .some(&["admin", "auditor"], 1)
            .iter()
            .map(|r| r.to_string())
            .collect(),
        time,
        ctx: Ctx {
            a: rng.one_in(2),
            b: rng.one_in(2),
        },
    }
}

// ---------------------------------------------------------------------------------------------
// The engine's evaluators and the naive reference's view of them

struct Flag(fn(&Ctx) -> bool);
struct FlagCondition(fn(&Ctx) -> bool);
struct Broken;
struct Uncompilable;

impl ConditionEvaluator<Ctx> for Flag {
    fn compile(&self, _values: &[String]) -> Result<Box<dyn CompiledCondition<Ctx>>, String> {
        Ok(Box::new(FlagCondition(self.0)))
    }
}

impl CompiledCondition<Ctx> for FlagCondition {
    fn holds(&self, context: &Ctx) -> Result<bool, String> {
        Ok((self.0)(context))
    }
}

impl ConditionEvaluator<Ctx> for Broken {
    fn compile(&self, _values: &[String]) -> Result<Box<dyn CompiledCondition<Ctx>>, String> {
        Ok(Box::new(Broken))
    }
}

impl CompiledCondition<Ctx> for Broken {
    fn holds(&self, _context: &Ctx) -> Result<bool, String> {
        Err("broken".to_string())
    }
}

impl ConditionEvaluator<Ctx> for Uncompilable {
    fn compile(&self, _values: &[String]) -> Result<Box<dyn CompiledCondition<Ctx>>, String> {
        Err("cannot compile".to_string())
    }
}

fn evaluators() -> Evaluators<Ctx> {
    let mut evaluators = Evaluators::new();
    evaluators.register("flag-a", Arc::new(Flag(|c| c.a)));
    evaluators.register("flag-b", Arc::new(Flag(|c| c.b)));
    evaluators.register("broken", Arc::new(Broken));
    evaluators.register("uncompilable", Arc::new(Uncompilable));
    evaluators
}

/// What a condition says by the reference: `None` when it cannot be evaluated.
fn naive_condition(definition: &Definition, name: &str, ctx: &Ctx) -> Option<bool> {
    let declared = definition.conditions.iter().find(|c| c.name == name)?;
    match declared.evaluator.as_str() {
        "flag-a" => Some(ctx.a),
        "flag-b" => Some(ctx.b),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// The naive reference

fn naive_normalize(level: &ResourceLevel, value: &str) -> String {
    let mut value = if level.case_sensitive {
        value.to_string()
    } else {
        value.to_lowercase()
    };
    if level.matcher == MatcherKind::Path {
        while value.len() > 1 && value.ends_with('/') {
            value.pop();
        }
    }
    value
}

fn naive_glob(pattern: &[char], text: &[char], path: bool) -> bool {
    match pattern.first() {
        None => text.is_empty(),
        Some('*') => (0..=text.len()).any(|k| {
            (!path || !text[..k].contains(&'/')) && naive_glob(&pattern[1..], &text[k..], path)
        }),
        Some('?') => {
            !text.is_empty()
                && (!path || text[0] != '/')
                && naive_glob(&pattern[1..], &text[1..], path)
        }
        Some(c) => text.first() == Some(c) && naive_glob(&pattern[1..], &text[1..], path),
    }
}

fn naive_value_matches(level: &ResourceLevel, raw: &str, recursive: bool, requested: &str) -> bool {
    if raw == "*" {
        return true;
    }
    let pattern: Vec<char> = naive_normalize(level, raw).chars().collect();
    let whole = |text: &str| {
        let text: Vec<char> = text.chars().collect();
        naive_glob(&pattern, &text, level.matcher == MatcherKind::Path)
    };
    match level.matcher {
        MatcherKind::Exact => naive_normalize(level, raw) == requested,
        MatcherKind::Wildcard => whole(requested),
        MatcherKind::Path => {
            if whole(requested) {
                return true;
            }
            // Every cut at a `/`, from the right: "/a/b/c" has "/a/b", "/a" and "/".
            recursive
                && requested
                    .char_indices()
                    .filter(|(_, c)| *c == '/')
                    .any(|(at, _)| whole(if at == 0 { "/" } else { &requested[..at] }))
        }
        MatcherKind::Regex => naive_regex(raw, level.case_sensitive).is_match(requested),
    }
}

fn naive_regex(raw: &str, case_sensitive: bool) -> regex::Regex {
    thread_local! {
        static COMPILED: std::cell::RefCell<BTreeMap<(String, bool), regex::Regex>> = Default::default();
    }
    COMPILED.with(|compiled| {
        let key = (raw.to_string(), case_sensitive);
        let build = || {
            regex::RegexBuilder::new(&format!("^(?:{raw})$"))
                .case_insensitive(!case_sensitive)
                .build()
                .unwrap()
        };
        compiled
            .borrow_mut()
            .entry(key)
            .or_insert_with(build)
            .clone()
    })
}

fn naive_level_matches(level: &ResourceLevel, spec: &ResourceValues, requested: &str) -> bool {
    spec.values
        .iter()
        .any(|v| naive_value_matches(level, v, spec.recursive, requested))
        != spec.excludes
}

fn naive_covers(
    definition: &Definition,
    policy: &PolicyRecord,
    normalized: &BTreeMap<String, String>,
) -> bool {
    for (name, value) in normalized {
        match policy.resources.get(name) {
            Some(spec) if naive_level_matches(level(definition, name), spec, value) => {}
            _ => return false,
        }
    }
    policy
        .resources
        .iter()
        .all(|(name, spec)| normalized.contains_key(name) || spec.matches_anything())
}

fn naive_granted_by(definition: &Definition, requested: &str) -> BTreeSet<String> {
    let mut granting = BTreeSet::new();
    for start in &definition.access_types {
        let mut seen = BTreeSet::new();
        let mut pending = vec![start.name.clone()];
        while let Some(current) = pending.pop() {
            if seen.insert(current.clone()) {
                let implied = &definition
                    .access_types
                    .iter()
                    .find(|a| a.name == current)
                    .unwrap()
                    .implied_grants;
                pending.extend(implied.iter().cloned());
            }
        }
        if seen.contains(requested) {
            granting.insert(start.name.clone());
        }
    }
    granting
}

struct Who {
    user: String,
    groups: BTreeSet<String>,
    roles: BTreeSet<String>,
}

fn naive_who(snapshot: &Snapshot, user: &str, groups: &[String], roles: &[String]) -> Who {
    let mut who = Who {
        user: user.to_string(),
        groups: groups.iter().cloned().collect(),
        roles: roles.iter().cloned().collect(),
    };
    for (code, members) in &snapshot.groups {
        if members.iter().any(|m| m == user) {
            who.groups.insert(code.clone());
        }
    }
    for (code, members) in &snapshot.roles {
        if members.iter().any(|m| m == user) {
            who.roles.insert(code.clone());
        }
    }
    who
}

fn naive_any(
    definition: &Definition,
    items: &[Item],
    who: &Who,
    granting: &BTreeSet<String>,
    ctx: &Ctx,
    unsure: bool,
) -> bool {
    items.iter().any(|item| {
        let names = item.users.contains(&who.user)
            || item
                .groups
                .iter()
                .any(|g| g == "public" || who.groups.contains(g))
            || item.roles.iter().any(|r| who.roles.contains(r));
        let grants = item.access_types.iter().any(|a| granting.contains(a));
        let holds = item
            .conditions
            .iter()
            .all(|c| naive_condition(definition, &c.type_name, ctx).unwrap_or(unsure));
        names && grants && holds
    })
}

fn naive_denies(
    definition: &Definition,
    policy: &PolicyRecord,
    who: &Who,
    granting: &BTreeSet<String>,
    ctx: &Ctx,
) -> bool {
    naive_any(definition, &policy.deny, who, granting, ctx, true)
        && !naive_any(
            definition,
            &policy.deny_exceptions,
            who,
            granting,
            ctx,
            false,
        )
}

fn naive_allows(
    definition: &Definition,
    policy: &PolicyRecord,
    who: &Who,
    granting: &BTreeSet<String>,
    ctx: &Ctx,
) -> bool {
    naive_any(definition, &policy.allow, who, granting, ctx, false)
        && !naive_any(
            definition,
            &policy.allow_exceptions,
            who,
            granting,
            ctx,
            true,
        )
}

/// `Err(())` for a request the engine must refuse.
fn naive_decide(snapshot: &Snapshot, req: &Req) -> Result<Decision, ()> {
    let definition = &snapshot.definition;
    let blank = |s: &str| s.trim().is_empty();
    if req.resource.is_empty() || req.resource.iter().any(|(l, v)| blank(l) || blank(v)) {
        return Err(());
    }
    if blank(&req.access)
        || blank(&req.user)
        || req.groups.iter().chain(&req.roles).any(|n| blank(n))
    {
        return Err(());
    }
    let names: BTreeSet<&str> = req.resource.iter().map(|(l, _)| l.as_str()).collect();
    if names.len() != req.resource.len()
        || names
            .iter()
            .any(|n| !definition.resources.iter().any(|l| l.name == *n))
    {
        return Err(());
    }
    let deepest = names
        .iter()
        .map(|n| chain(definition, n))
        .max_by_key(|c| c.len())
        .unwrap();
    if deepest.len() != names.len() || deepest.iter().any(|l| !names.contains(l.name.as_str())) {
        return Err(());
    }
    let normalized: BTreeMap<String, String> = req
        .resource
        .iter()
        .map(|(l, v)| (l.clone(), naive_normalize(level(definition, l), v)))
        .collect();
    let granting = naive_granted_by(definition, &req.access);
    if granting.is_empty() {
        return Ok(Decision::not_determined());
    }
    let who = naive_who(snapshot, &req.user, &req.groups, &req.roles);
    for priority in [Priority::Override, Priority::Normal] {
        let (mut denied, mut allowed): (Option<i64>, Option<i64>) = (None, None);
        for policy in &snapshot.policies {
            if policy.priority != priority
                || !policy.applies_at(req.time)
                || !naive_covers(definition, policy, &normalized)
            {
                continue;
            }
            if naive_denies(definition, policy, &who, &granting, &req.ctx) {
                denied = Some(denied.map_or(policy.id, |d| d.min(policy.id)));
            } else if naive_allows(definition, policy, &who, &granting, &req.ctx) {
                allowed = Some(allowed.map_or(policy.id, |a| a.min(policy.id)));
            }
        }
        if let Some(id) = denied {
            return Ok(Decision::denied_by(id));
        }
        if let Some(id) = allowed {
            return Ok(Decision::allowed_by(id));
        }
    }
    Ok(Decision::not_determined())
}

fn root_of<'p>(definition: &Definition, policy: &'p PolicyRecord) -> &'p str {
    policy
        .resources
        .keys()
        .find(|name| level(definition, name).parent.is_none())
        .unwrap()
}

/// The generic authorizeByResourceType, by scanning every policy.
fn naive_holds(snapshot: &Snapshot, root: &str, req: &Req) -> bool {
    let definition = &snapshot.definition;
    let granting = naive_granted_by(definition, &req.access);
    if granting.is_empty() {
        return false;
    }
    let who = naive_who(snapshot, &req.user, &req.groups, &req.roles);
    let on_root = || {
        snapshot
            .policies
            .iter()
            .filter(|p| root_of(definition, p) == root && p.applies_at(req.time))
    };
    let mut denied: Option<Priority> = None;
    for policy in on_root() {
        let everything = policy
            .resources
            .values()
            .all(ResourceValues::matches_anything);
        if everything && naive_denies(definition, policy, &who, &granting, &req.ctx) {
            denied = denied.max(Some(policy.priority));
        }
    }
    on_root().any(|policy| {
        let nothing = policy
            .resources
            .values()
            .any(|s| s.excludes && s.values.iter().any(|v| v == "*"));
        Some(policy.priority) > denied
            && !nothing
            && !naive_denies(definition, policy, &who, &granting, &req.ctx)
            && naive_allows(definition, policy, &who, &granting, &req.ctx)
    })
}

// ---------------------------------------------------------------------------------------------
// The properties

fn build(snapshot: &Snapshot) -> PolicyEngine<Ctx> {
    PolicyEngine::build(snapshot, &evaluators()).unwrap()
}

fn decide(engine: &PolicyEngine<Ctx>, req: &Req) -> Result<Decision, ()> {
    req.with(|r| engine.evaluate(r)).map_err(|_| ())
}

struct Case {
    snapshot: Snapshot,
    requests: Vec<Req>,
    rng: Rng,
}

fn case(seed: u64, kind: usize, size: usize) -> Case {
    let mut rng = Rng(seed);
    let snapshot = snapshot(&mut rng, kind, size);
    let requests = (0..8)
        .map(|_| request(&mut rng, &snapshot.definition))
        .collect();
    Case {
        snapshot,
        requests,
        rng,
    }
}

/// A failing case is shrunk and its seed written to `tests/proptest-regressions/properties.txt`
/// (relative to this crate, where `cargo test` runs): the file is committed, and proptest replays
/// every seed in it before the random cases, so a failure once found stays a regression test.
fn config() -> ProptestConfig {
    ProptestConfig {
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::Direct(
                "tests/proptest-regressions/properties.txt",
            ),
        )),
        ..ProptestConfig::with_cases(cases())
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn the_prefix_index_never_changes_a_decision(seed in any::<u64>(), kind in 0..3usize, size in 0..24usize) {
        let case = case(seed, kind, size);
        let engine = build(&case.snapshot);
        for req in &case.requests {
            let indexed = decide(&engine, req);
            let scanned = req.with(|r| engine.evaluate_unindexed(r)).map_err(|_| ());
            let explained = req.with(|r| engine.explain(r)).map(|e| e.decision).map_err(|_| ());
            let reference = naive_decide(&case.snapshot, req);
            prop_assert_eq!(indexed, scanned, "index vs scan, {:?}", req);
            prop_assert_eq!(indexed, explained, "explain, {:?}", req);
            prop_assert_eq!(indexed, reference, "engine vs naive reference, {:?}\n{:#?}", req, case.snapshot.policies);
        }
    }

    #[test]
    fn the_order_of_policies_does_not_matter(seed in any::<u64>(), kind in 0..3usize, size in 0..24usize) {
        let mut case = case(seed, kind, size);
        let given = build(&case.snapshot);
        let mut shuffled = case.snapshot.clone();
        for at in (1..shuffled.policies.len()).rev() {
            let other = case.rng.below(at + 1);
            shuffled.policies.swap(at, other);
        }
        let reordered = build(&shuffled);
        for req in &case.requests {
            prop_assert_eq!(decide(&reordered, req), decide(&given, req));
        }
    }

    #[test]
    fn more_allowances_never_deny_and_more_denials_never_allow(seed in any::<u64>(), kind in 0..3usize, size in 0..24usize) {
        let mut case = case(seed, kind, size);
        let definition = case.snapshot.definition.clone();
        let access_types: Vec<String> = definition.access_types.iter().map(|a| a.name.clone()).collect();
        let mut allowing = policy(&mut case.rng, &definition, 1000);
        allowing.allow = vec![item(&mut case.rng, &access_types), item(&mut case.rng, &access_types)];
        (allowing.allow_exceptions, allowing.deny, allowing.deny_exceptions) = (vec![], vec![], vec![]);
        let mut denying = policy(&mut case.rng, &definition, 1001);
        denying.deny = vec![item(&mut case.rng, &access_types), item(&mut case.rng, &access_types)];
        (denying.allow, denying.allow_exceptions, denying.deny_exceptions) = (vec![], vec![], vec![]);
        let before = build(&case.snapshot);
        let mut with_allowance = case.snapshot.clone();
        with_allowance.policies.push(allowing);
        let mut with_denial = case.snapshot.clone();
        with_denial.policies.push(denying);
        let (allowed, denied) = (build(&with_allowance), build(&with_denial));
        for req in &case.requests {
            let Ok(was) = decide(&before, req) else { continue };
            if was.is_allowed() {
                prop_assert!(decide(&allowed, req).unwrap().is_allowed(), "{:?}", req);
            } else {
                prop_assert!(!decide(&denied, req).unwrap().is_allowed(), "{:?}", req);
            }
        }
    }

    #[test]
    fn holds_on_some_resource_agrees_with_a_naive_scan(seed in any::<u64>(), kind in 0..3usize, size in 0..24usize) {
        let case = case(seed, kind, size);
        let engine = build(&case.snapshot);
        let roots: Vec<String> =
            case.snapshot.definition.resources.iter().filter(|l| l.parent.is_none()).map(|l| l.name.clone()).collect();
        for req in &case.requests {
            for root in &roots {
                let holds = engine.holds_on_some_resource(root, &req.access, &req.user, &req.groups, &req.roles, req.time, &req.ctx);
                prop_assert_eq!(holds, Ok(naive_holds(&case.snapshot, root, req)), "{} {:?}", root, req);
            }
        }
    }

    #[test]
    fn snapshots_written_by_the_test_server_read_back_the_same(seed in any::<u64>(), kind in 0..3usize, size in 0..24usize) {
        let mut case = case(seed, kind, size);
        let others = case.rng.below(3);
        let snapshot = as_the_server_holds_it(case.snapshot, &mut case.rng, others);
        let bytes = served(&snapshot);
        let read = Snapshot::parse(&bytes);
        prop_assert_eq!(read.as_ref().ok(), Some(&snapshot), "{:?}\n{}", read.as_ref().err(), String::from_utf8_lossy(&bytes));
        // The agent reads through `read`, in one pass: it must give what `parse` then `build` give,
        // on the snapshot's own values (the fuzz target's check) and on the case's requests.
        read_vs_parse::check(&bytes);
        let loaded = PolicyEngine::read(&bytes, &evaluators(), &mut read_vs_parse::Seen::default());
        let (_, engine) = loaded.map_err(|e| TestCaseError::fail(format!("read refused: {e}")))?;
        let built = build(&snapshot);
        for req in &case.requests {
            let explained = req.with(|r| engine.explain(r)).map_err(|_| ());
            prop_assert_eq!(&explained, &req.with(|r| built.explain(r)).map_err(|_| ()), "{:?}", req);
            prop_assert_eq!(decide(&engine, req), decide(&built, req), "{:?}", req);
        }
    }
}

/// The random snapshot in the form a server's snapshot takes, so that writing it changes nothing:
/// policies by ascending id, implied grants sorted, roles and groups for exactly the codes the
/// items name (`public` names everyone and is never listed), members sorted and once each. Names
/// with quotes, escapes and characters beyond the BMP, any service state and versions, and
/// `others` policies of types the engine counts but does not evaluate.
fn as_the_server_holds_it(mut snapshot: Snapshot, rng: &mut Rng, others: usize) -> Snapshot {
    snapshot.policies.sort_by_key(|p| p.id);
    for policy in &mut snapshot.policies {
        policy.name = format!(
            "{} \"{}\" \\ \u{1F511}\t",
            rng.pick(&["p", "ß", ""]),
            policy.id
        );
    }
    for access in &mut snapshot.definition.access_types {
        access.implied_grants.sort();
    }
    snapshot.service_enabled = rng.one_in(2);
    snapshot.policy_version = (rng.next() >> 1) as i64;
    snapshot.type_version = Some(rng.below(5) as i64);
    snapshot.other_policies = others;
    let items = || {
        snapshot.policies.iter().flat_map(|p| {
            p.allow
                .iter()
                .chain(&p.allow_exceptions)
                .chain(&p.deny)
                .chain(&p.deny_exceptions)
        })
    };
    let resolved = |codes: BTreeSet<&String>, given: &BTreeMap<String, Vec<String>>| {
        codes
            .into_iter()
            .map(|code| {
                let members: BTreeSet<String> =
                    given.get(code).into_iter().flatten().cloned().collect();
                (code.clone(), members.into_iter().collect())
            })
            .collect::<BTreeMap<String, Vec<String>>>()
    };
    let roles = resolved(items().flat_map(|i| &i.roles).collect(), &snapshot.roles);
    let groups = resolved(
        items()
            .flat_map(|i| &i.groups)
            .filter(|g| *g != "public")
            .collect(),
        &snapshot.groups,
    );
    (snapshot.roles, snapshot.groups) = (roles, groups);
    snapshot
}

/// The bytes the GrantForge test server serves for `snapshot` (`GET /api/v1/agent/policies`): the
/// snapshot goes in as the server takes it (its service type, and a policies file), and comes out
/// of the server's own writer, which plays GrantForge's Java serializer and shares no code with
/// the engine. What is written here is only the server's input: a name or value it misreads is
/// lost or refused before the engine sees it, so a misunderstanding of this test's cannot pass
/// for the engine's. Enumerated names (matchers, priorities) and instants are written from this
/// test's own table and calendar, not the engine's, which the server passes through.
fn served(snapshot: &Snapshot) -> Vec<u8> {
    use serde_json::{json, Value};
    let definition = &snapshot.definition;
    let matcher = |kind: MatcherKind| match kind {
        MatcherKind::Exact => "EXACT",
        MatcherKind::Wildcard => "WILDCARD",
        MatcherKind::Path => "PATH",
        MatcherKind::Regex => "REGEX",
    };
    let service_type = json!({
        "resources": definition.resources.iter().map(|l| json!({"name": l.name, "parent": l.parent, "matcher": matcher(l.matcher), "caseSensitive": l.case_sensitive})).collect::<Vec<_>>(),
        "accessTypes": definition.access_types.iter().map(|a| json!({"name": a.name, "impliedGrants": a.implied_grants})).collect::<Vec<_>>(),
        "conditions": definition.conditions.iter().map(|c| json!({"name": c.name, "evaluator": c.evaluator, "options": c.options})).collect::<Vec<_>>(),
        "version": snapshot.type_version,
    });
    let item = |item: &Item| {
        json!({"users": item.users, "groups": item.groups, "roles": item.roles, "accessTypes": item.access_types,
               "conditions": item.conditions.iter().map(|c| json!({"type": c.type_name, "values": c.values})).collect::<Vec<_>>()})
    };
    let items = |list: &[Item]| Value::Array(list.iter().map(item).collect());
    let mut policies: Vec<Value> = snapshot
        .policies
        .iter()
        .map(|p| {
            let resources: serde_json::Map<String, Value> = p
                .resources
                .iter()
                .map(|(l, s)| (l.clone(), json!({"values": s.values, "excludes": s.excludes, "recursive": s.recursive})))
                .collect();
            let validity: Vec<Value> =
                p.validity.iter().map(|v| json!({"from": v.from.map(iso), "until": v.until.map(iso)})).collect();
            let priority = match p.priority {
                Priority::Normal => "NORMAL",
                Priority::Override => "OVERRIDE",
            };
            json!({"id": p.id, "name": p.name, "type": "ACCESS", "priority": priority,
                   "document": {"resources": resources, "allow": items(&p.allow), "allowExceptions": items(&p.allow_exceptions),
                                "deny": items(&p.deny), "denyExceptions": items(&p.deny_exceptions), "validity": validity}})
        })
        .collect();
    // Ids above every access policy's: the server writes policies by id, so these come last and
    // the access policies keep their order.
    let others = ["DATA_MASK", "ROW_FILTER"]
        .iter()
        .cycle()
        .take(snapshot.other_policies);
    for (at, kind) in others.enumerate() {
        policies.push(json!({"id": 1_000_000 + at, "name": format!("other {at}"), "type": kind, "document": {}}));
    }
    let file = json!({"serviceEnabled": snapshot.service_enabled, "policies": policies, "roles": snapshot.roles, "groups": snapshot.groups});
    let service_type = grantforge_testserver::Definition::parse(&service_type.to_string()).unwrap();
    let set = grantforge_testserver::PolicySet::parse(file.to_string().as_bytes()).unwrap();
    grantforge_testserver::build_snapshot(
        &set,
        &service_type,
        &snapshot.service,
        &snapshot.service_type,
        snapshot.policy_version,
    )
}

/// An instant as Java's `Instant.toString()` writes a whole second, from its seconds since the
/// epoch by Howard Hinnant's `civil_from_days`: a calendar of this test's, not the engine's.
fn iso(instant: Instant) -> String {
    assert_eq!(
        instant.subsec_nanos(),
        0,
        "the generator makes whole seconds"
    );
    let seconds = instant.unix_secs();
    let (days, second_of_day) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        second_of_day / 3600,
        second_of_day / 60 % 60,
        second_of_day % 60
    )
}

#[test]
fn this_tests_calendar_writes_instants_as_java_does() {
    for (seconds, text) in [
        (1_781_524_800, "2026-06-15T12:00:00Z"),
        (1_709_251_199, "2024-02-29T23:59:59Z"),
        (951_868_800, "2000-03-01T00:00:00Z"),
        (0, "1970-01-01T00:00:00Z"),
        (-1, "1969-12-31T23:59:59Z"),
        (-11_670_998_400, "1600-02-29T00:00:00Z"),
    ] {
        assert_eq!(iso(Instant::from_parts(seconds, 0)), text);
    }
}

#[test]
fn the_naive_reference_knows_globs() {
    let chars = |s: &str| s.chars().collect::<Vec<_>>();
    assert!(naive_glob(&chars("a*z"), &chars("a/b/z"), false));
    assert!(!naive_glob(&chars("/a*z"), &chars("/a/b/z"), true));
    assert!(naive_glob(&chars("?é"), &chars("ßé"), false));
    let path = ResourceLevel::new("path", None, MatcherKind::Path, true);
    assert!(naive_value_matches(&path, "/a", true, "/a/b/c"));
    assert!(!naive_value_matches(&path, "/a", true, "/ab"));
    assert!(naive_value_matches(&path, "/", true, "/x"));
}
