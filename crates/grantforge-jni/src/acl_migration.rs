//! The ACL migration payloads of `migrateAcls`, written and read by `AclMigration.java`: Kafka's ACL
//! bindings in, the migrated policies and the report out (`grantforge_kafka::migrate_acls`).
//!
//! All integers little-endian; a string is a u32 byte length followed by UTF-8 bytes (`wire.rs`).
//!
//! ```text
//! request := str service  u32 count  acl{count}
//! acl     := u8 resourceTypeCode  u8 patternTypeCode  str name  str principal  str host
//!            u8 operationCode  u8 permissionTypeCode                      (Kafka's codes)
//! answer  := u8 0  str policyFileKey  str snapshotJson  str policyRequestsJson  str reportText
//!            u32 count  entry{count}
//!            (policyFileKey: the setting that runs an agent on the snapshot, so that the shim's
//!            verifier does not spell a setting of its own)
//!          | u8 1  str message
//! entry   := u32 aclIndex  u8 finding(1 not migrated, 2 a deny covering implied operations,
//!            3 a Group principal)  u8 n  u8 operationCode{n}  str message
//! ```
//!
//! Golden bytes: `tests/fixtures/jni/acl-migration-request.bin`, which `AclMigrationGoldenTest.java`
//! must write identically, and `acl-migration-answer.bin`, which it decodes.

use grantforge_kafka::{migrate_acls, KafkaAcl, Migration};

use crate::wire::{put_str, MalformedRequest, Reader};

/// The service name and the ACLs of a request.
pub(crate) fn decode(bytes: &[u8]) -> Result<(String, Vec<KafkaAcl>), MalformedRequest> {
    let mut r = Reader::new(bytes);
    let service = r.str("service")?.to_string();
    let count = r.u32("ACL count")? as usize;
    // Each ACL takes at least 17 bytes: a count beyond what the bytes can hold is malformed, and
    // must not reserve memory for it.
    let mut acls = Vec::with_capacity(count.min(bytes.len() / 17));
    for _ in 0..count {
        acls.push(KafkaAcl {
            resource_type: r.u8("resource type")?,
            pattern_type: r.u8("pattern type")?,
            name: r.str("resource name")?.to_string(),
            principal: r.str("principal")?.to_string(),
            host: r.str("host")?.to_string(),
            operation: r.u8("operation")?,
            permission: r.u8("permission")?,
        });
    }
    r.finish()?;
    Ok((service, acls))
}

/// The answer to a request's bytes: the migration, or why there is none.
pub(crate) fn answer(request: &[u8]) -> Vec<u8> {
    let (service, acls) = match decode(request) {
        Ok(decoded) => decoded,
        Err(e) => return failure(&e.to_string()),
    };
    match migrate_acls(&acls, &service) {
        Ok(migration) => encode(&migration, &acls),
        Err(e) => failure(&format!(
            "the migrated snapshot does not load, nothing was written: {e}"
        )),
    }
}

pub(crate) fn encode(migration: &Migration, acls: &[KafkaAcl]) -> Vec<u8> {
    let mut out = vec![0];
    put_str(&mut out, grantforge_agent::settings::POLICY_FILE.key);
    put_str(&mut out, &migration.snapshot_json);
    put_str(&mut out, &migration.policy_requests_json);
    put_str(&mut out, &migration.report_text(acls));
    out.extend_from_slice(&(migration.report.len() as u32).to_le_bytes());
    for entry in &migration.report {
        out.extend_from_slice(&(entry.acl as u32).to_le_bytes());
        out.push(entry.finding.code());
        out.push(entry.narrowed.len() as u8);
        out.extend(entry.narrowed.iter().map(|o| o.code()));
        put_str(&mut out, &entry.message);
    }
    out
}

fn failure(message: &str) -> Vec<u8> {
    let mut out = vec![1];
    put_str(&mut out, message);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::golden;

    /// The example both sides hold to: the request `AclMigrationGoldenTest.java` encodes.
    fn example() -> (String, Vec<KafkaAcl>) {
        let acl = |resource_type,
                   pattern_type,
                   name: &str,
                   principal: &str,
                   host: &str,
                   operation,
                   permission| KafkaAcl {
            resource_type,
            pattern_type,
            name: name.to_string(),
            principal: principal.to_string(),
            host: host.to_string(),
            operation,
            permission,
        };
        (
            "kafka-prod".to_string(),
            vec![
                // TOPIC LITERAL orders User:alice * READ ALLOW
                acl(2, 3, "orders", "User:alice", "*", 3, 3),
                // GROUP PREFIXED café- Group:ops 10.0.0.1 DELETE DENY
                acl(3, 4, "café-", "Group:ops", "10.0.0.1", 6, 2),
                // TOPIC LITERAL orders User:bob client.example.com WRITE ALLOW: not migrated
                acl(2, 3, "orders", "User:bob", "client.example.com", 4, 3),
            ],
        )
    }

    fn encode_request(service: &str, acls: &[KafkaAcl]) -> Vec<u8> {
        let mut out = Vec::new();
        put_str(&mut out, service);
        out.extend_from_slice(&(acls.len() as u32).to_le_bytes());
        for acl in acls {
            out.push(acl.resource_type);
            out.push(acl.pattern_type);
            put_str(&mut out, &acl.name);
            put_str(&mut out, &acl.principal);
            put_str(&mut out, &acl.host);
            out.push(acl.operation);
            out.push(acl.permission);
        }
        out
    }

    #[test]
    fn golden_request_decodes_to_the_example_and_the_answer_is_the_one_java_decodes() {
        let (service, acls) = example();
        let request = encode_request(&service, &acls);
        golden::check("acl-migration-request.bin", &request);
        assert_eq!(
            decode(&golden::read("acl-migration-request.bin")).unwrap(),
            (service, acls)
        );
        let answer = answer(&request);
        assert_eq!(answer[0], 0, "migrated");
        golden::check("acl-migration-answer.bin", &answer);
    }

    #[test]
    fn every_truncation_of_a_request_is_refused_with_a_message() {
        let (service, acls) = example();
        let request = encode_request(&service, &acls);
        for cut in 0..request.len() {
            let answer = answer(&request[..cut]);
            assert_eq!(answer[0], 1, "cut at {cut}");
            assert!(String::from_utf8_lossy(&answer[5..]).contains("malformed request"));
        }
        let mut trailing = request.clone();
        trailing.push(0);
        assert_eq!(answer(&trailing)[0], 1);
    }
}
