//! `explain --quota`: the group and limit the agent's quota callback gives one connection, per
//! quota type, and the rule of the table that gave it.
//!
//! ```text
//! explain --quota --user U [--client-id C] (--quota-file FILE | --quota-file -)
//!         [--socket-request-max-bytes N] [--json]
//! ```
//!
//! `--socket-request-max-bytes` is the brokers' setting (Kafka's default without it): it decides the
//! smallest bound a user's remainder may become (`grantforge_quotas::SafeBounds`).
//!
//! The quota entities are the text `kafka-configs.sh --describe --entity-type users --entity-type
//! clients` prints, one entity a line, as Kafka 3.7 to 4.3 write it (`ConfigCommand`'s
//! `describeQuotaConfigs`):
//!
//! ```text
//! Quota configs for user-principal 'user2', client-id 'clientA' are producer_byte_rate=10.0, consumer_byte_rate=20.0
//! Quota configs for the default user-principal are request_percentage=50.0
//! ```
//!
//! An operator already has that tool, and the agent JAR's `Main` turns a cluster's entities
//! (`Admin.describeClientQuotas`) into the same text, so there is one reader of it: [`read_entities`].
//! The answer is resolved by the agent's own table (`grantforge_quotas::QuotaTable`).

use std::fmt::Write as _;
use std::path::Path;

use grantforge_quotas::{Entity, Part, QuotaTable, QuotaType, Resolved, SafeBounds};
use serde_json::{json, Value};

use super::Failure;

const QUOTA_LINE: &str = "Quota configs for ";
/// `kafka-configs --describe --entity-type users` also lists SCRAM credentials: not quotas.
const SCRAM_LINE: &str = "SCRAM credential configs for ";
const USER: &str = "user-principal";
const CLIENT: &str = "client-id";
const IP: &str = "ip";

/// The quota entities of a `kafka-configs --describe` text, in the agent's table.
#[derive(Debug)]
pub(super) struct Entities {
    pub table: QuotaTable,
    /// User and client-id entities read.
    pub count: usize,
    /// IP entities, which are no concern of a quota callback.
    pub ignored: usize,
    /// `<user, client>` entities among `count`.
    pub user_client: usize,
}

/// Why an answer from these entities may be wrong: `kafka-configs --describe --entity-type users
/// --entity-type clients` prints only the `<user, client>` entities (Kafka filters strictly), and
/// a file of them alone misses every `<user>`, `<client>` and default entity.
const ONLY_USER_CLIENT: &str = "the quota entities are all <user, client> ones, as `kafka-configs --describe --entity-type users --entity-type clients` alone prints them: the <user>, <client> and default entities are missing, so a client may be throttled where this says unthrottled. Describe users, clients and both into the file (docs/quotas.md), or use --bootstrap-server";

/// Why an empty quota file is refused rather than answered "unthrottled".
const NO_ENTITIES: &str = "it holds no line of kafka-configs --describe, so every client would read as unthrottled whatever the cluster's quotas are. Put into it what kafka-configs --describe prints for --entity-type users, for --entity-type clients and for both (docs/quotas.md), or ask the cluster itself with --bootstrap-server";

/// Reads the entities of a `kafka-configs --describe` text; a line it cannot read is named with
/// its number.
pub(super) fn read_entities(text: &str) -> Result<Entities, String> {
    let mut entities = Entities {
        table: QuotaTable::new(),
        count: 0,
        ignored: 0,
        user_client: 0,
    };
    for (at, line) in text.lines().enumerate() {
        let line = line.trim_end();
        if line.trim().is_empty() || line.starts_with(SCRAM_LINE) {
            continue;
        }
        let bad = |why: &str| format!("line {}: {why}: {line}", at + 1);
        let described = line.strip_prefix(QUOTA_LINE).ok_or_else(|| {
            bad("not a line of kafka-configs --describe (\"Quota configs for ... are ...\")")
        })?;
        // The values hold no " are " (key=number, ...); a name may.
        let (entity, values) = described
            .rsplit_once(" are ")
            .ok_or_else(|| bad("no \" are \" before the values"))?;
        let Some(entity) = parse_entity(entity).map_err(|why| bad(&why))? else {
            entities.ignored += 1;
            continue;
        };
        for pair in values.split(", ").filter(|p| !p.is_empty()) {
            let (key, value) = pair
                .split_once('=')
                .ok_or_else(|| bad(&format!("`{pair}` is not key=value")))?;
            let quota_type = QuotaType::from_config_key(key)
                .ok_or_else(|| bad(&format!("`{key}` is not a user or client-id quota")))?;
            let value: f64 = value
                .parse()
                .map_err(|_| bad(&format!("`{value}` is not a number")))?;
            entities.table.update(&entity, quota_type, value);
        }
        entities.count += 1;
        if entity.user.is_some() && entity.client_id.is_some() {
            entities.user_client += 1;
        }
    }
    Ok(entities)
}

/// One side of an entity, as `ConfigCommand` writes it: `user-principal 'NAME'` or
/// `the default user-principal` (likewise `client-id`, `ip`).
enum Side {
    Named(String),
    Default,
}

/// The entity of `described` (`None`: an IP entity). Names are written unquoted between single
/// quotes, so a name's closing quote is the first one followed by the end or by the next side.
fn parse_entity(described: &str) -> Result<Option<Entity>, String> {
    let mut rest = described;
    let mut sides: Vec<(&str, Side)> = Vec::new();
    while !rest.is_empty() {
        if !sides.is_empty() {
            rest = rest
                .strip_prefix(", ")
                .ok_or_else(|| format!("`{rest}` does not start with \", \""))?;
        }
        let (kind, side, after) = parse_side(rest)?;
        if sides.iter().any(|(k, _)| *k == kind) {
            return Err(format!("{kind} twice"));
        }
        sides.push((kind, side));
        rest = after;
    }
    if sides.iter().any(|(kind, _)| *kind == IP) {
        return Ok(None);
    }
    let part = |wanted: &str| {
        sides
            .iter()
            .find(|(kind, _)| *kind == wanted)
            .map(|(_, side)| match side {
                Side::Named(name) => Part::Named(name.clone()),
                Side::Default => Part::Default,
            })
    };
    match (part(USER), part(CLIENT)) {
        (None, None) => Err("no user-principal or client-id".to_string()),
        (user, client_id) => Ok(Some(Entity::of(user, client_id))),
    }
}

/// The first side of `text`: its kind, the side, and the text after it.
fn parse_side(text: &str) -> Result<(&'static str, Side, &str), String> {
    for kind in [USER, CLIENT, IP] {
        if let Some(after) = text.strip_prefix(&format!("the default {kind}")) {
            return Ok((kind, Side::Default, after));
        }
        let Some(quoted) = text.strip_prefix(&format!("{kind} '")) else {
            continue;
        };
        let end = quoted
            .match_indices('\'')
            .map(|(at, _)| at)
            .find(|&at| ends_a_side(&quoted[at + 1..]))
            .ok_or_else(|| format!("the {kind} name has no closing quote"))?;
        return Ok((
            kind,
            Side::Named(quoted[..end].to_string()),
            &quoted[end + 1..],
        ));
    }
    Err(format!(
        "`{text}` is not \"{USER} 'NAME'\", \"{CLIENT} 'NAME'\" or \"the default ...\""
    ))
}

/// Whether `after` (what follows a closing quote) is the end of the entity or its next side.
fn ends_a_side(after: &str) -> bool {
    let Some(next) = after.strip_prefix(", ") else {
        return after.is_empty();
    };
    [CLIENT, IP].iter().any(|kind| {
        next.starts_with(&format!("{kind} '")) || next.starts_with(&format!("the default {kind}"))
    })
}

/// Runs `explain --quota` (the arguments without `--quota`).
pub(super) fn run(args: &[String], stdin: &str) -> Result<String, Failure> {
    let (mut user, mut client_id, mut file, mut json_output) = (None, String::new(), None, false);
    let mut cluster = None;
    let mut bounds = SafeBounds::default();
    let mut i = 0;
    while i < args.len() {
        let flag = args[i].as_str();
        if flag == "--json" {
            json_output = true;
            i += 1;
            continue;
        }
        let value = args
            .get(i + 1)
            .cloned()
            .ok_or_else(|| Failure::Usage(format!("{flag} needs a value")))?;
        match flag {
            "--user" => user = Some(value),
            "--client-id" => client_id = value,
            "--quota-file" => file = Some(value),
            // The agent JAR reads the cluster's entities with Kafka's Admin API and hands them
            // over on standard input, naming the cluster here.
            "--bootstrap-server" => cluster = Some(value),
            "--socket-request-max-bytes" => {
                let bytes = value.parse::<u64>().ok().filter(|b| *b > 0).ok_or_else(|| {
                    Failure::Usage(format!(
                        "--socket-request-max-bytes takes the brokers' socket.request.max.bytes, a positive number of bytes, not {value}"
                    ))
                })?;
                bounds = SafeBounds::for_requests_up_to(bytes);
            }
            _ => {
                return Err(Failure::Usage(format!(
                    "unknown option {flag} with --quota"
                )))
            }
        }
        i += 2;
    }
    let user = user.ok_or_else(|| {
        Failure::Usage("name the user: --user NAME (the principal's name, without User:)".into())
    })?;
    let file = file.ok_or_else(|| {
        Failure::Usage(
            "name the quota entities: --quota-file FILE (or - for standard input), the output of kafka-configs --describe --entity-type users --entity-type clients"
                .into(),
        )
    })?;
    let from_cluster = cluster.is_some();
    let (text, shown) = if let Some(cluster) = cluster {
        if file != "-" {
            return Err(Failure::Usage(format!(
                "--bootstrap-server and --quota-file {file} both name the quota entities: give one"
            )));
        }
        (stdin.to_string(), format!("the cluster at {cluster}"))
    } else if file == "-" {
        (stdin.to_string(), "standard input".to_string())
    } else {
        let text = std::fs::read_to_string(Path::new(&file)).map_err(|e| {
            Failure::Input(format!(
                "--quota-file: {}",
                crate::config::unreadable(&file, &e)
            ))
        })?;
        (text, file)
    };
    // A cluster without quota entities is a true answer (every client unthrottled); a file
    // without a line is a mistake (a redirect that failed, the wrong file) that would read as one.
    if !from_cluster && text.trim().is_empty() {
        return Err(Failure::Input(format!("{shown} is empty: {NO_ENTITIES}")));
    }
    let mut entities = read_entities(&text).map_err(|e| Failure::Input(format!("{shown}: {e}")))?;
    entities.table.set_bounds(bounds);
    let answer = answer(&entities, &user, &client_id);
    Ok(if json_output {
        answer.to_string() + "\n"
    } else {
        render_text(&answer)
    })
}

/// What one connection of `user` with `client_id` gets, per quota type.
fn answer(entities: &Entities, user: &str, client_id: &str) -> Value {
    let quotas: Vec<Value> = QuotaType::ALL
        .into_iter()
        .map(|quota_type| {
            let resolved = entities.table.resolve(quota_type, user, client_id);
            quota_json(quota_type, &resolved, entities.table.bounds())
        })
        .collect();
    let only_user_client = entities.count > 0 && entities.user_client == entities.count;
    let warnings: Vec<&str> = only_user_client
        .then_some(ONLY_USER_CLIENT)
        .into_iter()
        .collect();
    json!({
        "user": user, "clientId": client_id,
        "entities": entities.count, "ignoredEntities": entities.ignored,
        "warnings": warnings, "quotas": quotas,
    })
}

fn quota_json(quota_type: QuotaType, resolved: &Resolved, bounds: SafeBounds) -> Value {
    let group = json!({"user": resolved.user_tag, "client-id": resolved.client_tag});
    json!({
        "type": quota_type.config_key(), "unit": unit(quota_type),
        "group": group, "rule": resolved.rule.describe(), "limit": resolved.limit,
        "oversubscribed": resolved.oversubscribed, "floor": bounds.smallest(quota_type),
    })
}

fn unit(quota_type: QuotaType) -> &'static str {
    match quota_type {
        QuotaType::Produce | QuotaType::Fetch => "bytes/s",
        QuotaType::Request => "% of a request thread",
        QuotaType::ControllerMutation => "partition mutations/s",
    }
}

fn render_text(answer: &Value) -> String {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let mut out = String::new();
    let client = text(&answer["clientId"]);
    let _ = writeln!(
        out,
        "user {} with client id {} ({} quota entities{})",
        text(&answer["user"]),
        if client.is_empty() {
            "\"\"".to_string()
        } else {
            client
        },
        answer["entities"],
        match answer["ignoredEntities"].as_u64() {
            Some(0) | None => String::new(),
            Some(n) => format!(", {n} IP entities ignored"),
        }
    );
    for warning in answer["warnings"].as_array().into_iter().flatten() {
        let _ = writeln!(out, "warning: {}", text(warning));
    }
    for quota in answer["quotas"].as_array().into_iter().flatten() {
        let limit = match quota["limit"].as_f64() {
            Some(limit) => format!("{limit} {}", text(&quota["unit"])),
            None => "unthrottled".to_string(),
        };
        let _ = writeln!(out, "  {}: {limit}", text(&quota["type"]));
        let group = &quota["group"];
        if !group.is_null() {
            // As the broker's MBeans name the group: an empty tag is left out.
            let tags: Vec<String> = ["user", "client-id"]
                .iter()
                .filter(|tag| !text(&group[**tag]).is_empty())
                .map(|tag| format!("{tag}={}", text(&group[*tag])))
                .collect();
            let _ = writeln!(out, "    group: {}", tags.join(","));
        }
        let _ = writeln!(out, "    {}", text(&quota["rule"]));
        if quota["oversubscribed"] == true {
            let _ = writeln!(
                out,
                "    note: the user's reserved sub-quotas leave less than {} {} of its total: its other clients share that, the smallest bound Kafka's throttle enforces",
                quota["floor"].as_f64().unwrap_or_default(),
                text(&quota["unit"])
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use grantforge_quotas::Rule;

    /// `docs/quotas.md`'s example as `kafka-configs --describe` prints it.
    const EXAMPLE: &str = "\
Quota configs for user-principal 'user2' are producer_byte_rate=4096.0, consumer_byte_rate=8192.0
Quota configs for user-principal 'user2', client-id 'clientA' are producer_byte_rate=10.0, consumer_byte_rate=20.0
Quota configs for user-principal 'user2', client-id 'clientB' are consumer_byte_rate=40.0, producer_byte_rate=30.0
";

    fn explain(args: &str, stdin: &str) -> (i32, String) {
        let args: Vec<String> = args.split_whitespace().map(str::to_string).collect();
        super::super::run(&args, stdin)
    }

    #[test]
    fn reads_every_kind_of_entity_kafka_configs_prints() {
        let text = "\
Quota configs for the default user-principal are request_percentage=50.0
Quota configs for the default user-principal, the default client-id are producer_byte_rate=1.0E7
Quota configs for user-principal 'CN=alice,O=acme', the default client-id are consumer_byte_rate=2048.0
Quota configs for the default user-principal, client-id 'app' are controller_mutation_rate=5.0
Quota configs for client-id 'it's' are producer_byte_rate=3000.0
Quota configs for the default client-id are producer_byte_rate=100.0
Quota configs for ip '10.0.0.1' are connection_creation_rate=10.0

SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=4096
";
        let entities = read_entities(text).unwrap();
        assert_eq!((entities.count, entities.ignored), (6, 1));
        let t = &entities.table;
        let (default, named) = (Some(Part::Default), |n: &str| Some(Part::Named(n.into())));
        assert_eq!(
            t.value(&Entity::of(default.clone(), None), QuotaType::Request),
            Some(50.0)
        );
        assert_eq!(
            t.value(
                &Entity::of(default.clone(), default.clone()),
                QuotaType::Produce
            ),
            Some(1.0e7)
        );
        assert_eq!(
            t.value(
                &Entity::of(named("CN=alice,O=acme"), default.clone()),
                QuotaType::Fetch
            ),
            Some(2048.0)
        );
        assert_eq!(
            t.value(
                &Entity::of(default.clone(), named("app")),
                QuotaType::ControllerMutation
            ),
            Some(5.0)
        );
        assert_eq!(
            t.value(&Entity::client("it's"), QuotaType::Produce),
            Some(3000.0),
            "a quote inside a name does not end it"
        );
        assert_eq!(
            t.value(&Entity::of(None, default), QuotaType::Produce),
            Some(100.0)
        );
        // The quoted user with `,` and `=` resolves under its sanitized tag.
        let resolved = t.resolve(QuotaType::Fetch, "CN=alice,O=acme", "any");
        assert_eq!(
            (resolved.tags(), resolved.rule, resolved.limit),
            (
                ("CN%3Dalice%2CO%3Dacme", "any"),
                Rule::UserDefaultClient,
                Some(2048.0)
            )
        );
    }

    #[test]
    fn a_name_may_hold_quotes_and_the_word_are() {
        let entities = read_entities(
            "Quota configs for user-principal 'o'brien are here', client-id 'c' are producer_byte_rate=10.0\n",
        )
        .unwrap();
        assert_eq!(
            entities.table.value(
                &Entity::user_client("o'brien are here", "c"),
                QuotaType::Produce
            ),
            Some(10.0)
        );
    }

    #[test]
    fn a_line_it_cannot_read_is_named_by_its_number() {
        for (text, why) in [
            (
                "\nConfigs for user-principal 'u' are producer_byte_rate=1.0",
                "line 2: not a line of kafka-configs",
            ),
            (
                "Quota configs for user-principal 'u' producer_byte_rate=1.0",
                "line 1: no \" are \"",
            ),
            (
                "Quota configs for user-principal 'u are producer_byte_rate=1.0",
                "line 1: the user-principal name has no closing quote",
            ),
            (
                "Quota configs for user 'u' are producer_byte_rate=1.0",
                "line 1: `user 'u'` is not",
            ),
            (
                "Quota configs for user-principal 'u' are producer_byte_rate=fast",
                "line 1: `fast` is not a number",
            ),
            (
                "Quota configs for user-principal 'u' are byte_rate=1.0",
                "line 1: `byte_rate` is not a user or client-id quota",
            ),
            (
                "Quota configs for client-id 'c', client-id 'd' are producer_byte_rate=1.0",
                "line 1: client-id twice",
            ),
        ] {
            let error = read_entities(text).unwrap_err();
            assert!(error.starts_with(why), "{text:?}: {error}");
        }
    }

    #[test]
    fn the_worked_example_per_client_of_user2() {
        for (client, limits, group) in [
            ("clientA", "producer_byte_rate: 10 bytes/s\n    group: user=user2,client-id=clientA\n    rule 1:", "consumer_byte_rate: 20 bytes/s"),
            ("clientB", "producer_byte_rate: 30 bytes/s\n    group: user=user2,client-id=clientB\n    rule 1:", "consumer_byte_rate: 40 bytes/s"),
            ("clientC", "producer_byte_rate: 4056 bytes/s\n    group: user=user2\n    rule 3: <user>", "consumer_byte_rate: 8132 bytes/s\n    group: user=user2\n"),
        ] {
            let (code, out) = explain(&format!("--quota --user user2 --client-id {client} --quota-file -"), EXAMPLE);
            assert_eq!(code, 0, "{out}");
            assert!(out.starts_with(&format!("user user2 with client id {client} (3 quota entities)\n")), "{out}");
            assert!(out.contains(limits) && out.contains(group), "{client}: {out}");
            assert!(out.contains(&format!("  request_percentage: unthrottled\n    group: user=user2,client-id={client}\n    no quota applies: unthrottled\n")), "{out}");
            assert!(!out.contains("note:"), "{out}");
        }
    }

    #[test]
    fn json_and_the_note_of_an_oversubscribed_remainder() {
        let text = "Quota configs for user-principal 'u' are producer_byte_rate=2000.0\nQuota configs for user-principal 'u', client-id 'big' are producer_byte_rate=1990.0\n";
        let (code, out) = explain("--quota --user u --client-id other --quota-file -", text);
        assert_eq!(code, 0, "{out}");
        assert!(
            out.contains("producer_byte_rate: 49 bytes/s\n    group: user=u\n    rule 3:"),
            "{out}"
        );
        assert!(
            out.contains(
                "note: the user's reserved sub-quotas leave less than 49 bytes/s of its total"
            ),
            "{out}"
        );
        let (_, out) = explain(
            "--quota --json --user u --client-id other --quota-file -",
            text,
        );
        let answer: Value = serde_json::from_str(out.trim()).unwrap();
        let produce = &answer["quotas"][0];
        assert_eq!(produce["type"], "producer_byte_rate");
        assert_eq!(produce["limit"], 49.0);
        assert_eq!(produce["floor"], 49.0);
        assert_eq!(produce["oversubscribed"], true);
        assert_eq!(produce["group"], json!({"user": "u", "client-id": ""}));
        assert_eq!(
            answer["quotas"][1]["group"],
            json!({"user": "u", "client-id": "other"}),
            "unthrottled, measured in a group of its own"
        );
        assert_eq!(answer["quotas"][1]["limit"], Value::Null);
        let (_, out) = explain(
            "--quota --json --user u --client-id big --quota-file -",
            text,
        );
        let answer: Value = serde_json::from_str(out.trim()).unwrap();
        assert_eq!(
            answer["quotas"][0]["oversubscribed"], false,
            "the sub-quota itself is not floored"
        );
    }

    #[test]
    fn a_file_of_user_client_entities_alone_is_answered_with_a_warning() {
        let pairs_only =
            "Quota configs for user-principal 'u', client-id 'a' are producer_byte_rate=10.0\n";
        let (code, out) = explain("--quota --user u --client-id c --quota-file -", pairs_only);
        assert_eq!(code, 0, "{out}");
        assert!(
            out.starts_with("user u with client id c (1 quota entities)\nwarning: the quota entities are all <user, client> ones"),
            "{out}"
        );
        let (_, out) = explain("--quota --json --user u --quota-file -", pairs_only);
        let answer: Value = serde_json::from_str(out.trim()).unwrap();
        assert_eq!(
            answer["warnings"].as_array().map(Vec::len),
            Some(1),
            "{out}"
        );
        let complete = format!(
            "{pairs_only}Quota configs for user-principal 'u' are producer_byte_rate=4096.0\n"
        );
        let (_, out) = explain("--quota --user u --client-id c --quota-file -", &complete);
        assert!(!out.contains("warning:"), "{out}");
        assert!(out.contains("producer_byte_rate: 4086 bytes/s"), "{out}");
    }

    #[test]
    fn the_smallest_bound_follows_the_brokers_socket_request_max_bytes() {
        let text = "Quota configs for user-principal 'u' are producer_byte_rate=2000.0\nQuota configs for user-principal 'u', client-id 'big' are producer_byte_rate=1999.5\n";
        let (_, out) = explain("--quota --user u --client-id other --quota-file -", text);
        assert!(out.contains("producer_byte_rate: 49 bytes/s"), "{out}");
        let (_, out) = explain(
            "--quota --user u --client-id other --socket-request-max-bytes 1048576 --quota-file -",
            text,
        );
        assert!(out.contains("producer_byte_rate: 1 bytes/s"), "{out}");
        let (code, out) = explain(
            "--quota --user u --socket-request-max-bytes 0 --quota-file -",
            text,
        );
        assert_eq!(code, 2, "{out}");
        assert!(out.contains("socket.request.max.bytes"), "{out}");
    }

    #[test]
    fn an_empty_quota_file_is_an_error_not_unthrottled() {
        let file = std::env::temp_dir().join(format!("gf-empty-quotas-{}.txt", std::process::id()));
        std::fs::write(&file, "\n").unwrap();
        let (code, out) = explain(
            &format!("--quota --user alice --quota-file {}", file.display()),
            "",
        );
        std::fs::remove_file(&file).unwrap();
        assert_eq!(code, 1, "{out}");
        assert!(
            out.contains(&format!("{} is empty", file.display())),
            "{out}"
        );
        assert!(out.contains("kafka-configs --describe"), "{out}");
        assert!(!out.contains("unthrottled\n"), "{out}");
        let (code, out) = explain("--quota --user alice --quota-file -", "");
        assert_eq!(code, 1, "{out}");
        assert!(out.contains("standard input is empty"), "{out}");
    }

    #[test]
    fn a_cluster_without_quota_entities_leaves_every_client_unthrottled() {
        let (code, out) = explain(
            "--quota --user alice --bootstrap-server localhost:9092 --quota-file -",
            "",
        );
        assert_eq!(code, 0, "{out}");
        assert!(out.contains("producer_byte_rate: unthrottled"), "{out}");
        let (code, out) = explain(
            "--quota --user alice --bootstrap-server localhost:9092 --quota-file -",
            "hello\n",
        );
        assert_eq!(code, 1, "{out}");
        assert!(
            out.contains("the cluster at localhost:9092: line 1"),
            "{out}"
        );
    }

    #[test]
    fn usage_and_file_errors_have_their_own_exit_codes() {
        assert_eq!(explain("--quota --client-id c --quota-file -", "").0, 2);
        assert_eq!(explain("--quota --user u", "").0, 2);
        assert_eq!(
            explain("--quota --user u --quota-file - --topic t", "").0,
            2
        );
        let (code, out) = explain("--quota --user u --quota-file /nonexistent-quotas.txt", "");
        assert_eq!(code, 1, "{out}");
        assert!(
            out.contains("--quota-file: /nonexistent-quotas.txt does not exist"),
            "{out}"
        );
        let (code, out) = explain("--quota --user u --quota-file -", "hello\n");
        assert_eq!(code, 1, "{out}");
        assert!(
            out.contains("standard input: line 1: not a line of kafka-configs"),
            "{out}"
        );
    }
}
