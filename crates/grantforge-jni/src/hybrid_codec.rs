//! The payload of `hybrid` and `settleByAcls` (hybrid mode), which `RequestEncoder.encodeHybrid`
//! writes into the thread's direct buffer:
//!
//! ```text
//! buffer  := request verdict{n} acl*
//! request := the `authorize` request of n actions (request_encoder.rs), requestLength bytes
//! verdict := u8, written by `hybrid`: 0 GrantForge refuses action i, 1 GrantForge allows it,
//!            2 it is left to Kafka's ACLs; before `settleByAcls` the shim writes each 2 over
//!            with Kafka's answer: 3 the ACLs refuse, 4 they allow
//! acl     := str, for each action answered 3 or 4, in order: the ACL behind Kafka's answer in
//!            words (empty where Kafka does not ask to report the access)
//! ```
//!
//! `hybrid` returns 1 + the number of actions left to Kafka's ACLs, and 0 when it failed (the
//! default of every export): the verdicts are then not written, and the shim refuses every
//! action. `settleByAcls` is told the length of what follows the request.
//!
//! Golden bytes: `tests/fixtures/jni/hybrid.bin`, the golden request (`request.bin`) with the
//! verdicts and ACLs after it, which `RequestEncoderGoldenTest.java` reads and writes too.

use crate::export::BridgeError;
use crate::wire::{MalformedRequest, Reader};

pub(crate) const REFUSED: u8 = 0;
pub(crate) const ALLOWED: u8 = 1;
pub(crate) const LEFT_TO_KAFKA: u8 = 2;
pub(crate) const ACLS_REFUSE: u8 = 3;
pub(crate) const ACLS_ALLOW: u8 = 4;

/// `hybrid`'s verdict on one action.
pub(crate) fn verdict(allowed: bool, left: bool) -> u8 {
    match (left, allowed) {
        (true, _) => LEFT_TO_KAFKA,
        (false, true) => ALLOWED,
        (false, false) => REFUSED,
    }
}

/// What `settleByAcls` reads after the request: which actions Kafka's ACLs answered, their
/// answers, and the ACL behind each (empty for the others).
pub(crate) fn read_settled<'a>(
    tail: &'a [u8],
    left: &mut [bool],
    kafka: &mut [bool],
    acls: &mut Vec<&'a str>,
) -> Result<(), BridgeError> {
    let n = left.len();
    let verdicts = tail
        .get(..n)
        .ok_or(BridgeError::Malformed(MalformedRequest("verdicts")))?;
    let mut reader = Reader::new(&tail[n..]);
    acls.clear();
    for (i, verdict) in verdicts.iter().enumerate() {
        let answered = match *verdict {
            ACLS_REFUSE => Some(false),
            ACLS_ALLOW => Some(true),
            REFUSED | ALLOWED => None,
            _ => return Err(BridgeError::Malformed(MalformedRequest("verdict"))),
        };
        left[i] = answered.is_some();
        kafka[i] = answered.unwrap_or(false);
        acls.push(match answered {
            Some(_) => reader.str("Kafka ACL")?,
            None => "",
        });
    }
    reader.finish()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::golden;

    /// GrantForge allows action 0 of the golden request; actions 1 and 2 are left to Kafka's ACLs,
    /// which allow 1 (by the ACL below, reported) and refuse 2 (a filter question: no ACL told).
    const ACL: &str = "TOPIC:LITERAL:orders User:alice from * ALLOW WRITE";

    fn settled(request: &[u8]) -> Vec<u8> {
        let mut bytes = request.to_vec();
        bytes.extend_from_slice(&[ALLOWED, ACLS_ALLOW, ACLS_REFUSE]);
        for acl in [ACL, ""] {
            bytes.extend_from_slice(&(acl.len() as u32).to_le_bytes());
            bytes.extend_from_slice(acl.as_bytes());
        }
        bytes
    }

    #[test]
    fn golden_hybrid_is_the_java_example_with_the_verdicts_and_kafkas_acls() {
        let request = golden::read("request.bin");
        let bytes = settled(&request);
        let (mut left, mut kafka, mut acls) = ([false; 3], [false; 3], Vec::new());
        read_settled(&bytes[request.len()..], &mut left, &mut kafka, &mut acls).unwrap();
        assert_eq!(left, [false, true, true]);
        assert_eq!(kafka, [false, true, false]);
        assert_eq!(acls, ["", ACL, ""]);
        golden::check("hybrid.bin", &bytes);
    }

    #[test]
    fn a_verdict_the_shim_left_unanswered_is_malformed() {
        let tail = [ALLOWED, LEFT_TO_KAFKA];
        let (mut left, mut kafka, mut acls) = ([false; 2], [false; 2], Vec::new());
        assert!(read_settled(&tail, &mut left, &mut kafka, &mut acls).is_err());
    }

    #[test]
    fn hybrids_verdicts_say_left_before_allowed() {
        assert_eq!(verdict(true, true), LEFT_TO_KAFKA);
        assert_eq!(verdict(false, true), LEFT_TO_KAFKA);
        assert_eq!(verdict(true, false), ALLOWED);
        assert_eq!(verdict(false, false), REFUSED);
    }
}
