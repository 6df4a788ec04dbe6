//! The payload of `compare` and `describeKafkaBasis` (shadow and compare modes), which
//! `RequestEncoder.encodeComparison` writes into the thread's direct buffer:
//!
//! ```text
//! buffer  := request kafka{n} flags{n}
//! request := the `authorize` request of n actions (request_encoder.rs), requestLength bytes
//! kafka   := u8 (1: Kafka's ACLs allow action i, 0: they refuse it)
//! flags   := u8, written by `compare`: bit 0 GrantForge allows action i, bit 1 the answers
//!            differ, bit 2 the shim should tell the Kafka ACL behind Kafka's answer
//! ```
//!
//! `compare` returns 1 + the number of actions whose bit 2 is set, and 0 when it failed (the
//! default of every export): flags are then not written, and the shim neither reads them nor
//! lets them decide anything.
//!
//! Golden bytes: `tests/fixtures/jni/comparison.bin`, the golden request (`request.bin`) with
//! Kafka's answers and the flags after it, which `RequestEncoderGoldenTest.java` writes (up to
//! the flags) and reads (the flags).

use grantforge_agent::comparison::{Compared, Decider};

use crate::direct_buffer::DirectBuffer;
use crate::export::BridgeError;
use crate::wire::MalformedRequest;

pub(crate) const GRANTFORGE_ALLOWS: u8 = 1;
pub(crate) const DIFFERS: u8 = 2;
pub(crate) const WANTS_KAFKA_BASIS: u8 = 4;

/// The decider the shim names: 0 Kafka (shadow mode), 1 GrantForge (compare mode).
pub(crate) fn decider(code: u8) -> Result<Decider, MalformedRequest> {
    match code {
        0 => Ok(Decider::Kafka),
        1 => Ok(Decider::GrantForge),
        _ => Err(MalformedRequest("decider")),
    }
}

/// Kafka's answers to the actions, after the request, into `kafka` (one per action).
pub(crate) fn read_kafka_answers(
    buffer: &DirectBuffer,
    request_length: usize,
    kafka: &mut [bool],
) -> Result<(), BridgeError> {
    let answers = buffer.tail(request_length, kafka.len())?;
    for (answer, byte) in kafka.iter_mut().zip(answers) {
        *answer = match byte {
            0 => false,
            1 => true,
            _ => return Err(BridgeError::Malformed(MalformedRequest("Kafka's answer"))),
        };
    }
    Ok(())
}

/// Writes each action's flags at `at`; returns how many ask for the Kafka ACL.
pub(crate) fn write_flags(
    buffer: &mut DirectBuffer,
    at: usize,
    compared: &[Compared],
) -> Result<usize, BridgeError> {
    let mut flags = [0u8; 64];
    let mut wanted = 0;
    for (chunk_at, chunk) in compared.chunks(flags.len()).enumerate() {
        for (flag, one) in flags.iter_mut().zip(chunk) {
            *flag = flags_of(one);
            wanted += usize::from(one.wants_kafka_basis);
        }
        buffer.write_at(at + chunk_at * flags.len(), &flags[..chunk.len()])?;
    }
    Ok(wanted)
}

/// One action's flags.
fn flags_of(compared: &Compared) -> u8 {
    (if compared.grantforge_allowed {
        GRANTFORGE_ALLOWS
    } else {
        0
    }) | (if compared.disagrees { DIFFERS } else { 0 })
        | (if compared.wants_kafka_basis {
            WANTS_KAFKA_BASIS
        } else {
            0
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::golden;

    /// Kafka allows actions 0 and 2 of the golden request and refuses action 1; GrantForge
    /// allows 0 (an agreement), allows 1 (a new disagreement: its ACL wanted) and refuses 2 (a
    /// disagreement already told).
    const KAFKA: [u8; 3] = [1, 0, 1];
    const COMPARED: [Compared; 3] = [
        Compared {
            grantforge_allowed: true,
            disagrees: false,
            wants_kafka_basis: false,
        },
        Compared {
            grantforge_allowed: true,
            disagrees: true,
            wants_kafka_basis: true,
        },
        Compared {
            grantforge_allowed: false,
            disagrees: true,
            wants_kafka_basis: false,
        },
    ];

    #[test]
    fn golden_comparison_is_the_java_example_with_kafkas_answers_and_the_flags() {
        let request = golden::read("request.bin");
        let mut bytes = request.clone();
        bytes.extend_from_slice(&KAFKA);
        bytes.extend_from_slice(&[0; 3]);
        let (address, capacity) = (bytes.as_mut_ptr() as i64, bytes.len() as i32);
        let mut buffer = DirectBuffer::new(address, capacity, request.len() as i32).unwrap();
        let mut kafka = [false; 3];
        read_kafka_answers(&buffer, request.len(), &mut kafka).unwrap();
        assert_eq!(kafka, [true, false, true]);
        assert_eq!(
            write_flags(&mut buffer, request.len() + 3, &COMPARED).unwrap(),
            1
        );
        assert_eq!(&bytes[request.len() + 3..], [1, 1 | 2 | 4, 2]);
        golden::check("comparison.bin", &bytes);
    }
}
