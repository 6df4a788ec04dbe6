//! `explain`: answers one question (or many) as the agent would, and says why.
//!
//! ```text
//! grantforge-explain --snapshot FILE | --cache-dir DIR [--signing-key FILE]  [--json] [--super-users 'User:admin;...']
//!     --principal User:alice --operation READ (--topic T | --group G | --cluster | --transactional-id T
//!     | --delegation-token T | --user U) [--host 10.1.2.3] [--listener NAME] [--client-id ID]
//! grantforge-explain --snapshot FILE [--json] --batch   < questions (one per line, request options only)
//! grantforge-explain --quota --user U [--client-id C] --quota-file FILE|- [--socket-request-max-bytes N] [--json]
//! ```
//!
//! The answer: the decision, the deciding policy (id, name, priority), every policy whose items
//! matched or were excepted, and the ACL rows that apply to the resource. The same code serves the
//! `grantforge-explain` binary and `java -jar grantforge-agent-kafka-<version>.jar explain`. With
//! `--quota` it answers a quota question instead: see `quota`.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::Arc;

use grantforge_engine::{Instant, Item, PolicyExplanation, PolicyRecord, Snapshot};
use grantforge_kafka::{
    AclRow, AclView, Action, KafkaContext, KafkaPolicies, Operation, Principal, RequestContext,
    ResourceType, CLUSTER_NAME,
};
use serde_json::json;

use crate::config::unreadable;
use crate::rules::{self, SuperUsers};
use crate::source::disk_cache::SnapshotCache;
use crate::source::file::read_policy_file;
use crate::trust::SigningKey;

mod answer;
mod quota;

use answer::{Answer, ItemRef, MatchedPolicy, PolicyRef};

pub const USAGE: &str = "usage: explain (--snapshot FILE | --cache-dir DIR [--signing-key FILE]) [--json] [--super-users 'User:a;User:b']
         --principal User:NAME --operation OP (--topic T | --group G | --cluster | --transactional-id T
         | --delegation-token T | --user U) [--host IP] [--listener NAME] [--client-id ID]
       explain (--snapshot FILE | --cache-dir DIR) [--json] --batch < questions   (one question per line)
       explain --quota --user NAME [--client-id ID] (--quota-file FILE | --quota-file - | --bootstrap-server B [--command-config F])
               [--socket-request-max-bytes N] [--json]
OP is Kafka's operation (READ, WRITE, DESCRIBE, ...). The answer says what the agent would decide and why.
--quota: the group, rule and limit the agent's quota callback gives a connection, per quota type. FILE holds what
`kafka-configs.sh --describe` prints for --entity-type users, for --entity-type clients and for both (three
commands: each lists only its own kind of entity); --bootstrap-server reads a cluster's
quotas (Admin API) and needs kafka-clients on the class path: java -cp \"<agent jar>:$KAFKA_HOME/libs/*\"
org.devlive.grantforge.kafka.agent.tools.Main explain --quota ...";

/// Whether these arguments read standard input: `--batch`, or `--quota-file -`.
pub fn reads_stdin(args: &[String]) -> bool {
    args.iter().any(|a| a == "--batch")
        || args
            .windows(2)
            .any(|w| w[0] == "--quota-file" && w[1] == "-")
}

/// Runs `explain` with its arguments and standard input; returns the exit code and the output.
pub fn run(args: &[String], stdin: &str) -> (i32, String) {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        return (0, format!("{USAGE}\n"));
    }
    let outcome = match args.iter().position(|a| a == "--quota") {
        Some(at) => quota::run(&[&args[..at], &args[at + 1..]].concat(), stdin),
        None => run_inner(args, stdin),
    };
    match outcome {
        Ok(output) => (0, output),
        Err(Failure::Usage(message)) => (2, format!("explain: {message}\n{USAGE}\n")),
        Err(Failure::Input(message)) => (1, format!("explain: {message}\n")),
    }
}

enum Failure {
    Usage(String),
    /// The policies or the quota entities cannot be read.
    Input(String),
}

/// Where the policies come from.
enum Source {
    Snapshot(PathBuf),
    /// The agent's cache directory: the snapshot is verified with the pinned key (or `--signing-key`).
    CacheDir(PathBuf),
}

struct Options {
    source: Source,
    signing_key: Option<PathBuf>,
    json: bool,
    batch: bool,
    super_users: SuperUsers,
    question: Vec<String>,
}

fn run_inner(args: &[String], stdin: &str) -> Result<String, Failure> {
    let options = parse_options(args)?;
    let (bytes, shown) = read_source(&options)?;
    let snapshot = Snapshot::parse(&bytes).map_err(|e| Failure::Input(format!("{shown}: {e}")))?;
    let now = Instant::now();
    let policies = KafkaPolicies::from_snapshot(&snapshot, now)
        .map_err(|e| Failure::Input(format!("{shown}: {e}")))?;
    // An agent on this cache directory refuses everything while it records a refused service type.
    let refusing_service_type = matches!(&options.source, Source::CacheDir(dir) if SnapshotCache::at(dir).refused_service_type().ok().flatten().is_some());
    let explainer = Explainer {
        snapshot: &snapshot,
        policies: &policies,
        super_users: &options.super_users,
        refusing_service_type,
        now,
        by_id: index(&snapshot),
        acl_view: policies.acl_view(),
    };
    let questions: Vec<Vec<String>> = if options.batch {
        stdin
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
            .map(split_words)
            .collect()
    } else {
        vec![options.question.clone()]
    };
    let mut out = String::new();
    for words in questions {
        let question = parse_question(&words);
        match (question.as_ref().map(|q| explainer.answer(q)), options.json) {
            (Ok(answer), true) => out.push_str(&(answer.to_json().to_string() + "\n")),
            (Ok(answer), false) => out.push_str(&answer.to_text()),
            (Err(message), _) if !options.batch => return Err(Failure::Usage(message.clone())),
            (Err(message), true) => out.push_str(
                &(json!({"error": message, "question": words.join(" ")}).to_string() + "\n"),
            ),
            (Err(message), false) => {
                let _ = writeln!(out, "{}\n  error: {message}\n", words.join(" "));
            }
        }
    }
    Ok(out)
}

/// The snapshot bytes, verified when they come from a cache directory.
fn read_source(options: &Options) -> Result<(Vec<u8>, String), Failure> {
    match &options.source {
        Source::Snapshot(file) => {
            let bytes = read_policy_file(file, u64::MAX >> 1, "--snapshot")
                .map_err(|e| Failure::Input(e.to_string()))?;
            Ok((bytes, file.display().to_string()))
        }
        Source::CacheDir(dir) => {
            let cache = SnapshotCache::at(dir);
            let shown = dir.display().to_string();
            let download = cache
                .load()
                .map_err(Failure::Input)?
                .ok_or_else(|| Failure::Input(format!("{shown} holds no cached snapshot")))?;
            let key_text = match &options.signing_key {
                Some(file) => std::fs::read_to_string(file).map_err(|e| Failure::Input(format!("--signing-key: {}", unreadable(&file.display(), &e))))?,
                None => cache
                    .pinned_key()
                    .ok()
                    .flatten()
                    .ok_or_else(|| Failure::Input(format!("{shown} has no pinned signing key; give the server's key with --signing-key FILE")))?,
            };
            let key = SigningKey::from_base64(&key_text)
                .map_err(|e| Failure::Input(format!("the signing key is {e}")))?;
            if key.key_id() != download.key_id || !key.verifies(&download.body, &download.signature)
            {
                return Err(Failure::Input(format!("the cached snapshot in {shown} does not verify under signing key {}; it is not used", key.key_id())));
            }
            Ok((download.body, shown))
        }
    }
}

fn parse_options(args: &[String]) -> Result<Options, Failure> {
    let mut options = Options {
        source: Source::Snapshot(PathBuf::new()),
        signing_key: None,
        json: false,
        batch: false,
        super_users: SuperUsers::default(),
        question: Vec::new(),
    };
    let mut source = None;
    let mut i = 0;
    while i < args.len() {
        let value = |i: usize| {
            args.get(i + 1)
                .cloned()
                .ok_or_else(|| Failure::Usage(format!("{} needs a value", args[i])))
        };
        match args[i].as_str() {
            "--snapshot" => source = Some(Source::Snapshot(PathBuf::from(value(i)?))),
            "--cache-dir" => source = Some(Source::CacheDir(PathBuf::from(value(i)?))),
            "--signing-key" => options.signing_key = Some(PathBuf::from(value(i)?)),
            "--super-users" => {
                options.super_users = SuperUsers::parse(&value(i)?)
                    .map_err(|e| Failure::Usage(format!("--super-users: {e}")))?
            }
            "--json" => {
                options.json = true;
                i += 1;
                continue;
            }
            "--batch" => {
                options.batch = true;
                i += 1;
                continue;
            }
            _ => {
                options.question.push(args[i].clone());
                i += 1;
                continue;
            }
        }
        i += 2;
    }
    options.source = source.ok_or_else(|| {
        Failure::Usage("name the policies with --snapshot FILE or --cache-dir DIR".to_string())
    })?;
    if options.batch && !options.question.is_empty() {
        return Err(Failure::Usage(
            "--batch reads the questions from standard input; give none on the command line"
                .to_string(),
        ));
    }
    Ok(options)
}

/// One request, as Kafka would hand it to the authorizer.
struct Question {
    principal: Principal,
    operation: Operation,
    resource_type: ResourceType,
    name: String,
    host: Option<IpAddr>,
    listener: String,
    client_id: String,
}

/// Every operation `--operation` takes, as Kafka's tools name them.
fn kafka_operations() -> String {
    Operation::ALL
        .iter()
        .map(|op| op.kafka_name())
        .collect::<Vec<_>>()
        .join(", ")
}

fn parse_question(words: &[String]) -> Result<Question, String> {
    let mut principal = None;
    let mut operation = None;
    let mut resource = None;
    let (mut host, mut listener, mut client_id) = (None, String::new(), String::new());
    let mut i = 0;
    while i < words.len() {
        let flag = words[i].as_str();
        if flag == "--cluster" {
            resource = Some((ResourceType::Cluster, CLUSTER_NAME.to_string()));
            i += 1;
            continue;
        }
        let value = words
            .get(i + 1)
            .cloned()
            .ok_or_else(|| format!("{flag} needs a value"))?;
        match flag {
            "--principal" => {
                let (kind, name) = value.split_once(':').ok_or_else(|| {
                    format!("--principal `{value}` is not Type:name, such as User:alice")
                })?;
                principal = Some(Principal {
                    principal_type: kind.to_string(),
                    name: name.to_string(),
                });
            }
            "--operation" => {
                let op =
                    Operation::from_access_type(&value.to_ascii_lowercase()).ok_or_else(|| {
                        format!(
                            "--operation `{value}` is not a Kafka operation; give one of {}",
                            kafka_operations()
                        )
                    })?;
                operation = Some(op);
            }
            "--host" => {
                host = Some(
                    value
                        .parse()
                        .map_err(|_| format!("--host `{value}` is not an IP address"))?,
                )
            }
            "--listener" => listener = value,
            "--client-id" => client_id = value,
            _ => {
                let level = flag.strip_prefix("--").unwrap_or(flag).replace('-', "_");
                let resource_type = ResourceType::from_level(&level)
                    .ok_or_else(|| format!("unknown option {flag}"))?;
                resource = Some((resource_type, value));
            }
        }
        i += 2;
    }
    let (resource_type, name) = resource.ok_or("name the resource: --topic, --group, --cluster, --transactional-id, --delegation-token or --user")?;
    Ok(Question {
        principal: principal.ok_or("name the principal: --principal User:NAME")?,
        operation: operation
            .ok_or("name the operation: --operation READ (or WRITE, DESCRIBE, ...)")?,
        resource_type,
        name,
        host,
        listener,
        client_id,
    })
}

struct Explainer<'a> {
    snapshot: &'a Snapshot,
    policies: &'a KafkaPolicies,
    super_users: &'a SuperUsers,
    /// A snapshot of another service type is being refused (the cache directory's record).
    refusing_service_type: bool,
    now: Instant,
    by_id: HashMap<i64, &'a PolicyRecord>,
    acl_view: Arc<AclView>,
}

fn index(snapshot: &Snapshot) -> HashMap<i64, &PolicyRecord> {
    snapshot.policies.iter().map(|p| (p.id, p)).collect()
}

impl Explainer<'_> {
    fn answer<'q>(&'q self, q: &'q Question) -> Answer<'q> {
        let context = RequestContext {
            principal: q.principal.clone(),
            conditions: KafkaContext {
                client_address: q.host,
                listener: q.listener.clone(),
                client_id: q.client_id.clone(),
            },
            request_type: -1,
            request_version: -1,
        };
        let action = Action {
            operation: Some(q.operation),
            resource_type: Some(q.resource_type),
            literal: true,
            name: &q.name,
            log_if_allowed: false,
            log_if_denied: false,
        };
        // The broker's order of rules (`rules`), then the snapshot's own (`KafkaPolicies::decide`).
        let in_force = rules::before_policies(self.super_users, &q.principal, || {
            let refusing = rules::Refusing {
                service_type: self.refusing_service_type,
                too_old: false,
            };
            rules::in_force(refusing, Some(self.policies))
        });
        let reason = in_force.map_or_else(
            |reason| reason,
            |policies| policies.decide(&context, &action, self.now),
        );
        let matched = match in_force {
            Ok(policies) => policies
                .explain(&context, &action, self.now)
                .and_then(Result::ok)
                .map(|e| e.policies.iter().map(|p| self.matched(p)).collect())
                .unwrap_or_default(),
            Err(_) => Vec::new(),
        };
        Answer {
            question: q,
            service: &self.snapshot.service,
            policy_version: self.snapshot.policy_version,
            acls: self.acl_rows_for(q),
            allowed: reason.allowed(),
            reason: reason.describe(),
            left_to_kafka_in_hybrid_mode: reason.undetermined(),
            deciding: reason.policy_id().map(|id| PolicyRef {
                id,
                named: self
                    .by_id
                    .get(&id)
                    .map(|p| (p.name.as_str(), p.priority.as_str())),
            }),
            matched,
        }
    }

    fn matched(&self, p: &PolicyExplanation) -> MatchedPolicy<'_> {
        let record = self.by_id.get(&p.id).copied();
        let items = |which: &[usize], list: fn(&PolicyRecord) -> &Vec<Item>| -> Vec<ItemRef<'_>> {
            which
                .iter()
                .map(|&index| ItemRef {
                    index,
                    item: record.and_then(|r| list(r).get(index)),
                })
                .collect()
        };
        MatchedPolicy {
            id: p.id,
            name: record.map_or("", |r| r.name.as_str()),
            priority: p.priority.as_str(),
            branch: p.branch,
            deny: items(&p.deny, |r| &r.deny),
            deny_exceptions: items(&p.deny_exceptions, |r| &r.deny_exceptions),
            allow: items(&p.allow, |r| &r.allow),
            allow_exceptions: items(&p.allow_exceptions, |r| &r.allow_exceptions),
        }
    }

    /// The ACL rows of this resource, as `kafka-acls --list --topic T` (Kafka's MATCH filter) shows them.
    fn acl_rows_for(&self, q: &Question) -> Vec<AclRow<'_>> {
        self.acl_view
            .rows()
            .filter(|r| r.matches_resource(q.resource_type, &q.name))
            .collect()
    }
}

/// Splits a batch line into words; double quotes group words with spaces.
fn split_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => {
                if !current.is_empty() {
                    words.push(std::mem::take(&mut current));
                }
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn fixture() -> String {
        crate::test_support::in_crate("../../tests/fixtures/snapshots/e2e.json")
            .display()
            .to_string()
    }

    fn explain(words: &str, stdin: &str) -> (i32, String) {
        let mut args: Vec<String> = vec!["--snapshot".into(), fixture()];
        args.extend(split_words(words));
        run(&args, stdin)
    }

    #[test]
    fn says_who_decided_and_which_items_matched() {
        let (code, out) = explain(
            "--principal User:alice --operation DESCRIBE --topic payments",
            "",
        );
        assert_eq!(code, 0, "{out}");
        assert!(
            out.contains("decision: DENIED by policy 5 \"no payments for alice\" (NORMAL)"),
            "{out}"
        );
        assert!(out.contains("deny item 1: users alice: write"), "{out}");
        assert!(
            out.contains("3 \"everyone sees the topics\" (NORMAL): allows"),
            "{out}"
        );
        assert!(
            out.contains("DENY User:alice WRITE on topic LITERAL payments (host *)"),
            "{out}"
        );
    }

    #[test]
    fn json_for_scripts_and_super_users() {
        let (code, out) = explain(
            "--json --principal User:bob --operation WRITE --topic orders",
            "",
        );
        assert_eq!(code, 0);
        let answer: Value = serde_json::from_str(out.trim()).unwrap();
        assert_eq!(answer["decision"], "DENIED");
        assert_eq!(answer["decidingPolicy"], Value::Null);
        assert_eq!(answer["acls"].as_array().unwrap().len(), 5);
        let (_, out) = explain(
            "--json --super-users User:bob --principal User:bob --operation WRITE --topic orders",
            "",
        );
        let answer: Value = serde_json::from_str(out.trim()).unwrap();
        assert_eq!(answer["decision"], "ALLOWED");
        assert_eq!(answer["reason"], "a super user: never checked");
    }

    #[test]
    fn batch_answers_every_line_and_reports_bad_ones() {
        let stdin = "--principal User:alice --operation READ --group alice-1\n# a comment\n--principal User:x --operation FLY --topic t\n--principal User:alice --operation IDEMPOTENT_WRITE --cluster\n";
        let (code, out) = explain("--json --batch", stdin);
        assert_eq!(code, 0);
        let answers: Vec<Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(answers.len(), 3);
        assert_eq!(answers[0]["decision"], "ALLOWED");
        assert_eq!(answers[0]["decidingPolicy"]["id"], 4);
        assert!(answers[1]["error"].as_str().unwrap().contains("FLY"));
        assert_eq!(answers[2]["decision"], "DENIED");
        assert_eq!(answers[2]["request"]["resource"], "kafka-cluster");
    }

    #[test]
    fn a_refused_create_of_topics_says_what_a_streams_application_needs() {
        for resource in ["--topic st-app-by-key-repartition", "--cluster"] {
            let (code, out) = explain(
                &format!("--principal User:bob --operation CREATE {resource}"),
                "",
            );
            assert_eq!(code, 0, "{out}");
            assert!(out.contains("decision: DENIED"), "{out}");
            assert!(
                out.contains("note: a Kafka Streams application on the streams protocol")
                    && out.contains("MISSING_INTERNAL_TOPICS")
                    && out.contains(
                        "grant create on the cluster, or on the topics <application.id>-*"
                    ),
                "{out}"
            );
            let (_, json) = explain(
                &format!("--json --principal User:bob --operation CREATE {resource}"),
                "",
            );
            let answer: Value = serde_json::from_str(json.trim()).unwrap();
            assert!(answer["note"]
                .as_str()
                .unwrap()
                .contains("MISSING_INTERNAL_TOPICS"));
        }
        // nothing to say of another refusal, nor of an allowed CREATE
        let (_, out) = explain("--principal User:bob --operation WRITE --topic orders", "");
        assert!(
            out.contains("decision: DENIED") && !out.contains("note:"),
            "{out}"
        );
        let (_, out) = explain(
            "--super-users User:bob --principal User:bob --operation CREATE --cluster",
            "",
        );
        assert!(
            out.contains("decision: ALLOWED") && !out.contains("note:"),
            "{out}"
        );
    }

    #[test]
    fn an_unknown_operation_lists_every_operation_kafka_has() {
        let (code, out) = explain("--principal User:alice --operation FLY --topic t", "");
        assert_eq!(code, 2, "{out}");
        assert!(
            out.contains("--operation `FLY` is not a Kafka operation; give one of ALL, READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, CREATE_TOKENS, DESCRIBE_TOKENS, TWO_PHASE_COMMIT"),
            "{out}"
        );
    }

    #[test]
    fn help_is_an_answer_not_an_error() {
        for asked in ["--help", "--quota --help", "--snapshot x.json -h"] {
            let (code, out) = explain(asked, "");
            assert_eq!(code, 0, "{asked}: {out}");
            assert!(out.starts_with("usage: explain"), "{asked}: {out}");
            assert!(!out.contains("explain: help"), "{out}");
        }
    }

    #[test]
    fn usage_and_file_errors_have_their_own_exit_codes() {
        assert_eq!(explain("--principal User:alice --operation READ", "").0, 2);
        // Below a directory that is never created: missing on any machine, whoever runs the test.
        let missing = std::env::temp_dir()
            .join(format!("gf-explain-never-created-{}", std::process::id()))
            .join("snapshot.json");
        let (code, out) = run(&["--snapshot".into(), missing.display().to_string()], "");
        assert_eq!(code, 1, "{out}");
        // the option the user gave the file under, not the broker's key
        assert!(
            out.starts_with("explain: --snapshot: ")
                && out.contains("does not exist; point --snapshot at"),
            "{out}"
        );
        assert!(!out.contains("grantforge.policy.file"), "{out}");
    }
}
