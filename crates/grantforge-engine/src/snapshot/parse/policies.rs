//! The `policies` array: each element read, its ACCESS policies checked against the model and
//! kept, kept to be checked once the definition is known, or handed to a stream; the other types
//! only counted. A policy is read field by field in any order, so its `type` may come after its
//! document.

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess};

use super::stream::{
    drain_seq, next_field, skip_value, texts, Array, Bool, Cx, Handler, LenientText, Node, Opt,
    Raw, RawText, Text,
};
use crate::matcher::RegexCache;
use crate::model::ServiceModel;
use crate::record::{
    ConditionRef, Item, LevelMap, PolicyRecord, Priority, ResourceValues, Validity,
};
use crate::snapshot::PolicyStream;
use crate::time::Instant;

/// The ACCESS policies with their places in the `policies` array, and how many others there were.
#[derive(Default)]
pub(super) struct Policies {
    pub(super) access: Vec<PolicyRecord>,
    /// Whether they were handed to a stream instead of kept in `access`.
    pub(super) streamed: bool,
    pub(super) positions: Vec<usize>,
    pub(super) others: usize,
    /// Whether each was checked against the model as it was read (the definition came first, as
    /// the server writes it); checking a policy while its strings are still in cache is far
    /// cheaper than walking 200,000 of them again.
    pub(super) checked: bool,
}

/// What becomes of each ACCESS policy read.
pub(super) enum Take<'m> {
    /// Checked against the model at once, and kept.
    Check(&'m ServiceModel),
    /// Kept, to be checked when the definition is known.
    Keep,
    /// Handed over (the stream checks it).
    Stream(&'m mut dyn PolicyStream),
}

/// The `policies` array.
pub(super) struct PoliciesH<'m> {
    pub(super) take: Take<'m>,
}

impl<'de> Handler<'de> for PoliciesH<'_> {
    type Out = Policies;
    const EXPECTED: &'static str = "an array";

    fn seq<A: SeqAccess<'de>>(mut self, cx: Cx, mut seq: A) -> Result<Policies, A::Error> {
        let mut policies = Policies {
            checked: !matches!(self.take, Take::Keep),
            streamed: matches!(self.take, Take::Stream(_)),
            ..Policies::default()
        };
        let mut regexes = RegexCache::new();
        for index in 0.. {
            let path = cx.path.index(index);
            match seq.next_element_seed(Node {
                cx: cx.at(&path),
                handler: PolicyH,
            })? {
                Some(Some(policy)) => {
                    let taken = match &mut self.take {
                        Take::Check(model) => {
                            crate::policy::check(model, &policy, index, &mut regexes)
                        }
                        Take::Keep => Ok(()),
                        Take::Stream(stream) => {
                            stream
                                .take(policy, index)
                                .map_err(|error| cx.refuse(error))?;
                            continue;
                        }
                    };
                    taken.map_err(|error| cx.refuse::<A::Error>(error))?;
                    policies.access.push(policy);
                    policies.positions.push(index);
                }
                Some(None) => policies.others += 1,
                None => break,
            }
        }
        policies.access.shrink_to_fit();
        Ok(policies)
    }
}

/// The document of a policy: read at once when the policy is known to be ACCESS, skipped when it
/// is known to be another type, and kept as a JSON tree when `type` comes after it.
enum RawDocument {
    Absent,
    Read(Document),
    Deferred(serde_json::Value),
}

struct Document {
    resources: LevelMap,
    lists: [Vec<Item>; 4],
    validity: Vec<Validity>,
}

const POLICY_FIELDS: &[&str] = &["id", "name", "type", "priority", "document"];

/// One element of `policies`: `Some(record)` for an ACCESS policy, `None` for another type.
struct PolicyH;

impl<'de> Handler<'de> for PolicyH {
    type Out = Option<PolicyRecord>;
    const EXPECTED: &'static str = "an object";

    fn map<A: MapAccess<'de>>(self, mut cx: Cx, mut map: A) -> Result<Self::Out, A::Error> {
        let (mut id, mut name, mut kind, mut priority) = (Raw::Absent, None, None, Raw::Absent);
        let mut document = RawDocument::Absent;
        while let Some(field) = next_field(&mut map, POLICY_FIELDS)? {
            match field {
                Some(0) => {
                    id = cx.value(&mut map, "id", RawText)?;
                    // Later refusals in this policy can then name it.
                    cx.policy = match &id {
                        Raw::Text(text) => parse_long(text),
                        _ => None,
                    };
                }
                Some(1) => name = cx.value(&mut map, "name", LenientText)?,
                Some(2) => kind = cx.value(&mut map, "type", Opt(Text))?,
                Some(3) => priority = cx.value(&mut map, "priority", RawText)?,
                Some(4) => {
                    document = match kind.as_deref() {
                        Some("ACCESS") => match cx.value(&mut map, "document", Opt(DocumentH))? {
                            Some(read) => RawDocument::Read(read),
                            None => RawDocument::Absent,
                        },
                        Some(_) => {
                            skip_value(&mut map)?;
                            RawDocument::Absent
                        }
                        None => match map.next_value::<serde_json::Value>()? {
                            serde_json::Value::Null => RawDocument::Absent,
                            value => RawDocument::Deferred(value),
                        },
                    }
                }
                _ => skip_value(&mut map)?,
            }
        }
        let kind: String = cx.required(kind, "type")?;
        if kind != "ACCESS" {
            return Ok(None);
        }
        let id_text = id.get(&cx, "id")?;
        let id = parse_long(&id_text).ok_or_else(|| {
            cx.fail_at::<A::Error>("id", format!("policy id {id_text} is not a number"))
        })?;
        cx.policy = Some(id);
        let document = match document {
            RawDocument::Absent => return Err(cx.fail_at("document", "is missing")),
            RawDocument::Read(read) => read,
            RawDocument::Deferred(value) => {
                let path = cx.path.field("document");
                Node {
                    cx: cx.at(&path),
                    handler: DocumentH,
                }
                .deserialize(value)
                .map_err(|_| de::Error::custom("the snapshot was refused"))?
            }
        };
        let priority = priority.get(&cx, "priority")?;
        let priority = priority
            .parse::<Priority>()
            .map_err(|message| cx.fail_at::<A::Error>("priority", message))?;
        let [allow, allow_exceptions, deny, deny_exceptions] = document.lists;
        Ok(Some(PolicyRecord {
            id,
            name: name.unwrap_or_default(),
            priority,
            resources: document.resources,
            allow,
            allow_exceptions,
            deny,
            deny_exceptions,
            validity: document.validity,
        }))
    }
}

/// Java's `Long.parseLong`: an optional sign and decimal digits that fit a long.
fn parse_long(text: &str) -> Option<i64> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

const DOCUMENT_FIELDS: &[&str] = &[
    "resources",
    "allow",
    "allowExceptions",
    "deny",
    "denyExceptions",
    "validity",
];

struct DocumentH;

impl<'de> Handler<'de> for DocumentH {
    type Out = Document;
    const EXPECTED: &'static str = "an object";

    fn map<A: MapAccess<'de>>(self, cx: Cx, mut map: A) -> Result<Document, A::Error> {
        let mut resources = None;
        let mut lists: [Vec<Item>; 4] = Default::default();
        let mut validity = Vec::new();
        while let Some(field) = next_field(&mut map, DOCUMENT_FIELDS)? {
            match field {
                Some(0) => resources = cx.value(&mut map, "resources", Opt(ResourcesH))?,
                Some(list @ 1..=4) => {
                    let name = DOCUMENT_FIELDS[list];
                    lists[list - 1] = cx
                        .value(&mut map, name, Opt(Array(ItemH)))?
                        .unwrap_or_default();
                }
                Some(5) => {
                    validity = cx
                        .value(&mut map, "validity", Opt(Array(PeriodH)))?
                        .unwrap_or_default()
                }
                _ => skip_value(&mut map)?,
            }
        }
        Ok(Document {
            resources: cx.required(resources, "resources")?,
            lists,
            validity,
        })
    }
}

struct ResourcesH;

impl<'de> Handler<'de> for ResourcesH {
    type Out = LevelMap;
    const EXPECTED: &'static str = "an object";

    fn map<A: MapAccess<'de>>(self, cx: Cx, mut map: A) -> Result<Self::Out, A::Error> {
        let mut resources = LevelMap::new();
        while let Some(level) = map.next_key::<String>()? {
            let values = cx.value(&mut map, &level, ValuesH)?;
            resources.insert(level, values);
        }
        resources.shrink_to_fit();
        Ok(resources)
    }
}

struct ValuesH;

impl<'de> Handler<'de> for ValuesH {
    type Out = ResourceValues;
    const EXPECTED: &'static str = "an object";

    fn map<A: MapAccess<'de>>(self, cx: Cx, mut map: A) -> Result<ResourceValues, A::Error> {
        let (mut values, mut excludes, mut recursive) = (Vec::new(), None, None);
        while let Some(field) = next_field(&mut map, &["values", "excludes", "recursive"])? {
            match field {
                Some(0) => values = texts(&cx, &mut map, "values")?,
                Some(1) => excludes = cx.value(&mut map, "excludes", Opt(Bool))?,
                Some(2) => recursive = cx.value(&mut map, "recursive", Opt(Bool))?,
                _ => skip_value(&mut map)?,
            }
        }
        Ok(ResourceValues {
            values,
            excludes: cx.required(excludes, "excludes")?,
            recursive: cx.required(recursive, "recursive")?,
        })
    }
}

const ITEM_FIELDS: &[&str] = &["users", "groups", "roles", "accessTypes", "conditions"];

#[derive(Clone, Copy)]
struct ItemH;

impl<'de> Handler<'de> for ItemH {
    type Out = Item;
    const EXPECTED: &'static str = "an object";

    fn map<A: MapAccess<'de>>(self, cx: Cx, mut map: A) -> Result<Item, A::Error> {
        let mut item = Item::default();
        while let Some(field) = next_field(&mut map, ITEM_FIELDS)? {
            match field {
                Some(0) => item.users = distinct(texts(&cx, &mut map, "users")?),
                Some(1) => item.groups = distinct(texts(&cx, &mut map, "groups")?),
                Some(2) => item.roles = distinct(texts(&cx, &mut map, "roles")?),
                Some(3) => item.access_types = distinct(texts(&cx, &mut map, "accessTypes")?),
                Some(4) => {
                    item.conditions = cx
                        .value(&mut map, "conditions", Opt(Array(ConditionH)))?
                        .unwrap_or_default()
                }
                _ => skip_value(&mut map)?,
            }
        }
        Ok(item)
    }
}

/// The names of an item are sets in Java (`LinkedHashSet`): repeats are dropped, order kept.
fn distinct(mut names: Vec<String>) -> Vec<String> {
    if names.len() <= 16 {
        let mut index = 1;
        while index < names.len() {
            if names[..index].contains(&names[index]) {
                names.remove(index);
            } else {
                index += 1;
            }
        }
        names
    } else {
        let mut seen = std::collections::HashSet::with_capacity(names.len());
        names.retain(|name| seen.insert(name.clone()));
        names
    }
}

#[derive(Clone, Copy)]
struct ConditionH;

impl<'de> Handler<'de> for ConditionH {
    type Out = ConditionRef;
    const EXPECTED: &'static str = "an object";

    fn map<A: MapAccess<'de>>(self, cx: Cx, mut map: A) -> Result<ConditionRef, A::Error> {
        let (mut type_name, mut values) = (None, Vec::new());
        while let Some(field) = next_field(&mut map, &["type", "values"])? {
            match field {
                Some(0) => type_name = cx.value(&mut map, "type", Opt(Text))?,
                Some(1) => values = texts(&cx, &mut map, "values")?,
                _ => skip_value(&mut map)?,
            }
        }
        Ok(ConditionRef {
            type_name: cx.required(type_name, "type")?,
            values,
        })
    }
}

/// A validity period. Java reads `from` and `until` with `get`, which finds nothing in a value that
/// is not an object: such a value is an always-open period there, and here too.
#[derive(Clone, Copy)]
struct PeriodH;

impl<'de> Handler<'de> for PeriodH {
    type Out = Validity;
    const EXPECTED: &'static str = "an object";

    fn null<E: de::Error>(self, _cx: Cx) -> Result<Validity, E> {
        Ok(Validity::default())
    }
    fn boolean<E: de::Error>(self, _cx: Cx, _value: bool) -> Result<Validity, E> {
        Ok(Validity::default())
    }
    fn integer<E: de::Error>(self, _cx: Cx, _value: i64) -> Result<Validity, E> {
        Ok(Validity::default())
    }
    fn other_number<E: de::Error>(self, _cx: Cx) -> Result<Validity, E> {
        Ok(Validity::default())
    }
    fn string<E: de::Error>(self, _cx: Cx, _value: &str) -> Result<Validity, E> {
        Ok(Validity::default())
    }
    fn seq<A: SeqAccess<'de>>(self, _cx: Cx, seq: A) -> Result<Validity, A::Error> {
        drain_seq(seq).map(|()| Validity::default())
    }
    fn map<A: MapAccess<'de>>(self, cx: Cx, mut map: A) -> Result<Validity, A::Error> {
        let mut period = Validity::default();
        while let Some(field) = next_field(&mut map, &["from", "until"])? {
            match field {
                Some(0) => period.from = instant(&cx, &mut map, "from")?,
                Some(1) => period.until = instant(&cx, &mut map, "until")?,
                _ => skip_value(&mut map)?,
            }
        }
        Ok(period)
    }
}

fn instant<'de, A: MapAccess<'de>>(
    cx: &Cx,
    map: &mut A,
    field: &str,
) -> Result<Option<Instant>, A::Error> {
    match cx.value(map, field, Opt(Text))? {
        None => Ok(None),
        Some(text) => Instant::parse(&text)
            .map(Some)
            .map_err(|message| cx.fail_at(field, message)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_java_longs() {
        assert_eq!(parse_long("11"), Some(11));
        assert_eq!(parse_long("+11"), Some(11));
        assert_eq!(parse_long("-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_long("9223372036854775808"), None);
        assert_eq!(parse_long("eleven"), None);
        assert_eq!(parse_long(""), None);
        assert_eq!(parse_long("+"), None);
        assert_eq!(parse_long(" 1"), None);
    }

    #[test]
    fn keeps_the_first_place_of_repeated_names() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            distinct(names(&["a", "b", "a", "c", "b"])),
            names(&["a", "b", "c"])
        );
        let many: Vec<String> = (0..40).map(|i| (i % 20).to_string()).collect();
        assert_eq!(
            distinct(many),
            (0..20).map(|i| i.to_string()).collect::<Vec<_>>()
        );
    }
}
