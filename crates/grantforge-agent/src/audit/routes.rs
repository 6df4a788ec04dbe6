//! The audit's events as the rules of `grantforge.audit.routes` read them (`crate::config::routes`).

use grantforge_kafka::ResourceType;

use crate::audit::events::AccessEvent;
use crate::config::routes::Routable;

impl Routable for AccessEvent {
    fn request_type(&self) -> i16 {
        self.access.request_type
    }

    fn allowed(&self) -> bool {
        self.allowed
    }

    fn resource_type(&self) -> Option<ResourceType> {
        self.access.resource_type
    }

    fn resource(&self) -> &str {
        &self.access.resource
    }
}

#[cfg(test)]
mod tests {
    use crate::audit::events::tests::folded_produce;
    use crate::audit::events::AccessEvent;
    use crate::config::routes::{Kind, Routes, Sink, Sinks};
    use crate::keys::Access;
    use grantforge_kafka::Operation;
    use grantforge_kafka::ResourceType;

    fn all() -> Sinks {
        Sinks::of(&Sink::ALL)
    }

    fn event(
        request_type: i16,
        allowed: bool,
        resource_type: ResourceType,
        name: &str,
    ) -> AccessEvent {
        AccessEvent {
            allowed,
            access: Access {
                request_type,
                resource_type: Some(resource_type),
                resource: name.into(),
                operation: Some(Operation::Write),
                ..folded_produce().access
            },
            ..folded_produce()
        }
    }

    #[test]
    fn without_rules_every_event_goes_to_every_sink() {
        let routes = Routes::parse(all(), "").unwrap();
        assert_eq!(routes, Routes::to_all(all()));
        assert_eq!(routes.route(&folded_produce()), all());
    }

    #[test]
    fn the_first_matching_rule_names_the_sinks_and_the_rest_go_everywhere() {
        let routes = Routes::parse(
            all(),
            "management,any,*=topic+grantforge; produce,denied,topic:pay*=log; any,allowed,group:app=topic",
        )
        .unwrap();
        let to = |e: &AccessEvent| format!("{:?}", routes.route(e));
        assert_eq!(
            to(&event(19, true, ResourceType::Cluster, "kafka-cluster")),
            "grantforge+topic"
        );
        assert_eq!(to(&event(0, false, ResourceType::Topic, "payments")), "log");
        assert_eq!(
            to(&event(0, true, ResourceType::Topic, "payments")),
            "grantforge+topic+log",
            "allowed: no rule"
        );
        assert_eq!(
            to(&event(0, false, ResourceType::Topic, "orders")),
            "grantforge+topic+log",
            "another topic"
        );
        assert_eq!(to(&event(11, true, ResourceType::Group, "app")), "topic");
        assert_eq!(
            to(&event(11, true, ResourceType::Group, "app-2")),
            "grantforge+topic+log",
            "a literal name"
        );
        assert_eq!(
            to(&event(1, true, ResourceType::Group, "app")),
            "topic",
            "a fetch's group is consume"
        );
        let delete = event(20, true, ResourceType::Topic, "orders");
        let deleted = std::slice::from_ref(&delete);
        assert_eq!(routes.select(deleted, Sink::Log), vec![]);
        assert_eq!(routes.select(deleted, Sink::Topic), vec![delete.clone()]);
    }

    #[test]
    fn kinds_of_request_follow_kafkas_request_types() {
        assert_eq!(Kind::of_request(0), Kind::Produce);
        assert_eq!(Kind::of_request(26), Kind::Produce);
        assert_eq!(Kind::of_request(1), Kind::Consume);
        assert_eq!(Kind::of_request(68), Kind::Consume);
        assert_eq!(Kind::of_request(3), Kind::Management, "metadata");
        assert_eq!(Kind::of_request(20), Kind::Management, "delete topics");
        assert_eq!(
            Kind::of_request(999),
            Kind::Management,
            "a request newer than the agent"
        );
    }

    #[test]
    fn a_sink_the_audit_does_not_write_to_cannot_be_routed_to() {
        let grantforge = Sinks::of(&[Sink::GrantForge]);
        let e = Routes::parse(grantforge, "any,any,*=topic").unwrap_err();
        assert!(e.contains("but the audit's sinks are grantforge"), "{e}");
        let only = Routes::to_all(grantforge);
        assert_eq!(only.select(&[folded_produce()], Sink::Topic), vec![]);
    }

    #[test]
    fn bad_rules_say_what_is_wrong() {
        let error = |rules: &str| Routes::parse(all(), rules).unwrap_err();
        assert!(error("any,any,*").contains("no `=sink`"));
        assert!(error("any,*=log").contains("three fields"));
        assert!(error("writes,any,*=log").contains("`writes` is no kind"));
        assert!(error("any,ok,*=log").contains("`ok` is no outcome"));
        assert!(error("any,any,orders=log").contains("neither `*` nor `type:name`"));
        assert!(error("any,any,table:x=log").contains("`table` is no resource type"));
        assert!(error("any,any,*=disk").contains("`disk` is no sink"));
        assert!(error("any,any,*=log+log").contains("named twice"));
        assert!(Sinks::parse("grantforge, log", ',').is_ok());
    }
}
