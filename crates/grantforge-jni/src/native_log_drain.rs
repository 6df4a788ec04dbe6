//! The log records payload: the answer of `drainLogs`, read by `NativeLogDrain.java` (which logs each
//! record through SLF4J from a daemon thread of its own: Rust never calls Java).
//!
//! All integers little-endian; a string is a u32 byte length followed by UTF-8 bytes (`wire.rs`).
//!
//! ```text
//! records := record*                                  until the end; empty when none is queued
//! record  := u8 level  str logger  str message        (level: 1 error, 2 warn, 3 info, 4 debug, 5 trace)
//! ```
//!
//! Golden bytes: `tests/fixtures/jni/log-records.bin`, which `NativeLogDrainGoldenTest.java` decodes.

use grantforge_agent::logging::{LogLevel, LogRecord};

use crate::wire::put_str;

// The level codes `NativeLogDrain.java` maps to SLF4J levels.
const _: () = assert!(
    LogLevel::Error as u8 == 1
        && LogLevel::Warn as u8 == 2
        && LogLevel::Info as u8 == 3
        && LogLevel::Debug as u8 == 4
        && LogLevel::Trace as u8 == 5
);

pub(crate) fn encode(records: &[LogRecord]) -> Vec<u8> {
    let mut out = Vec::new();
    for record in records {
        out.push(record.level as u8);
        put_str(&mut out, &record.logger);
        put_str(&mut out, &record.message);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::golden;

    #[test]
    fn golden_log_records_are_the_example_the_java_test_decodes() {
        let record = |level, logger: &str, message: &str| LogRecord {
            level,
            logger: logger.into(),
            message: message.into(),
        };
        let records = [
            record(
                LogLevel::Error,
                "org.devlive.grantforge.kafka.native.server",
                "the GrantForge server cannot be reached",
            ),
            record(
                LogLevel::Warn,
                "org.devlive.grantforge.kafka.native.agent",
                "policy version 7: policy 3: ¿ip-range?",
            ),
            record(
                LogLevel::Info,
                "grantforge.audit",
                "alice WRITE topic orders ALLOWED",
            ),
            record(
                LogLevel::Debug,
                "org.devlive.grantforge.kafka.native.jni",
                "",
            ),
            record(
                LogLevel::Trace,
                "org.devlive.grantforge.kafka.native",
                "trace",
            ),
        ];
        golden::check("log-records.bin", &encode(&records));
        assert!(encode(&[]).is_empty());
    }
}
