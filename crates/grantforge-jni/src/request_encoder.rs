//! The request payload: what `RequestEncoder.java` writes into its thread's direct buffer for
//! `authorize` and `authorizeByResourceType` (the answer: see the exports in `lib.rs`).
//!
//! All integers little-endian; a string is a u32 byte length followed by UTF-8 bytes (`wire.rs`).
//!
//! ```text
//! request  := u8 version(=3) u32 contextLength context u32 n action{n}
//! context  := str principalType  str principalName  u8 addrLen(0|4|16) addr  str listener
//!             str clientId  i16 requestType  i16 requestVersion
//! action   := u8 operationCode  u8 resourceTypeCode  u8 patternTypeCode  u8 flags  str name
//!             (flags: bit 0 logIfAllowed, bit 1 logIfDenied)
//! by type  := u8 version(=3) u32 contextLength context u8 operationCode u8 resourceTypeCode
//! ```
//!
//! A request thread's calls mostly come from one connection after another with the same context,
//! so the context is decoded only when its bytes differ from the thread's previous call
//! ([`ContextMemo`]). The buffer is untrusted input: every length is checked, and a malformed
//! buffer is an error that refuses the whole call.
//!
//! Golden bytes: `tests/fixtures/jni/request.bin` and `request-by-resource-type.bin`, which
//! `RequestEncoderGoldenTest.java` holds `RequestEncoder` to.

use std::cell::RefCell;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use grantforge_kafka::{Action, KafkaContext, Operation, RequestContext, ResourceType};

use crate::export::BridgeError;
use crate::wire::{MalformedRequest, Reader};

/// The layout version; bumped with `RequestEncoder.VERSION` whenever the layout changes.
/// (3: the action count is a u32, so a call of more than 65,535 actions is answered.)
pub const VERSION: u8 = 3;

/// Kafka's `PatternType.LITERAL` code.
const LITERAL: u8 = 3;

thread_local! {
    /// The request context of this (Kafka request) thread's previous call: decoded again only
    /// when it changes, and refilled without allocation once warm.
    pub(crate) static MEMO: RefCell<ContextMemo> = RefCell::new(ContextMemo::default());
}

/// The reads of the request context (the rest of the layout is read in `wire.rs`).
impl Reader<'_> {
    fn address(&mut self) -> Result<Option<IpAddr>, MalformedRequest> {
        let what = "client address";
        match self.u8(what)? {
            0 => Ok(None),
            4 => {
                let octets: [u8; 4] = self.take(4, what)?.try_into().expect("4 bytes");
                Ok(Some(IpAddr::V4(Ipv4Addr::from(octets))))
            }
            16 => {
                let octets: [u8; 16] = self.take(16, what)?.try_into().expect("16 bytes");
                Ok(Some(IpAddr::V6(Ipv6Addr::from(octets))))
            }
            _ => Err(MalformedRequest(what)),
        }
    }

    /// Reads the version and the context, decoding the context only when it differs from the
    /// memo's (no allocation once warm: the memo's strings keep their capacity).
    fn context<'m>(
        &mut self,
        memo: &'m mut ContextMemo,
    ) -> Result<&'m RequestContext, MalformedRequest> {
        if self.u8("version")? != VERSION {
            return Err(MalformedRequest(
                "layout version: the JAR's Java and native parts differ",
            ));
        }
        let length = self.u32("context length")? as usize;
        let bytes = self.take(length, "context")?;
        if bytes.is_empty() {
            return Err(MalformedRequest("context"));
        }
        if memo.bytes.as_slice() != bytes {
            memo.bytes.clear();
            let mut context = Reader::new(bytes);
            context.context_into(&mut memo.context)?;
            context.finish()?;
            memo.bytes.extend_from_slice(bytes);
        }
        Ok(&memo.context)
    }

    fn context_into(&mut self, context: &mut RequestContext) -> Result<(), MalformedRequest> {
        let refill = |target: &mut String, text: &str| {
            target.clear();
            target.push_str(text);
        };
        refill(
            &mut context.principal.principal_type,
            self.str("principal type")?,
        );
        refill(&mut context.principal.name, self.str("principal name")?);
        // Every field named: a field added to KafkaContext does not compile until it is decoded.
        let KafkaContext {
            client_address,
            listener,
            client_id,
        } = &mut context.conditions;
        *client_address = self.address()?;
        refill(listener, self.str("listener")?);
        refill(client_id, self.str("client id")?);
        context.request_type = self.i16("request type")?;
        context.request_version = self.i16("request version")?;
        Ok(())
    }
}

/// The request context of a thread's previous call, and the bytes it was decoded from (empty
/// when none is valid: a context is never empty).
#[derive(Default)]
pub struct ContextMemo {
    bytes: Vec<u8>,
    context: RequestContext,
}

/// Actions decoded without allocation: nearly every call has one to a few.
const INLINE_ACTIONS: usize = 4;

/// Where the caller (on its stack) lets a call's actions be decoded: inline up to
/// [`INLINE_ACTIONS`], on the heap beyond.
pub struct ActionSlots<'a> {
    inline: [Action<'a>; INLINE_ACTIONS],
    heap: Vec<Action<'a>>,
}

impl Default for ActionSlots<'_> {
    fn default() -> Self {
        ActionSlots {
            inline: [Action::NONE; INLINE_ACTIONS],
            heap: Vec::new(),
        }
    }
}

/// Decodes the `authorize` request that starts `request` with this thread's context memo and runs
/// `f` with its context and actions: every export that reads the request in the buffer but the
/// request path's `authorize`, which writes its answers over that request before it lets go.
pub(crate) fn with_request<R>(
    request: &[u8],
    f: impl FnOnce(&RequestContext, &[Action<'_>]) -> Result<R, BridgeError>,
) -> Result<R, BridgeError> {
    MEMO.with(|memo| {
        let mut memo = memo.borrow_mut();
        let mut slots = ActionSlots::default();
        let (context, actions) = decode_authorize(request, &mut memo, &mut slots)?;
        f(context, actions)
    })
}

/// Decodes an `authorize(context, actions)` call: the context through the thread's memo, the
/// actions into `slots`, with names borrowed from the buffer.
pub fn decode_authorize<'a, 'm, 's>(
    bytes: &'a [u8],
    memo: &'m mut ContextMemo,
    slots: &'s mut ActionSlots<'a>,
) -> Result<(&'m RequestContext, &'s [Action<'a>]), MalformedRequest> {
    let mut reader = Reader::new(bytes);
    let context = reader.context(memo)?;
    let count = reader.u32("action count")? as usize;
    let inline = count <= INLINE_ACTIONS;
    slots.heap.clear();
    for at in 0..count {
        let operation = Operation::from_code(reader.u8("operation")?);
        let resource_type = ResourceType::from_code(reader.u8("resource type")?);
        let literal = reader.u8("pattern type")? == LITERAL;
        let flags = reader.u8("flags")?;
        let name = reader.str("resource name")?;
        let action = Action {
            operation,
            resource_type,
            literal,
            name,
            log_if_allowed: flags & 1 != 0,
            log_if_denied: flags & 2 != 0,
        };
        if inline {
            slots.inline[at] = action;
        } else {
            slots.heap.push(action);
        }
    }
    reader.finish()?;
    Ok((
        context,
        if inline {
            &slots.inline[..count]
        } else {
            &slots.heap
        },
    ))
}

/// A decoded `authorizeByResourceType(context, op, resourceType)` call.
pub fn decode_by_resource_type<'m>(
    bytes: &[u8],
    memo: &'m mut ContextMemo,
) -> Result<(&'m RequestContext, Option<Operation>, Option<ResourceType>), MalformedRequest> {
    let mut reader = Reader::new(bytes);
    let context = reader.context(memo)?;
    let operation = Operation::from_code(reader.u8("operation")?);
    let resource_type = ResourceType::from_code(reader.u8("resource type")?);
    reader.finish()?;
    Ok((context, operation, resource_type))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{golden, put_str};

    fn context_bytes(out: &mut Vec<u8>, user: &str) {
        context_bytes_from(out, user, &[4, 127, 0, 0, 1]);
    }

    /// A context with the client address as the layout writes it: its length (0, 4 or 16), then
    /// its bytes.
    fn context_bytes_from(out: &mut Vec<u8>, user: &str, address: &[u8]) {
        let mut context = Vec::new();
        put_str(&mut context, "User");
        put_str(&mut context, user);
        context.extend_from_slice(address);
        put_str(&mut context, "SASL_PLAINTEXT");
        put_str(&mut context, "producer-1");
        context.extend_from_slice(&0i16.to_le_bytes());
        context.extend_from_slice(&9i16.to_le_bytes());
        out.push(VERSION);
        out.extend_from_slice(&(context.len() as u32).to_le_bytes());
        out.extend_from_slice(&context);
    }

    fn request(user: &str, actions: &[([u8; 4], &str)]) -> Vec<u8> {
        let mut bytes = Vec::new();
        context_bytes(&mut bytes, user);
        bytes.extend_from_slice(&(actions.len() as u32).to_le_bytes());
        for (codes, name) in actions {
            bytes.extend_from_slice(codes);
            put_str(&mut bytes, name);
        }
        bytes
    }

    #[test]
    fn literal_is_kafkas_pattern_type_code() {
        // grantforge-kafka's codes are held to kafka-clients' own (tests/kafka_codes.rs).
        assert_eq!(LITERAL, grantforge_kafka::PatternType::Literal.code());
    }

    #[test]
    fn decodes_a_call_with_its_actions() {
        let bytes = request("alice", &[([4, 2, 3, 2], "orders"), ([99, 2, 4, 1], "pay")]);
        let mut memo = ContextMemo::default();
        memo.context.principal.name = "a previous, longer name".into();
        let mut slots = ActionSlots::default();
        let (context, actions) = decode_authorize(&bytes, &mut memo, &mut slots).unwrap();
        assert_eq!(context.principal.name, "alice");
        assert_eq!(
            context.conditions.client_address,
            Some("127.0.0.1".parse().unwrap())
        );
        assert_eq!(context.conditions.client_id, "producer-1");
        assert_eq!(context.request_version, 9);
        assert_eq!(actions.len(), 2);
        let first = &actions[0];
        assert_eq!(
            (
                first.operation,
                first.resource_type,
                first.literal,
                first.name
            ),
            (
                Some(Operation::Write),
                Some(ResourceType::Topic),
                true,
                "orders"
            )
        );
        assert!(!first.log_if_allowed && first.log_if_denied);
        let second = &actions[1];
        assert_eq!(
            (second.operation, second.literal, second.log_if_allowed),
            (None, false, true)
        );
    }

    #[test]
    fn the_memo_decodes_a_context_again_only_when_its_bytes_change() {
        let mut memo = ContextMemo::default();
        let many: Vec<([u8; 4], &str)> = (0..20).map(|_| ([4, 2, 3, 3], "orders")).collect();
        let twenty = request("alice", &many);
        let mut slots = ActionSlots::default();
        let (_, actions) = decode_authorize(&twenty, &mut memo, &mut slots).unwrap();
        assert!(actions.len() == 20 && actions.iter().all(|a| a.name == "orders"));
        assert_eq!(
            decode_authorize(
                &request("alice", &[]),
                &mut memo,
                &mut ActionSlots::default()
            )
            .unwrap()
            .0
            .principal
            .name,
            "alice"
        );
        assert_eq!(
            decode_authorize(&request("bob", &[]), &mut memo, &mut ActionSlots::default())
                .unwrap()
                .0
                .principal
                .name,
            "bob"
        );
        // A malformed context invalidates the memo; an empty one is never taken as "unchanged".
        let mut broken = request("carol", &[]);
        broken[5 + 4] = 0xff; // the first byte of "User"
        assert!(decode_authorize(&broken, &mut memo, &mut ActionSlots::default()).is_err());
        let empty = [VERSION, 0, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(
            decode_authorize(&empty, &mut memo, &mut ActionSlots::default()).err(),
            Some(MalformedRequest("context"))
        );
        assert_eq!(
            decode_authorize(
                &request("carol", &[]),
                &mut memo,
                &mut ActionSlots::default()
            )
            .unwrap()
            .0
            .principal
            .name,
            "carol"
        );
    }

    #[test]
    fn a_client_address_is_absent_ipv4_or_ipv6_and_no_other_length() {
        let address_of = |address: &[u8]| {
            let mut bytes = Vec::new();
            context_bytes_from(&mut bytes, "alice", address);
            bytes.extend_from_slice(&[4, 2]);
            decode_by_resource_type(&bytes, &mut ContextMemo::default())
                .map(|(context, ..)| context.conditions.client_address)
        };
        assert_eq!(address_of(&[0]), Ok(None), "Kafka gave no address");
        assert_eq!(
            address_of(&[4, 10, 0, 0, 1]),
            Ok(Some("10.0.0.1".parse().unwrap()))
        );
        let mut v6 = vec![16];
        v6.extend_from_slice(&"2001:db8::7".parse::<Ipv6Addr>().unwrap().octets());
        assert_eq!(address_of(&v6), Ok(Some("2001:db8::7".parse().unwrap())));
        assert_eq!(
            address_of(&[5, 10, 0, 0, 1, 2]),
            Err(MalformedRequest("client address"))
        );
    }

    #[test]
    fn a_call_of_more_than_65535_actions_is_decoded_whole() {
        let names: Vec<String> = (0..70_000).map(|i| format!("topic-{i}")).collect();
        let actions: Vec<([u8; 4], &str)> =
            names.iter().map(|n| ([3, 2, 3, 0], n.as_str())).collect();
        let bytes = request("alice", &actions);
        let mut slots = ActionSlots::default();
        let (_, decoded) =
            decode_authorize(&bytes, &mut ContextMemo::default(), &mut slots).unwrap();
        assert_eq!(decoded.len(), 70_000);
        assert_eq!(decoded[69_999].name, "topic-69999");
    }

    #[test]
    fn every_truncation_and_trailing_garbage_is_refused() {
        let mut bytes = request("alice", &[([4, 2, 3, 3], "orders")]);
        for len in 0..bytes.len() {
            assert!(
                decode_authorize(
                    &bytes[..len],
                    &mut ContextMemo::default(),
                    &mut ActionSlots::default()
                )
                .is_err(),
                "truncated at {len}"
            );
        }
        bytes.push(0);
        assert_eq!(
            decode_authorize(
                &bytes,
                &mut ContextMemo::default(),
                &mut ActionSlots::default()
            )
            .err(),
            Some(MalformedRequest("trailing bytes"))
        );
    }

    /// `bytes` with the one occurrence of `from` replaced by `to` (same length).
    fn with_defect(mut bytes: Vec<u8>, from: &[u8], to: &[u8]) -> Vec<u8> {
        assert_eq!(from.len(), to.len());
        let at: Vec<usize> = (0..=bytes.len() - from.len())
            .filter(|&i| &bytes[i..i + from.len()] == from)
            .collect();
        assert_eq!(at.len(), 1, "one occurrence of {from:?}");
        bytes[at[0]..at[0] + from.len()].copy_from_slice(to);
        bytes
    }

    fn refusal(bytes: &[u8]) -> Option<MalformedRequest> {
        decode_authorize(
            bytes,
            &mut ContextMemo::default(),
            &mut ActionSlots::default(),
        )
        .err()
    }

    #[test]
    fn invalid_utf8_and_bad_versions_are_refused() {
        // Complete, well-formed requests but for the one defect each names: a check that is
        // removed lets the request through instead of failing later as truncated.
        let good = request("zz", &[([4, 2, 3, 3], "yy")]);
        assert!(refusal(&good).is_none());
        let invalid = [0xff, 0xfe];
        assert_eq!(
            refusal(&with_defect(good.clone(), b"zz", &invalid)),
            Some(MalformedRequest("principal name"))
        );
        assert_eq!(
            refusal(&with_defect(good.clone(), b"yy", &invalid)),
            Some(MalformedRequest("resource name"))
        );
        let mut other_version = good.clone();
        other_version[0] = VERSION + 1;
        assert_eq!(
            refusal(&other_version),
            Some(MalformedRequest(
                "layout version: the JAR's Java and native parts differ"
            ))
        );
        let mut by_type = Vec::new();
        context_bytes(&mut by_type, "zz");
        by_type.extend_from_slice(&[4, 2]);
        let mut memo = ContextMemo::default();
        assert!(decode_by_resource_type(&by_type, &mut memo).is_ok());
        by_type[0] = VERSION - 1;
        assert_eq!(
            decode_by_resource_type(&by_type, &mut memo).err(),
            Some(MalformedRequest(
                "layout version: the JAR's Java and native parts differ"
            ))
        );
    }

    /// The fixed example of `RequestEncoderGoldenTest.java`, in the layout above: User:alice from
    /// 192.0.2.7 on SASL_SSL, client `producer-1`, PRODUCE v11.
    fn example_context(out: &mut Vec<u8>) {
        let mut context = Vec::new();
        put_str(&mut context, "User");
        put_str(&mut context, "alice");
        context.extend_from_slice(&[4, 192, 0, 2, 7]);
        put_str(&mut context, "SASL_SSL");
        put_str(&mut context, "producer-1");
        context.extend_from_slice(&0i16.to_le_bytes());
        context.extend_from_slice(&11i16.to_le_bytes());
        out.push(VERSION);
        out.extend_from_slice(&(context.len() as u32).to_le_bytes());
        out.extend_from_slice(&context);
    }

    fn assert_example_context(context: &RequestContext) {
        assert_eq!(
            (
                context.principal.principal_type.as_str(),
                context.principal.name.as_str()
            ),
            ("User", "alice")
        );
        assert_eq!(
            context.conditions.client_address,
            Some("192.0.2.7".parse().unwrap())
        );
        assert_eq!(
            (
                context.conditions.listener.as_str(),
                context.conditions.client_id.as_str()
            ),
            ("SASL_SSL", "producer-1")
        );
        assert_eq!((context.request_type, context.request_version), (0, 11));
    }

    #[test]
    fn golden_request_is_decoded_as_the_java_example() {
        // WRITE topic LITERAL "orders" (logIfDenied), DESCRIBE group PREFIXED "pay-" (both flags),
        // READ topic LITERAL "café" (no flag; not ASCII).
        let mut bytes = Vec::new();
        example_context(&mut bytes);
        let actions: [([u8; 4], &str); 3] = [
            ([4, 2, 3, 2], "orders"),
            ([8, 3, 4, 3], "pay-"),
            ([3, 2, 3, 0], "café"),
        ];
        bytes.extend_from_slice(&(actions.len() as u32).to_le_bytes());
        for (codes, name) in actions {
            bytes.extend_from_slice(&codes);
            put_str(&mut bytes, name);
        }
        golden::check("request.bin", &bytes);

        let golden = golden::read("request.bin");
        let (mut memo, mut slots) = (ContextMemo::default(), ActionSlots::default());
        let (context, actions) = decode_authorize(&golden, &mut memo, &mut slots).unwrap();
        assert_example_context(context);
        let decoded: Vec<_> = actions
            .iter()
            .map(|a| {
                (
                    a.operation,
                    a.resource_type,
                    a.literal,
                    a.name,
                    a.log_if_allowed,
                    a.log_if_denied,
                )
            })
            .collect();
        assert_eq!(
            decoded,
            [
                (
                    Some(Operation::Write),
                    Some(ResourceType::Topic),
                    true,
                    "orders",
                    false,
                    true
                ),
                (
                    Some(Operation::Describe),
                    Some(ResourceType::Group),
                    false,
                    "pay-",
                    true,
                    true
                ),
                (
                    Some(Operation::Read),
                    Some(ResourceType::Topic),
                    true,
                    "café",
                    false,
                    false
                ),
            ]
        );
    }

    #[test]
    fn golden_request_by_resource_type_is_decoded_as_the_java_example() {
        // WRITE on some TOPIC (what Kafka asks for idempotent producers).
        let mut bytes = Vec::new();
        example_context(&mut bytes);
        bytes.extend_from_slice(&[4, 2]);
        golden::check("request-by-resource-type.bin", &bytes);

        let golden = golden::read("request-by-resource-type.bin");
        let mut memo = ContextMemo::default();
        let (context, operation, resource_type) =
            decode_by_resource_type(&golden, &mut memo).unwrap();
        assert_example_context(context);
        assert_eq!(
            (operation, resource_type),
            (Some(Operation::Write), Some(ResourceType::Topic))
        );
    }
}
