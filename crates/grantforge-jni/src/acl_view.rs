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
//! `name` and `principal` index the names, where each distinct string is written once (a resource
//! name once per resource type and pattern type that has it): rows repeat a few names many times (every user of a policy on each of its
//! resources), so the payload is the size of the names plus 12 bytes a row, never a name per row
//! (one 4 MiB topic name for 500 users is 4 MiB, not 2 GiB).
//!
//! Empty (no name, no row) without a snapshot or for a disabled service. At most
//! `grantforge_kafka::ACL_VIEW_MAX_ROWS` rows: the view is bounded when it is computed (when the
//! snapshot is applied, and at each validity boundary of its policies).
//!
//! Golden bytes: `tests/fixtures/jni/acl-rows.bin`, which `AclViewGoldenTest.java` decodes.

use grantforge_kafka::AclView;

use crate::wire::put_str;

/// The bytes of one row after the names.
const ROW_BYTES: usize = 12;

/// The view's names and rows as they are: a view holds them in this layout already
/// (`grantforge_kafka::AclView`), each distinct name once.
pub(crate) fn encode(view: &AclView) -> Vec<u8> {
    let name_bytes: usize = view.names().map(|name| 4 + name.len()).sum();
    let mut out = Vec::with_capacity(8 + name_bytes + view.len() * ROW_BYTES);
    out.extend_from_slice(&(view.names().len() as u32).to_le_bytes());
    for name in view.names() {
        put_str(&mut out, name);
    }
    out.extend_from_slice(&(view.len() as u32).to_le_bytes());
    for row in view.indexed_rows() {
        out.push(row.resource_type);
        out.push(row.pattern_type.code());
        out.extend_from_slice(&row.name.to_le_bytes());
        out.extend_from_slice(&row.principal.to_le_bytes());
        out.push(row.operation.code());
        out.push(row.permission.code());
    }
    out
}

#[cfg(test)]
mod tests {
    use grantforge_kafka::{AclRow, Operation, PatternType, Permission, ResourceType};

    use super::*;
    use crate::wire::golden;

    fn view_of(rows: Vec<AclRow>) -> AclView {
        let count = rows.len();
        AclView::new(rows, count as u64, count)
    }

    #[test]
    fn golden_acl_rows_are_the_example_the_java_test_decodes() {
        let row =
            |resource_type: ResourceType, pattern_type, name, principal, operation, permission| {
                AclRow {
                    resource_type: resource_type.code(),
                    pattern_type,
                    name,
                    principal,
                    operation,
                    permission,
                }
            };
        let alice_writes_orders = row(
            ResourceType::Topic,
            PatternType::Literal,
            "orders",
            "User:alice",
            Operation::Write,
            Permission::Allow,
        );
        let rows = vec![
            alice_writes_orders,
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
            // The rows of one resource together, sharing its name and principal.
            AclRow {
                operation: Operation::Read,
                ..alice_writes_orders
            },
        ];
        golden::check("acl-rows.bin", &encode(&view_of(rows)));
        assert_eq!(
            encode(&AclView::default()),
            [0; 8],
            "no snapshot: no name, no row"
        );
    }

    #[test]
    fn each_name_is_written_once_however_many_rows_share_it() {
        let name = "x".repeat(1 << 20);
        let principals: Vec<String> = (0..500).map(|user| format!("User:u{user}")).collect();
        let rows: Vec<AclRow> = principals
            .iter()
            .map(|principal| AclRow {
                resource_type: ResourceType::Topic.code(),
                pattern_type: PatternType::Literal,
                name: &name,
                principal,
                operation: Operation::Read,
                permission: Permission::Allow,
            })
            .collect();
        let principal_bytes: usize = principals.iter().map(|p| 4 + p.len()).sum();
        let names = 4 + (4 + name.len()) + principal_bytes;
        assert_eq!(encode(&view_of(rows)).len(), names + 4 + 500 * ROW_BYTES);
    }

    #[test]
    fn a_resource_named_by_two_policies_is_written_once_and_shared_principals_once() {
        let (first, second) = ("pay-".to_string(), "pay-".to_string());
        let row = |name, operation| AclRow {
            resource_type: ResourceType::Group.code(),
            pattern_type: PatternType::Prefixed,
            name,
            principal: "User:alice",
            operation,
            permission: Permission::Allow,
        };
        let rows = vec![
            row(&first, Operation::Read),
            row(&second, Operation::Describe),
            row("payroll-", Operation::Read),
        ];
        let encoded = encode(&view_of(rows));
        assert_eq!(
            &encoded[..4],
            3u32.to_le_bytes(),
            "pay-, User:alice, payroll-"
        );
    }
}
