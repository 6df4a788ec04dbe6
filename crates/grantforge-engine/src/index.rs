//! Finding the few policies that can matter for a request without trying them all.
//!
//! Two independent ways narrow the candidates, and a request takes the narrower:
//!
//! * by root value (Java's `PrefixIndex`): per root level, an exact-value map for values that match
//!   only themselves, a sorted prefix set over the literal prefixes of glob values, and the
//!   policies that are always candidates (exclusions, `*`, regular expressions, leading wildcards);
//! * by subject: per root level and user / group / role / `public`, the policies with an allow or
//!   deny item naming it. A policy none of whose allow or deny items names the subject can neither
//!   allow nor deny, so it cannot change the decision.
//!
//! Both only ever drop policies that could not decide; every candidate is still checked in full.

use std::ops::Range;

use crate::intern::{FxBuild, FxMap};
use crate::policy::{CompiledItem, CompiledPolicy, List, Subject};
use crate::record::Priority;
use crate::stack::StackVec;

/// Lists of policy indices under `u64` keys, stored in one flat vector.
#[derive(Debug, Default)]
pub(crate) struct ListMap {
    ranges: FxMap<u64, (u32, u32)>,
    items: Vec<u32>,
}

impl ListMap {
    /// From `(key, policy)` pairs in any order, repeats allowed (tests and small sets).
    #[cfg(test)]
    pub(crate) fn from_pairs(mut pairs: Vec<(u64, u32)>) -> ListMap {
        pairs.sort_unstable_by_key(|&(_, policy)| policy);
        ListMap::build(|add| pairs.iter().for_each(|&(key, policy)| add(key, policy)))
    }

    /// From a walk over `(key, policy)` pairs that visits policies in ascending order, run twice:
    /// once to count each key's list, once to fill it. No list of all pairs is ever held, which
    /// matters with millions of names.
    pub(crate) fn build(walk: impl Fn(&mut dyn FnMut(u64, u32))) -> ListMap {
        // Per key: (start, filled, last policy seen).
        let mut slots: FxMap<u64, (u32, u32, u32)> = FxMap::default();
        walk(&mut |key, policy| {
            let slot = slots.entry(key).or_insert((0, 0, u32::MAX));
            if slot.2 != policy {
                slot.1 += 1;
                slot.2 = policy;
            }
        });
        let mut next = 0u32;
        for slot in slots.values_mut() {
            let count = slot.1;
            *slot = (next, 0, u32::MAX);
            next += count;
        }
        let mut items = vec![0u32; next as usize];
        walk(&mut |key, policy| {
            if let Some(slot) = slots.get_mut(&key) {
                if slot.2 != policy {
                    items[(slot.0 + slot.1) as usize] = policy;
                    slot.1 += 1;
                    slot.2 = policy;
                }
            }
        });
        let mut ranges: FxMap<u64, (u32, u32)> = slots
            .into_iter()
            .map(|(key, (start, len, _))| (key, (start, start + len)))
            .collect();
        ranges.shrink_to_fit();
        ListMap { ranges, items }
    }

    pub(crate) fn get(&self, key: u64) -> &[u32] {
        match self.ranges.get(&key) {
            Some(&(start, end)) => &self.items[start as usize..end as usize],
            None => &[],
        }
    }
}

#[derive(Clone, Copy)]
enum Kind {
    User = 0,
    Group = 1,
    Role = 2,
    Public = 3,
}

fn key(root: usize, kind: Kind, id: u32, priority: Option<Priority>) -> u64 {
    let priority = match priority {
        None => 0,
        Some(Priority::Normal) => 1,
        Some(Priority::Override) => 2,
    };
    ((root as u64) << 36) | ((priority as u64) << 34) | ((kind as u64) << 32) | id as u64
}

/// The keys naming a subject: its user, each group and role, and `public`.
fn subject_keys(
    root: usize,
    subject: &Subject,
    priority: Option<Priority>,
    keys: &mut StackVec<u64, 24>,
) {
    if let Some(user) = subject.user {
        keys.push(key(root, Kind::User, user, priority));
    }
    for &group in subject.groups.iter() {
        keys.push(key(root, Kind::Group, group, priority));
    }
    for &role in subject.roles.iter() {
        keys.push(key(root, Kind::Role, role, priority));
    }
    keys.push(key(root, Kind::Public, 0, priority));
}

fn item_keys<C: ?Sized>(
    root: usize,
    item: &CompiledItem<C>,
    priority: Option<Priority>,
    policy: u32,
    add: &mut dyn FnMut(u64, u32),
) {
    item.users()
        .iter()
        .for_each(|&u| add(key(root, Kind::User, u, priority), policy));
    item.groups()
        .iter()
        .for_each(|&g| add(key(root, Kind::Group, g, priority), policy));
    item.roles()
        .iter()
        .for_each(|&r| add(key(root, Kind::Role, r, priority), policy));
    if item.is_public() {
        add(key(root, Kind::Public, 0, priority), policy);
    }
}

/// A sorted set of literal prefixes. Each entry knows its longest proper prefix in the set, so
/// every stored prefix of a value is found from one binary search: the greatest entry not above the
/// value, then up its parents to the first that is a prefix of the value, then all its parents.
#[derive(Debug, Default)]
struct PrefixSet {
    text: String,
    entries: Vec<PrefixEntry>,
}

#[derive(Debug)]
struct PrefixEntry {
    text: Range<u32>,
    parent: u32,
    list: Range<u32>,
}

const NONE: u32 = u32::MAX;

impl PrefixSet {
    /// From `(prefix, policy)` pairs sorted by prefix; lists go to `lists`.
    fn build(pairs: &[(&str, u32)], lists: &mut Vec<u32>) -> PrefixSet {
        let mut set = PrefixSet::default();
        let mut chain: Vec<u32> = Vec::new();
        let mut at = 0;
        while at < pairs.len() {
            let prefix = pairs[at].0;
            let start = lists.len() as u32;
            while at < pairs.len() && pairs[at].0 == prefix {
                lists.push(pairs[at].1);
                at += 1;
            }
            while let Some(&top) = chain.last() {
                if prefix.starts_with(set.prefix(top as usize)) {
                    break;
                }
                chain.pop();
            }
            let text_start = set.text.len() as u32;
            set.text.push_str(prefix);
            set.entries.push(PrefixEntry {
                text: text_start..set.text.len() as u32,
                parent: chain.last().copied().unwrap_or(NONE),
                list: start..lists.len() as u32,
            });
            chain.push(set.entries.len() as u32 - 1);
        }
        set.text.shrink_to_fit();
        set.entries.shrink_to_fit();
        set
    }

    fn prefix(&self, entry: usize) -> &str {
        let range = &self.entries[entry].text;
        &self.text[range.start as usize..range.end as usize]
    }

    /// Calls `found` with the list of every stored prefix of `value`, longest first.
    fn prefixes_of(&self, value: &str, mut found: impl FnMut(Range<u32>)) {
        let after = self.entries.partition_point(|e| {
            let text = &self.text[e.text.start as usize..e.text.end as usize];
            text <= value
        });
        let mut entry = if after == 0 { NONE } else { after as u32 - 1 };
        while entry != NONE && !value.starts_with(self.prefix(entry as usize)) {
            entry = self.entries[entry as usize].parent;
        }
        while entry != NONE {
            found(self.entries[entry as usize].list.clone());
            entry = self.entries[entry as usize].parent;
        }
    }
}

/// The candidates by value of one root level.
#[derive(Debug, Default)]
struct RootIndex {
    always: Vec<u32>,
    /// By a hash of the value: a collision only adds a candidate, which is then checked in full.
    exact: FxMap<u64, Range<u32>>,
    prefixes: PrefixSet,
    lists: Vec<u32>,
}

/// Every index of an engine.
#[derive(Debug, Default)]
pub(crate) struct Indexes {
    /// Per level id (only roots are filled).
    roots: Vec<RootIndex>,
    /// (root, subject) → policies with an allow or deny item naming the subject.
    deciders: ListMap,
    /// (root, priority, subject) → policies with an allow item naming the subject.
    allowers: ListMap,
    /// Per level id: policies covering every resource of that root and having deny items.
    deny_all: Vec<Vec<u32>>,
}

impl Indexes {
    pub(crate) fn build<C: ?Sized>(levels: usize, policies: &[CompiledPolicy<C>]) -> Indexes {
        let mut indexes = Indexes {
            roots: Vec::new(),
            deny_all: vec![Vec::new(); levels],
            ..Indexes::default()
        };
        indexes.roots = build_roots(levels, policies);
        indexes.deciders = ListMap::build(|add| {
            for (at, policy) in policies.iter().enumerate() {
                for item in policy
                    .items(List::Allow)
                    .iter()
                    .chain(policy.items(List::Deny))
                {
                    item_keys(policy.root(), item, None, at as u32, add);
                }
            }
        });
        indexes.allowers = ListMap::build(|add| {
            for (at, policy) in policies.iter().enumerate() {
                for item in policy.items(List::Allow) {
                    item_keys(policy.root(), item, Some(policy.priority), at as u32, add);
                }
            }
        });
        for (at, policy) in policies.iter().enumerate() {
            if policy.covers_everything() && !policy.items(List::Deny).is_empty() {
                indexes.deny_all[policy.root()].push(at as u32);
            }
        }
        indexes
    }

    /// The candidate lists for a request on `root` with normalised root value `value`, by value.
    pub(crate) fn by_value<'s>(
        &'s self,
        root: usize,
        value: &str,
        out: &mut StackVec<&'s [u32], 16>,
    ) {
        let Some(index) = self.roots.get(root) else {
            return;
        };
        out.push(&index.always);
        if let Some(range) = index.exact.get(&value_key(value)) {
            out.push(&index.lists[range.start as usize..range.end as usize]);
        }
        index.prefixes.prefixes_of(value, |range| {
            out.push(&index.lists[range.start as usize..range.end as usize])
        });
    }

    /// The candidate lists for a request on `root` by a subject.
    pub(crate) fn by_subject<'s>(
        &'s self,
        root: usize,
        subject: &Subject,
        out: &mut StackVec<&'s [u32], 16>,
    ) {
        let mut keys = StackVec::new();
        subject_keys(root, subject, None, &mut keys);
        for &key in keys.iter() {
            out.push(self.deciders.get(key));
        }
    }

    /// The policies on `root` of one priority with an allow item naming the subject.
    pub(crate) fn allowing<'s>(
        &'s self,
        root: usize,
        priority: Priority,
        subject: &Subject,
        out: &mut StackVec<&'s [u32], 16>,
    ) {
        let mut keys = StackVec::new();
        subject_keys(root, subject, Some(priority), &mut keys);
        for &key in keys.iter() {
            out.push(self.allowers.get(key));
        }
    }

    /// The policies covering every resource of `root` that have deny items.
    pub(crate) fn denying_everything(&self, root: usize) -> &[u32] {
        self.deny_all.get(root).map_or(&[], Vec::as_slice)
    }
}

/// The key of a value in the exact map.
fn value_key(value: &str) -> u64 {
    use std::hash::BuildHasher;
    FxBuild.hash_one(value)
}

fn build_roots<C: ?Sized>(levels: usize, policies: &[CompiledPolicy<C>]) -> Vec<RootIndex> {
    let mut always: Vec<Vec<u32>> = vec![Vec::new(); levels];
    let mut exact: Vec<Vec<(u64, u32)>> = vec![Vec::new(); levels];
    let mut prefixed: Vec<Vec<(&str, u32)>> = vec![Vec::new(); levels];
    for (at, policy) in policies.iter().enumerate() {
        let (root, at) = (policy.root(), at as u32);
        let level = &policy.levels()[0];
        let matchers = level.matchers.as_slice();
        if level.excludes || matchers.iter().any(|m| m.literal_prefix().is_empty()) {
            always[root].push(at);
            continue;
        }
        for matcher in matchers {
            match matcher.only_value() {
                Some(value) => exact[root].push((value_key(value), at)),
                None => prefixed[root].push((matcher.literal_prefix(), at)),
            }
        }
    }
    let mut roots = Vec::with_capacity(levels);
    for ((always, mut exact), mut prefixed) in always.into_iter().zip(exact).zip(prefixed) {
        let mut index = RootIndex {
            always,
            ..RootIndex::default()
        };
        exact.sort_unstable();
        exact.dedup();
        let mut at = 0;
        while at < exact.len() {
            let value = exact[at].0;
            let start = index.lists.len() as u32;
            while at < exact.len() && exact[at].0 == value {
                index.lists.push(exact[at].1);
                at += 1;
            }
            index.exact.insert(value, start..index.lists.len() as u32);
        }
        prefixed.sort_unstable();
        prefixed.dedup();
        index.prefixes = PrefixSet::build(&prefixed, &mut index.lists);
        index.lists.shrink_to_fit();
        index.exact.shrink_to_fit();
        roots.push(index);
    }
    roots
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::condition::Evaluators;
    use crate::model::tests::hdfs;
    use crate::policy::Compiler;
    use crate::record::{Definition, PolicyRecord, ResourceValues};

    fn candidates(indexes: &Indexes, root: usize, value: &str) -> Vec<u32> {
        let mut lists = StackVec::new();
        indexes.by_value(root, value, &mut lists);
        let mut all: Vec<u32> = lists.iter().flat_map(|l| l.iter().copied()).collect();
        all.sort_unstable();
        all.dedup();
        all
    }

    // PrefixIndexTest.offersOnlyPoliciesWhoseValuesCouldMatch
    #[test]
    fn offers_only_policies_whose_values_could_match() {
        let model = hdfs();
        let definition = Definition::default();
        let evaluators = Evaluators::<()>::new();
        let mut compiler = Compiler::new(model.clone(), &definition, &evaluators);
        let specs = [
            ("/data/sales", false),
            ("/data/*", false),
            ("/logs", false),
            ("*", false),
            ("/x", true),
            ("?a", false),
        ];
        let recursive = PolicyRecord::new(7)
            .with_resource("path", ResourceValues::new(&["/data/sales"], false, true));
        let policies: Vec<_> = specs
            .iter()
            .enumerate()
            .map(|(at, (value, excludes))| {
                let record = PolicyRecord::new(at as i64 + 1)
                    .with_resource("path", ResourceValues::new(&[value], *excludes, false));
                compiler.compile(&record, at).unwrap()
            })
            .collect();
        let indexes = Indexes::build(model.levels().len(), &policies);
        let mut with_recursive = policies;
        with_recursive.push(compiler.compile(&recursive, 6).unwrap());
        let recursive_indexes = Indexes::build(model.levels().len(), &with_recursive);
        assert_eq!(
            candidates(&recursive_indexes, 0, "/data/sales/2026"),
            [1, 3, 4, 5, 6]
        );

        // Java's trie also offers policy 0 (`/data/sales`) here, as its prefix matches; this index
        // keeps values that match only themselves in an exact map, so it offers 0 only for
        // `/data/sales` itself, which is all `/data/sales` (not recursive) can match.
        assert_eq!(candidates(&indexes, 0, "/data/sales/2026"), [1, 3, 4, 5]);
        assert_eq!(candidates(&indexes, 0, "/data/sales"), [0, 1, 3, 4, 5]);
        assert_eq!(candidates(&indexes, 0, "/logs"), [2, 3, 4, 5]);
        assert_eq!(candidates(&indexes, 0, "/other"), [3, 4, 5]);
        assert!(candidates(&indexes, 7, "/data").is_empty());
    }

    #[test]
    fn prefix_sets_find_every_stored_prefix() {
        let pairs = [
            ("a", 0),
            ("ab", 1),
            ("abc", 2),
            ("abd", 3),
            ("b", 4),
            ("ba", 5),
        ];
        let mut lists = Vec::new();
        let set = PrefixSet::build(&pairs, &mut lists);
        let found = |value: &str| {
            let mut ids = Vec::new();
            set.prefixes_of(value, |range| {
                ids.extend(
                    lists[range.start as usize..range.end as usize]
                        .iter()
                        .copied(),
                )
            });
            ids
        };
        assert_eq!(found("abcz"), [2, 1, 0]);
        assert_eq!(found("abz"), [1, 0]);
        assert_eq!(found("abd"), [3, 1, 0]);
        assert_eq!(found("ac"), [0]);
        assert_eq!(found("b"), [4]);
        assert_eq!(found("bb"), [4]);
        assert_eq!(found("c"), Vec::<u32>::new());
        assert_eq!(found(""), Vec::<u32>::new());
        assert_eq!(found("0"), Vec::<u32>::new());
    }

    #[test]
    fn list_maps_group_and_deduplicate() {
        let map = ListMap::from_pairs(vec![(2, 5), (1, 3), (2, 4), (2, 5)]);
        assert_eq!(map.get(2), &[4, 5]);
        assert_eq!(map.get(1), &[3]);
        assert!(map.get(9).is_empty());
    }
}
