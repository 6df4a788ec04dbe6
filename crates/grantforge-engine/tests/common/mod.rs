//! Models and helpers the tests share (Java's `ENGT/Models.java`).
#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::Arc;

use grantforge_engine::{
    AccessRequest, AccessTypeDefinition, CompiledCondition, ConditionDefinition,
    ConditionEvaluator, Decision, Definition, Evaluators, Instant, MatcherKind, PolicyEngine,
    PolicyRecord, RequestError, ResourceLevel, ResourceValues, Snapshot,
};

/// What conditions look at in these tests.
pub type Context = HashMap<String, String>;

pub fn now() -> Instant {
    Instant::parse("2026-06-15T12:00:00Z").unwrap()
}

/// Hive-like: database → table → column (WILDCARD, case-insensitive), url (REGEX, case-sensitive).
pub fn hive() -> Definition {
    Definition::new(
        vec![
            ResourceLevel::new("database", None, MatcherKind::Wildcard, false),
            ResourceLevel::new("table", Some("database"), MatcherKind::Wildcard, false),
            ResourceLevel::new("column", Some("table"), MatcherKind::Wildcard, false),
            ResourceLevel::new("url", None, MatcherKind::Regex, true),
        ],
        vec![
            AccessTypeDefinition::new("select", &[]),
            AccessTypeDefinition::new("update", &[]),
            AccessTypeDefinition::new("drop", &[]),
            AccessTypeDefinition::new("all", &["select", "update", "drop"]),
        ],
    )
}

/// HDFS-like: one PATH level, case-sensitive.
pub fn hdfs() -> Definition {
    Definition::new(
        vec![ResourceLevel::new("path", None, MatcherKind::Path, true)],
        vec![
            AccessTypeDefinition::new("read", &[]),
            AccessTypeDefinition::new("write", &[]),
            AccessTypeDefinition::new("execute", &[]),
        ],
    )
}

/// One EXACT level, case-sensitive.
pub fn exact() -> Definition {
    Definition::new(
        vec![ResourceLevel::new("topic", None, MatcherKind::Exact, true)],
        vec![
            AccessTypeDefinition::new("publish", &[]),
            AccessTypeDefinition::new("consume", &[]),
        ],
    )
}

/// A definition with conditions whose names are also their evaluators' names.
pub fn with_conditions(mut definition: Definition, names: &[&str]) -> Definition {
    definition.conditions = names
        .iter()
        .map(|n| ConditionDefinition::new(n, n))
        .collect();
    definition
}

pub fn engine(definition: Definition, policies: Vec<PolicyRecord>) -> PolicyEngine<Context> {
    engine_with(definition, policies, &Evaluators::new())
}

pub fn engine_with(
    definition: Definition,
    policies: Vec<PolicyRecord>,
    evaluators: &Evaluators<Context>,
) -> PolicyEngine<Context> {
    PolicyEngine::build(&Snapshot::new("test", definition, policies), evaluators).unwrap()
}

/// Database, table and `column = *`, as Java's `PolicyEngineTest.table`.
pub fn table(id: i64, database: &str, table: &str) -> PolicyRecord {
    PolicyRecord::new(id)
        .with_resource("database", ResourceValues::of(&[database]))
        .with_resource("table", ResourceValues::of(&[table]))
        .with_resource("column", ResourceValues::of(&["*"]))
}

/// A request under construction.
pub struct Ask<'a> {
    user: &'a str,
    access: &'a str,
    resource: Vec<(&'a str, &'a str)>,
    groups: Vec<String>,
    roles: Vec<String>,
    time: Instant,
    context: Context,
}

pub fn ask<'a>(user: &'a str, access: &'a str) -> Ask<'a> {
    Ask {
        user,
        access,
        resource: Vec::new(),
        groups: Vec::new(),
        roles: Vec::new(),
        time: now(),
        context: Context::new(),
    }
}

/// A request for a table, as Java's `PolicyEngineTest.request`.
pub fn table_request<'a>(
    user: &'a str,
    access: &'a str,
    database: &'a str,
    table: &'a str,
) -> Ask<'a> {
    ask(user, access)
        .on("database", database)
        .on("table", table)
}

impl<'a> Ask<'a> {
    pub fn on(mut self, level: &'a str, value: &'a str) -> Self {
        self.resource.push((level, value));
        self
    }

    pub fn groups(mut self, groups: &[&str]) -> Self {
        self.groups = groups.iter().map(|g| g.to_string()).collect();
        self
    }

    pub fn roles(mut self, roles: &[&str]) -> Self {
        self.roles = roles.iter().map(|r| r.to_string()).collect();
        self
    }

    pub fn at(mut self, time: Instant) -> Self {
        self.time = time;
        self
    }

    pub fn context(mut self, key: &str, value: &str) -> Self {
        self.context.insert(key.to_string(), value.to_string());
        self
    }

    pub fn request(&self) -> AccessRequest<'_, Context> {
        AccessRequest {
            resource: &self.resource,
            access_type: self.access,
            user: self.user,
            groups: &self.groups,
            roles: &self.roles,
            time: self.time,
            context: &self.context,
        }
    }

    /// The decision; the unindexed scan and the explanation must agree with it.
    pub fn try_decide(&self, engine: &PolicyEngine<Context>) -> Result<Decision, RequestError> {
        let request = self.request();
        let indexed = engine.evaluate(&request);
        assert_eq!(
            indexed,
            engine.evaluate_unindexed(&request),
            "the index changed a decision"
        );
        assert_eq!(
            indexed,
            engine.explain(&request).map(|e| e.decision),
            "explain disagrees"
        );
        indexed
    }

    pub fn decide(&self, engine: &PolicyEngine<Context>) -> Decision {
        self.try_decide(engine).unwrap()
    }

    pub fn allowed(&self, engine: &PolicyEngine<Context>) -> bool {
        self.decide(engine).is_allowed()
    }
}

/// An evaluator written as a closure over values and context.
pub struct FnEvaluator<F>(pub F);

struct FnCondition<F> {
    values: Vec<String>,
    holds: Arc<F>,
}

impl<F> ConditionEvaluator<Context> for FnEvaluator<Arc<F>>
where
    F: Fn(&[String], &Context) -> Result<bool, String> + Send + Sync + 'static,
{
    fn compile(&self, values: &[String]) -> Result<Box<dyn CompiledCondition<Context>>, String> {
        Ok(Box::new(FnCondition {
            values: values.to_vec(),
            holds: self.0.clone(),
        }))
    }
}

impl<F> CompiledCondition<Context> for FnCondition<F>
where
    F: Fn(&[String], &Context) -> Result<bool, String> + Send + Sync,
{
    fn holds(&self, context: &Context) -> Result<bool, String> {
        (self.holds)(&self.values, context)
    }
}

pub fn evaluator<F>(holds: F) -> Arc<dyn ConditionEvaluator<Context>>
where
    F: Fn(&[String], &Context) -> Result<bool, String> + Send + Sync + 'static,
{
    Arc::new(FnEvaluator(Arc::new(holds)))
}
