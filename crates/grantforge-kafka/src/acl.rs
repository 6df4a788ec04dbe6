//! Policies shown as Kafka ACLs (`Authorizer.acls`, `kafka-acls --list`).
//!
//! A projection of the policies that apply now: what ACLs can express is shown, the rest is left out
//! (see `docs/kafka-service-type.md`). Priorities cannot be expressed in ACLs, so both are listed;
//! the `explain` command gives the true answer for one request. A disabled service (Kafka is
//! unchecked) shows nothing. What the view is built from is gathered policy by policy while the
//! snapshot is read ([`AclBlocks`]); the view is computed when the snapshot is applied and again
//! each time a validity period of its policies starts or ends ([`TimedAclView`]).
//!
//! Each allow or deny item of a policy asks for a cross product (its resource values × its
//! principals × its operations), so a snapshot of a few kilobytes can ask for a hundred million
//! rows. The view is bounded: the rows are counted first, without building any, and at most
//! [`ACL_VIEW_MAX_ROWS`] are built (those of the first policies, in snapshot order), so the memory
//! is allocated once, for the rows that are kept. A view that had to stop is marked as such
//! ([`AclView::truncated`]) and the agent logs one WARN when it applies the snapshot.
//!
//! A large snapshot has millions of rows (200,000 policies × 50 users × their operations), built from
//! a few distinct names and principals: while a view is built, rows borrow them from the policies'
//! blocks (one shared copy of each principal), and the view keeps each name once and twelve bytes
//! a row ([`AclView`]).

use std::cmp::Ordering;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use grantforge_engine::{Instant, Item, PolicyRecord, PolicyVisitor, Snapshot, Validity};
use parking_lot::{Mutex, RwLock};

use crate::vocabulary::{Operation, PatternType, Permission, ResourceType};

mod names;
mod view;

use names::Names;
pub use view::{AclRow, AclView, IndexedRow};

/// At most this many rows are built for one snapshot: 12 bytes each in the agent, beside each
/// distinct name once, and what `kafka-acls --list` brings onto the broker's heap. Measured when a
/// row took 40 bytes (release build): a 77 KB snapshot asking for 117 M rows built its view in
/// 0.2 s and 44 MB at this cap, against 52 s and 4.5 GB without one. The policies themselves
/// decide without any limit.
pub const ACL_VIEW_MAX_ROWS: usize = 1_000_000;

/// The ACL view of the policies of `snapshot` that apply at `now`: the rows are counted before any
/// is built, and building stops at `max_rows`, so the work and memory are bounded by the snapshot's
/// size plus `max_rows` rows, whatever the cross products ask for. Empty for a disabled service:
/// no policy applies to a Kafka that is unchecked.
pub fn acl_view(snapshot: &Snapshot, now: Instant, max_rows: usize) -> AclView {
    let mut blocks = AclBlocks::default();
    if snapshot.service_enabled {
        snapshot.policies.iter().for_each(|p| blocks.add(p));
    }
    blocks.view_at(now, max_rows)
}

/// Gathers the ACL view's blocks from the policies a snapshot read shows it ([`PolicyVisitor`]:
/// on the thread that compiles them), and builds the view at `now` once all are in, while the
/// engine indexes.
pub(crate) struct Gathering {
    blocks: AclBlocks,
    now: Instant,
    max_rows: usize,
    view: Option<TimedAclView>,
}

impl Gathering {
    pub(crate) fn new(now: Instant, max_rows: usize) -> Gathering {
        Gathering {
            blocks: AclBlocks::default(),
            now,
            max_rows,
            view: None,
        }
    }

    /// The view of every policy visited.
    pub(crate) fn into_view(mut self) -> TimedAclView {
        self.finish();
        self.view.take().expect("finished")
    }
}

impl PolicyVisitor for Gathering {
    fn visit(&mut self, policy: &PolicyRecord) {
        self.blocks.add(policy);
    }

    fn restart(&mut self) {
        self.blocks = AclBlocks::default();
        self.view = None;
    }

    fn finish(&mut self) {
        if self.view.is_none() {
            let blocks = std::mem::take(&mut self.blocks);
            self.view = Some(TimedAclView::new(blocks, self.now, self.max_rows));
        }
    }
}

/// What the ACL view is built from, gathered policy by policy while a snapshot is read: each
/// policy's blocks of rows, counted but not built, and the validity periods that say when each
/// block applies.
///
/// A million policies make a million blocks: what they list is kept in a few shared vectors that
/// each block names runs of, and the names in one [`Names`], rather than in allocations of their
/// own, which took as long to free as to make.
#[derive(Default)]
pub(crate) struct AclBlocks {
    blocks: Vec<Block>,
    /// Each a pattern type and a resource name of `names`.
    patterns: Vec<(PatternType, u32)>,
    /// Each a principal of `names`.
    principals: Vec<u32>,
    operations: Vec<Operation>,
    /// The resource names and principals.
    names: Names,
    /// The validity periods of the policies that have any; a block names its policy's by index.
    validities: Vec<Box<[Validity]>>,
    /// Each distinct principal's index in `names`, while policies are added.
    interned: HashMap<String, u32>,
}

/// The `validity` of a block whose policy always applies.
const ALWAYS: u32 = u32::MAX;

impl AclBlocks {
    /// Adds the blocks of one policy.
    pub(crate) fn add(&mut self, policy: &PolicyRecord) {
        // A Kafka policy names exactly one level: every level of the kafka type is a root.
        let mut levels = policy.resources.iter();
        let (Some((level, values)), None) = (levels.next(), levels.next()) else {
            return;
        };
        let Some(resource_type) = ResourceType::from_level(level) else {
            return;
        };
        if values.excludes {
            return;
        }
        let patterns = self.add_patterns(&values.values);
        let validity = if policy.validity.is_empty() {
            ALWAYS
        } else {
            self.validities
                .push(policy.validity.clone().into_boxed_slice());
            (self.validities.len() - 1) as u32
        };
        let block = |permission, principals, operations| Block {
            resource_type: resource_type.code(),
            permission,
            validity,
            patterns: patterns.clone(),
            principals,
            operations,
        };
        // Items carved by exceptions cannot be expressed as ACLs: leave them out rather than
        // overstate.
        let lists = [
            (&policy.allow, &policy.allow_exceptions, Permission::Allow),
            (&policy.deny, &policy.deny_exceptions, Permission::Deny),
        ];
        for (items, exceptions, permission) in lists {
            if !exceptions.is_empty() {
                continue;
            }
            for item in items.iter().filter(|item| item.conditions.is_empty()) {
                let principals = self.add_principals(item);
                let operations = self.add_operations(item);
                self.blocks.push(block(permission, principals, operations));
            }
        }
    }

    /// The patterns of a policy's values, each once.
    fn add_patterns(&mut self, values: &[String]) -> Range<usize> {
        let from = self.patterns.len();
        for (pattern_type, name) in values.iter().filter_map(|v| pattern_of(v)) {
            self.patterns.push((pattern_type, self.names.add(name)));
        }
        let names = &self.names;
        let key = |&(pattern_type, name): &(PatternType, u32)| (pattern_type, names.get(name));
        sort_and_dedup_from(&mut self.patterns, from, |a, b| key(a).cmp(&key(b)));
        from..self.patterns.len()
    }

    /// The principals of an item, each once, each distinct principal's text held once.
    fn add_principals(&mut self, item: &Item) -> Range<usize> {
        let from = self.principals.len();
        let mut principal = String::new();
        for (prefix, name) in principals_of(item) {
            principal.clear();
            principal.push_str(prefix);
            principal.push_str(name);
            let index = match self.interned.get(&principal) {
                Some(index) => *index,
                None => {
                    let index = self.names.add(&principal);
                    self.interned.insert(principal.clone(), index);
                    index
                }
            };
            self.principals.push(index);
        }
        let names = &self.names;
        sort_and_dedup_from(&mut self.principals, from, |&a, &b| {
            names.get(a).cmp(names.get(b))
        });
        from..self.principals.len()
    }

    /// The operations of an item's access types, each once.
    fn add_operations(&mut self, item: &Item) -> Range<usize> {
        let from = self.operations.len();
        let operations = item.access_types.iter();
        (self.operations).extend(operations.filter_map(|a| Operation::from_access_type(a)));
        sort_and_dedup_from(&mut self.operations, from, Ord::cmp);
        from..self.operations.len()
    }

    fn applies(&self, block: &Block, now: Instant) -> bool {
        block.validity == ALWAYS
            || self.validities[block.validity as usize]
                .iter()
                .any(|period| period.contains(now))
    }

    /// Every validity boundary strictly after `now` (one at `now` has already taken effect).
    fn boundaries_after(&self, now: Instant) -> impl Iterator<Item = Instant> + '_ {
        self.validities
            .iter()
            .flat_map(|periods| periods.iter())
            .flat_map(Validity::boundaries)
            .filter(move |&at| at > now)
    }

    /// The rows of the blocks that apply at `now`, at most `max_rows` of them (those of the first
    /// policies, in snapshot order), sorted and without duplicates.
    fn view_at(&self, now: Instant, max_rows: usize) -> AclView {
        let applying = || self.blocks.iter().filter(|block| self.applies(block, now));
        let asked = applying().fold(0u64, |total, block| total.saturating_add(block.rows()));
        let keep = usize::try_from(asked).map_or(max_rows, |asked| asked.min(max_rows));
        let mut rows = Vec::with_capacity(keep);
        'blocks: for block in applying() {
            for principal in &self.principals[block.principals.clone()] {
                for &operation in &self.operations[block.operations.clone()] {
                    for &(pattern_type, name) in &self.patterns[block.patterns.clone()] {
                        if rows.len() == keep {
                            break 'blocks;
                        }
                        rows.push(AclRow {
                            resource_type: block.resource_type,
                            pattern_type,
                            name: self.names.get(name),
                            principal: self.names.get(*principal),
                            operation,
                            permission: block.permission,
                        });
                    }
                }
            }
        }
        AclView::new(rows, asked, max_rows)
    }
}

/// The ACL view of a snapshot as time passes: the view for now, swapped for a new one each time
/// a validity period of its policies starts or ends.
///
/// Readers (`Authorizer.acls`, `aclCount`, on Kafka's request threads) only clone the `Arc` of the
/// view shown, under a read lock held for that clone; the new view is built outside the lock, by
/// whoever calls [`TimedAclView::advance`] (the agent's own thread), and swapped in whole.
///
/// The blocks are kept for recomputing only while a boundary lies ahead: a snapshot without
/// validity periods (or whose periods have all passed) keeps nothing but the rows shown.
pub(crate) struct TimedAclView {
    shown: RwLock<Arc<AclView>>,
    ahead: Mutex<Option<Ahead>>,
}

/// What recomputing needs: the blocks, and when the view next changes.
struct Ahead {
    blocks: AclBlocks,
    at: Instant,
    max_rows: usize,
}

impl TimedAclView {
    /// The view at `now` of the blocks of a snapshot's policies (none for a disabled service).
    pub(crate) fn new(mut blocks: AclBlocks, now: Instant, max_rows: usize) -> TimedAclView {
        let shown = Arc::new(blocks.view_at(now, max_rows));
        blocks.interned = HashMap::new();
        let ahead = blocks.boundaries_after(now).min().map(|at| Ahead {
            blocks,
            at,
            max_rows,
        });
        TimedAclView {
            shown: RwLock::new(shown),
            ahead: Mutex::new(ahead),
        }
    }

    /// The view shown now.
    pub(crate) fn shown(&self) -> Arc<AclView> {
        Arc::clone(&self.shown.read())
    }

    /// When the view next changes; `None` when it never will.
    pub(crate) fn next_change(&self) -> Option<Instant> {
        self.ahead.lock().as_ref().map(|ahead| ahead.at)
    }

    /// Recomputes the view if a boundary has passed by `now`, and returns the new view; `None`
    /// (and no work but one comparison) before the next boundary.
    pub(crate) fn advance(&self, now: Instant) -> Option<Arc<AclView>> {
        let mut ahead = self.ahead.lock();
        let due = ahead.as_mut().filter(|ahead| now >= ahead.at)?;
        let view = Arc::new(due.blocks.view_at(now, due.max_rows));
        *self.shown.write() = Arc::clone(&view);
        match due.blocks.boundaries_after(now).min() {
            Some(at) => due.at = at,
            None => *ahead = None,
        }
        Some(view)
    }
}

/// The rows one item of a policy asks for: every principal × every operation × every pattern,
/// each list without duplicates, so that `rows()` counts them before any is built. The lists are
/// runs of [`AclBlocks`]' vectors.
struct Block {
    resource_type: u8,
    permission: Permission,
    /// The policy's validity periods in [`AclBlocks::validities`], or [`ALWAYS`].
    validity: u32,
    patterns: Range<usize>,
    principals: Range<usize>,
    operations: Range<usize>,
}

impl Block {
    fn rows(&self) -> u64 {
        let factors = [
            self.patterns.len(),
            self.principals.len(),
            self.operations.len(),
        ];
        factors
            .iter()
            .fold(1u64, |product, n| product.saturating_mul(*n as u64))
    }
}

/// Sorts `items[from..]` and drops its repeats, in place.
fn sort_and_dedup_from<T: Copy>(
    items: &mut Vec<T>,
    from: usize,
    mut compare: impl FnMut(&T, &T) -> Ordering,
) {
    items[from..].sort_unstable_by(&mut compare);
    let mut kept = from;
    for at in from..items.len() {
        if kept == from || compare(&items[kept - 1], &items[at]) != Ordering::Equal {
            items[kept] = items[at];
            kept += 1;
        }
    }
    items.truncate(kept);
}

/// `*` is Kafka's wildcard, `orders*` a prefixed pattern, a plain value a literal one; any other
/// use of `*` or `?` has no ACL form.
fn pattern_of(value: &str) -> Option<(PatternType, &str)> {
    if value == "*" {
        return Some((PatternType::Literal, value));
    }
    let is_wild = |c: char| c == '*' || c == '?';
    match value.strip_suffix('*') {
        Some(prefix) if !prefix.is_empty() && !prefix.contains(is_wild) => {
            Some((PatternType::Prefixed, prefix))
        }
        Some(_) => None,
        None if value.contains(is_wild) => None,
        None => Some((PatternType::Literal, value)),
    }
}

/// Each principal of an item as Kafka writes it, `Type:name`, in two parts.
fn principals_of(item: &Item) -> impl Iterator<Item = (&'static str, &str)> + '_ {
    let users = item.users.iter().map(|u| ("User:", u.as_str()));
    // The public group is every user: Kafka's `User:*`.
    let groups = item.groups.iter().map(|g| match g.as_str() {
        "public" => ("User:", "*"),
        g => ("Group:", g),
    });
    let roles = item.roles.iter().map(|r| ("Role:", r.as_str()));
    users.chain(groups).chain(roles)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_become_literal_prefixed_or_wildcard_patterns() {
        assert_eq!(pattern_of("orders"), Some((PatternType::Literal, "orders")));
        assert_eq!(
            pattern_of("orders*"),
            Some((PatternType::Prefixed, "orders"))
        );
        assert_eq!(pattern_of("*"), Some((PatternType::Literal, "*")));
        assert_eq!(pattern_of("or*ders"), None);
        assert_eq!(pattern_of("orders?"), None);
        assert_eq!(pattern_of("or*ders*"), None);
        assert_eq!(pattern_of("**"), None);
        assert_eq!(pattern_of("*orders"), None);
    }

    fn policy(values: &[&str], users: &[&str], access_types: &[&str]) -> PolicyRecord {
        PolicyRecord::new(1)
            .with_resource("topic", grantforge_engine::ResourceValues::of(values))
            .with_allow(vec![Item::users(users, access_types)])
    }

    /// The view reads only the policies: the definition is left empty.
    fn snapshot_of(record: PolicyRecord) -> Snapshot {
        Snapshot::new("kafka", Default::default(), vec![record])
    }

    #[test]
    fn rows_are_counted_before_they_are_built_and_stop_at_the_maximum() {
        let values: Vec<String> = (0..100).map(|i| format!("t{i}")).collect();
        let users: Vec<String> = (0..100).map(|i| format!("u{i}")).collect();
        let values: Vec<&str> = values.iter().map(String::as_str).collect();
        let users: Vec<&str> = users.iter().map(String::as_str).collect();
        let record = policy(&values, &users, &["read", "write", "read"]);
        let mut blocks = AclBlocks::default();
        blocks.add(&record);
        let blocks = blocks.blocks;
        assert_eq!(
            blocks.iter().map(Block::rows).sum::<u64>(),
            100 * 100 * 2,
            "duplicate access types count once"
        );
    }

    #[test]
    fn a_view_stopped_by_duplicates_says_its_listing_may_be_incomplete_not_that_it_is() {
        let twice = |id| {
            PolicyRecord::new(id)
                .with_resource("topic", grantforge_engine::ResourceValues::of(&["x"]))
                .with_allow(vec![Item::users(&["u"], &["read"])])
        };
        let mut snapshot = snapshot_of(twice(1));
        snapshot.policies.push(twice(2));
        let view = acl_view(&snapshot, Instant::now(), 1);
        assert_eq!(
            (view.len(), view.asked),
            (1, 2),
            "the one distinct row is listed"
        );
        let warning = view.truncation_warning().expect("2 rows asked of 1");
        assert!(
            warning.contains("ask for 2 rows, duplicates counted")
                && warning.contains("only the listing may be incomplete"),
            "{warning}"
        );
    }

    #[test]
    fn pattern_and_permission_codes_are_kafkas() {
        // kafka-clients: PatternType UNKNOWN 0, ANY 1, MATCH 2, LITERAL 3, PREFIXED 4;
        // AclPermissionType UNKNOWN 0, ANY 1, DENY 2, ALLOW 3.
        assert_eq!(PatternType::Literal.code(), 3);
        assert_eq!(PatternType::Prefixed.code(), 4);
        assert_eq!(Permission::Deny.code(), 2);
        assert_eq!(Permission::Allow.code(), 3);
    }

    #[test]
    fn a_view_holding_every_row_asked_for_is_not_truncated() {
        let record = policy(&["a", "b"], &["u"], &["read"]);
        let snapshot = snapshot_of(record);
        let whole = acl_view(&snapshot, Instant::now(), 2);
        assert_eq!((whole.len(), whole.asked), (2, 2));
        assert!(!whole.truncated(), "exactly the maximum: nothing left out");
        let cut = acl_view(&snapshot, Instant::now(), 1);
        assert_eq!((cut.len(), cut.asked), (1, 2));
        assert!(cut.truncated());
    }

    #[test]
    fn a_disabled_services_view_is_empty_whole_and_names_the_maximum_it_was_built_with() {
        let mut snapshot = snapshot_of(policy(&["a", "b"], &["u"], &["read"]));
        snapshot.service_enabled = false;
        let view = acl_view(&snapshot, Instant::now(), 5);
        assert_eq!((view.len(), view.asked, view.max_rows), (0, 0, 5));
        assert!(!view.truncated());
        assert_eq!(view.truncation_warning(), None);
    }
}
