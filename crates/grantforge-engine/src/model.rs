//! The service type as the engine sees it: resource levels forming chains from roots, and access
//! types with what each implies (`ServiceModel`, `ResourceLevel`, `MatcherKind` in Java).

use std::fmt;
use std::str::FromStr;

use crate::intern::FxMap;
use crate::is_blank;

/// How a level's policy values match requested values.
///
/// The order is Java's (`MatcherKindTest`): EXACT, WILDCARD, PATH, REGEX.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MatcherKind {
    /// Equal (normalised) strings only.
    Exact,
    /// A whole-string glob: `*` any run of characters, `?` one character, no escapes.
    Wildcard,
    /// A glob whose `*` and `?` stay within one `/` segment; recursive values cover descendants.
    Path,
    /// A regular expression matched against the whole value.
    Regex,
}

impl MatcherKind {
    /// Every kind, in Java's declaration order.
    pub const ALL: [MatcherKind; 4] = [
        MatcherKind::Exact,
        MatcherKind::Wildcard,
        MatcherKind::Path,
        MatcherKind::Regex,
    ];

    /// The name the snapshot uses (`EXACT`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            MatcherKind::Exact => "EXACT",
            MatcherKind::Wildcard => "WILDCARD",
            MatcherKind::Path => "PATH",
            MatcherKind::Regex => "REGEX",
        }
    }
}

impl FromStr for MatcherKind {
    type Err = String;

    /// Exact, case-sensitive names, as Java's `MatcherKind.valueOf`.
    fn from_str(name: &str) -> Result<MatcherKind, String> {
        MatcherKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == name)
            .ok_or_else(|| format!("matcher {name} is not one this agent knows; upgrade it"))
    }
}

impl fmt::Display for MatcherKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One resource level of a service type (a `definition.resources[]` entry of the snapshot).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceLevel {
    /// The level's name, such as `topic` or `database`.
    pub name: String,
    /// The level above this one; `None` for a root.
    pub parent: Option<String>,
    /// How values of this level match.
    pub matcher: MatcherKind,
    /// Whether values compare case-sensitively; otherwise both sides are lower-cased.
    pub case_sensitive: bool,
}

impl ResourceLevel {
    /// A level; `parent` is `None` for a root.
    pub fn new(
        name: &str,
        parent: Option<&str>,
        matcher: MatcherKind,
        case_sensitive: bool,
    ) -> ResourceLevel {
        ResourceLevel {
            name: name.to_string(),
            parent: parent.map(str::to_string),
            matcher,
            case_sensitive,
        }
    }
}

/// One access type and the access types it implies (a `definition.accessTypes[]` entry).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessTypeDefinition {
    /// The access type's name, such as `read`.
    pub name: String,
    /// What holding this access type grants as well, such as `describe` for `read`.
    pub implied_grants: Vec<String>,
}

impl AccessTypeDefinition {
    /// An access type implying `implied`.
    pub fn new(name: &str, implied: &[&str]) -> AccessTypeDefinition {
        AccessTypeDefinition {
            name: name.to_string(),
            implied_grants: implied.iter().map(|s| s.to_string()).collect(),
        }
    }
}

/// A set of access types by id: one word for the usual handful, more words when a type has
/// more than 64 access types.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum AccessSet {
    Small(u64),
    Large(Box<[u64]>),
}

impl AccessSet {
    pub(crate) fn empty(capacity: usize) -> AccessSet {
        if capacity <= 64 {
            AccessSet::Small(0)
        } else {
            AccessSet::Large(vec![0; capacity.div_ceil(64)].into_boxed_slice())
        }
    }

    pub(crate) fn insert(&mut self, id: usize) {
        match self {
            AccessSet::Small(word) => *word |= 1 << id,
            AccessSet::Large(words) => words[id / 64] |= 1 << (id % 64),
        }
    }

    pub(crate) fn contains(&self, id: usize) -> bool {
        match self {
            AccessSet::Small(word) => id < 64 && word & (1 << id) != 0,
            AccessSet::Large(words) => words
                .get(id / 64)
                .is_some_and(|w| w & (1 << (id % 64)) != 0),
        }
    }

    pub(crate) fn union_with(&mut self, other: &AccessSet) {
        match (self, other) {
            (AccessSet::Small(a), AccessSet::Small(b)) => *a |= b,
            (AccessSet::Large(a), AccessSet::Large(b)) => {
                a.iter_mut().zip(b.iter()).for_each(|(x, y)| *x |= y)
            }
            _ => unreachable!("access sets of one model have one size"),
        }
    }
}

/// What the engine needs of a service type: levels forming one or more trees (each policy and
/// request names one chain from a root), and access types with the closure of their implications.
///
/// `granted_by` is computed once: deciding whether an item's access types grant a requested one is
/// then a bit test.
#[derive(Clone, Debug)]
pub struct ServiceModel {
    levels: Vec<ResourceLevel>,
    level_ids: FxMap<String, usize>,
    chains: Vec<Box<[usize]>>,
    access_types: Vec<AccessTypeDefinition>,
    access_ids: FxMap<String, usize>,
    /// Per access type: the ids of the types granting it (itself and every type implying it).
    granted_by: Vec<Vec<usize>>,
    /// Per access type: the ids of what it grants (its transitive implication closure).
    grants: Vec<AccessSet>,
}

impl ServiceModel {
    /// Starts describing a model, level by level (parents first) as Java's `ServiceModel.builder()`.
    pub fn builder() -> ServiceModelBuilder {
        ServiceModelBuilder::default()
    }

    /// A model from levels (parents before children) and access types.
    ///
    /// Refuses a level defined twice, an unknown parent, a blank name, an access type defined
    /// twice or implying an unknown one, and a model without levels or access types.
    pub fn new(
        levels: Vec<ResourceLevel>,
        access_types: Vec<AccessTypeDefinition>,
    ) -> Result<ServiceModel, String> {
        let mut builder = ServiceModel::builder();
        for level in levels {
            builder.level(level)?;
        }
        for access in access_types {
            builder.access_type_definition(access)?;
        }
        builder.build()
    }

    /// The levels, parents before children.
    pub fn levels(&self) -> &[ResourceLevel] {
        &self.levels
    }

    /// A level by name.
    pub fn level(&self, name: &str) -> Option<&ResourceLevel> {
        self.level_id(name).map(|id| &self.levels[id])
    }

    /// The levels from the root down to `name`, or `None` for an unknown level.
    pub fn chain(&self, name: &str) -> Option<Vec<&ResourceLevel>> {
        self.level_id(name)
            .map(|id| self.chains[id].iter().map(|&l| &self.levels[l]).collect())
    }

    /// The access types in definition order, with what each implies directly.
    pub fn access_types(&self) -> &[AccessTypeDefinition] {
        &self.access_types
    }

    /// Whether the model has an access type.
    pub fn has_access_type(&self, name: &str) -> bool {
        self.access_ids.contains_key(name)
    }

    /// The access types that grant `requested`: itself and every type implying it, directly or
    /// not; empty for an unknown access type. Deny items use the same set, so denying `write`
    /// denies `describe` when `write` implies it.
    pub fn granted_by(&self, requested: &str) -> Vec<&str> {
        match self.access_id(requested) {
            Some(id) => self.granted_by[id]
                .iter()
                .map(|&t| self.access_types[t].name.as_str())
                .collect(),
            None => Vec::new(),
        }
    }

    pub(crate) fn level_id(&self, name: &str) -> Option<usize> {
        self.level_ids.get(name).copied()
    }

    pub(crate) fn level_at(&self, id: usize) -> &ResourceLevel {
        &self.levels[id]
    }

    pub(crate) fn chain_ids(&self, id: usize) -> &[usize] {
        &self.chains[id]
    }

    pub(crate) fn access_id(&self, name: &str) -> Option<usize> {
        self.access_ids.get(name).copied()
    }

    pub(crate) fn access_count(&self) -> usize {
        self.access_types.len()
    }

    /// What holding access type `id` grants, implications included.
    pub(crate) fn grants(&self, id: usize) -> &AccessSet {
        &self.grants[id]
    }
}

/// Builds a [`ServiceModel`] step by step, refusing each mistake where it is made.
#[derive(Clone, Debug, Default)]
pub struct ServiceModelBuilder {
    levels: Vec<ResourceLevel>,
    access_types: Vec<AccessTypeDefinition>,
}

impl ServiceModelBuilder {
    /// Adds a level; its parent must have been added before.
    pub fn level(&mut self, level: ResourceLevel) -> Result<&mut Self, String> {
        if is_blank(&level.name) {
            return Err("a resource level's name must not be blank".to_string());
        }
        if self.levels.iter().any(|l| l.name == level.name) {
            return Err(format!("resource level {} is defined twice", level.name));
        }
        if let Some(parent) = &level.parent {
            if !self.levels.iter().any(|l| &l.name == parent) {
                return Err(format!(
                    "resource level {} has an unknown parent {parent}",
                    level.name
                ));
            }
        }
        self.levels.push(level);
        Ok(self)
    }

    /// Adds an access type implying `implied` (which must be added too, before or after).
    pub fn access_type(&mut self, name: &str, implied: &[&str]) -> Result<&mut Self, String> {
        self.access_type_definition(AccessTypeDefinition::new(name, implied))
    }

    /// Adds an access type as the snapshot defines it.
    pub fn access_type_definition(
        &mut self,
        access: AccessTypeDefinition,
    ) -> Result<&mut Self, String> {
        if is_blank(&access.name) {
            return Err("an access type's name must not be blank".to_string());
        }
        if self.access_types.iter().any(|a| a.name == access.name) {
            return Err(format!("access type {} is defined twice", access.name));
        }
        if access.implied_grants.iter().any(|i| is_blank(i)) {
            return Err(format!(
                "the implied access types of {} must not be blank",
                access.name
            ));
        }
        let mut implied: Vec<String> = Vec::with_capacity(access.implied_grants.len());
        for name in access.implied_grants {
            if !implied.contains(&name) {
                implied.push(name);
            }
        }
        self.access_types.push(AccessTypeDefinition {
            name: access.name,
            implied_grants: implied,
        });
        Ok(self)
    }

    /// Checks the implications and computes chains and grants.
    pub fn build(&self) -> Result<ServiceModel, String> {
        if self.levels.is_empty() || self.access_types.is_empty() {
            return Err(
                "a service model needs at least one resource level and access type".to_string(),
            );
        }
        let access_ids: FxMap<String, usize> = self
            .access_types
            .iter()
            .enumerate()
            .map(|(i, a)| (a.name.clone(), i))
            .collect();
        for access in &self.access_types {
            if let Some(unknown) = access
                .implied_grants
                .iter()
                .find(|i| !access_ids.contains_key(*i))
            {
                return Err(format!(
                    "access type {} implies unknown {unknown}",
                    access.name
                ));
            }
        }
        let level_ids: FxMap<String, usize> = self
            .levels
            .iter()
            .enumerate()
            .map(|(i, l)| (l.name.clone(), i))
            .collect();
        let chains = (0..self.levels.len())
            .map(|id| chain_of(&self.levels, &level_ids, id))
            .collect();
        let count = self.access_types.len();
        let implies: Vec<Vec<usize>> = self
            .access_types
            .iter()
            .map(|a| a.implied_grants.iter().map(|i| access_ids[i]).collect())
            .collect();
        let closures: Vec<Vec<usize>> = (0..count).map(|id| closure(id, &implies)).collect();
        let mut grants = vec![AccessSet::empty(count); count];
        let mut granted_by = vec![Vec::new(); count];
        for (granter, reached) in closures.iter().enumerate() {
            for &granted in reached {
                grants[granter].insert(granted);
                granted_by[granted].push(granter);
            }
        }
        Ok(ServiceModel {
            levels: self.levels.clone(),
            level_ids,
            chains,
            access_types: self.access_types.clone(),
            access_ids,
            granted_by,
            grants,
        })
    }
}

fn chain_of(levels: &[ResourceLevel], ids: &FxMap<String, usize>, id: usize) -> Box<[usize]> {
    let mut chain = vec![id];
    while let Some(parent) = &levels[*chain.last().unwrap_or(&id)].parent {
        chain.push(ids[parent]);
    }
    chain.reverse();
    chain.into_boxed_slice()
}

/// Every access type reachable from `start` through implications, `start` included; cycles end.
fn closure(start: usize, implies: &[Vec<usize>]) -> Vec<usize> {
    let mut seen = vec![false; implies.len()];
    let mut pending = vec![start];
    let mut found = Vec::new();
    while let Some(current) = pending.pop() {
        if !std::mem::replace(&mut seen[current], true) {
            found.push(current);
            pending.extend(&implies[current]);
        }
    }
    found
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Java's `Models.HIVE`: database → table → column (WILDCARD, case-insensitive), url (REGEX).
    pub(crate) fn hive() -> ServiceModel {
        ServiceModel::new(
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
        .unwrap()
    }

    /// Java's `Models.HDFS`: one PATH level, case-sensitive.
    pub(crate) fn hdfs() -> ServiceModel {
        ServiceModel::new(
            vec![ResourceLevel::new("path", None, MatcherKind::Path, true)],
            vec![
                AccessTypeDefinition::new("read", &[]),
                AccessTypeDefinition::new("write", &[]),
                AccessTypeDefinition::new("execute", &[]),
            ],
        )
        .unwrap()
    }

    fn sorted(mut names: Vec<&str>) -> Vec<&str> {
        names.sort_unstable();
        names
    }

    #[test]
    fn knows_the_chains_and_what_grants_each_access_type() {
        let hive = hive();
        let chain: Vec<&str> = hive
            .chain("column")
            .unwrap()
            .iter()
            .map(|l| l.name.as_str())
            .collect();
        assert_eq!(chain, ["database", "table", "column"]);
        assert_eq!(sorted(hive.granted_by("select")), ["all", "select"]);
        assert_eq!(hive.granted_by("all"), ["all"]);
        assert!(hive.granted_by("fly").is_empty());
        assert!(hive.has_access_type("drop"));
        assert!(hive.level("schema").is_none());
        assert_eq!(
            hive.level("table").and_then(|l| l.parent.as_deref()),
            Some("database")
        );
        let access_types: Vec<&str> = hive
            .access_types()
            .iter()
            .map(|a| a.name.as_str())
            .collect();
        assert_eq!(access_types, ["select", "update", "drop", "all"]);
        assert!(hive.chain("schema").is_none());
    }

    #[test]
    fn implied_access_types_chain_and_the_model_must_be_consistent() {
        let mut chained = ServiceModel::builder();
        chained
            .level(ResourceLevel::new("a", None, MatcherKind::Exact, true))
            .unwrap();
        chained
            .access_type("read", &[])
            .unwrap()
            .access_type("write", &["read"])
            .unwrap();
        chained.access_type("admin", &["write"]).unwrap();
        assert_eq!(
            sorted(chained.build().unwrap().granted_by("read")),
            ["admin", "read", "write"]
        );

        let mut builder = ServiceModel::builder();
        builder
            .level(ResourceLevel::new("a", None, MatcherKind::Exact, true))
            .unwrap();
        let twice = builder
            .level(ResourceLevel::new("a", None, MatcherKind::Exact, true))
            .unwrap_err();
        assert!(twice.contains("twice"), "{twice}");
        let orphan = builder
            .level(ResourceLevel::new("b", Some("z"), MatcherKind::Exact, true))
            .unwrap_err();
        assert!(orphan.contains("unknown parent"), "{orphan}");
        builder.access_type("read", &[]).unwrap();
        assert!(builder
            .access_type("read", &[])
            .unwrap_err()
            .contains("twice"));
        builder.access_type("write", &["fly"]).unwrap();
        assert!(builder.build().unwrap_err().contains("implies unknown fly"));
        assert!(ServiceModel::builder()
            .build()
            .unwrap_err()
            .contains("at least one"));
        let mut no_access_type = ServiceModel::builder();
        no_access_type
            .level(ResourceLevel::new("a", None, MatcherKind::Exact, true))
            .unwrap();
        assert!(no_access_type.build().unwrap_err().contains("at least one"));
    }

    #[test]
    fn cyclic_implications_end() {
        let model = ServiceModel::new(
            vec![ResourceLevel::new("a", None, MatcherKind::Exact, true)],
            vec![
                AccessTypeDefinition::new("x", &["y"]),
                AccessTypeDefinition::new("y", &["x", "y"]),
            ],
        )
        .unwrap();
        assert_eq!(sorted(model.granted_by("x")), ["x", "y"]);
    }

    // ResourceLevelTest.describesALevel
    #[test]
    fn describes_a_level() {
        let table = ResourceLevel::new("table", Some("database"), MatcherKind::Wildcard, false);
        assert_eq!(table.name, "table");
        assert_eq!(table.parent.as_deref(), Some("database"));
        assert_eq!(table.matcher, MatcherKind::Wildcard);
        assert!(!table.case_sensitive);
        assert!(ServiceModel::builder()
            .level(ResourceLevel::new(" ", None, MatcherKind::Exact, true))
            .is_err());
    }

    // MatcherKindTest: the kinds, in order, by their snapshot names.
    #[test]
    fn matcher_kinds_in_order() {
        let names: Vec<&str> = MatcherKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(names, ["EXACT", "WILDCARD", "PATH", "REGEX"]);
        assert_eq!("PATH".parse::<MatcherKind>(), Ok(MatcherKind::Path));
        assert!("path".parse::<MatcherKind>().is_err());
        assert!("FUZZY"
            .parse::<MatcherKind>()
            .unwrap_err()
            .contains("FUZZY"));
        assert!(MatcherKind::Exact < MatcherKind::Regex);
        assert_eq!(
            MatcherKind::Path.to_string(),
            "PATH",
            "shown as in the snapshot"
        );
    }

    #[test]
    fn access_sets_hold_many_types() {
        let mut small = AccessSet::empty(3);
        small.insert(2);
        assert!(small.contains(2) && !small.contains(1) && !small.contains(64));
        let mut large = AccessSet::empty(130);
        large.insert(129);
        let mut other = AccessSet::empty(130);
        other.insert(3);
        large.union_with(&other);
        assert!(
            large.contains(129) && large.contains(3) && !large.contains(4) && !large.contains(500)
        );
    }
}
