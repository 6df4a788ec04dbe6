//! Kafka's vocabulary, each enum defined once: its constants with Kafka's wire code
//! (`AclOperation.code()`, `ResourceType.code()`, `PatternType.code()`, `AclPermissionType.code()`,
//! stable since Kafka 2.0), Kafka's constant name, and the name the `kafka` service type gives it
//! (`crates/grantforge-kafka/kafka-service-type.json`); and Kafka's request types (`ApiKeys`) by
//! id, as the audit names requests. Every lookup (by code, by Kafka's name, by
//! the service type's name) and every list of the agent derives from these tables: adding a row
//! is adding the constant everywhere (`docs/architecture.md`, "Adding a Kafka operation").
//!
//! The tables are held to Kafka: `tests/kafka_codes.rs` checks every row against the codes of the
//! newest kafka-clients the project supports (`tests/fixtures/jni/kafka-codes.txt`), and the
//! integration tests check that fixture against each release's own enums and request types.

/// The one resource of the cluster level, as Kafka names it (`Resource.CLUSTER_NAME`).
pub const CLUSTER_NAME: &str = "kafka-cluster";

/// Declares one of Kafka's enums as the agent maps it: one row per constant (variant, Kafka's
/// code, Kafka's constant name, the service type's name), and every lookup derived from the rows.
/// Codes the table lacks (UNKNOWN, ANY, constants of newer releases) decode to `None`: refused.
macro_rules! kafka_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $($(#[$row_meta:meta])* $variant:ident = $code:literal, $kafka:literal, $service:literal;)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name {
            $($(#[$row_meta])* $variant,)+
        }

        impl $name {
            /// Every constant the agent knows, in Kafka's order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The constant for Kafka's code; `None` for a code this table lacks.
            pub fn from_code(code: u8) -> Option<$name> {
                match code {
                    $($code => Some($name::$variant),)+
                    _ => None,
                }
            }

            /// Kafka's code (`code()` of Kafka's enum).
            pub fn code(self) -> u8 {
                match self {
                    $($name::$variant => $code,)+
                }
            }

            /// Kafka's constant name (`READ`, `TRANSACTIONAL_ID`), as Kafka's tools print it.
            pub fn kafka_name(self) -> &'static str {
                match self {
                    $($name::$variant => $kafka,)+
                }
            }

            /// The name the `kafka` service type (or the snapshot format) gives the constant.
            #[allow(dead_code, reason = "not every enum is looked up by this name")]
            fn service_name(self) -> &'static str {
                match self {
                    $($name::$variant => $service,)+
                }
            }

            #[allow(dead_code, reason = "not every enum is looked up by this name")]
            fn from_service_name(name: &str) -> Option<$name> {
                Self::ALL.iter().copied().find(|c| c.service_name() == name)
            }
        }
    };
}

kafka_enum! {
    /// Kafka's `ResourceType`; the service type's name is the level that holds resources of the
    /// type (a root level of every `kafka` definition).
    pub enum ResourceType {
        Topic = 2, "TOPIC", "topic";
        Group = 3, "GROUP", "group";
        Cluster = 4, "CLUSTER", "cluster";
        TransactionalId = 5, "TRANSACTIONAL_ID", "transactional_id";
        DelegationToken = 6, "DELEGATION_TOKEN", "delegation_token";
        User = 7, "USER", "user";
    }
}

kafka_enum! {
    /// Kafka's `AclOperation`; the service type's name is the access type.
    pub enum Operation {
        All = 2, "ALL", "all";
        Read = 3, "READ", "read";
        Write = 4, "WRITE", "write";
        Create = 5, "CREATE", "create";
        Delete = 6, "DELETE", "delete";
        Alter = 7, "ALTER", "alter";
        Describe = 8, "DESCRIBE", "describe";
        ClusterAction = 9, "CLUSTER_ACTION", "cluster_action";
        DescribeConfigs = 10, "DESCRIBE_CONFIGS", "describe_configs";
        AlterConfigs = 11, "ALTER_CONFIGS", "alter_configs";
        IdempotentWrite = 12, "IDEMPOTENT_WRITE", "idempotent_write";
        CreateTokens = 13, "CREATE_TOKENS", "create_tokens";
        DescribeTokens = 14, "DESCRIBE_TOKENS", "describe_tokens";
        /// Kafka 4.1+: `InitProducerId` of a two-phase-commit producer (KIP-939), asked on the
        /// transactional id after WRITE.
        TwoPhaseCommit = 15, "TWO_PHASE_COMMIT", "two_phase_commit";
    }
}

kafka_enum! {
    /// Kafka's `PatternType` of an ACL (MATCH and ANY are filters, never an ACL's).
    pub enum PatternType {
        Literal = 3, "LITERAL", "literal";
        Prefixed = 4, "PREFIXED", "prefixed";
    }
}

kafka_enum! {
    /// Kafka's `AclPermissionType`; the service type's name is the policy list the ACL becomes.
    pub enum Permission {
        Deny = 2, "DENY", "deny";
        Allow = 3, "ALLOW", "allow";
    }
}

/// Declares Kafka's request types (`ApiKeys`) by their id, one row each, so that a name is looked
/// up by the id a request carries, never by its position in a list.
macro_rules! kafka_api_keys {
    ($($name:ident = $id:literal;)+) => {
        /// Every request type of the newest supported release: (Kafka's name, its id).
        pub const API_KEYS: &[(&str, i16)] = &[$((stringify!($name), $id)),+];

        /// Kafka's name of the request type `id` as the newest supported release names it (a
        /// renamed type by its current name); `None` for an id that release does not define.
        pub fn api_key_name(id: i16) -> Option<&'static str> {
            match id {
                $($id => Some(stringify!($name)),)+
                _ => None,
            }
        }
    };
}

kafka_api_keys! {
        PRODUCE = 0;
        FETCH = 1;
        LIST_OFFSETS = 2;
        METADATA = 3;
        LEADER_AND_ISR = 4;
        STOP_REPLICA = 5;
        UPDATE_METADATA = 6;
        CONTROLLED_SHUTDOWN = 7;
        OFFSET_COMMIT = 8;
        OFFSET_FETCH = 9;
        FIND_COORDINATOR = 10;
        JOIN_GROUP = 11;
        HEARTBEAT = 12;
        LEAVE_GROUP = 13;
        SYNC_GROUP = 14;
        DESCRIBE_GROUPS = 15;
        LIST_GROUPS = 16;
        SASL_HANDSHAKE = 17;
        API_VERSIONS = 18;
        CREATE_TOPICS = 19;
        DELETE_TOPICS = 20;
        DELETE_RECORDS = 21;
        INIT_PRODUCER_ID = 22;
        OFFSET_FOR_LEADER_EPOCH = 23;
        ADD_PARTITIONS_TO_TXN = 24;
        ADD_OFFSETS_TO_TXN = 25;
        END_TXN = 26;
        WRITE_TXN_MARKERS = 27;
        TXN_OFFSET_COMMIT = 28;
        DESCRIBE_ACLS = 29;
        CREATE_ACLS = 30;
        DELETE_ACLS = 31;
        DESCRIBE_CONFIGS = 32;
        ALTER_CONFIGS = 33;
        ALTER_REPLICA_LOG_DIRS = 34;
        DESCRIBE_LOG_DIRS = 35;
        SASL_AUTHENTICATE = 36;
        CREATE_PARTITIONS = 37;
        CREATE_DELEGATION_TOKEN = 38;
        RENEW_DELEGATION_TOKEN = 39;
        EXPIRE_DELEGATION_TOKEN = 40;
        DESCRIBE_DELEGATION_TOKEN = 41;
        DELETE_GROUPS = 42;
        ELECT_LEADERS = 43;
        INCREMENTAL_ALTER_CONFIGS = 44;
        ALTER_PARTITION_REASSIGNMENTS = 45;
        LIST_PARTITION_REASSIGNMENTS = 46;
        OFFSET_DELETE = 47;
        DESCRIBE_CLIENT_QUOTAS = 48;
        ALTER_CLIENT_QUOTAS = 49;
        DESCRIBE_USER_SCRAM_CREDENTIALS = 50;
        ALTER_USER_SCRAM_CREDENTIALS = 51;
        VOTE = 52;
        BEGIN_QUORUM_EPOCH = 53;
        END_QUORUM_EPOCH = 54;
        DESCRIBE_QUORUM = 55;
        ALTER_PARTITION = 56;
        UPDATE_FEATURES = 57;
        ENVELOPE = 58;
        FETCH_SNAPSHOT = 59;
        DESCRIBE_CLUSTER = 60;
        DESCRIBE_PRODUCERS = 61;
        BROKER_REGISTRATION = 62;
        BROKER_HEARTBEAT = 63;
        UNREGISTER_BROKER = 64;
        DESCRIBE_TRANSACTIONS = 65;
        LIST_TRANSACTIONS = 66;
        ALLOCATE_PRODUCER_IDS = 67;
        CONSUMER_GROUP_HEARTBEAT = 68;
        CONSUMER_GROUP_DESCRIBE = 69;
        CONTROLLER_REGISTRATION = 70;
        GET_TELEMETRY_SUBSCRIPTIONS = 71;
        PUSH_TELEMETRY = 72;
        ASSIGN_REPLICAS_TO_DIRS = 73;
        LIST_CONFIG_RESOURCES = 74;
        DESCRIBE_TOPIC_PARTITIONS = 75;
        SHARE_GROUP_HEARTBEAT = 76;
        SHARE_GROUP_DESCRIBE = 77;
        SHARE_FETCH = 78;
        SHARE_ACKNOWLEDGE = 79;
        ADD_RAFT_VOTER = 80;
        REMOVE_RAFT_VOTER = 81;
        UPDATE_RAFT_VOTER = 82;
        INITIALIZE_SHARE_GROUP_STATE = 83;
        READ_SHARE_GROUP_STATE = 84;
        WRITE_SHARE_GROUP_STATE = 85;
        DELETE_SHARE_GROUP_STATE = 86;
        READ_SHARE_GROUP_STATE_SUMMARY = 87;
        STREAMS_GROUP_HEARTBEAT = 88;
        STREAMS_GROUP_DESCRIBE = 89;
        DESCRIBE_SHARE_GROUP_OFFSETS = 90;
        ALTER_SHARE_GROUP_OFFSETS = 91;
        DELETE_SHARE_GROUP_OFFSETS = 92;
        STREAMS_GROUP_TOPOLOGY_DESCRIPTION_UPDATE = 93;
        UNREGISTER_CONTROLLER = 94;
}

impl ResourceType {
    /// The level of the `kafka` service type that holds resources of this type.
    pub fn level(self) -> &'static str {
        self.service_name()
    }

    pub fn from_level(level: &str) -> Option<ResourceType> {
        Self::from_service_name(level)
    }

    /// The operations a policy of this type's level may name: those a broker of any supported
    /// release asks of the type (Kafka's `AclEntry.supportedOperations`, whose 4.x line adds the
    /// configs of groups and `two_phase_commit`; `KafkaVocabularyTest` reads each release's), and
    /// `all`, and `delete` on the cluster, which no release lists. The service plugin
    /// offers exactly these per level and GrantForge refuses a policy naming another
    /// (`docs/kafka-service-type.md`, "Access types per level", which both are held to).
    pub fn access_types(self) -> &'static [Operation] {
        use Operation::*;
        match self {
            ResourceType::Topic => &[
                Read,
                Write,
                Create,
                Delete,
                Alter,
                Describe,
                DescribeConfigs,
                AlterConfigs,
                All,
            ],
            ResourceType::Group => &[Read, Delete, Describe, DescribeConfigs, AlterConfigs, All],
            ResourceType::Cluster => &[
                Create,
                Delete,
                Alter,
                Describe,
                ClusterAction,
                DescribeConfigs,
                AlterConfigs,
                IdempotentWrite,
                All,
            ],
            ResourceType::TransactionalId => &[Write, Describe, TwoPhaseCommit, All],
            ResourceType::DelegationToken => &[Describe, All],
            ResourceType::User => &[CreateTokens, DescribeTokens, All],
        }
    }
}

impl Operation {
    /// Operations of Kafka releases newer than the first `kafka` service type. A definition from a
    /// server whose service type predates one still loads (an upgrade of the agent must not lock a
    /// cluster out): the operation is refused to everyone, with a warning, until the service type
    /// has its access type. Every other access type is required: a definition without it is
    /// refused whole, as a server that names Kafka's operations differently must be.
    pub const NEWER_THAN_THE_SERVICE_TYPE: &'static [Operation] = &[Operation::TwoPhaseCommit];

    /// The access type of the `kafka` service type: Kafka's operation in lower case.
    pub fn access_type(self) -> &'static str {
        self.service_name()
    }

    pub fn from_access_type(name: &str) -> Option<Operation> {
        Self::from_service_name(name)
    }

    /// Whether the operation changes the cluster (create, delete, alter, alter configs; Kafka
    /// asks ALTER on the cluster for ACL changes): what an operator may audit of the super users.
    /// `cluster_action`, the nodes' own requests among themselves, is not one.
    pub fn is_mutation(self) -> bool {
        matches!(
            self,
            Operation::Create | Operation::Delete | Operation::Alter | Operation::AlterConfigs
        )
    }

    /// Whether a `kafka` definition must have this operation's access type.
    pub fn required_by_the_service_type(self) -> bool {
        !Self::NEWER_THAN_THE_SERVICE_TYPE.contains(&self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // That the codes are Kafka's own (a round trip holds for swapped codes too) is tested against
    // kafka-clients' codes in tests/kafka_codes.rs.
    #[test]
    fn codes_round_trip_and_unknown_codes_are_refused() {
        for code in 0..=u8::MAX {
            if let Some(op) = Operation::from_code(code) {
                assert_eq!(op.code(), code);
                assert_eq!(Operation::from_access_type(op.access_type()), Some(op));
            }
            if let Some(t) = ResourceType::from_code(code) {
                assert_eq!(t.code(), code);
                assert_eq!(ResourceType::from_level(t.level()), Some(t));
            }
        }
        assert_eq!(Operation::from_code(0), None);
        assert_eq!(Operation::from_code(1), None);
        assert_eq!(Operation::from_code(16), None);
        assert_eq!(ResourceType::from_code(1), None);
        assert_eq!(ResourceType::from_code(8), None);
        assert_eq!(PatternType::from_code(2), None, "MATCH is a filter");
        assert_eq!(Permission::from_code(1), None, "ANY is a filter");
    }

    #[test]
    fn service_names_are_kafkas_constants_in_lower_case() {
        let rows = Operation::ALL
            .iter()
            .map(|o| (o.kafka_name(), o.access_type()))
            .chain(
                ResourceType::ALL
                    .iter()
                    .map(|t| (t.kafka_name(), t.level())),
            )
            .chain(
                PatternType::ALL
                    .iter()
                    .map(|p| (p.kafka_name(), p.service_name())),
            )
            .chain(
                Permission::ALL
                    .iter()
                    .map(|p| (p.kafka_name(), p.service_name())),
            );
        for (kafka, service) in rows {
            assert_eq!(service, kafka.to_lowercase());
        }
    }

    #[test]
    fn only_operations_newer_than_the_service_type_may_be_missing_from_it() {
        assert!(!Operation::TwoPhaseCommit.required_by_the_service_type());
        assert!(Operation::ALL
            .iter()
            .filter(|o| o.code() <= Operation::DescribeTokens.code())
            .all(|o| o.required_by_the_service_type()));
    }
}
