//! Request body validation as the real server's records and Bean Validation annotations do it.
//!
//! Jackson reads the body first: a malformed document or a value of the wrong kind (an object where a string
//! belongs, an unknown enum constant, an unparsable instant) is "unreadable" (400 without field errors). Then
//! Bean Validation checks the constraints and reports every violation as a field error (400 with `errors`).
//! Sizes count UTF-16 code units, as Java strings do. Unknown fields are ignored.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::time::{parse_instant, Instant};

/// One Bean Validation violation.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub(crate) struct FieldError {
    pub field: String,
    pub message: String,
}

/// Why a body was refused.
#[derive(Debug)]
pub(crate) enum Invalid {
    /// Jackson could not read it (malformed JSON or a value of the wrong type); the text says what.
    Unreadable(String),
    /// Constraint violations.
    Fields(Vec<FieldError>),
}

/// Maximum number of events in one batch (`AccessAudit.MAX_BATCH`).
pub(crate) const MAX_BATCH: usize = 1000;

fn utf16_len(s: &str) -> usize {
    s.encode_utf16().count()
}

/// Hibernate's `@NotBlank`: null, or only characters up to U+0020 (`String.trim()`).
fn blank(value: Option<&str>) -> bool {
    value.is_none_or(|s| s.chars().all(|c| c <= ' '))
}

struct Checker {
    errors: Vec<FieldError>,
}

impl Checker {
    fn add(&mut self, field: &str, message: String) {
        self.errors.push(FieldError {
            field: field.to_string(),
            message,
        });
    }

    fn not_blank(&mut self, field: &str, value: Option<&str>) {
        if blank(value) {
            self.add(field, "must not be blank".into());
        }
    }

    fn size(&mut self, field: &str, value: Option<&str>, max: usize) {
        if value.is_some_and(|s| utf16_len(s) > max) {
            self.add(field, format!("size must be between 0 and {max}"));
        }
    }

    /// `@Pattern(regexp = "\\d{1,19}")` on the newest server's `policyId` (a `String`: its
    /// time-ordered ids); null passes, as with every `@Pattern`, an empty or blank string does not.
    fn policy_id(&mut self, field: &str, value: Option<&str>) {
        let digits = |s: &str| (1..=19).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit());
        if value.is_some_and(|s| !digits(s)) {
            self.add(field, "must match \"\\d{1,19}\"".into());
        }
    }

    fn not_null<T>(&mut self, field: &str, value: &Option<T>) {
        if value.is_none() {
            self.add(field, "must not be null".into());
        }
    }
}

fn object<'a>(value: &'a Value, what: &str) -> Result<&'a Map<String, Value>, Invalid> {
    value
        .as_object()
        .ok_or_else(|| Invalid::Unreadable(format!("{what} is not a JSON object")))
}

/// A `String` property: Jackson coerces numbers and booleans to their text and refuses objects and arrays.
fn text(obj: &Map<String, Value>, key: &str, path: &str) -> Result<Option<String>, Invalid> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(Value::Number(n)) => Ok(Some(n.to_string())),
        Some(Value::Bool(b)) => Ok(Some(b.to_string())),
        Some(_) => Err(Invalid::Unreadable(format!(
            "{path}{key}: a string is expected"
        ))),
    }
}

/// A `Long` property: integers, integral strings (scalar coercion), `""` as null; others are unreadable.
fn long(obj: &Map<String, Value>, key: &str, path: &str) -> Result<Option<i64>, Invalid> {
    let bad = || Invalid::Unreadable(format!("{path}{key}: a long is expected"));
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => {
            if let Some(v) = n.as_i64() {
                Ok(Some(v))
            } else if let Some(f) = n.as_f64().filter(|f| f.is_finite() && n.as_u64().is_none()) {
                // Jackson accepts a float for an integer by truncation (ACCEPT_FLOAT_AS_INT).
                if (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&f) {
                    Ok(Some(f.trunc() as i64))
                } else {
                    Err(bad())
                }
            } else {
                Err(bad())
            }
        }
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) => s.trim().parse::<i64>().map(Some).map_err(|_| bad()),
        Some(_) => Err(bad()),
    }
}

/// An enum property: exactly one of the constants, or null.
fn constant(
    obj: &Map<String, Value>,
    key: &str,
    path: &str,
    allowed: &[&str],
) -> Result<Option<String>, Invalid> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if allowed.contains(&s.as_str()) => Ok(Some(s.clone())),
        Some(other) => Err(Invalid::Unreadable(format!(
            "{path}{key}: {other} is not one of {}",
            allowed.join(", ")
        ))),
    }
}

/// An `Instant` property: an ISO-8601 string, or a number of seconds since the epoch.
fn instant(obj: &Map<String, Value>, key: &str, path: &str) -> Result<Option<Instant>, Invalid> {
    let bad = || Invalid::Unreadable(format!("{path}{key}: an ISO-8601 instant is expected"));
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => parse_instant(s).map(Some).ok_or_else(bad),
        Some(Value::Number(n)) => {
            if let Some(secs) = n.as_i64() {
                Ok(Some((secs, 0)))
            } else if let Some(f) = n.as_f64().filter(|f| f.is_finite() && f.abs() < 1e15) {
                let secs = f.floor();
                Ok(Some((secs as i64, ((f - secs) * 1e9) as u32)))
            } else {
                Err(bad())
            }
        }
        Some(_) => Err(bad()),
    }
}

/// A valid heartbeat (`HeartbeatRequest`).
#[derive(Debug)]
pub(crate) struct Heartbeat {
    pub instance: String,
    pub applied_policy_version: Option<i64>,
}

/// Validates a heartbeat body.
pub(crate) fn heartbeat(body: &Value) -> Result<Heartbeat, Invalid> {
    let obj = object(body, "the heartbeat")?;
    let instance = text(obj, "instance", "")?;
    let host = text(obj, "host", "")?;
    let agent_version = text(obj, "agentVersion", "")?;
    let applied = long(obj, "appliedPolicyVersion", "")?;
    let mut c = Checker { errors: Vec::new() };
    c.not_blank("instance", instance.as_deref());
    c.size("instance", instance.as_deref(), 128);
    if let Some(i) = instance.as_deref() {
        // @Pattern("[\\p{Graph}]+"): Java's \p{Graph} is ASCII 0x21..0x7E unless UNICODE_CHARACTER_CLASS is set.
        if i.is_empty() || !i.bytes().all(|b| (0x21..=0x7e).contains(&b)) {
            c.add("instance", "must match \"[\\p{Graph}]+\"".into());
        }
    }
    c.size("host", host.as_deref(), 255);
    c.size("agentVersion", agent_version.as_deref(), 64);
    if applied.is_some_and(|v| v < 0) {
        c.add(
            "appliedPolicyVersion",
            "must be greater than or equal to 0".into(),
        );
    }
    if c.errors.is_empty() {
        Ok(Heartbeat {
            instance: instance.unwrap_or_default(),
            applied_policy_version: applied,
        })
    } else {
        Err(Invalid::Fields(c.errors))
    }
}

/// A valid access event: what dedup and retention need, and the event as the agent sent it.
#[derive(Debug)]
pub(crate) struct Event {
    pub event_id: String,
    pub occurred_at: Instant,
    pub raw: Value,
}

/// A valid batch (`AccessEventBatch`).
#[derive(Debug)]
pub(crate) struct Batch {
    pub instance: String,
    pub events: Vec<Event>,
}

/// Validates an access event batch; one bad event refuses the whole batch.
pub(crate) fn batch(body: &Value) -> Result<Batch, Invalid> {
    let obj = object(body, "the batch")?;
    let instance = text(obj, "instance", "")?;
    // The record's compact constructor: a missing or null list is empty, null elements are dropped.
    let elements: Vec<&Value> = match obj.get("events") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items.iter().filter(|v| !v.is_null()).collect(),
        Some(_) => return Err(Invalid::Unreadable("events: an array is expected".into())),
    };
    struct Read {
        event_id: Option<String>,
        occurred_at: Option<Instant>,
    }
    let mut c = Checker { errors: Vec::new() };
    c.not_blank("instance", instance.as_deref());
    c.size("instance", instance.as_deref(), 128);
    if elements.len() > MAX_BATCH {
        c.add("events", format!("size must be between 0 and {MAX_BATCH}"));
    }
    let mut read = Vec::with_capacity(elements.len());
    for (index, element) in elements.iter().enumerate() {
        let path = format!("events[{index}].");
        let e = object(element, &format!("events[{index}]"))?;
        let event_id = text(e, "eventId", &path)?;
        let occurred_at = instant(e, "occurredAt", &path)?;
        let user = text(e, "user", &path)?;
        let client_ip = text(e, "clientIp", &path)?;
        let resource = text(e, "resource", &path)?;
        let resource_type = text(e, "resourceType", &path)?;
        let access_type = text(e, "accessType", &path)?;
        let action = text(e, "action", &path)?;
        let outcome = constant(e, "outcome", &path, &["ALLOWED", "DENIED"])?;
        let policy_id = text(e, "policyId", &path)?;
        long(e, "policyVersion", &path)?;
        constant(e, "enforcer", &path, &["GRANTFORGE", "NATIVE"])?;
        text(e, "request", &path)?; // no size constraint: the server cuts it to 1000 characters
        let f = |name: &str| format!("{path}{name}");
        c.not_blank(&f("eventId"), event_id.as_deref());
        c.size(&f("eventId"), event_id.as_deref(), 64);
        c.not_null(&f("occurredAt"), &occurred_at);
        c.not_blank(&f("user"), user.as_deref());
        c.size(&f("user"), user.as_deref(), 128);
        c.size(&f("clientIp"), client_ip.as_deref(), 45);
        c.not_blank(&f("resource"), resource.as_deref());
        c.size(&f("resource"), resource.as_deref(), 1000);
        c.size(&f("resourceType"), resource_type.as_deref(), 64);
        c.not_blank(&f("accessType"), access_type.as_deref());
        c.size(&f("accessType"), access_type.as_deref(), 64);
        c.size(&f("action"), action.as_deref(), 128);
        c.not_null(&f("outcome"), &outcome);
        c.policy_id(&f("policyId"), policy_id.as_deref());
        read.push(Read {
            event_id,
            occurred_at,
        });
    }
    if !c.errors.is_empty() {
        return Err(Invalid::Fields(c.errors));
    }
    let events = read
        .into_iter()
        .zip(elements)
        .map(|(r, raw)| Event {
            event_id: r.event_id.unwrap_or_default(),
            occurred_at: r.occurred_at.unwrap_or((0, 0)),
            raw: raw.clone(),
        })
        .collect();
    // AgentController strips the instance name before storing it.
    Ok(Batch {
        instance: instance.unwrap_or_default().trim().to_string(),
        events,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event() -> Value {
        json!({"eventId":"e1","occurredAt":"2030-01-01T00:00:00Z","user":"alice","resource":"orders",
               "accessType":"read","outcome":"ALLOWED","policyId":"11","count":3})
    }

    #[test]
    fn heartbeats() {
        assert!(heartbeat(
            &json!({"instance":"broker-1:9092","appliedPolicyVersion":null,"health":{}})
        )
        .is_ok());
        assert!(heartbeat(&json!({"instance":"b","appliedPolicyVersion":"3"})).is_ok());
        for bad in [
            json!({}),
            json!({"instance":"has space"}),
            json!({"instance":"é"}),
            json!({"instance":"x".repeat(129)}),
            json!({"instance":"a","appliedPolicyVersion":-1}),
            json!({"instance":"a","host":"h".repeat(256)}),
        ] {
            assert!(matches!(heartbeat(&bad), Err(Invalid::Fields(_))), "{bad}");
        }
        for bad in [
            json!([]),
            json!({"instance":{}}),
            json!({"instance":"a","appliedPolicyVersion":"x"}),
        ] {
            assert!(
                matches!(heartbeat(&bad), Err(Invalid::Unreadable(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn batches() {
        let ok = batch(&json!({"instance":" i ","events":[event(), null]})).unwrap();
        assert_eq!(ok.instance, "i");
        assert_eq!(ok.events.len(), 1);
        assert!(batch(&json!({"instance":"i"})).unwrap().events.is_empty());
        let with = |key: &str, value: Value| {
            let mut e = event();
            e[key] = value;
            batch(&json!({"instance":"i","events":[event(), e]}))
        };
        for (key, value) in [
            ("eventId", json!("x".repeat(65))),
            ("user", json!("  ")),
            // `@NotBlank` trims every character up to U+0020: control characters are blank too
            ("resource", json!(" \u{1}\t")),
            ("resource", json!("")),
            ("clientIp", json!("1".repeat(46))),
            ("resource", json!("r".repeat(1001))),
            ("accessType", Value::Null),
            ("occurredAt", Value::Null),
            ("outcome", Value::Null),
            ("resourceType", json!("t".repeat(65))),
            ("action", json!("a".repeat(129))),
            ("policyId", json!("p")),
            ("policyId", json!("")),
            ("policyId", json!(" ")),
            ("policyId", json!("-1")),
            ("policyId", json!("12345678901234567890")),
            ("policyId", json!(-1)),
        ] {
            assert!(
                matches!(with(key, value.clone()), Err(Invalid::Fields(_))),
                "{key} {value}"
            );
        }
        for (key, value) in [
            ("outcome", json!("MAYBE")),
            ("enforcer", json!("x")),
            ("occurredAt", json!("yesterday")),
            ("policyId", json!({})),
            ("user", json!(["a"])),
        ] {
            assert!(
                matches!(with(key, value.clone()), Err(Invalid::Unreadable(_))),
                "{key} {value}"
            );
        }
        // UTF-16 units: 32 characters outside the BMP are 64 units.
        assert!(with("eventId", json!("😀".repeat(32))).is_ok());
        assert!(with("eventId", json!("😀".repeat(33))).is_err());
        assert!(with("request", json!("q".repeat(5000))).is_ok());
        // 19-digit time-ordered ids, as a string or (coerced by Jackson) a number; null passes.
        for id in [
            json!("1234567890123456789"),
            json!(1234567890123456789_i64),
            Value::Null,
        ] {
            assert!(with("policyId", id.clone()).is_ok(), "{id}");
        }
        let many: Vec<Value> = (0..1001).map(|_| event()).collect();
        assert!(matches!(
            batch(&json!({"instance":"i","events":many})),
            Err(Invalid::Fields(_))
        ));
        assert!(matches!(
            batch(&json!({"instance":"","events":[]})),
            Err(Invalid::Fields(_))
        ));
    }
}
