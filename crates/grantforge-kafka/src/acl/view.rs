//! The rows of an ACL view, stored compactly.
//!
//! A view of a million rows names a million resources, each in a few rows, and a few principals in
//! many. Rows that each held their two strings (or shared handles to them) cost forty bytes a row
//! plus an allocation per name; a view here holds every distinct name once in one buffer, and each
//! row as twelve bytes that index it: the layout of the JNI payload (`acl_view.rs` of the JNI
//! crate), so a listing writes the view out as it is.

use std::collections::HashMap;

use super::names::Names;
use crate::vocabulary::{Operation, PatternType, Permission, ResourceType};

/// One ACL binding (the host is always `*`), as a view lists it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AclRow<'v> {
    pub resource_type: u8,
    pub pattern_type: PatternType,
    pub name: &'v str,
    /// `Type:name`, e.g. `User:alice`, `Group:ops`, `Role:analyst` or `User:*` for the public group.
    pub principal: &'v str,
    pub operation: Operation,
    pub permission: Permission,
}

impl AclRow<'_> {
    /// Whether Kafka's MATCH filter for one literal resource (`ResourcePatternFilter(type, name,
    /// MATCH)`, what `kafka-acls --list --topic T` asks) lists this row: a pattern of the same
    /// type that is the name itself, the wildcard `*`, or a prefix of the name. The shim answers
    /// `acls(filter)` with Kafka's own `AclBindingFilter`; a shim test holds `explain`'s use of this
    /// to the same rows.
    pub fn matches_resource(&self, resource_type: ResourceType, name: &str) -> bool {
        self.resource_type == resource_type.code()
            && match self.pattern_type {
                PatternType::Literal => self.name == name || self.name == "*",
                PatternType::Prefixed => name.starts_with(self.name),
            }
    }
}

/// A row as a view stores it: its resource name and principal by their index in
/// [`AclView::names`]. Twelve bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndexedRow {
    pub resource_type: u8,
    pub pattern_type: PatternType,
    pub name: u32,
    pub principal: u32,
    pub operation: Operation,
    pub permission: Permission,
}

/// The ACL rows of a snapshot, bounded by a maximum number of rows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AclView {
    names: Names,
    /// In the order of their [`AclRow`]s (type, pattern type, name, principal, operation,
    /// permission), without duplicates; at most the maximum the view was built with.
    rows: Vec<IndexedRow>,
    /// How many rows the policies ask for, before duplicates across items and policies are removed
    /// (saturating); more than the maximum when the view had to stop.
    pub asked: u64,
    /// The maximum the view was built with.
    pub max_rows: usize,
}

impl AclView {
    /// The view of `rows` (sorted and without duplicates here), which policies asked for `asked`
    /// rows of, bounded at `max_rows`.
    pub fn new(mut rows: Vec<AclRow<'_>>, asked: u64, max_rows: usize) -> AclView {
        rows.sort_unstable();
        rows.dedup();
        let mut names = Names::default();
        // Sorted rows bring all rows of a resource together: its name is found by comparing it
        // with the row before. A name is written again only under another resource type or
        // pattern type, so no map of a million names is built; principals repeat across
        // resources, and are looked up.
        let mut resource: Option<(&str, u32)> = None;
        let mut principals = HashMap::<&str, u32>::new();
        let rows = rows
            .iter()
            .map(|row| {
                let name = match resource {
                    Some((last, index)) if last == row.name => index,
                    _ => {
                        let index = names.add(row.name);
                        resource = Some((row.name, index));
                        index
                    }
                };
                let principal = *principals
                    .entry(row.principal)
                    .or_insert_with(|| names.add(row.principal));
                IndexedRow {
                    resource_type: row.resource_type,
                    pattern_type: row.pattern_type,
                    name,
                    principal,
                    operation: row.operation,
                    permission: row.permission,
                }
            })
            .collect();
        names.shrink_to_fit();
        AclView {
            names,
            rows,
            asked,
            max_rows,
        }
    }

    /// How many rows the view holds.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// How many rows have an operation of `shown`, a set of Kafka's operation codes (bit `code`):
    /// what a Kafka that knows just those lists. An older release lacks some operations (Kafka 3
    /// has no `TWO_PHASE_COMMIT`), and its listing leaves their rows out.
    pub fn len_with_operations(&self, shown: u64) -> usize {
        let shows =
            |operation: Operation| shown.checked_shr(operation.code().into()).unwrap_or(0) & 1 == 1;
        self.rows.iter().filter(|row| shows(row.operation)).count()
    }

    /// The rows, sorted.
    pub fn rows(&self) -> impl ExactSizeIterator<Item = AclRow<'_>> + '_ {
        self.rows.iter().map(|row| AclRow {
            resource_type: row.resource_type,
            pattern_type: row.pattern_type,
            name: self.names.get(row.name),
            principal: self.names.get(row.principal),
            operation: row.operation,
            permission: row.permission,
        })
    }

    /// Every distinct resource name and principal of the rows, in the order the rows index them.
    pub fn names(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        (0..self.names.len() as u32).map(|index| self.names.get(index))
    }

    /// The rows as stored, indexing [`AclView::names`].
    pub fn indexed_rows(&self) -> &[IndexedRow] {
        &self.rows
    }

    /// The bytes the view holds on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.names.heap_bytes() + self.rows.capacity() * std::mem::size_of::<IndexedRow>()
    }

    /// Whether the policies ask for more rows than the view could build: some may have been left
    /// out. Rows are counted before duplicates are dropped (counting distinct rows would mean
    /// building them all), so an excess of duplicates alone also stops the view.
    pub fn truncated(&self) -> bool {
        self.asked > self.max_rows as u64
    }

    /// What the operator reads once when a view had to stop at its maximum; `None` when whole.
    pub fn truncation_warning(&self) -> Option<String> {
        self.truncated().then(|| format!(
            "the ACL view (Authorizer.acls, kafka-acls --list) is cut at {} rows: the policies ask for {} rows, duplicates counted, and it lists the {} distinct rows of the first of them; decisions are not affected, only the listing may be incomplete (use `explain` for one resource)",
            self.max_rows,
            self.asked,
            self.rows.len()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(resource_type: ResourceType, pattern_type: PatternType, name: &str) -> AclRow<'_> {
        AclRow {
            resource_type: resource_type.code(),
            pattern_type,
            name,
            principal: "User:alice",
            operation: Operation::Read,
            permission: Permission::Allow,
        }
    }

    #[test]
    fn a_row_matches_a_resource_as_kafkas_match_filter_does() {
        let literal = row(ResourceType::Topic, PatternType::Literal, "orders");
        assert!(literal.matches_resource(ResourceType::Topic, "orders"));
        assert!(!literal.matches_resource(ResourceType::Topic, "orders-eu"));
        assert!(!literal.matches_resource(ResourceType::Topic, "order"));
        assert!(
            !literal.matches_resource(ResourceType::Group, "orders"),
            "another resource type"
        );
        let wildcard = row(ResourceType::Topic, PatternType::Literal, "*");
        assert!(wildcard.matches_resource(ResourceType::Topic, "orders"));
        assert!(!wildcard.matches_resource(ResourceType::Group, "orders"));
        let prefixed = row(ResourceType::Group, PatternType::Prefixed, "alice-");
        assert!(prefixed.matches_resource(ResourceType::Group, "alice-1"));
        assert!(prefixed.matches_resource(ResourceType::Group, "alice-"));
        assert!(!prefixed.matches_resource(ResourceType::Group, "alice"));
        assert!(!prefixed.matches_resource(ResourceType::Topic, "alice-1"));
        let star_prefix = row(ResourceType::Group, PatternType::Prefixed, "*");
        assert!(
            !star_prefix.matches_resource(ResourceType::Group, "alice"),
            "a prefixed `*` is a prefix, not the wildcard"
        );
    }

    #[test]
    fn rows_are_counted_by_the_operations_a_kafka_knows() {
        let two_phase = AclRow {
            operation: Operation::TwoPhaseCommit,
            ..row(ResourceType::TransactionalId, PatternType::Literal, "tx")
        };
        let view = AclView::new(
            vec![
                row(ResourceType::Topic, PatternType::Literal, "t"),
                two_phase,
            ],
            2,
            2,
        );
        let read = 1u64 << Operation::Read.code();
        assert_eq!(view.len_with_operations(u64::MAX), 2);
        assert_eq!(view.len_with_operations(read), 1);
        assert_eq!(view.len_with_operations(0), 0);
    }

    #[test]
    fn a_stored_row_is_twelve_bytes() {
        assert_eq!(std::mem::size_of::<IndexedRow>(), 12);
    }

    #[test]
    fn rows_come_back_sorted_without_duplicates_and_each_name_is_held_once() {
        let bob = |r: AclRow<'static>| AclRow {
            principal: "User:bob",
            ..r
        };
        let orders = row(ResourceType::Topic, PatternType::Literal, "orders");
        let pay = row(ResourceType::Group, PatternType::Prefixed, "pay-");
        let rows = vec![bob(orders), pay, orders, bob(pay), orders, bob(orders)];
        let view = AclView::new(rows, 6, 10);
        let listed: Vec<AclRow> = view.rows().collect();
        assert_eq!(listed, [orders, bob(orders), pay, bob(pay)]);
        assert_eq!(
            view.names().collect::<Vec<_>>(),
            ["orders", "User:alice", "User:bob", "pay-"]
        );
        assert_eq!((view.len(), view.asked, view.truncated()), (4, 6, false));
    }

    #[test]
    fn a_name_copied_by_two_policies_is_held_once() {
        let (first, second) = ("orders".to_string(), "orders".to_string());
        let rows = vec![
            row(ResourceType::Topic, PatternType::Literal, &first),
            AclRow {
                operation: Operation::Write,
                ..row(ResourceType::Topic, PatternType::Literal, &second)
            },
        ];
        let view = AclView::new(rows, 2, 2);
        assert_eq!(view.names().collect::<Vec<_>>(), ["orders", "User:alice"]);
        assert_eq!(view.len(), 2);
    }

    #[test]
    fn a_view_holds_twelve_bytes_a_row_beside_its_names() {
        let names: Vec<String> = (0..1000).map(|i| format!("topic-{i:04}")).collect();
        let principals: Vec<String> = (0..10).map(|i| format!("User:u{i}")).collect();
        let rows: Vec<AclRow> = names
            .iter()
            .flat_map(|name| principals.iter().map(move |p| (name, p)))
            .map(|(name, principal)| AclRow {
                principal,
                ..row(ResourceType::Topic, PatternType::Literal, name)
            })
            .collect();
        let view = AclView::new(rows, 10_000, 10_000);
        let text: usize = names.iter().chain(&principals).map(String::len).sum();
        let ends = (names.len() + principals.len()) * std::mem::size_of::<usize>();
        assert_eq!(view.len(), 10_000);
        assert_eq!(view.heap_bytes(), 10_000 * 12 + text + ends);
    }
}
