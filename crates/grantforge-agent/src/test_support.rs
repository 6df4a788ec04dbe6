//! What the agent's unit tests share: a request context and an action.

use grantforge_kafka::{Action, KafkaContext, Operation, Principal, RequestContext, ResourceType};

/// `user` (a `User`) from 10.0.0.1 on listener `L`, client id `c`, a Produce request (version 9).
pub(crate) fn context(user: &str) -> RequestContext {
    RequestContext {
        principal: Principal {
            principal_type: "User".into(),
            name: user.into(),
        },
        conditions: KafkaContext {
            client_address: Some("10.0.0.1".parse().unwrap()),
            listener: "L".into(),
            client_id: "c".into(),
        },
        request_type: 0,
        request_version: 9,
    }
}

/// WRITE on the literal topic, audited whichever way it goes.
pub(crate) fn write(topic: &str) -> Action<'_> {
    Action {
        operation: Some(Operation::Write),
        resource_type: Some(ResourceType::Topic),
        literal: true,
        name: topic,
        log_if_allowed: true,
        log_if_denied: true,
    }
}
