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
//!
//! Here: the root object, the definition and the memberships; the `policies` array in [`policies`];
//! the handlers' machinery (paths, JSON types, refusals) in [`stream`].

mod policies;
mod stream;

use std::cell::Cell;
use std::collections::BTreeMap;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess};

use self::policies::{Policies, PoliciesH, Take};
use self::stream::{
    drain_seq, next_field, skip_value, texts, Array, Bool, Ctx, Cx, Handler, Int, LenientInt,
    LenientText, Node, Opt, Path, Text, Texts,
};
use super::{PolicyStream, Snapshot, SnapshotHead, FORMAT};
use crate::error::SnapshotError;
use crate::matcher::RegexCache;
use crate::model::{AccessTypeDefinition, MatcherKind, ResourceLevel, ServiceModel};
use crate::record::{ConditionDefinition, Definition};

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
