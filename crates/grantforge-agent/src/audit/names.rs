//! Names as access events carry them: every name a client chooses (a group id, a topic, a client
//! id) reaches the server in a form it takes, and stays distinguishable from every other name.
//!
//! GrantForge refuses a whole batch for one event it does not take (`@NotBlank` and `@Size` on
//! `AccessEventRequest`), and a database may refuse what Bean Validation lets through (PostgreSQL
//! stores no NUL character). Left as they come, such names would let any client, even
//! `User:ANONYMOUS`, make the agent's thread hunt for refused events instead of applying policies.
//! So, before an event is made:
//!
//! - a name that is blank (only characters up to U+0020, as Java's `String.trim()` sees it), holds
//!   a control character (Unicode category Cc), or could be read as one of the agent's own forms
//!   (it starts with [`ESCAPED`], or is the overflow resource) is carried **escaped**:
//!   [`ESCAPED`] and the name as a JSON string, quotes included (`(escaped) "   "`,
//!   `(escaped) "a\u0000b"`); the JSON string reads back as the exact name;
//! - a resource longer than the server's limit is **cut** as GrantForge's HDFS agent cuts its
//!   paths (`HdfsAuthorizer.event`): its first [`CUT_KEEPS`] UTF-16 units and [`CUT_MARKER`], the
//!   event's `request` starting with `resourceLength=<UTF-16 units>; resourceSha256=<hex of the
//!   UTF-8 bytes>`, so two long names sharing their first units stay two events.

use std::borrow::Cow;
use std::fmt::Write as _;

use ring::digest::{digest, SHA256};

use crate::audit::limits::{self, clamp, OVERFLOW_RESOURCE};

/// What starts an escaped name.
pub const ESCAPED: &str = "(escaped) ";

/// What ends a cut resource (GrantForge's HDFS agent's marker).
pub const CUT_MARKER: &str = "...[truncated]";

/// The UTF-16 units of a cut resource kept before [`CUT_MARKER`], as GrantForge's HDFS agent keeps
/// them: the two fit the server's limit on `resource`.
pub const CUT_KEEPS: usize = 985;

/// What a cut resource lost: the whole name's length and digest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cut {
    /// UTF-16 units, as Java's `String.length()` counts them.
    pub units: usize,
    pub sha256: [u8; 32],
}

impl Cut {
    pub fn of(name: &str) -> Cut {
        let mut sha256 = [0u8; 32];
        sha256.copy_from_slice(digest(&SHA256, name.as_bytes()).as_ref());
        Cut {
            units: name.encode_utf16().count(),
            sha256,
        }
    }

    /// The words GrantForge's HDFS agent starts an event's `request` with.
    pub fn describe(&self) -> String {
        let mut hex = String::with_capacity(64);
        for b in self.sha256 {
            let _ = write!(hex, "{b:02x}");
        }
        format!("resourceLength={}; resourceSha256={hex}", self.units)
    }
}

/// A resource name as the audit keeps it: whole when the server takes its length, else its first
/// [`CUT_KEEPS`] units and what the cut lost. Borrowed; a long name costs one digest.
pub fn kept_resource(name: &str) -> (&str, Option<Cut>) {
    let whole = clamp(name, limits::RESOURCE);
    if whole.len() == name.len() {
        return (name, None);
    }
    (clamp(name, CUT_KEEPS), Some(Cut::of(name)))
}

/// The resource field of an event for the name the audit kept (see [`kept_resource`]): escaped
/// where needed, and cut where the name or its escaped form is longer than the server takes. The
/// cut, if any, describes the name itself, not its escaped form.
pub fn resource_field(kept: &str, cut: Option<Cut>) -> (Cow<'_, str>, Option<Cut>) {
    let shown = carried(kept);
    if cut.is_none() && clamp(&shown, limits::RESOURCE).len() == shown.len() {
        return (shown, None);
    }
    let cut = cut.unwrap_or_else(|| Cut::of(kept));
    let text = format!("{}{CUT_MARKER}", clamp(&shown, CUT_KEEPS));
    (Cow::Owned(text), Some(cut))
}

/// `name` as events carry it: itself, or escaped when the server would refuse it, a database
/// could not store it, or it could be read as one of the agent's own forms.
pub fn carried(name: &str) -> Cow<'_, str> {
    if !needs_escaping(name) {
        return Cow::Borrowed(name);
    }
    let mut out = Vec::with_capacity(ESCAPED.len() + name.len() + 2);
    write_escaped(&mut out, name);
    Cow::Owned(String::from_utf8(out).unwrap_or_default())
}

/// A name inside a text (a client id or listener in `request` or a log line): nothing for an
/// empty one, else as [`carried`] shows it.
pub fn within_text(name: &str) -> Cow<'_, str> {
    if name.is_empty() {
        Cow::Borrowed("")
    } else {
        carried(name)
    }
}

/// Whether [`carried`] escapes `name`.
pub fn needs_escaping(name: &str) -> bool {
    name.chars().all(|c| c <= ' ')
        || name.chars().any(char::is_control)
        || name.starts_with(ESCAPED)
        || name == OVERFLOW_RESOURCE
}

/// Appends [`ESCAPED`] and `name` as a JSON string to `out`: `"` and `\` escaped, control
/// characters as JSON's short escapes or `\uXXXX`, as `serde_json` writes them.
pub fn write_escaped(out: &mut Vec<u8>, name: &str) {
    out.extend_from_slice(ESCAPED.as_bytes());
    out.push(b'"');
    let mut utf8 = [0u8; 4];
    for c in name.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\r' => out.extend_from_slice(b"\\r"),
            '\t' => out.extend_from_slice(b"\\t"),
            '\u{8}' => out.extend_from_slice(b"\\b"),
            '\u{c}' => out.extend_from_slice(b"\\f"),
            c if c.is_control() => {
                let _ = std::io::Write::write_fmt(out, format_args!("\\u{:04x}", u32::from(c)));
            }
            c => out.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes()),
        }
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the server's `@NotBlank` refuses (Hibernate: `trim()` leaves nothing).
    fn blank_to_the_server(text: &str) -> bool {
        text.chars().all(|c| c <= ' ')
    }

    #[test]
    fn names_the_server_would_refuse_are_carried_escaped_and_read_back_exactly() {
        for name in [
            "",
            "   ",
            "\t\n",
            "a\u{0}b",
            "\u{1}\u{2}",
            "x\u{7f}",
            "\u{85}",
        ] {
            let shown = carried(name);
            assert!(!blank_to_the_server(&shown), "{shown:?}");
            assert!(!shown.chars().any(char::is_control), "{shown:?}");
            let json = shown.strip_prefix(ESCAPED).expect("marked");
            let back: String = serde_json::from_str(json).unwrap();
            assert_eq!(back, name);
        }
        assert_eq!(carried("   "), r#"(escaped) "   ""#);
        assert_eq!(carried("a\u{1}"), r#"(escaped) "a\u0001""#);
    }

    #[test]
    fn ordinary_names_are_carried_as_they_are_and_the_agents_own_forms_cannot_be_forged() {
        for name in ["orders", "zoë's group", " padded ", "😀"] {
            assert!(matches!(carried(name), Cow::Borrowed(n) if n == name));
        }
        let forged = r#"(escaped) "   ""#;
        assert_eq!(carried(forged), r#"(escaped) "(escaped) \"   \"""#);
        assert!(carried(OVERFLOW_RESOURCE).starts_with(ESCAPED));
    }

    #[test]
    fn a_long_resource_is_cut_as_grantforges_hdfs_agent_cuts_it() {
        let name = "p".repeat(1500);
        let (kept, cut) = kept_resource(&name);
        let cut = cut.unwrap();
        assert_eq!(kept.len(), CUT_KEEPS);
        let (field, described) = resource_field(kept, Some(cut));
        assert_eq!(field, format!("{}...[truncated]", "p".repeat(985)));
        assert_eq!(field.encode_utf16().count(), 999);
        assert_eq!(
            described.unwrap().describe(),
            "resourceLength=1500; resourceSha256=68e93a28c83dd248176bb7731f67d8474931db9ba3fbfdda107bc9b0067db8f8",
            "sha256sum of the name's bytes"
        );
    }

    #[test]
    fn the_protocol_page_shows_the_cut_and_the_escaped_forms() {
        let page = crate::audit::delivery::tests::protocol_page();
        let cut = format!("its first {CUT_KEEPS} units followed by `{CUT_MARKER}`");
        assert!(page.contains(&cut), "docs/protocol.md lacks {cut:?}");
        let raw = std::fs::read_to_string(crate::test_support::in_crate("../../docs/protocol.md"))
            .unwrap();
        for name in ["   ", "a\u{0}b"] {
            let form = format!("`{}`", carried(name));
            assert!(raw.contains(&form), "docs/protocol.md lacks {form:?}");
        }
    }

    #[test]
    fn a_name_that_fits_is_kept_whole_and_counted_in_utf16_units() {
        // the limit exactly in UTF-16 units, twice as many UTF-8 bytes
        let name = "😀".repeat(500);
        assert_eq!(kept_resource(&name), (name.as_str(), None));
        let longer = "😀".repeat(501);
        let (kept, cut) = kept_resource(&longer);
        assert_eq!(kept.encode_utf16().count(), 984, "never half a character");
        assert_eq!(cut.unwrap().units, 1002);
    }

    #[test]
    fn an_escaped_form_longer_than_the_limit_is_cut_and_describes_the_name_itself() {
        // fits, but its escaped form does not
        let name = "\u{1}".repeat(900);
        let (kept, cut) = kept_resource(&name);
        assert_eq!(cut, None);
        let (field, described) = resource_field(kept, cut);
        assert!(field.starts_with(r#"(escaped) "\u0001"#) && field.ends_with(CUT_MARKER));
        assert_eq!(described, Some(Cut::of(&name)));
    }
}
