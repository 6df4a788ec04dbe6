//! Streaming combinators for strict JSON reading with serde, independent of the snapshot format.
//!
//! Each JSON value is handed to a [`Handler`], which accepts only the JSON types its field may
//! have and refuses the others by default, naming the type it expected. A refusal is recorded once,
//! with the [`Path`] of the value (`policies[3].document.allow`) and the policy id when known, in
//! the reader's [`Ctx`]; the serde error that stops the reader carries no information of its own.
//! Objects are read field by field with [`next_field`] (known names as indexes, no copies), arrays
//! element by element, one level down the path each.
//!
//! The handlers here are the generic ones: strings, whole numbers, booleans, optional values,
//! arrays, string arrays, and the lenient readers of members Java does not check. The format-1
//! handlers built on them are in the parent module.

use std::cell::RefCell;
use std::fmt::{self, Write as _};

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::error::SnapshotError;

// ---------------------------------------------------------------------------------------------
// Paths and the first error

#[derive(Default)]
pub(super) struct Ctx {
    pub(super) error: RefCell<Option<SnapshotError>>,
    /// Gathers the elements of one string array, which then gets a vector of exactly their number.
    strings: RefCell<Vec<String>>,
}

#[derive(Clone, Copy)]
enum Seg<'a> {
    Field(&'a str),
    Index(usize),
}

/// Where a value lies, as a linked list up to the root; rendered only when a value is refused.
#[derive(Clone, Copy)]
pub(super) struct Path<'a> {
    parent: Option<&'a Path<'a>>,
    seg: Option<Seg<'a>>,
}

impl<'a> Path<'a> {
    pub(super) const ROOT: Path<'static> = Path {
        parent: None,
        seg: None,
    };

    pub(super) fn field(&'a self, name: &'a str) -> Path<'a> {
        Path {
            parent: Some(self),
            seg: Some(Seg::Field(name)),
        }
    }

    pub(super) fn index(&'a self, index: usize) -> Path<'a> {
        Path {
            parent: Some(self),
            seg: Some(Seg::Index(index)),
        }
    }

    fn render(&self) -> String {
        let mut text = self.parent.map(Path::render).unwrap_or_default();
        match self.seg {
            Some(Seg::Field(name)) => {
                if !text.is_empty() {
                    text.push('.');
                }
                text.push_str(name);
            }
            Some(Seg::Index(index)) => {
                let _ = write!(text, "[{index}]");
            }
            None => {}
        }
        text
    }
}

/// What a handler knows of where it is: the path, and the policy id once it is known.
#[derive(Clone, Copy)]
pub(super) struct Cx<'c, 'p> {
    pub(super) ctx: &'c Ctx,
    pub(super) path: &'p Path<'p>,
    pub(super) policy: Option<i64>,
}

impl<'c, 'p> Cx<'c, 'p> {
    pub(super) fn at<'q>(&self, path: &'q Path<'q>) -> Cx<'c, 'q> {
        Cx {
            ctx: self.ctx,
            path,
            policy: self.policy,
        }
    }

    /// Records the first refusal (with its path) and stops the reader.
    pub(super) fn fail<E: de::Error>(&self, message: impl Into<String>) -> E {
        let mut slot = self.ctx.error.borrow_mut();
        if slot.is_none() {
            *slot = Some(SnapshotError {
                policy_id: self.policy,
                field: self.path.render(),
                message: message.into(),
            });
        }
        E::custom("the snapshot was refused")
    }

    /// Records a refusal found by the checks of the policies themselves.
    pub(super) fn refuse<E: de::Error>(&self, error: SnapshotError) -> E {
        let mut slot = self.ctx.error.borrow_mut();
        if slot.is_none() {
            *slot = Some(error);
        }
        E::custom("the snapshot was refused")
    }

    pub(super) fn fail_at<E: de::Error>(&self, field: &str, message: impl Into<String>) -> E {
        let path = self.path.field(field);
        self.at(&path).fail(message)
    }

    pub(super) fn wrong<E: de::Error>(&self, expected: &str) -> E {
        if self.path.parent.is_none() {
            self.fail(format!("the snapshot is not {expected}"))
        } else {
            self.fail(format!("is not {expected}"))
        }
    }

    pub(super) fn required<T, E: de::Error>(&self, value: Option<T>, field: &str) -> Result<T, E> {
        value.ok_or_else(|| self.fail_at(field, "is missing"))
    }

    /// Reads the value of `field` with a handler, one level down the path.
    pub(super) fn value<'de, A: MapAccess<'de>, H: Handler<'de>>(
        &self,
        map: &mut A,
        field: &str,
        handler: H,
    ) -> Result<H::Out, A::Error> {
        let path = self.path.field(field);
        map.next_value_seed(Node {
            cx: self.at(&path),
            handler,
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Handlers: one per kind of JSON value a field may hold

/// Accepts the JSON types one field may have. Every method refuses by default, naming the type
/// the field must have (as Java's "is not a string" / "is not an object").
pub(super) trait Handler<'de>: Sized {
    type Out;
    const EXPECTED: &'static str;

    fn null<E: de::Error>(self, cx: Cx) -> Result<Self::Out, E> {
        Err(cx.wrong(Self::EXPECTED))
    }
    fn boolean<E: de::Error>(self, cx: Cx, _value: bool) -> Result<Self::Out, E> {
        Err(cx.wrong(Self::EXPECTED))
    }
    fn integer<E: de::Error>(self, cx: Cx, _value: i64) -> Result<Self::Out, E> {
        Err(cx.wrong(Self::EXPECTED))
    }
    /// A fraction, an exponent, or an integer beyond `i64`.
    fn other_number<E: de::Error>(self, cx: Cx) -> Result<Self::Out, E> {
        Err(cx.wrong(Self::EXPECTED))
    }
    fn string<E: de::Error>(self, cx: Cx, _value: &str) -> Result<Self::Out, E> {
        Err(cx.wrong(Self::EXPECTED))
    }
    fn map<A: MapAccess<'de>>(self, cx: Cx, _map: A) -> Result<Self::Out, A::Error> {
        Err(cx.wrong(Self::EXPECTED))
    }
    fn seq<A: SeqAccess<'de>>(self, cx: Cx, _seq: A) -> Result<Self::Out, A::Error> {
        Err(cx.wrong(Self::EXPECTED))
    }
}

/// Hands one JSON value to a handler.
pub(super) struct Node<'c, 'p, H> {
    pub(super) cx: Cx<'c, 'p>,
    pub(super) handler: H,
}

impl<'de, H: Handler<'de>> DeserializeSeed<'de> for Node<'_, '_, H> {
    type Value = H::Out;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<H::Out, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de, H: Handler<'de>> Visitor<'de> for Node<'_, '_, H> {
    type Value = H::Out;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(H::EXPECTED)
    }
    fn visit_bool<E: de::Error>(self, value: bool) -> Result<H::Out, E> {
        self.handler.boolean(self.cx, value)
    }
    fn visit_i64<E: de::Error>(self, value: i64) -> Result<H::Out, E> {
        self.handler.integer(self.cx, value)
    }
    fn visit_u64<E: de::Error>(self, value: u64) -> Result<H::Out, E> {
        match i64::try_from(value) {
            Ok(value) => self.handler.integer(self.cx, value),
            Err(_) => self.handler.other_number(self.cx),
        }
    }
    fn visit_i128<E: de::Error>(self, value: i128) -> Result<H::Out, E> {
        match i64::try_from(value) {
            Ok(value) => self.handler.integer(self.cx, value),
            Err(_) => self.handler.other_number(self.cx),
        }
    }
    fn visit_u128<E: de::Error>(self, value: u128) -> Result<H::Out, E> {
        match i64::try_from(value) {
            Ok(value) => self.handler.integer(self.cx, value),
            Err(_) => self.handler.other_number(self.cx),
        }
    }
    fn visit_f64<E: de::Error>(self, _value: f64) -> Result<H::Out, E> {
        self.handler.other_number(self.cx)
    }
    fn visit_str<E: de::Error>(self, value: &str) -> Result<H::Out, E> {
        self.handler.string(self.cx, value)
    }
    fn visit_unit<E: de::Error>(self) -> Result<H::Out, E> {
        self.handler.null(self.cx)
    }
    fn visit_none<E: de::Error>(self) -> Result<H::Out, E> {
        self.handler.null(self.cx)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<H::Out, A::Error> {
        self.handler.map(self.cx, map)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<H::Out, A::Error> {
        self.handler.seq(self.cx, seq)
    }
}

/// Reads object keys without copying them: known names become their index in `names`.
struct KeySeed(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Option<usize>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Option<usize>, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Option<usize>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a field name")
    }
    fn visit_str<E: de::Error>(self, key: &str) -> Result<Option<usize>, E> {
        Ok(self.0.iter().position(|name| *name == key))
    }
}

/// The next field of an object: `Some(Some(i))` for the known name `names[i]`, `Some(None)` for
/// an unknown one (whose value the caller must skip), `None` at the end.
pub(super) fn next_field<'de, A: MapAccess<'de>>(
    map: &mut A,
    names: &'static [&'static str],
) -> Result<Option<Option<usize>>, A::Error> {
    map.next_key_seed(KeySeed(names))
}

pub(super) fn skip_value<'de, A: MapAccess<'de>>(map: &mut A) -> Result<(), A::Error> {
    map.next_value::<IgnoredAny>().map(|_| ())
}

pub(super) fn drain_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

pub(super) fn drain_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

/// A JSON string.
pub(super) struct Text;

impl<'de> Handler<'de> for Text {
    type Out = String;
    const EXPECTED: &'static str = "a string";

    fn string<E: de::Error>(self, _cx: Cx, value: &str) -> Result<String, E> {
        Ok(value.to_owned())
    }
}

/// An integral JSON number that fits a long.
pub(super) struct Int;

impl<'de> Handler<'de> for Int {
    type Out = i64;
    const EXPECTED: &'static str = "a whole number";

    fn integer<E: de::Error>(self, _cx: Cx, value: i64) -> Result<i64, E> {
        Ok(value)
    }
}

/// A JSON boolean.
pub(super) struct Bool;

impl<'de> Handler<'de> for Bool {
    type Out = bool;
    const EXPECTED: &'static str = "a boolean";

    fn boolean<E: de::Error>(self, _cx: Cx, value: bool) -> Result<bool, E> {
        Ok(value)
    }
}

/// `null` as `None`, anything else as the inner handler says (Java treats a null member as absent).
pub(super) struct Opt<H>(pub(super) H);

impl<'de, H: Handler<'de>> Handler<'de> for Opt<H> {
    type Out = Option<H::Out>;
    const EXPECTED: &'static str = H::EXPECTED;

    fn null<E: de::Error>(self, _cx: Cx) -> Result<Self::Out, E> {
        Ok(None)
    }
    fn boolean<E: de::Error>(self, cx: Cx, value: bool) -> Result<Self::Out, E> {
        self.0.boolean(cx, value).map(Some)
    }
    fn integer<E: de::Error>(self, cx: Cx, value: i64) -> Result<Self::Out, E> {
        self.0.integer(cx, value).map(Some)
    }
    fn other_number<E: de::Error>(self, cx: Cx) -> Result<Self::Out, E> {
        self.0.other_number(cx).map(Some)
    }
    fn string<E: de::Error>(self, cx: Cx, value: &str) -> Result<Self::Out, E> {
        self.0.string(cx, value).map(Some)
    }
    fn map<A: MapAccess<'de>>(self, cx: Cx, map: A) -> Result<Self::Out, A::Error> {
        self.0.map(cx, map).map(Some)
    }
    fn seq<A: SeqAccess<'de>>(self, cx: Cx, seq: A) -> Result<Self::Out, A::Error> {
        self.0.seq(cx, seq).map(Some)
    }
}

/// A JSON array whose elements one handler reads, each one level down the path.
pub(super) struct Array<H>(pub(super) H);

impl<'de, H: Handler<'de> + Copy> Handler<'de> for Array<H> {
    type Out = Vec<H::Out>;
    const EXPECTED: &'static str = "an array";

    fn seq<A: SeqAccess<'de>>(self, cx: Cx, mut seq: A) -> Result<Self::Out, A::Error> {
        // Snapshots hold millions of short lists, mostly of none or one element: no room to spare,
        // and no reallocation for those.
        let mut next = |at: usize| {
            let path = cx.path.index(at);
            seq.next_element_seed(Node {
                cx: cx.at(&path),
                handler: self.0,
            })
        };
        let Some(first) = next(0)? else {
            return Ok(Vec::new());
        };
        let Some(second) = next(1)? else {
            return Ok(vec![first]);
        };
        let mut out = Vec::with_capacity(4);
        out.push(first);
        out.push(second);
        while let Some(value) = next(out.len())? {
            out.push(value);
        }
        out.shrink_to_fit();
        Ok(out)
    }
}

/// An optional array of strings (`texts` in Java): absent or null means none.
pub(super) fn texts<'de, A: MapAccess<'de>>(
    cx: &Cx,
    map: &mut A,
    field: &str,
) -> Result<Vec<String>, A::Error> {
    Ok(cx.value(map, field, Opt(Texts))?.unwrap_or_default())
}

/// An array of strings, gathered in the context's scratch vector and stored at exact size.
pub(super) struct Texts;

impl<'de> Handler<'de> for Texts {
    type Out = Vec<String>;
    const EXPECTED: &'static str = "an array";

    fn seq<A: SeqAccess<'de>>(self, cx: Cx, mut seq: A) -> Result<Vec<String>, A::Error> {
        let mut scratch = cx.ctx.strings.take();
        scratch.clear();
        loop {
            let path = cx.path.index(scratch.len());
            match seq.next_element_seed(Node {
                cx: cx.at(&path),
                handler: TextElement,
            }) {
                Ok(Some(text)) => scratch.push(text),
                Ok(None) => break,
                Err(error) => return Err(error),
            }
        }
        // Not `mem::take`: the scratch keeps its room, the result gets none to spare.
        let mut out = Vec::with_capacity(scratch.len());
        out.append(&mut scratch);
        cx.ctx.strings.replace(scratch);
        Ok(out)
    }
}

#[derive(Clone, Copy)]
struct TextElement;

impl<'de> Handler<'de> for TextElement {
    type Out = String;
    const EXPECTED: &'static str = "a string";

    fn string<E: de::Error>(self, _cx: Cx, value: &str) -> Result<String, E> {
        Ok(value.to_owned())
    }
}

/// A value Java does not read: a string is kept, anything else is skipped without complaint.
pub(super) struct LenientText;

impl<'de> Handler<'de> for LenientText {
    type Out = Option<String>;
    const EXPECTED: &'static str = "anything";

    fn null<E: de::Error>(self, _cx: Cx) -> Result<Self::Out, E> {
        Ok(None)
    }
    fn boolean<E: de::Error>(self, _cx: Cx, _value: bool) -> Result<Self::Out, E> {
        Ok(None)
    }
    fn integer<E: de::Error>(self, _cx: Cx, _value: i64) -> Result<Self::Out, E> {
        Ok(None)
    }
    fn other_number<E: de::Error>(self, _cx: Cx) -> Result<Self::Out, E> {
        Ok(None)
    }
    fn string<E: de::Error>(self, _cx: Cx, value: &str) -> Result<Self::Out, E> {
        Ok(Some(value.to_owned()))
    }
    fn map<A: MapAccess<'de>>(self, _cx: Cx, map: A) -> Result<Self::Out, A::Error> {
        drain_map(map).map(|()| None)
    }
    fn seq<A: SeqAccess<'de>>(self, _cx: Cx, seq: A) -> Result<Self::Out, A::Error> {
        drain_seq(seq).map(|()| None)
    }
}

/// A value Java does not read (`typeVersion`): a whole number is kept, anything else skipped.
pub(super) struct LenientInt;

impl<'de> Handler<'de> for LenientInt {
    type Out = Option<i64>;
    const EXPECTED: &'static str = "anything";

    fn null<E: de::Error>(self, _cx: Cx) -> Result<Self::Out, E> {
        Ok(None)
    }
    fn boolean<E: de::Error>(self, _cx: Cx, _value: bool) -> Result<Self::Out, E> {
        Ok(None)
    }
    fn integer<E: de::Error>(self, _cx: Cx, value: i64) -> Result<Self::Out, E> {
        Ok(Some(value))
    }
    fn other_number<E: de::Error>(self, _cx: Cx) -> Result<Self::Out, E> {
        Ok(None)
    }
    fn string<E: de::Error>(self, _cx: Cx, _value: &str) -> Result<Self::Out, E> {
        Ok(None)
    }
    fn map<A: MapAccess<'de>>(self, _cx: Cx, map: A) -> Result<Self::Out, A::Error> {
        drain_map(map).map(|()| None)
    }
    fn seq<A: SeqAccess<'de>>(self, _cx: Cx, seq: A) -> Result<Self::Out, A::Error> {
        drain_seq(seq).map(|()| None)
    }
}

/// A member read as Java's `text` would be, deferring the complaint until it is known to matter.
pub(super) enum Raw {
    Absent,
    Text(String),
    NotText,
}

impl Raw {
    pub(super) fn get<E: de::Error>(self, cx: &Cx, field: &str) -> Result<String, E> {
        match self {
            Raw::Absent => Err(cx.fail_at(field, "is missing")),
            Raw::NotText => Err(cx.fail_at(field, "is not a string")),
            Raw::Text(text) => Ok(text),
        }
    }
}

pub(super) struct RawText;

impl<'de> Handler<'de> for RawText {
    type Out = Raw;
    const EXPECTED: &'static str = "anything";

    fn null<E: de::Error>(self, _cx: Cx) -> Result<Raw, E> {
        Ok(Raw::Absent)
    }
    fn boolean<E: de::Error>(self, _cx: Cx, _value: bool) -> Result<Raw, E> {
        Ok(Raw::NotText)
    }
    fn integer<E: de::Error>(self, _cx: Cx, _value: i64) -> Result<Raw, E> {
        Ok(Raw::NotText)
    }
    fn other_number<E: de::Error>(self, _cx: Cx) -> Result<Raw, E> {
        Ok(Raw::NotText)
    }
    fn string<E: de::Error>(self, _cx: Cx, value: &str) -> Result<Raw, E> {
        Ok(Raw::Text(value.to_owned()))
    }
    fn map<A: MapAccess<'de>>(self, _cx: Cx, map: A) -> Result<Raw, A::Error> {
        drain_map(map).map(|()| Raw::NotText)
    }
    fn seq<A: SeqAccess<'de>>(self, _cx: Cx, seq: A) -> Result<Raw, A::Error> {
        drain_seq(seq).map(|()| Raw::NotText)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_render_as_json_paths() {
        let root = Path::ROOT;
        let policies = root.field("policies");
        let third = policies.index(3);
        let document = third.field("document");
        assert_eq!(document.render(), "policies[3].document");
        assert_eq!(root.render(), "");
    }
}
