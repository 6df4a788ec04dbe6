//! One policy value of one level, compiled once (Java's `ValueMatcher`).
//!
//! Policy values and requested values are normalised the same way; globs are matched by hand on
//! Unicode scalar values (Java code points) rather than through a regex engine, which keeps the
//! common WILDCARD and PATH levels fast.

use std::borrow::Cow;
use std::collections::HashMap;

use regex::{Regex, RegexBuilder};

use crate::model::{MatcherKind, ResourceLevel};
use crate::ANY_VALUE;

/// Normalises a value of a level as both sides are compared: lower case for case-insensitive
/// levels (Java's `toLowerCase(Locale.ROOT)`), and no trailing `/` on PATH levels (while longer
/// than one character). Nothing else: no trimming, no collapsing of inner `//`.
pub(crate) fn normalize<'a>(level: &ResourceLevel, value: &'a str) -> Cow<'a, str> {
    let lowered = if level.case_sensitive || is_lower_case(value) {
        Cow::Borrowed(value)
    } else {
        Cow::Owned(value.to_lowercase())
    };
    if level.matcher != MatcherKind::Path {
        return lowered;
    }
    let mut end = lowered.len();
    while end > 1 && lowered.as_bytes()[end - 1] == b'/' {
        end -= 1;
    }
    match lowered {
        Cow::Borrowed(text) => Cow::Borrowed(&text[..end]),
        Cow::Owned(mut text) => {
            text.truncate(end);
            Cow::Owned(text)
        }
    }
}

/// Whether lower-casing would leave `value` unchanged (so no copy is needed).
fn is_lower_case(value: &str) -> bool {
    value.chars().all(|c| {
        if c.is_ascii() {
            return !c.is_ascii_uppercase();
        }
        let mut lower = c.to_lowercase();
        lower.next() == Some(c) && lower.next().is_none()
    })
}

/// A compiled policy value.
#[derive(Clone, Debug)]
pub(crate) enum ValueMatcher {
    /// The raw value `*`: matches every value, on every kind.
    Any,
    /// EXACT level: equal normalised strings.
    Exact(Box<str>),
    /// WILDCARD or PATH glob over the normalised value.
    Glob(Glob),
    /// REGEX level: the raw value, anchored at both ends (boxed: rare, and larger than the rest).
    Regex(Box<Regex>),
}

#[derive(Clone, Debug)]
pub(crate) struct Glob {
    pattern: Box<str>,
    /// Byte length of the text before the first `*` or `?`.
    prefix: u32,
    path: bool,
    recursive: bool,
}

/// Regular expressions compiled for one snapshot, by pattern and case sensitivity: a snapshot
/// often repeats a pattern, and compiling one is far dearer than cloning it.
pub(crate) type RegexCache = HashMap<(String, bool), Result<Regex, String>>;

impl ValueMatcher {
    /// Compiles one value. `recursive` on a non-PATH level is refused, except for `*`, which is
    /// checked first (as Java does).
    #[cfg(test)]
    pub(crate) fn compile(
        level: &ResourceLevel,
        value: &str,
        recursive: bool,
    ) -> Result<ValueMatcher, String> {
        ValueMatcher::compile_with(level, value, recursive, &mut RegexCache::new())
    }

    /// Compiles one value, sharing regular expressions through `cache`.
    pub(crate) fn compile_with(
        level: &ResourceLevel,
        value: &str,
        recursive: bool,
        cache: &mut RegexCache,
    ) -> Result<ValueMatcher, String> {
        if value == ANY_VALUE {
            return Ok(ValueMatcher::Any);
        }
        if recursive && level.matcher != MatcherKind::Path {
            return Err(format!(
                "only path levels can be recursive, not {}",
                level.name
            ));
        }
        let normalized = normalize(level, value);
        Ok(match level.matcher {
            MatcherKind::Exact => ValueMatcher::Exact(normalized.into()),
            MatcherKind::Wildcard | MatcherKind::Path => ValueMatcher::Glob(Glob {
                prefix: normalized.find(['*', '?']).unwrap_or(normalized.len()) as u32,
                pattern: normalized.into(),
                path: level.matcher == MatcherKind::Path,
                recursive,
            }),
            MatcherKind::Regex => ValueMatcher::Regex(Box::new(
                cache
                    .entry((value.to_string(), level.case_sensitive))
                    .or_insert_with(|| compile_regex(level, value))
                    .clone()?,
            )),
        })
    }

    /// What every matching (normalised) value starts with; empty when nothing is certain.
    pub(crate) fn literal_prefix(&self) -> &str {
        match self {
            ValueMatcher::Any | ValueMatcher::Regex(_) => "",
            ValueMatcher::Exact(value) => value,
            ValueMatcher::Glob(glob) => &glob.pattern[..glob.prefix as usize],
        }
    }

    /// The one value this matcher matches, if it matches exactly one.
    pub(crate) fn only_value(&self) -> Option<&str> {
        match self {
            ValueMatcher::Exact(value) => Some(value),
            ValueMatcher::Glob(glob)
                if glob.prefix as usize == glob.pattern.len() && !glob.recursive =>
            {
                Some(&glob.pattern)
            }
            _ => None,
        }
    }

    /// Whether a normalised requested value matches.
    pub(crate) fn matches(&self, value: &str) -> bool {
        match self {
            ValueMatcher::Any => true,
            ValueMatcher::Exact(expected) => **expected == *value,
            ValueMatcher::Glob(glob) => glob.matches(value),
            ValueMatcher::Regex(regex) => regex.is_match(value),
        }
    }
}

impl Glob {
    fn matches(&self, value: &str) -> bool {
        if self.matches_whole(value) {
            return true;
        }
        if !self.recursive {
            return false;
        }
        // A recursive path covers its descendants: some ancestor of the requested path must match.
        // Ancestors are cut at each `/` from the right; a leading `/` leaves the root `/`.
        let mut end = value.len();
        while let Some(slash) = value[..end].rfind('/') {
            let ancestor = if slash == 0 { "/" } else { &value[..slash] };
            if self.matches_whole(ancestor) {
                return true;
            }
            if slash == 0 {
                break;
            }
            end = slash;
        }
        false
    }

    fn matches_whole(&self, value: &str) -> bool {
        let prefix = self.prefix as usize;
        if prefix == self.pattern.len() {
            return *self.pattern == *value;
        }
        if !value
            .as_bytes()
            .starts_with(&self.pattern.as_bytes()[..prefix])
        {
            return false;
        }
        if self.path {
            segments_match(&self.pattern, value)
        } else {
            glob_match(self.pattern.as_bytes(), value.as_bytes())
        }
    }
}

/// A PATH glob: `*` and `?` never match `/`, and `/` only matches itself, so the pattern and the
/// value must have as many segments and each pair must match.
fn segments_match(pattern: &str, value: &str) -> bool {
    let mut patterns = pattern.split('/');
    let mut values = value.split('/');
    loop {
        match (patterns.next(), values.next()) {
            (None, None) => return true,
            (Some(p), Some(v)) if glob_match(p.as_bytes(), v.as_bytes()) => {}
            _ => return false,
        }
    }
}

/// GrantForge's WILDCARD pattern language on a whole string (`*` any run of characters, `?` one
/// character, no escapes), byte-wise and without allocating: what the `wildcard` matcher applies to
/// resource values, for condition evaluators that match the same way.
pub fn wildcard_matches(pattern: &str, text: &str) -> bool {
    glob_match(pattern.as_bytes(), text.as_bytes())
}

/// A whole-string glob on UTF-8: `*` any run of characters (possibly empty), `?` exactly one
/// character, every other character literal. Greedy with backtracking to the last `*`, which is
/// exact for this pattern language; literal bytes compare bytewise, which equals comparing
/// characters because both sides are valid UTF-8 aligned on character starts.
fn glob_match(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some(b'?') => {
                p += 1;
                t += char_len(text[t]);
            }
            Some(b'*') => {
                star = Some((p, t));
                p += 1;
            }
            Some(&byte) if byte == text[t] => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((star_p, star_t)) => {
                    let resume = star_t + char_len(text[star_t]);
                    star = Some((star_p, resume));
                    p = star_p + 1;
                    t = resume;
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&b| b == b'*')
}

/// The length of the UTF-8 sequence a lead byte starts.
fn char_len(lead: u8) -> usize {
    match lead {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}

/// The raw policy value as a whole-string regular expression; case-insensitive when the level is.
///
/// Java compiles `java.util.regex` syntax; a pattern the Rust `regex` crate cannot compile
/// (lookaround, backreferences, ...) refuses the snapshot, like an invalid pattern does in Java.
fn compile_regex(level: &ResourceLevel, value: &str) -> Result<Regex, String> {
    let build = |pattern: &str| {
        RegexBuilder::new(pattern)
            .case_insensitive(!level.case_sensitive)
            .build()
    };
    if let Err(error) = build(value) {
        return Err(format!(
            "not a regular expression for level {} that this agent's (Rust) regex engine can compile: {value}: {error}",
            level.name
        ));
    }
    // Anchoring must survive a pattern that ends inside an `(?x)` comment: the newline ends it.
    build(&format!("^(?:{value})$"))
        .or_else(|_| build(&format!("^(?:{value}\n)$")))
        .map_err(|error| {
            format!(
                "not a regular expression for level {}: {value}: {error}",
                level.name
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path() -> ResourceLevel {
        ResourceLevel::new("path", None, MatcherKind::Path, true)
    }

    fn name() -> ResourceLevel {
        ResourceLevel::new("name", None, MatcherKind::Wildcard, false)
    }

    fn compile(level: &ResourceLevel, value: &str, recursive: bool) -> ValueMatcher {
        ValueMatcher::compile(level, value, recursive).unwrap()
    }

    #[test]
    fn normalizes_and_knows_what_every_match_starts_with() {
        assert_eq!(normalize(&path(), "/a/b//"), "/a/b");
        assert_eq!(normalize(&path(), "/"), "/");
        assert_eq!(normalize(&path(), "//"), "/");
        assert_eq!(normalize(&name(), "Sales"), "sales");
        assert_eq!(
            compile(&path(), "/data/*/x", false).literal_prefix(),
            "/data/"
        );
        assert_eq!(compile(&name(), "?x", false).literal_prefix(), "");
        assert!(matches!(compile(&name(), "*", false), ValueMatcher::Any));
        assert!(ValueMatcher::Any.matches("anything"));
    }

    #[test]
    fn wildcards_in_names_cross_everything_but_in_paths_stay_within_a_segment() {
        assert!(compile(&name(), "a*z", false).matches("a/b/z"));
        assert!(!compile(&path(), "/a*z", false).matches("/a/b/z"));
        assert!(compile(&path(), "/a?", false).matches("/ab"));
        assert!(!compile(&path(), "/a.b", false).matches("/axb"));
        assert!(compile(&path(), "/a", true).matches("/a/b/c"));
        assert!(!compile(&path(), "/a", true).matches("/ab"));
        assert!(compile(&path(), "/", true).matches("/x"));
    }

    #[test]
    fn globs_are_whole_string_without_escapes() {
        let level = ResourceLevel::new("topic", None, MatcherKind::Wildcard, true);
        assert!(compile(&level, "orders*", false).matches("orders"));
        assert!(compile(&level, "orders*", false).matches("orders-eu"));
        assert!(!compile(&level, "orders*", false).matches("Orders"));
        assert!(compile(&level, "*a*b*", false).matches("xxaxxbxx"));
        assert!(!compile(&level, "*a*b", false).matches("xxaxxbxx"));
        assert!(compile(&level, "a?c", false).matches("aéc"));
        assert!(compile(&level, "a?c", false).matches("a😀c"));
        assert!(
            compile(&level, "a?c", false).matches("a€c"),
            "`?` is one character of any UTF-8 length (€ is 3 bytes)"
        );
        assert!(!compile(&level, "a?c", false).matches("ac"));
        assert!(compile(&level, "a\\*", false).matches("a\\xyz"));
        assert!(compile(&level, "a.c", false).matches("a.c"));
        assert!(!compile(&level, "a.c", false).matches("abc"));
        assert!(compile(&level, "**", false).matches(""));
        assert!(compile(&level, "é*ü", false).matches("éabcü"));
        assert!(!compile(&level, "é*ü", false).matches("éabcu"));
        assert!(compile(&level, "*?", false).matches("x"));
        assert!(!compile(&level, "*?", false).matches(""));
    }

    #[test]
    fn recursive_paths_cover_every_ancestor_cut() {
        let data = compile(&path(), "/data/sales", true);
        assert!(data.matches("/data/sales"));
        assert!(data.matches("/data/sales/2026/q1.csv"));
        assert!(!data.matches("/data/salesman"));
        let home = compile(&path(), "/home/*", true);
        assert!(home.matches("/home/dave/notes"));
        assert!(!home.matches("/home"));
        assert!(compile(&path(), "/a/", true).matches("/a//b"));
        assert!(compile(&path(), "a", true).matches("a/b"));
        assert!(!compile(&path(), "/", false).matches("/x"));
    }

    #[test]
    fn case_insensitive_levels_compare_lower_case() {
        let glob = compile(&name(), "Sal?S", false);
        assert!(glob.matches(&normalize(&name(), "SALES")));
        assert_eq!(glob.literal_prefix(), "sal");
        let exact = ResourceLevel::new("t", None, MatcherKind::Exact, false);
        assert!(compile(&exact, "ORDERS", false).matches(&normalize(&exact, "Orders")));
    }

    #[test]
    fn regular_expressions_match_whole_values() {
        let url = ResourceLevel::new("url", None, MatcherKind::Regex, true);
        let regex = compile(&url, "hdfs://cluster/(raw|clean)/.*", false);
        assert!(regex.matches("hdfs://cluster/raw/x"));
        assert!(!regex.matches("hdfs://cluster/tmp/x"));
        assert!(!regex.matches("xhdfs://cluster/raw/x"));
        assert!(compile(&url, "a|ab", false).matches("ab"));
        assert!(!compile(&url, "a|ab", false).matches("abc"));
        assert!(compile(&url, "(?x) a b # comment", false).matches("ab"));
        assert!(!compile(&url, "(?x) a b # comment", false).matches("abc"));
        let insensitive = ResourceLevel::new("u", None, MatcherKind::Regex, false);
        assert!(compile(&insensitive, "ABC", false).matches(&normalize(&insensitive, "aBc")));
        assert!(ValueMatcher::compile(&url, "([", false)
            .unwrap_err()
            .contains("not a regular expression"));
        assert!(ValueMatcher::compile(&url, "a)(b", false).is_err());
        assert!(ValueMatcher::compile(&url, "(?<=a)b", false)
            .unwrap_err()
            .contains("Rust"));
    }

    #[test]
    fn only_paths_are_recursive_but_any_is_checked_first() {
        assert!(ValueMatcher::compile(&name(), "x", true)
            .unwrap_err()
            .contains("only path levels can be recursive"));
        assert!(matches!(
            ValueMatcher::compile(&name(), "*", true),
            Ok(ValueMatcher::Any)
        ));
    }
}
