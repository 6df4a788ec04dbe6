//! Access events in the standard schemas auditors' tools read: OCSF's API Activity class and
//! CloudEvents 1.0 (structured JSON). Each record carries the fold (count, first and last time),
//! so a folded event stays one record that says how many accesses it stands for.

use grantforge_kafka::{Operation, ResourceType};
use serde_json::{json, Value};

use crate::audit::events::{api_name, AccessEvent};

/// The OCSF release the records follow, and its API Activity class (category 6, Application
/// Activity).
pub const OCSF_VERSION: &str = "1.8.0";
const OCSF_API_ACTIVITY: u32 = 6003;
const OCSF_APPLICATION_ACTIVITY: u32 = 6;

/// The CloudEvents `type` of an access event.
pub const CLOUD_EVENT_TYPE: &str = "org.devlive.grantforge.kafka.access";

/// Who writes the records: the agent's instance and version.
pub struct Producer<'a> {
    pub instance: &'a str,
    pub version: &'a str,
}

/// OCSF's activity of an API call, from the Kafka operation asked: Create 1, Read 2, Update 3,
/// Delete 4, Other 99.
fn ocsf_activity(operation: Option<Operation>) -> (u32, &'static str) {
    use Operation::*;
    match operation {
        Some(Create | CreateTokens) => (1, "Create"),
        Some(Read | Describe | DescribeConfigs | DescribeTokens) => (2, "Read"),
        Some(Write | Alter | AlterConfigs | IdempotentWrite | TwoPhaseCommit) => (3, "Update"),
        Some(Delete) => (4, "Delete"),
        Some(All | ClusterAction) | None => (99, "Other"),
    }
}

/// The event as an OCSF API Activity record: the principal as the actor with the decision and
/// policy as its authorization, the request as the API, the client's address as the source, the
/// resource, the outcome as status, and the fold as `count`, `start_time` and `end_time`.
pub fn ocsf_api_activity(event: &AccessEvent, producer: &Producer<'_>) -> Value {
    let (activity_id, activity) = ocsf_activity(event.access.operation);
    let fields = event.to_json();
    let decision = if event.allowed { "Allowed" } else { "Denied" };
    let mut authorization = json!({"decision": decision});
    if let Some(id) = event.policy_id {
        authorization["policy"] =
            json!({"uid": id.to_string(), "version": event.policy_version.to_string()});
    }
    json!({
        "class_uid": OCSF_API_ACTIVITY,
        "class_name": "API Activity",
        "category_uid": OCSF_APPLICATION_ACTIVITY,
        "category_name": "Application Activity",
        "activity_id": activity_id,
        "activity_name": activity,
        "type_uid": OCSF_API_ACTIVITY * 100 + activity_id,
        "severity_id": if event.allowed { 1 } else { 2 },
        "status_id": if event.allowed { 1 } else { 2 },
        "status": if event.allowed { "Success" } else { "Failure" },
        "time": event.last.unix_millis(),
        "start_time": event.first.unix_millis(),
        "end_time": event.last.unix_millis(),
        "count": event.count,
        "message": event.log_line(),
        "metadata": {
            "version": OCSF_VERSION,
            "uid": fields["eventId"],
            "product": {
                "name": "GrantForge agent for Apache Kafka",
                "vendor_name": "GrantForge",
                "version": producer.version,
            },
            "log_provider": producer.instance,
        },
        "actor": {
            "user": {"name": fields["user"], "type": event.access.principal_type},
            "authorizations": [authorization],
        },
        "api": {
            "operation": api_name(event.access.request_type),
            "version": event.request_version.to_string(),
            "service": {"name": "kafka"},
            "request": {"uid": fields["eventId"]},
        },
        "src_endpoint": source_endpoint(event),
        "resources": [{
            "type": event.access.resource_type.map_or("unknown", ResourceType::level),
            "name": fields["resource"],
        }],
        "unmapped": {
            "listener": event.listener,
            "client_id": event.client_id,
            "access_type": fields["accessType"],
        },
    })
}

/// The client's address; an event without one (a principal's overflow) names the listener.
fn source_endpoint(event: &AccessEvent) -> Value {
    match event.access.client {
        Some(ip) => json!({"ip": ip.to_string()}),
        None => json!({"name": event.listener}),
    }
}

/// The event as a CloudEvents 1.0 record (structured JSON): `data` is the event as GrantForge
/// takes it, so the two sinks say the same thing in the same words.
pub fn cloud_event(event: &AccessEvent, producer: &Producer<'_>) -> Value {
    let data = event.to_json();
    json!({
        "specversion": "1.0",
        "id": data["eventId"],
        "source": format!("/grantforge/kafka/{}", producer.instance),
        "type": CLOUD_EVENT_TYPE,
        "subject": format!("{}:{}", data["resourceType"].as_str().unwrap_or("unknown"), data["resource"].as_str().unwrap_or("")),
        "time": event.last.to_string(),
        "datacontenttype": "application/json",
        "data": data,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::events::tests::folded_produce;
    use crate::audit::events::Comparison;
    use crate::audit::events::Decider;
    use crate::keys::Access;

    const PRODUCER: Producer<'static> = Producer {
        instance: "broker-1",
        version: "0.1.0",
    };

    /// A schema of `tests/fixtures/schemas/` (`README.md` there says where each comes from).
    fn schema(name: &str) -> jsonschema::Validator {
        let path = crate::test_support::in_crate("../../tests/fixtures/schemas").join(name);
        let schema: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        jsonschema::options()
            .should_validate_formats(true)
            .build(&schema)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    fn assert_valid(validator: &jsonschema::Validator, record: &Value) {
        let errors: Vec<String> = validator
            .iter_errors(record)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{errors:#?}\nin {record:#}");
    }

    /// Events of every shape the audit writes: folded and allowed, refused by no policy, a
    /// super user's, an overflow group (no address, no resource), a disagreement, unknown names.
    fn events() -> Vec<AccessEvent> {
        let folded = AccessEvent {
            event_id: "broker-1-e1".into(),
            access: Access {
                client: Some("2001:db8::1".parse().unwrap()),
                ..folded_produce().access
            },
            policy_id: Some(7),
            policy_version: 3,
            ..folded_produce()
        };
        vec![
            AccessEvent {
                access: Access {
                    principal_name: "bob".into(),
                    client: Some("10.0.0.9".parse().unwrap()),
                    ..folded.clone().access
                },
                allowed: false,
                policy_id: None,
                count: 1,
                ..folded.clone()
            },
            AccessEvent {
                access: Access {
                    principal_name: "admin".into(),
                    operation: Some(Operation::Delete),
                    resource_type: Some(ResourceType::Cluster),
                    resource: "kafka-cluster".into(),
                    request_type: 20,
                    ..folded.clone().access
                },
                policy_id: None,
                policy_version: -1,
                ..folded.clone()
            },
            AccessEvent {
                access: Access {
                    client: None,
                    ..folded.clone().access
                },
                overflow: true,
                policy_id: None,
                ..folded.clone()
            },
            AccessEvent {
                comparison: Some(Comparison {
                    decider: Decider::Kafka,
                    kafka_allowed: false,
                    kafka_basis: "no ACL".into(),
                }),
                ..folded.clone()
            },
            AccessEvent {
                access: Access {
                    operation: None,
                    resource_type: None,
                    request_type: 999,
                    ..folded.clone().access
                },
                ..folded.clone()
            },
            folded,
        ]
    }

    #[test]
    fn every_record_is_valid_against_its_published_schema_and_keeps_the_event() {
        let ocsf_schema = schema("ocsf-1.8.0-api_activity.json");
        let cloud_schema = schema("cloudevents-1.0.json");
        for event in events() {
            let ocsf = ocsf_api_activity(&event, &PRODUCER);
            assert_valid(&ocsf_schema, &ocsf);
            let fold = [&ocsf["count"], &ocsf["start_time"], &ocsf["end_time"]];
            let expected = [
                json!(event.count),
                json!(event.first.unix_millis()),
                json!(event.last.unix_millis()),
            ];
            assert_eq!(fold, expected.each_ref(), "the fold");
            assert_eq!(ocsf["status_id"], if event.allowed { 1 } else { 2 });

            let cloud = cloud_event(&event, &PRODUCER);
            assert_valid(&cloud_schema, &cloud);
            assert_eq!(cloud["data"], event.to_json());
            assert_eq!(cloud["id"], event.to_json()["eventId"]);
        }
    }

    /// The vendored schemas reject what they must: the checks above cannot pass on any record.
    #[test]
    fn the_schemas_refuse_a_record_missing_what_they_require() {
        let event = &events()[0];
        let mut ocsf = ocsf_api_activity(event, &PRODUCER);
        ocsf.as_object_mut().unwrap().remove("actor");
        assert!(!schema("ocsf-1.8.0-api_activity.json").is_valid(&ocsf));
        let mut cloud = cloud_event(event, &PRODUCER);
        cloud["specversion"] = json!("0.3");
        assert!(!schema("cloudevents-1.0.json").is_valid(&cloud));
    }
}
