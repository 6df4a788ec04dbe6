//! The ACL view payload: the policies in force as Kafka ACL bindings, the answer of `acls`, read by
//! `AclView.java` (which filters them with Kafka's own `AclBindingFilter`).
//!
//! All integers little-endian; a string is a u32 byte length followed by UTF-8 bytes (`wire.rs`).
//!
//! ```text
//! view := u32 nameCount  str{nameCount}  u32 rowCount  row{rowCount}
//! row  := u8 resourceTypeCode  u8 patternTypeCode  u32 name  u32 principal  u8 operationCode
//!         u8 permissionTypeCode      (Kafka's codes; the host is always `*`)
//! ```
//!
//! `name` and `principal` index the names, where each distinct string (resource name or principal)
//! is written once: rows repeat a few names many times (every user of a policy on each of its
//! resources), so the payload is the size of the names plus 12 bytes a row, never a name per row
//! (one 4 MiB topic name for 500 users is 4 MiB, not 2 GiB).
//!
//! Empty (no name, no row) without a snapshot or for a disabled service. At most
//! `grantforge_kafka::ACL_VIEW_MAX_ROWS` rows: the view is bounded when it is computed (when the
//! snapshot is applied, and at each validity boundary of its policies).
//!
//! Golden bytes: `tests/fixtures/jni/acl-rows.bin`, which `AclViewGoldenTest.java` decodes.

use std::collections::HashMap;
use std::sync::Arc;

use grantforge_kafka::AclRow;

use crate::wire::put_str;

/// The bytes of one row after the names.
const ROW_BYTES: usize = 12;

pub(crate) fn encode(rows: &[AclRow]) -> Vec<u8> {
    let mut names = Names::default();
    let mut encoded_rows = Vec::with_capacity(rows.len() * ROW_BYTES);
    for row in rows {
        encoded_rows.push(row.resource_type);
        encoded_rows.push(row.pattern_type.code());
        encoded_rows.extend_from_slice(&names.index_of(&row.name).to_le_bytes());
        encoded_rows.extend_from_slice(&names.index_of(&row.principal).to_le_bytes());
        encoded_rows.push(row.operation.code());
        encoded_rows.push(row.permission.code());
    }
    let mut out = Vec::with_capacity(8 + names.encoded_bytes + encoded_rows.len());
    out.extend_from_slice(&(names.in_order.len() as u32).to_le_bytes());
    for name in &names.in_order {
        put_str(&mut out, name);
    }
    out.extend_from_slice(&(rows.len() as u32).to_le_bytes());
    out.extend_from_slice(&encoded_rows);
    out
}

/// The distinct names of the rows, each with its index. Rows share their names (`Arc<str>`), so a
/// name is found by its allocation first, one pointer hash a row; only a new allocation hashes
/// its text, which the payload holds once even if two policies named it apart.
#[derive(Default)]
struct Names<'a> {
    by_allocation: HashMap<*const u8, u32>,
    by_text: HashMap<&'a str, u32>,
    in_order: Vec<&'a str>,
    encoded_bytes: usize,
}

impl<'a> Names<'a> {
    fn index_of(&mut self, name: &'a Arc<str>) -> u32 {
        let allocation = Arc::as_ptr(name).cast::<u8>();
        if let Some(&index) = self.by_allocation.get(&allocation) {
            return index;
        }
        let text: &'a str = name;
        let index = match self.by_text.get(text) {
            Some(&index) => index,
            None => {
                let index = self.in_order.len() as u32;
                self.in_order.push(text);
                self.encoded_bytes += 4 + text.len();
                self.by_text.insert(text, index);
                index
            }
        };
        self.by_allocation.insert(allocation, index);
        index
    }
}

#[cfg(test)]
mod tests {
    use grantforge_kafka::{Operation, PatternType, Permission, ResourceType};

    use super::*;
    use crate::wire::golden;

    #[test]
    fn golden_acl_rows_are_the_example_the_java_test_decodes() {
        let row = |resource_type: ResourceType,
                   pattern_type,
                   name: &str,
                   principal: &str,
                   operation,
                   permission| AclRow {
            resource_type: resource_type.code(),
            pattern_type,
            name: name.into(),
            principal: principal.into(),
            operation,
            permission,
        };
        let rows = [
            row(
                ResourceType::Topic,
                PatternType::Literal,
                "orders",
                "User:alice",
                Operation::Write,
                Permission::Allow,
            ),
            row(
                ResourceType::Group,
                PatternType::Prefixed,
                "pay-",
                "Group:ops",
                Operation::Read,
                Permission::Deny,
            ),
            row(
                ResourceType::Cluster,
                PatternType::Literal,
                "kafka-cluster",
                "User:*",
                Operation::IdempotentWrite,
                Permission::Allow,
            ),
            row(
                ResourceType::Topic,
                PatternType::Prefixed,
                "café",
                "Role:analyst",
                Operation::Describe,
                Permission::Allow,
            ),
            row(
                ResourceType::Topic,
                PatternType::Literal,
                "orders",
                "User:alice",
                Operation::Read,
                Permission::Allow,
            ),
        ];
        golden::check("acl-rows.bin", &encode(&rows));
        assert_eq!(encode(&[]), [0; 8], "no snapshot: no name, no row");
    }

    #[test]
    fn each_name_is_written_once_however_many_rows_share_it() {
        let name: Arc<str> = Arc::from("x".repeat(1 << 20));
        let rows: Vec<AclRow> = (0..500)
            .map(|user| AclRow {
                resource_type: ResourceType::Topic.code(),
                pattern_type: PatternType::Literal,
                name: Arc::clone(&name),
                principal: format!("User:u{user}").into(),
                operation: Operation::Read,
                permission: Permission::Allow,
            })
            .collect();
        let principals: usize = rows.iter().map(|row| 4 + row.principal.len()).sum();
        let names = 4 + (4 + name.len()) + principals;
        assert_eq!(encode(&rows).len(), names + 4 + 500 * ROW_BYTES);
    }

    #[test]
    fn equal_names_of_separate_allocations_are_written_once() {
        let row = |name: &str| AclRow {
            resource_type: ResourceType::Group.code(),
            pattern_type: PatternType::Prefixed,
            name: name.into(),
            principal: "User:alice".into(),
            operation: Operation::Read,
            permission: Permission::Allow,
        };
        let encoded = encode(&[row("pay-"), row("pay-"), row("alice")]);
        assert_eq!(&encoded[..4], 3u32.to_le_bytes(), "pay-, User:alice, alice");
    }
}
