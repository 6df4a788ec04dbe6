//! The `explain` payloads: the request `ExplainCodec.java` writes for `java -jar <agent jar>
//! explain ...` and for `migrate-acls --verify`'s explanations, and the answer it reads.
//!
//! All integers little-endian; a string is a u32 byte length followed by UTF-8 bytes (`wire.rs`).
//!
//! ```text
//! request := u32 n  str argument{n}  str stdin       (an argument may be empty: `--client-id ""`;
//!                                                     stdin's bytes that are not UTF-8 are replaced)
//! answer  := u8 exitCode  str output                 (0 answered, 1 bad input, 2 bad usage)
//! ```
//!
//! Golden bytes: `tests/fixtures/jni/explain-request.bin` (which `ExplainCodecGoldenTest.java`
//! writes identically) and `tests/fixtures/jni/explain-answer.bin` (which it decodes).

use crate::wire::{put_str, MalformedRequest, Reader};

/// The arguments and standard input of one `explain` run.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ExplainRequest {
    pub args: Vec<String>,
    pub stdin: String,
}

pub(crate) fn decode_request(bytes: &[u8]) -> Result<ExplainRequest, MalformedRequest> {
    let mut reader = Reader::new(bytes);
    let count = reader.u32("explain argument count")?;
    let mut args = Vec::new();
    for _ in 0..count {
        args.push(reader.str("explain argument")?.to_string());
    }
    // Standard input is what the operator piped: bytes that are not UTF-8 are replaced, not refused.
    let length = reader.u32("explain standard input length")? as usize;
    let stdin =
        String::from_utf8_lossy(reader.take(length, "explain standard input")?).into_owned();
    reader.finish()?;
    Ok(ExplainRequest { args, stdin })
}

pub(crate) fn encode_answer(exit_code: i32, output: &str) -> Vec<u8> {
    let mut out = vec![u8::try_from(exit_code).unwrap_or(u8::MAX)];
    put_str(&mut out, output);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::golden;

    fn example() -> ExplainRequest {
        ExplainRequest {
            args: [
                "--snapshot",
                "e2e.json",
                "--principal",
                "User:alice",
                "--client-id",
                "",
                "--operation",
                "READ",
                "--topic",
                "café",
            ]
            .map(String::from)
            .to_vec(),
            stdin: "--principal User:bob --operation WRITE --topic orders\n".into(),
        }
    }

    fn encode_request(request: &ExplainRequest) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&(request.args.len() as u32).to_le_bytes());
        for arg in &request.args {
            put_str(&mut out, arg);
        }
        put_str(&mut out, &request.stdin);
        out
    }

    #[test]
    fn golden_request_decodes_to_the_example_with_its_empty_argument() {
        golden::check("explain-request.bin", &encode_request(&example()));
        let decoded = decode_request(&golden::read("explain-request.bin")).unwrap();
        assert_eq!(decoded, example());
        assert_eq!(decoded.args[5], "", "`--client-id \"\"` keeps its place");
    }

    #[test]
    fn golden_answer_is_the_one_java_decodes() {
        golden::check(
            "explain-answer.bin",
            &encode_answer(2, "explain: name the operation\nusage: …\n"),
        );
    }

    #[test]
    fn a_truncated_or_overlong_request_is_malformed() {
        let bytes = encode_request(&example());
        assert!(decode_request(&bytes[..bytes.len() - 1]).is_err());
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode_request(&longer).is_err());
    }
}
