//! A streaming, strict reader of snapshot format 1.
//!
//! The Java agent reads a Jackson tree and checks every member's JSON type (`text`, `number`,
//! `bool`, `object`, `array`). A tree of a 200,000-policy snapshot would cost far more memory than
//! the snapshot itself, so this reader checks the same rules while streaming with serde: every JSON
//! value is handed to a [`Handler`] that accepts only the JSON types its field may have, and records
//! the path of the first value it refuses. Unknown fields are skipped; of a repeated field the last
//! occurrence counts, as in a Jackson tree, with one difference that only refuses more: a value is
//! refused where it is read, even when the same field comes again later and would replace it (a
//! tree reader would never look at it). The server writes no field twice, and a reader that kept
//! every refusal pending could not stream.

mod stream;

use std::cell::Cell;
use std::collections::BTreeMap;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess};

use self::stream::{
    drain_seq, next_field, skip_value, texts, Array, Bool, Ctx, Cx, Handler, Int, LenientInt,
    LenientText, Node, Opt, Path, Raw, RawText, Text, Texts,
};
use super::{
    ConditionDefinition, ConditionRef, Definition, Item, LevelMap, PolicyRecord, PolicyStream,
    Priority, ResourceValues, Snapshot, SnapshotHead, Validity, FORMAT,
};
use crate::error::SnapshotError;
use crate::matcher::RegexCache;
use crate::model::{AccessTypeDefinition, MatcherKind, ResourceLevel, ServiceModel};
use crate::time::Instant;

pub(super) fn parse(bytes: &[u8]) -> Result<Snapshot, SnapshotError> {
    read(bytes, None).map(|(snapshot, _)| snapshot)
}

pub(super) fn stream(
    bytes: &[u8],
    stream: &mut dyn PolicyStream,
) -> Result<(Snapshot, bool), SnapshotError> {
    let restart = Cell::new(false);
    match read(bytes, Some((stream, &restart))) {
        Err(_) if restart.get() => parse(bytes).map(|snapshot| (snapshot, false)),
        read => read,
    }
}

/// Where the policies go while reading: to a stream (with the flag set when the snapshot turns out
/// not to be streamable after all), or into the snapshot.
type StreamTo<'s> = Option<(&'s mut dyn PolicyStream, &'s Cell<bool>)>;

fn read(bytes: &[u8], stream: StreamTo<'_>) -> Result<(Snapshot, bool), SnapshotError> {
    let bytes = super::without_bom(bytes);
    let ctx = Ctx::default();
    let root = Path::ROOT;
    let cx = Cx {
        ctx: &ctx,
        path: &root,
        policy: None,
    };
    // Checked as UTF-8 once, whole, rather than string by string while reading (a few percent of
    // a load); JSON is UTF-8, so nothing else is refused.
    let text = std::str::from_utf8(bytes).map_err(|error| {
        SnapshotError::new(
            "",
            format!(
                "the snapshot is not valid JSON: it is not UTF-8 from byte {}",
                error.valid_up_to()
            ),
        )
    })?;
    let mut json = serde_json::Deserializer::from_str(text);
    let read = Node {
        cx,
        handler: RootH { stream },
    }
    .deserialize(&mut json)
    .and_then(|raw| json.end().map(|()| raw));
    let raw = read.map_err(|error| {
        ctx.error.take().unwrap_or_else(|| {
            SnapshotError::new("", format!("the snapshot is not valid JSON: {error}"))
        })
    })?;
    raw.finish()
}

/// What the root object held, before the checks that need all of it.
#[derive(Default)]
struct RawSnapshot {
    format: Option<i64>,
    service: Option<String>,
    service_type: Option<String>,
    type_version: Option<i64>,
    service_enabled: Option<bool>,
    policy_version: Option<i64>,
    definition: Option<Definition>,
    /// The model of the last `definition` read (policies read after it are checked at once).
    model: Option<Result<ServiceModel, SnapshotError>>,
    policies: Option<Policies>,
    roles: Option<BTreeMap<String, Vec<String>>>,
    groups: Option<BTreeMap<String, Vec<String>>>,
}

impl RawSnapshot {
    fn finish(self) -> Result<(Snapshot, bool), SnapshotError> {
        let missing = |field: &str| SnapshotError::new(field, "is missing");
        let format = self.format.ok_or_else(|| missing("format"))?;
        check_format(format).map_err(|message| SnapshotError::new("format", message))?;
        let definition = self.definition.ok_or_else(|| missing("definition"))?;
        let policies = self.policies.ok_or_else(|| missing("policies"))?;
        let service = self.service.ok_or_else(|| missing("service"))?;
        let service_type = self.service_type.ok_or_else(|| missing("serviceType"))?;
        let service_enabled = self
            .service_enabled
            .ok_or_else(|| missing("serviceEnabled"))?;
        let policy_version = self
            .policy_version
            .ok_or_else(|| missing("policyVersion"))?;
        let model = self.model.unwrap_or_else(|| definition.model())?;
        if !policies.checked {
            let mut regexes = RegexCache::new();
            for (policy, index) in policies.access.iter().zip(&policies.positions) {
                crate::policy::check(&model, policy, *index, &mut regexes)?;
            }
        }
        let head = SnapshotHead {
            service,
            service_type,
            type_version: self.type_version,
            service_enabled,
            policy_version,
            definition,
            other_policies: policies.others,
            roles: self.roles.unwrap_or_default(),
            groups: self.groups.unwrap_or_default(),
        };
        let snapshot = Snapshot {
            head,
            policies: policies.access,
        };
        Ok((snapshot, policies.streamed))
    }
}

fn check_format(format: i64) -> Result<(), String> {
    if format == FORMAT {
        Ok(())
    } else {
        Err(format!("snapshot format {format} is not supported; this agent reads format {FORMAT}, upgrade it"))
    }
}

/// The ACCESS policies with their places in the `policies` array, and how many others there were.
#[derive(Default)]
struct Policies {
    access: Vec<PolicyRecord>,
    /// Whether they were handed to a stream instead of kept in `access`.
    streamed: bool,
    positions: Vec<usize>,
    others: usize,
    /// Whether each was checked against the model as it was read (the definition came first, as
    /// the server writes it); checking a policy while its strings are still in cache is far
    /// cheaper than walking 200,000 of them again.
    checked: bool,
}

// ---------------------------------------------------------------------------------------------
// The snapshot's structure

struct RootH<'s> {
    stream: StreamTo<'s>,
}

const ROOT_FIELDS: &[&str] = &[
    "format",
    "service",
    "serviceType",
    "typeVersion",
    "serviceEnabled",
    "policyVersion",
    "definition",
    "policies",
    "roles",
    "groups",
];

impl<'de> Handler<'de> for RootH<'_> {
    type Out = RawSnapshot;
    const EXPECTED: &'static str = "a JSON object";

    fn map<A: MapAccess<'de>>(mut self, cx: Cx, mut map: A) -> Result<RawSnapshot, A::Error> {
        let mut raw = RawSnapshot::default();
        // Streamed policies cannot be taken back: a field that would change them after they went
        // to the stream makes the snapshot be read again, whole.
        let restart = |stream: &StreamTo<'_>| {
            if let Some((_, flag)) = stream {
                flag.set(true);
            }
            de::Error::custom("the snapshot is read again, whole")
        };
        while let Some(field) = next_field(&mut map, ROOT_FIELDS)? {
            match field {
                Some(0) => {
                    raw.format = cx.value(&mut map, "format", Opt(Int))?;
                    // Checked at once: a newer format may be laid out differently.
                    if let Some(format) = raw.format {
                        check_format(format)
                            .map_err(|message| cx.fail_at::<A::Error>("format", message))?;
                    }
                }
                Some(1) => raw.service = cx.value(&mut map, "service", Opt(Text))?,
                Some(2) => raw.service_type = cx.value(&mut map, "serviceType", Opt(Text))?,
                Some(3) => raw.type_version = cx.value(&mut map, "typeVersion", LenientInt)?,
                Some(4) => raw.service_enabled = cx.value(&mut map, "serviceEnabled", Opt(Bool))?,
                Some(5) => raw.policy_version = cx.value(&mut map, "policyVersion", Opt(Int))?,
                Some(6) => {
                    if raw.policies.as_ref().is_some_and(|p| p.streamed) {
                        return Err(restart(&self.stream));
                    }
                    raw.definition = cx.value(&mut map, "definition", Opt(DefinitionH))?;
                    raw.model = raw.definition.as_ref().map(Definition::model);
                    // A repeated `definition` replaces the one policies were checked with.
                    if let Some(policies) = &mut raw.policies {
                        policies.checked = false;
                    }
                }
                Some(7) => {
                    let model = match &raw.model {
                        Some(Ok(model)) => Some(model),
                        _ => None,
                    };
                    let take = match (self.stream.as_mut(), model, &raw.policies) {
                        (Some(_), _, Some(earlier)) if earlier.streamed => {
                            return Err(restart(&self.stream))
                        }
                        (Some((stream, _)), Some(_), None) => {
                            let definition = raw.definition.as_ref().expect("a model has one");
                            stream
                                .open(definition)
                                .map_err(|error| cx.refuse::<A::Error>(error))?;
                            Take::Stream(&mut **stream)
                        }
                        (_, Some(model), _) => Take::Check(model),
                        (_, None, _) => Take::Keep,
                    };
                    raw.policies = cx.value(&mut map, "policies", Opt(PoliciesH { take }))?;
                }
                Some(8) => raw.roles = cx.value(&mut map, "roles", Opt(MembersH))?,
                Some(9) => raw.groups = cx.value(&mut map, "groups", Opt(MembersH))?,
                _ => skip_value(&mut map)?,
            }
        }
        Ok(raw)
    }
}

struct DefinitionH;

impl<'de> Handler<'de> for DefinitionH {
    type Out = Definition;
    const EXPECTED: &'static str = "an object";

    fn map<A: MapAccess<'de>>(self, cx: Cx, mut map: A) -> Result<Definition, A::Error> {
        let (mut resources, mut access_types, mut conditions) = (None, None, None);
        while let Some(field) = next_field(&mut map, &["resources", "accessTypes", "conditions"])? {
            match field {
                Some(0) => resources = cx.value(&mut map, "resources", Opt(Array(LevelH)))?,
                Some(1) => access_types = cx.value(&mut map, "accessTypes", Opt(Array(AccessH)))?,
                Some(2) => {
                    conditions = cx.value(&mut map, "conditions", Opt(Array(ConditionDefH)))?
                }
                _ => skip_value(&mut map)?,
            }
        }
        let listed: Vec<ResourceLevel> = cx.required(resources, "resources")?;
        // As the Java agent's LinkedHashMap: a repeated name keeps its first place, its last definition.
        let mut resources: Vec<ResourceLevel> = Vec::with_capacity(listed.len());
        for level in listed {
            match resources.iter_mut().find(|l| l.name == level.name) {
                Some(slot) => *slot = level,
                None => resources.push(level),
            }
        }
        let conditions: Vec<ConditionDefinition> = cx.required(conditions, "conditions")?;
        // Items name conditions, and a name must mean one evaluator: with two, a decision cache
        // keyed on what one reads would serve answers the other decides.
        for (at, condition) in conditions.iter().enumerate() {
            if conditions[..at].iter().any(|c| c.name == condition.name) {
                let list = cx.path.field("conditions");
                let item = list.index(at);
                return Err(cx.at(&item).fail_at(
                    "name",
                    format!(
                        "condition `{}` is defined twice; give each condition of the definition its own name",
                        condition.name
                    ),
                ));
            }
        }
        Ok(Definition {
            resources,
            access_types: cx.required(access_types, "accessTypes")?,
            conditions,
        })
    }
}

#[derive(Clone, Copy)]
struct LevelH;

impl<'de> Handler<'de> for LevelH {
    type Out = ResourceLevel;
    const EXPECTED: &'static str = "an object";

    fn map<A: MapAccess<'de>>(self, cx: Cx, mut map: A) -> Result<ResourceLevel, A::Error> {
        let (mut name, mut parent, mut matcher, mut case_sensitive) = (None, None, None, None);
        while let Some(field) =
            next_field(&mut map, &["name", "parent", "matcher", "caseSensitive"])?
        {
            match field {
                Some(0) => name = cx.value(&mut map, "name", Opt(Text))?,
                Some(1) => parent = cx.value(&mut map, "parent", Opt(Text))?,
                Some(2) => matcher = cx.value(&mut map, "matcher", Opt(Text))?,
                Some(3) => case_sensitive = cx.value(&mut map, "caseSensitive", Opt(Bool))?,
                _ => skip_value(&mut map)?,
            }
        }
        let name = cx.required(name, "name")?;
        let matcher: String = cx.required(matcher, "matcher")?;
        let matcher = matcher
            .parse::<MatcherKind>()
            .map_err(|message| cx.fail_at::<A::Error>("matcher", message))?;
        Ok(ResourceLevel {
            name,
            parent,
            matcher,
            case_sensitive: cx.required(case_sensitive, "caseSensitive")?,
        })
    }
}

#[derive(Clone, Copy)]
struct AccessH;

impl<'de> Handler<'de> for AccessH {
    type Out = AccessTypeDefinition;
    const EXPECTED: &'static str = "an object";

    fn map<A: MapAccess<'de>>(self, cx: Cx, mut map: A) -> Result<AccessTypeDefinition, A::Error> {
        let (mut name, mut implied) = (None, Vec::new());
        while let Some(field) = next_field(&mut map, &["name", "impliedGrants"])? {
            match field {
                Some(0) => name = cx.value(&mut map, "name", Opt(Text))?,
                Some(1) => implied = texts(&cx, &mut map, "impliedGrants")?,
                _ => skip_value(&mut map)?,
            }
        }
        Ok(AccessTypeDefinition {
            name: cx.required(name, "name")?,
            implied_grants: implied,
        })
    }
}

#[derive(Clone, Copy)]
struct ConditionDefH;

impl<'de> Handler<'de> for ConditionDefH {
    type Out = ConditionDefinition;
    const EXPECTED: &'static str = "an object";

    fn map<A: MapAccess<'de>>(self, cx: Cx, mut map: A) -> Result<ConditionDefinition, A::Error> {
        let (mut name, mut evaluator, mut options) = (None, None, BTreeMap::new());
        while let Some(field) = next_field(&mut map, &["name", "evaluator", "options"])? {
            match field {
                Some(0) => name = cx.value(&mut map, "name", Opt(Text))?,
                Some(1) => evaluator = cx.value(&mut map, "evaluator", Opt(Text))?,
                Some(2) => options = cx.value(&mut map, "options", OptionsH)?,
                _ => skip_value(&mut map)?,
            }
        }
        Ok(ConditionDefinition {
            name: cx.required(name, "name")?,
            evaluator: cx.required(evaluator, "evaluator")?,
            options,
        })
    }
}

/// A condition's options, which Java does not read: string entries are kept, the rest skipped.
struct OptionsH;

impl<'de> Handler<'de> for OptionsH {
    type Out = BTreeMap<String, String>;
    const EXPECTED: &'static str = "anything";

    fn null<E: de::Error>(self, _cx: Cx) -> Result<Self::Out, E> {
        Ok(BTreeMap::new())
    }
    fn boolean<E: de::Error>(self, _cx: Cx, _value: bool) -> Result<Self::Out, E> {
        Ok(BTreeMap::new())
    }
    fn integer<E: de::Error>(self, _cx: Cx, _value: i64) -> Result<Self::Out, E> {
        Ok(BTreeMap::new())
    }
    fn other_number<E: de::Error>(self, _cx: Cx) -> Result<Self::Out, E> {
        Ok(BTreeMap::new())
    }
    fn string<E: de::Error>(self, _cx: Cx, _value: &str) -> Result<Self::Out, E> {
        Ok(BTreeMap::new())
    }
    fn map<A: MapAccess<'de>>(self, cx: Cx, mut map: A) -> Result<Self::Out, A::Error> {
        let mut options = BTreeMap::new();
        while let Some(key) = map.next_key::<String>()? {
            if let Some(value) = map.next_value_seed(Node {
                cx,
                handler: LenientText,
            })? {
                options.insert(key, value);
            }
        }
        Ok(options)
    }
    fn seq<A: SeqAccess<'de>>(self, _cx: Cx, seq: A) -> Result<Self::Out, A::Error> {
        drain_seq(seq).map(|()| BTreeMap::new())
    }
}

/// `roles` or `groups`: code → array of user names.
struct MembersH;

impl<'de> Handler<'de> for MembersH {
    type Out = BTreeMap<String, Vec<String>>;
    const EXPECTED: &'static str = "an object";

    fn map<A: MapAccess<'de>>(self, cx: Cx, mut map: A) -> Result<Self::Out, A::Error> {
        let mut members = BTreeMap::new();
        while let Some(code) = map.next_key::<String>()? {
            let names = cx.value(&mut map, &code, Texts)?;
            members.insert(code, names);
        }
        Ok(members)
    }
}

/// What becomes of each ACCESS policy read.
enum Take<'m> {
    /// Checked against the model at once, and kept.
    Check(&'m ServiceModel),
    /// Kept, to be checked when the definition is known.
    Keep,
    /// Handed over (the stream checks it).
    Stream(&'m mut dyn PolicyStream),
}

/// The `policies` array.
struct PoliciesH<'m> {
    take: Take<'m>,
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
