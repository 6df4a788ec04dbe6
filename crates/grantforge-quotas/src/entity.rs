//! What a quota is set on: a quota type, and an entity of a user, a client id or both.

use std::fmt;

/// Kafka's `ClientQuotaType`, each with the configuration key operators set it with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum QuotaType {
    /// `producer_byte_rate`, bytes/s.
    Produce,
    /// `consumer_byte_rate`, bytes/s.
    Fetch,
    /// `request_percentage`, percent of one request thread's time.
    Request,
    /// `controller_mutation_rate`, partition mutations/s (enforced by controllers).
    ControllerMutation,
}

impl QuotaType {
    /// Every type, in the order of Kafka's `ClientQuotaType` declaration: the shim passes a type as
    /// its position there (`ordinal()`), so the order is held to Kafka's by `tests/kafka_order.rs`.
    pub const ALL: [QuotaType; QuotaType::COUNT] = [
        QuotaType::Produce,
        QuotaType::Fetch,
        QuotaType::Request,
        QuotaType::ControllerMutation,
    ];

    /// How many types there are: the size of every per-type array.
    pub const COUNT: usize = 4;

    /// The type at a position of Kafka's `ClientQuotaType`; `None` for a type of a newer release.
    pub fn from_ordinal(ordinal: usize) -> Option<QuotaType> {
        QuotaType::ALL.get(ordinal).copied()
    }

    /// Kafka's constant name (`ClientQuotaType.PRODUCE`).
    pub fn kafka_name(self) -> &'static str {
        match self {
            QuotaType::Produce => "PRODUCE",
            QuotaType::Fetch => "FETCH",
            QuotaType::Request => "REQUEST",
            QuotaType::ControllerMutation => "CONTROLLER_MUTATION",
        }
    }

    /// The configuration key (`kafka-configs --add-config`).
    pub fn config_key(self) -> &'static str {
        match self {
            QuotaType::Produce => "producer_byte_rate",
            QuotaType::Fetch => "consumer_byte_rate",
            QuotaType::Request => "request_percentage",
            QuotaType::ControllerMutation => "controller_mutation_rate",
        }
    }

    /// The type for a configuration key.
    pub fn from_config_key(key: &str) -> Option<QuotaType> {
        QuotaType::ALL.into_iter().find(|t| t.config_key() == key)
    }

    /// The type's slot in every per-type array (`[_; COUNT]`): its position in [`QuotaType::ALL`],
    /// which is also its Kafka ordinal ([`QuotaType::from_ordinal`] gives the type back).
    pub const fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for QuotaType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.config_key())
    }
}

/// One side of an entity: a name, or the default (Kafka names defaults `<default>`; they are
/// told apart by the entity type, never by the name).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Part {
    Named(String),
    Default,
}

/// A quota entity: a user, a client id, or a user and a client id (each named or the default).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Entity {
    pub user: Option<Part>,
    pub client_id: Option<Part>,
}

/// Why Kafka's entity cannot be a quota entity of this table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EntityError {
    /// An entity type other than Kafka's four (`USER`, `CLIENT_ID`, `DEFAULT_USER`,
    /// `DEFAULT_CLIENT_ID`), such as an IP entity.
    UnknownType(String),
    /// The same side twice, or nothing at all.
    Malformed(String),
}

impl fmt::Display for EntityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EntityError::UnknownType(t) => write!(
                f,
                "quota entity type `{t}` is not a user or client id; it is ignored"
            ),
            EntityError::Malformed(e) => write!(
                f,
                "quota entity {e} is not a user, a client id, or one of each; it is ignored"
            ),
        }
    }
}

impl std::error::Error for EntityError {}

impl Entity {
    /// `<U>`
    pub fn user(name: &str) -> Entity {
        Entity {
            user: Some(Part::Named(name.to_string())),
            client_id: None,
        }
    }

    /// `<U, C>`
    pub fn user_client(user: &str, client_id: &str) -> Entity {
        Entity {
            user: Some(Part::Named(user.to_string())),
            client_id: Some(Part::Named(client_id.to_string())),
        }
    }

    /// `<C>`
    pub fn client(client_id: &str) -> Entity {
        Entity {
            user: None,
            client_id: Some(Part::Named(client_id.to_string())),
        }
    }

    /// Any combination, for defaults: `Entity::of(Some(Part::Default), None)` is `<default user>`.
    pub fn of(user: Option<Part>, client_id: Option<Part>) -> Entity {
        Entity { user, client_id }
    }

    /// Kafka's `ClientQuotaEntity`: its `(entityType, name)` pairs, dispatched on the type
    /// (`USER`, `CLIENT_ID`, `DEFAULT_USER`, `DEFAULT_CLIENT_ID`, in any case).
    pub fn from_kafka<'a>(
        parts: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Entity, EntityError> {
        let mut entity = Entity {
            user: None,
            client_id: None,
        };
        let mut shown = Vec::new();
        for (kind, name) in parts {
            shown.push(format!("{kind}={name}"));
            let (slot, part) = match kind.to_ascii_uppercase().as_str() {
                "USER" => (&mut entity.user, Part::Named(name.to_string())),
                "DEFAULT_USER" => (&mut entity.user, Part::Default),
                "CLIENT_ID" => (&mut entity.client_id, Part::Named(name.to_string())),
                "DEFAULT_CLIENT_ID" => (&mut entity.client_id, Part::Default),
                _ => return Err(EntityError::UnknownType(kind.to_string())),
            };
            if slot.replace(part).is_some() {
                return Err(EntityError::Malformed(shown.join(", ")));
            }
        }
        if entity.user.is_none() && entity.client_id.is_none() {
            return Err(EntityError::Malformed("(empty)".to_string()));
        }
        Ok(entity)
    }
}

impl fmt::Display for Entity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let part = |p: &Part, what: &str| match p {
            Part::Named(name) => format!("{what} {name}"),
            Part::Default => format!("default {what}"),
        };
        let parts: Vec<String> = [
            self.user.as_ref().map(|p| part(p, "user")),
            self.client_id.as_ref().map(|p| part(p, "client")),
        ]
        .into_iter()
        .flatten()
        .collect();
        write!(f, "<{}>", parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kafka_entities_are_dispatched_on_their_type_never_their_name() {
        assert_eq!(
            Entity::from_kafka([("user", "<default>")]),
            Ok(Entity::user("<default>"))
        );
        assert_eq!(
            Entity::from_kafka([("DEFAULT_USER", "<default>")]),
            Ok(Entity::of(Some(Part::Default), None))
        );
        assert_eq!(
            Entity::from_kafka([("user", "u"), ("client-id", "c")]),
            Err(EntityError::UnknownType("client-id".into()))
        );
        assert_eq!(
            Entity::from_kafka([("USER", "u"), ("CLIENT_ID", "c")]),
            Ok(Entity::user_client("u", "c"))
        );
        assert_eq!(
            Entity::from_kafka([("DEFAULT_CLIENT_ID", "<default>")]),
            Ok(Entity::of(None, Some(Part::Default)))
        );
        assert!(matches!(
            Entity::from_kafka([("USER", "a"), ("DEFAULT_USER", "")]),
            Err(EntityError::Malformed(_))
        ));
        assert!(matches!(
            Entity::from_kafka([]),
            Err(EntityError::Malformed(_))
        ));
        assert!(matches!(
            Entity::from_kafka([("IP", "10.0.0.1")]),
            Err(EntityError::UnknownType(_))
        ));
        assert_eq!(
            Entity::of(Some(Part::Default), Some(Part::Named("c".into()))).to_string(),
            "<default user, client c>"
        );
    }

    #[test]
    fn each_quota_type_has_its_own_slot_and_is_found_again_from_it() {
        for (position, t) in QuotaType::ALL.into_iter().enumerate() {
            assert_eq!(t.index(), position, "{t:?} is at its place in ALL");
            assert_eq!(QuotaType::from_ordinal(t.index()), Some(t));
        }
        assert_eq!(QuotaType::from_ordinal(QuotaType::COUNT), None);
    }

    #[test]
    fn quota_types_round_trip_their_config_keys() {
        for t in QuotaType::ALL {
            assert_eq!(QuotaType::from_config_key(t.config_key()), Some(t));
        }
        assert_eq!(QuotaType::from_config_key("ip_connection_rate"), None);
    }
}
