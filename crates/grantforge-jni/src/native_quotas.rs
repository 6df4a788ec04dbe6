//! `NativeQuotas.java`: the quota table of this JVM (`grantforge_agent::quotas`), for the agent's
//! `GrantForgeClientQuotaCallback`.
//!
//! ```text
//! entity    := u32 count, count × (str entityType, str name)    (update, remove)
//! resolved  := str userTag, str clientIdTag, f64 limit           (resolve; limit NaN: none)
//! notKept   := i32: 0 the shim keeps the answer, 1 its view of the type is full, 2 the user's share
//!              of it is full, 3 the names are too long to keep          (resolve's last argument)
//! stats     := the metrics payload of `agent_metrics.rs`, instance "quotas"
//! ```
//!
//! Golden bytes: `tests/fixtures/jni/quota-entity.bin` (which `NativeQuotasGoldenTest.java` writes
//! identically) and `quota-resolved*.bin` (which it decodes).
//!
//! (`str` as in `wire.rs`.) Entity types are Kafka's `ConfigEntityType` names (`USER`,
//! `CLIENT_ID`, `DEFAULT_USER`, `DEFAULT_CLIENT_ID`); quota types are `ClientQuotaType` ordinals.
//! Kafka calls `updateQuota` and `removeQuota` on its metadata thread and the rest on request and
//! network threads; every export answers through `export.rs`, so none ever throws.

use grantforge_agent::quotas::{
    self, Entity, NotKept, QuotaType, Resolved, SafeBounds, DEFAULT_SOCKET_REQUEST_MAX_BYTES,
    QUOTA_METRICS,
};

use crate::agent_metrics;
use crate::wire::{MalformedRequest, Reader};

/// The quota type of a `ClientQuotaType` ordinal.
pub(crate) fn quota_type(ordinal: i32) -> Result<QuotaType, MalformedRequest> {
    usize::try_from(ordinal)
        .ok()
        .and_then(QuotaType::from_ordinal)
        .ok_or(MalformedRequest("a quota type that is not one of Kafka's"))
}

/// An entity; one of another kind (an IP entity) is logged and ignored (`None`).
pub(crate) fn decode_entity(bytes: &[u8]) -> Result<Option<Entity>, MalformedRequest> {
    let mut reader = Reader::new(bytes);
    let count = reader.u32("quota entity")?;
    let mut parts = Vec::new();
    for _ in 0..count {
        parts.push((
            reader.str("quota entity type")?,
            reader.str("quota entity name")?,
        ));
    }
    reader.finish()?;
    match Entity::from_kafka(parts) {
        Ok(entity) => Ok(Some(entity)),
        Err(e) => {
            tracing::warn!("{e}");
            Ok(None)
        }
    }
}

pub(crate) fn encode_resolved(resolved: &Resolved) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + resolved.user_tag.len() + resolved.client_tag.len());
    for text in [&resolved.user_tag, &resolved.client_tag] {
        out.extend_from_slice(&(text.len() as u32).to_le_bytes());
        out.extend_from_slice(text.as_bytes());
    }
    out.extend_from_slice(&resolved.limit.unwrap_or(f64::NAN).to_le_bytes());
    out
}

/// The node's `socket.request.max.bytes` (Kafka's default for one that is not positive): whether
/// it changed the bounds.
pub(crate) fn configure(socket_request_max_bytes: i64) -> bool {
    let bytes = u64::try_from(socket_request_max_bytes)
        .ok()
        .filter(|bytes| *bytes > 0)
        .unwrap_or(DEFAULT_SOCKET_REQUEST_MAX_BYTES);
    quotas::shared().configure(SafeBounds::for_requests_up_to(bytes))
}

/// Kafka's `updateQuota`: whether a value changed.
pub(crate) fn update(ordinal: i32, entity: &[u8], value: f64) -> Result<bool, MalformedRequest> {
    let quota_type = quota_type(ordinal)?;
    Ok(decode_entity(entity)?
        .is_some_and(|entity| quotas::shared().update(&entity, quota_type, value)))
}

/// Kafka's `removeQuota`: whether a value was removed.
pub(crate) fn remove(ordinal: i32, entity: &[u8]) -> Result<bool, MalformedRequest> {
    let quota_type = quota_type(ordinal)?;
    Ok(decode_entity(entity)?.is_some_and(|entity| quotas::shared().remove(&entity, quota_type)))
}

/// Why the shim does not keep an answer (`notKept`), if it does not.
pub(crate) fn not_kept(code: i32) -> Result<Option<NotKept>, MalformedRequest> {
    match code {
        0 => Ok(None),
        1 => Ok(Some(NotKept::TypeFull)),
        2 => Ok(Some(NotKept::UserShareFull)),
        3 => Ok(Some(NotKept::LongNames)),
        _ => Err(MalformedRequest(
            "a reason not to keep an answer that is not 0 to 3",
        )),
    }
}

/// The group and limit of a connection.
pub(crate) fn resolve(
    ordinal: i32,
    user: &[u8],
    client_id: &[u8],
    not_kept_code: i32,
) -> Result<Vec<u8>, MalformedRequest> {
    let quota_type = quota_type(ordinal)?;
    let why = not_kept(not_kept_code)?;
    let user = String::from_utf8_lossy(user);
    let resolved = quotas::shared().resolve(quota_type, &user, &String::from_utf8_lossy(client_id));
    if let Some(why) = why {
        quotas::shared().not_kept(quota_type, &user, why);
    }
    Ok(encode_resolved(&resolved))
}

/// Kafka's `quotaLimit`: NaN for none.
pub(crate) fn limit_of_group(
    ordinal: i32,
    user_tag: &[u8],
    client_tag: &[u8],
) -> Result<f64, MalformedRequest> {
    let quota_type = quota_type(ordinal)?;
    let limit = quotas::shared().limit_of_group(
        quota_type,
        &String::from_utf8_lossy(user_tag),
        &String::from_utf8_lossy(client_tag),
    );
    Ok(limit.unwrap_or(f64::NAN))
}

/// The quota table's metrics (Kafka's plugin metrics of the quota callback on Kafka 4.1+).
pub(crate) fn stats() -> Vec<u8> {
    agent_metrics::encode_list("quotas", QUOTA_METRICS, &quotas::shared().stats())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::golden;

    fn entity(parts: &[(&str, &str)]) -> Vec<u8> {
        let mut out = (parts.len() as u32).to_le_bytes().to_vec();
        for text in parts.iter().flat_map(|(kind, name)| [kind, name]) {
            out.extend_from_slice(&(text.len() as u32).to_le_bytes());
            out.extend_from_slice(text.as_bytes());
        }
        out
    }

    #[test]
    fn the_worked_example_through_the_bridge() {
        let produce = 0;
        assert_eq!(
            update(produce, &entity(&[("USER", "jni-user2")]), 4096.0),
            Ok(true)
        );
        assert_eq!(
            update(
                produce,
                &entity(&[("USER", "jni-user2"), ("CLIENT_ID", "clientA")]),
                10.0
            ),
            Ok(true)
        );
        assert_eq!(
            update(
                produce,
                &entity(&[("CLIENT_ID", "clientB"), ("USER", "jni-user2")]),
                30.0
            ),
            Ok(true)
        );
        let shared = resolve(produce, b"jni-user2", b"clientC", 0).unwrap();
        let mut expected = entity(&[("jni-user2", "")])[4..].to_vec();
        expected.extend_from_slice(&4056.0f64.to_le_bytes());
        assert_eq!(shared, expected, "(user2, \"\") sharing 4096 - 10 - 30");
        assert_eq!(limit_of_group(produce, b"jni-user2", b"clientA"), Ok(10.0));
        assert_eq!(
            remove(
                produce,
                &entity(&[("USER", "jni-user2"), ("CLIENT_ID", "clientA")])
            ),
            Ok(true)
        );
        assert_eq!(limit_of_group(produce, b"jni-user2", b""), Ok(4066.0));
        assert!(
            limit_of_group(produce, b"jni-nobody", b"x")
                .unwrap()
                .is_nan(),
            "no quota: NaN"
        );
    }

    /// The examples both sides hold: the entity Java encodes for alice's client `app é`, and what
    /// Rust answers for two connections of hers (her client's own group, and her shared rest).
    #[test]
    fn golden_quota_payloads_are_the_examples_the_java_test_encodes_and_decodes() {
        let parts = [("USER", "golden-alice"), ("CLIENT_ID", "app é")];
        golden::check("quota-entity.bin", &entity(&parts));
        assert_eq!(
            decode_entity(&golden::read("quota-entity.bin")),
            Ok(Some(Entity::from_kafka(parts).unwrap()))
        );
        let produce = 0;
        assert_eq!(
            update(produce, &entity(&[("USER", "golden-alice")]), 4096.0),
            Ok(true)
        );
        assert_eq!(update(produce, &entity(&parts), 10.0), Ok(true));
        let own = resolve(produce, b"golden-alice", "app é".as_bytes(), 0).unwrap();
        golden::check("quota-resolved.bin", &own);
        let shared = resolve(produce, b"golden-alice", b"other", 0).unwrap();
        golden::check("quota-resolved-shared.bin", &shared);
        let none = resolve(produce, b"golden-nobody", b"", 0).unwrap();
        golden::check("quota-resolved-none.bin", &none);
    }

    #[test]
    fn odd_input_is_refused_or_ignored_never_applied() {
        assert!(quota_type(4).is_err() && quota_type(-1).is_err());
        assert!(not_kept(4).is_err() && not_kept(-1).is_err());
        assert_eq!(not_kept(2), Ok(Some(NotKept::UserShareFull)));
        assert!(decode_entity(&[1, 0, 0, 0, 9]).is_err(), "truncated");
        assert_eq!(
            decode_entity(&entity(&[("IP", "10.0.0.1")])),
            Ok(None),
            "an IP entity is not ours"
        );
        assert_eq!(update(1, &entity(&[("IP", "10.0.0.1")]), 5.0), Ok(false));
        let mut trailing = entity(&[("USER", "u")]);
        trailing.push(0);
        assert!(decode_entity(&trailing).is_err());
    }
}
