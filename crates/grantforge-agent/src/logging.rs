//! Rust log records, queued for the JVM to drain.
//!
//! Kafka operators read one log: log4j's. Rust threads must never call into Java (no attached
//! threads, no logging on a request thread), so every `tracing` event lands in a bounded queue
//! and the Java shim drains it from its own daemon thread into SLF4J. When the queue is full the
//! newest records are dropped and counted; the count is reported with the next drained record.
//! Nothing is printed to stdout or stderr, panics included.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;

use parking_lot::Mutex;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// The logger of records the native side writes about itself (panics, dropped records).
const NATIVE_LOGGER: &str = "org.devlive.grantforge.kafka.native";

/// The name of each agent's own thread (policy rounds and audit delivery).
pub const AGENT_THREAD: &str = "grantforge-agent";

/// At most this many records wait for the JVM; beyond it records are dropped and counted.
const QUEUE_CAPACITY: usize = 10_000;

/// A record's message is cut to this many bytes: messages quote names and values a client or a
/// snapshot chose, and the queue must stay bounded in bytes (at most about 80 MiB when full).
pub const MESSAGE_MAX_BYTES: usize = 8 * 1024;

/// One log record for SLF4J.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogRecord {
    pub level: LogLevel,
    /// The SLF4J logger name: the `tracing` target (`grantforge.audit` for audit lines, the Rust
    /// module path made Java-like otherwise).
    pub logger: String,
    pub message: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    Error = 1,
    Warn = 2,
    Info = 3,
    Debug = 4,
    Trace = 5,
}

impl From<&Level> for LogLevel {
    fn from(level: &Level) -> LogLevel {
        match *level {
            Level::ERROR => LogLevel::Error,
            Level::WARN => LogLevel::Warn,
            Level::INFO => LogLevel::Info,
            Level::DEBUG => LogLevel::Debug,
            Level::TRACE => LogLevel::Trace,
        }
    }
}

static QUEUE: Mutex<VecDeque<LogRecord>> = Mutex::new(VecDeque::new());
static DROPPED: AtomicU64 = AtomicU64::new(0);
static INSTALL: Once = Once::new();

/// Installs the queueing subscriber and the panic hook, once per process (idempotent).
pub fn install() {
    INSTALL.call_once(|| {
        // Another subscriber may already be set (a test harness): then records go there.
        let _ = tracing::subscriber::set_global_default(QueueSubscriber);
        // The hook before ours still runs (after the record is queued): in a broker it prints the
        // panic to the console, in a test it is how a failed assertion's message is shown.
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if std::thread::current().name() == Some(AGENT_THREAD) {
                // The agent's thread catches its panics and logs each distinct one once.
                return;
            }
            let location = info
                .location()
                .map(|l| format!(" at {}:{}", l.file(), l.line()))
                .unwrap_or_default();
            let payload = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".to_string());
            push(LogRecord {
                level: LogLevel::Error,
                logger: NATIVE_LOGGER.to_string(),
                message: format!("internal error{location}: {payload}; the request was refused"),
            });
            previous(info);
        }));
    });
}

/// Takes every queued record; a drop count, if any, comes first as a warning.
pub fn drain() -> Vec<LogRecord> {
    let mut records: Vec<LogRecord> = Vec::new();
    let dropped = DROPPED.swap(0, Ordering::Relaxed);
    if dropped > 0 {
        records.push(LogRecord {
            level: LogLevel::Warn,
            logger: NATIVE_LOGGER.to_string(),
            message: format!(
                "{dropped} log records were dropped because the JVM did not drain them in time"
            ),
        });
    }
    records.extend(QUEUE.lock().drain(..));
    records
}

fn push(mut record: LogRecord) {
    escape_line_breakers(&mut record.message);
    cut_to_bound(&mut record.message);
    let mut queue = QUEUE.lock();
    if queue.len() >= QUEUE_CAPACITY {
        DROPPED.fetch_add(1, Ordering::Relaxed);
    } else {
        queue.push_back(record);
    }
}

/// Whether `c` can end a line or make one read otherwise in a log file or a terminal: control
/// characters (CR, LF, ESC …), Unicode's line and paragraph separators, and the bidirectional
/// overrides and isolates that reorder what follows them.
fn breaks_lines(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Escapes every character that [`breaks_lines`] as Rust writes it (`\n`, `\u{1b}`), in place.
/// Messages quote names a client chose (group ids, client ids, principals): one record must stay
/// one line that no client can extend or forge. Free for a message without such characters.
fn escape_line_breakers(message: &mut String) {
    if !message.contains(breaks_lines) {
        return;
    }
    let mut escaped = String::with_capacity(message.len() + 16);
    for c in message.chars() {
        if breaks_lines(c) {
            escaped.extend(c.escape_default());
        } else {
            escaped.push(c);
        }
    }
    *message = escaped;
}

/// Cuts a message longer than [`MESSAGE_MAX_BYTES`] at a character boundary, saying how much went.
fn cut_to_bound(message: &mut String) {
    if message.len() <= MESSAGE_MAX_BYTES {
        return;
    }
    let mut end = MESSAGE_MAX_BYTES;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    let cut = message.len() - end;
    message.truncate(end);
    message.push_str(&format!("… ({cut} more bytes not logged)"));
    message.shrink_to_fit();
}

/// `grantforge_agent::source` → `org.devlive.grantforge.agent.source`, so operators configure
/// Rust loggers like the Java ones; explicit targets such as `grantforge.audit` stay as they are.
fn logger_name(target: &str) -> String {
    match target.strip_prefix("grantforge_") {
        Some(rest) => format!("org.devlive.grantforge.{}", rest.replace("::", ".")),
        None => target.replace("::", "."),
    }
}

/// Minimal `tracing` subscriber: events only (spans are not used), DEBUG and above.
struct QueueSubscriber;

impl Subscriber for QueueSubscriber {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        *metadata.level() <= Level::DEBUG
    }

    fn new_span(&self, _span: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _span: &Id, _values: &Record<'_>) {}

    fn record_follows_from(&self, _span: &Id, _follows: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut message = MessageVisitor::default();
        event.record(&mut message);
        let metadata = event.metadata();
        push(LogRecord {
            level: LogLevel::from(metadata.level()),
            logger: logger_name(metadata.target()),
            message: message.0,
        });
    }

    fn enter(&self, _span: &Id) {}

    fn exit(&self, _span: &Id) {}
}

#[derive(Default)]
struct MessageVisitor(String);

impl Visit for MessageVisitor {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.0, "{value:?}");
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0.push_str(value);
        } else {
            let _ = write!(self.0, " {}={value}", field.name());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_targets_become_java_logger_names() {
        assert_eq!(
            logger_name("grantforge_agent::source"),
            "org.devlive.grantforge.agent.source"
        );
        assert_eq!(logger_name("grantforge.audit"), "grantforge.audit");
    }

    /// The queue is the process's: a test that drains it must not take another's records.
    static DRAINING: parking_lot::Mutex<()> = parking_lot::Mutex::new(());

    #[test]
    fn events_and_panics_are_queued_not_printed() {
        let _alone = DRAINING.lock();
        install();
        tracing::warn!(target: "grantforge.test", "hello {}", 42);
        let _ = std::panic::catch_unwind(|| panic!("boom"));
        let records = drain();
        assert!(records.iter().any(|r| r.logger == "grantforge.test"
            && r.message == "hello 42"
            && r.level == LogLevel::Warn));
        assert!(records
            .iter()
            .any(|r| r.level == LogLevel::Error && r.message.contains("boom")));
    }

    #[test]
    fn no_name_can_break_a_record_into_lines_or_reorder_it() {
        let forged = "g\r\nINFO [grantforge.audit] Principal = User:admin is Allowed\u{1b}[2K\u{2028}\u{202e}x";
        let mut message = format!("group {forged} refused");
        escape_line_breakers(&mut message);
        assert_eq!(
            message,
            "group g\\r\\nINFO [grantforge.audit] Principal = User:admin is Allowed\\u{1b}[2K\\u{2028}\\u{202e}x refused"
        );
        let mut plain = "Zoë, a=b *".to_string();
        escape_line_breakers(&mut plain);
        assert_eq!(
            plain, "Zoë, a=b *",
            "printable text, non-ASCII included, stays as it is"
        );
    }

    #[test]
    fn every_record_is_one_line() {
        let _alone = DRAINING.lock();
        install();
        tracing::info!(target: "grantforge.test.lines", "a\nb");
        let records = drain();
        assert!(records
            .iter()
            .any(|r| r.logger == "grantforge.test.lines" && r.message == "a\\nb"));
    }

    #[test]
    fn a_long_message_is_cut_to_the_bound_at_a_character_boundary() {
        let mut message = format!("a{}", "é".repeat(MESSAGE_MAX_BYTES));
        cut_to_bound(&mut message);
        assert!(message.len() < MESSAGE_MAX_BYTES + 64, "{}", message.len());
        assert!(message.ends_with(&format!(
            "… ({} more bytes not logged)",
            2 * MESSAGE_MAX_BYTES + 1 - (MESSAGE_MAX_BYTES - 1)
        )));
        let mut short = "short".to_string();
        cut_to_bound(&mut short);
        assert_eq!(short, "short");
    }
}
