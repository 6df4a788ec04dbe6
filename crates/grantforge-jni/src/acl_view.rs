//! The ACL rows payload: the policies in force as Kafka ACL bindings, the answer of `acls`, read by
//! `AclView.java` (which filters them with Kafka's own `AclBindingFilter`).
//!
//! All integers little-endian; a string is a u32 byte length followed by UTF-8 bytes (`wire.rs`).
//!
//! ```text
//! rows := u32 count  row{count}
//! row  := u8 resourceTypeCode  u8 patternTypeCode  str name  str principal  u8 operationCode
//!         u8 permissionTypeCode                          (Kafka's codes; the host is always `*`)
//! ```
//!
//! Empty (count 0) without a snapshot or for a disabled service. At most
//! `grantforge_kafka::ACL_VIEW_MAX_ROWS` rows: the view is bounded when it is computed (when the
//! snapshot is applied, and at each validity boundary of its policies).
//!
//! Golden bytes: `tests/fixtures/jni/acl-rows.bin`, which `AclViewGoldenTest.java` decodes.

use grantforge_kafka::AclRow;

use crate::wire::put_str;

pub(crate) fn encode(rows: &[AclRow]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + rows.len() * 32);
    out.extend_from_slice(&(rows.len() as u32).to_le_bytes());
    for row in rows {
        out.push(row.resource_type);
        out.push(row.pattern_type.code());
        put_str(&mut out, &row.name);
        put_str(&mut out, &row.principal);
        out.push(row.operation.code());
        out.push(row.permission.code());
    }
    out
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
        ];
        golden::check("acl-rows.bin", &encode(&rows));
        assert_eq!(encode(&[]), [0, 0, 0, 0], "no snapshot: no row");
    }
}
