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
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use grantforge_kafka::AclRow;

use crate::wire::put_str;

/// The bytes of one row after the names.
const ROW_BYTES: usize = 12;

pub(crate) fn encode(rows: &[AclRow]) -> Vec<u8> {
    let mut names = Names::default();
    let mut resource = LastResource::default();
    let mut principals = HashMap::<*const u8, u32, Fast>::default();
    let mut encoded_rows = Vec::with_capacity(rows.len() * ROW_BYTES);
    for row in rows {
        let name = resource.index_of(&row.name, &mut names);
        let principal = *principals
            .entry(Arc::as_ptr(&row.principal).cast())
            .or_insert_with(|| names.add(&row.principal));
        encoded_rows.push(row.resource_type);
        encoded_rows.push(row.pattern_type.code());
        encoded_rows.extend_from_slice(&name.to_le_bytes());
        encoded_rows.extend_from_slice(&principal.to_le_bytes());
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

/// The names written, in index order.
#[derive(Default)]
struct Names<'a> {
    in_order: Vec<&'a str>,
    encoded_bytes: usize,
}

impl<'a> Names<'a> {
    fn add(&mut self, name: &'a str) -> u32 {
        self.in_order.push(name);
        self.encoded_bytes += 4 + name.len();
        (self.in_order.len() - 1) as u32
    }
}

/// The resource name of the row before. Rows are sorted, so all rows of a resource follow each
/// other: a name is written once per resource type and pattern type that has it (at most twelve
/// times), found without hashing it; each row costs a pointer comparison, each new resource one
/// comparison of texts (two policies naming the same resource hold separate copies).
#[derive(Default)]
struct LastResource<'a> {
    last: Option<(*const u8, &'a str, u32)>,
}

impl<'a> LastResource<'a> {
    fn index_of(&mut self, name: &'a Arc<str>, names: &mut Names<'a>) -> u32 {
        let allocation = Arc::as_ptr(name).cast::<u8>();
        let index = match self.last {
            Some((last, _, index)) if last == allocation => return index,
            Some((_, text, index)) if text == &**name => index,
            _ => names.add(name),
        };
        self.last = Some((allocation, name, index));
        index
    }
}

/// The principals' map: a view holds one allocation per distinct principal (`acl_view` interns
/// them), so its address is the principal. Hashed a word at a time, unseeded: the keys are
/// addresses of the signed snapshot's names, never a client's input, so nothing needs a
/// flood-resistant (seeded, slower) hash, and a listing looks up hundreds of thousands.
type Fast = BuildHasherDefault<WordHasher>;

#[derive(Default)]
struct WordHasher(u64);

impl WordHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            self.add(u64::from_le_bytes(word.try_into().expect("8 bytes")));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(last));
        }
    }

    fn write_usize(&mut self, word: usize) {
        self.add(word as u64);
    }

    fn finish(&self) -> u64 {
        // The product's high bits mix every input bit, its low bits only the input's low bits
        // (zero for aligned addresses); the table picks buckets by the low bits.
        self.0.rotate_left(26)
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
        ];
        // As a view holds them: the rows of one resource together, sharing its name and principal.
        let alice_reads_orders = AclRow {
            operation: Operation::Read,
            ..rows[0].clone()
        };
        let rows = [&rows[..1], &[alice_reads_orders], &rows[1..]].concat();
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
    fn a_resource_named_by_two_policies_is_written_once_and_shared_principals_once() {
        let alice: Arc<str> = Arc::from("User:alice");
        let row = |name: &str, operation| AclRow {
            resource_type: ResourceType::Group.code(),
            pattern_type: PatternType::Prefixed,
            name: name.into(),
            principal: Arc::clone(&alice),
            operation,
            permission: Permission::Allow,
        };
        let rows = [
            row("pay-", Operation::Read),
            row("pay-", Operation::Describe),
            row("payroll-", Operation::Read),
        ];
        let encoded = encode(&rows);
        assert_eq!(
            &encoded[..4],
            3u32.to_le_bytes(),
            "pay-, User:alice, payroll-"
        );
    }
}
