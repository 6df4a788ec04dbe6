//! The settings payload: what `SettingsEncoder.java` sends to `open` (the keys `configure` received
//! that the agent reads), and the answer `open` gives (read by `GrantForgeKafkaAuthorizer.configure`).
//!
//! All integers little-endian; a string is a u32 byte length followed by UTF-8 bytes (`wire.rs`).
//!
//! ```text
//! settings := (str key  str value)*                  until the end; a key sent twice: the last wins
//! answer   := u8 0  i64 handle  i64 startTimeoutMs   opened (startTimeoutMs: `grantforge.start.timeout.ms`
//!                                                    as the agent's configuration parsed it)
//!           | u8 1  UTF-8 message                    refused: the message names the key and the fix
//! ```
//!
//! Golden bytes: `tests/fixtures/jni/settings.bin`, which `SettingsEncoderGoldenTest.java` holds
//! `SettingsEncoder` to.

use std::collections::BTreeMap;
use std::time::Duration;

use jni::sys::jlong;

use crate::wire::{MalformedRequest, Reader};

/// The settings `configure` received: a sequence of (key, value) strings.
pub fn decode_settings(bytes: &[u8]) -> Result<BTreeMap<String, String>, MalformedRequest> {
    let mut reader = Reader::new(bytes);
    let mut settings = BTreeMap::new();
    while !reader.is_at_end() {
        let key = reader.str("setting key")?;
        let value = reader.str("setting value")?;
        settings.insert(key.to_string(), value.to_string());
    }
    Ok(settings)
}

/// Whether the agent would accept these settings, as `open` reads them, without opening it: the
/// message `open` would refuse them with.
pub(crate) fn check_settings(bytes: &[u8]) -> Result<(), String> {
    let settings = decode_settings(bytes).map_err(|e| e.to_string())?;
    grantforge_agent::AgentConfig::from_settings(&settings)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// `open`'s answer: the handle and the start timeout, or why the agent cannot start.
pub(crate) fn encode_answer(opened: Result<(jlong, Duration), String>) -> Vec<u8> {
    match opened {
        Ok((handle, start_timeout)) => {
            let mut answer = vec![0u8];
            answer.extend_from_slice(&handle.to_le_bytes());
            answer.extend_from_slice(&(start_timeout.as_millis() as i64).to_le_bytes());
            answer
        }
        Err(message) => {
            let mut answer = vec![1u8];
            answer.extend_from_slice(message.as_bytes());
            answer
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{golden, put_str};

    #[test]
    fn checked_settings_answer_as_open_would_without_opening() {
        let encode = |pairs: &[(&str, &str)]| {
            let mut bytes = Vec::new();
            for (key, value) in pairs {
                put_str(&mut bytes, key);
                put_str(&mut bytes, value);
            }
            bytes
        };
        let commas = check_settings(&encode(&[
            ("grantforge.policy.file", "/nowhere/policies.json"),
            ("super.users", "User:admin,User:kafka"),
        ]))
        .unwrap_err();
        assert!(
            commas.starts_with("super.users: ")
                && commas.contains("super.users=User:admin;User:kafka"),
            "{commas}"
        );
        assert_eq!(
            check_settings(&encode(&[(
                "grantforge.policy.file",
                "/nowhere/policies.json"
            )])),
            Ok(()),
            "the file is read when the agent opens, not by the check"
        );
    }

    #[test]
    fn settings_round_trip_and_truncation_is_refused() {
        let mut bytes = Vec::new();
        put_str(&mut bytes, "grantforge.policy.file");
        put_str(&mut bytes, "/tmp/p.json");
        let settings = decode_settings(&bytes).unwrap();
        assert_eq!(
            settings.get("grantforge.policy.file").map(String::as_str),
            Some("/tmp/p.json")
        );
        assert!(decode_settings(&bytes[..bytes.len() - 1]).is_err());
    }

    /// The fixed example of `SettingsEncoderGoldenTest.java`, in key order (the shim sends a sorted map).
    const EXAMPLE: [(&str, &str); 4] = [
        ("grantforge.instance", "broker-1 (zone é)"),
        ("grantforge.policy.file", "/etc/grantforge/policies.json"),
        ("grantforge.start.timeout.ms", ""),
        ("super.users", "User:admin;User:ops"),
    ];

    #[test]
    fn golden_settings_are_decoded_as_the_java_example() {
        let mut bytes = Vec::new();
        for (key, value) in EXAMPLE {
            put_str(&mut bytes, key);
            put_str(&mut bytes, value);
        }
        golden::check("settings.bin", &bytes);

        let settings = decode_settings(&golden::read("settings.bin")).unwrap();
        let decoded: Vec<(&str, &str)> = settings
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(decoded, EXAMPLE);
    }

    #[test]
    fn the_answer_is_the_handle_and_timeout_or_the_message() {
        let opened = encode_answer(Ok((0x0102_0304_0506_0708, Duration::from_millis(4500))));
        assert_eq!(
            opened.len(),
            17,
            "GrantForgeKafkaAuthorizer.configure expects 17 bytes"
        );
        assert_eq!(opened[0], 0);
        assert_eq!(
            i64::from_le_bytes(opened[1..9].try_into().unwrap()),
            0x0102_0304_0506_0708
        );
        assert_eq!(i64::from_le_bytes(opened[9..17].try_into().unwrap()), 4500);
        assert_eq!(
            encode_answer(Err("grantforge.policy.file: missing".into())),
            b"\x01grantforge.policy.file: missing"
        );
    }
}
