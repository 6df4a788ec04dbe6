//! Kafka's enums as the wire codes of `org.apache.kafka.common.acl.AclOperation` and
//! `org.apache.kafka.common.resource.ResourceType` (stable since Kafka 2.0), mapped to the level and
//! access-type names of the `kafka` service type (`crates/grantforge-kafka/kafka-service-type.json`).

/// The one resource of the cluster level, as Kafka names it (`Resource.CLUSTER_NAME`).
pub const CLUSTER_NAME: &str = "kafka-cluster";

/// Kafka's `ResourceType`, by its code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResourceType {
    Topic,
    Group,
    Cluster,
    TransactionalId,
    DelegationToken,
    User,
}

impl ResourceType {
    const ALL: [ResourceType; 6] = [
        ResourceType::Topic,
        ResourceType::Group,
        ResourceType::Cluster,
        ResourceType::TransactionalId,
        ResourceType::DelegationToken,
        ResourceType::User,
    ];

    /// The type for a `ResourceType.code()`; `None` for UNKNOWN (0), ANY (1) and codes of newer
    /// Kafka releases, which the agent refuses.
    pub fn from_code(code: u8) -> Option<ResourceType> {
        Self::ALL.into_iter().find(|t| t.code() == code)
    }

    pub fn code(self) -> u8 {
        match self {
            ResourceType::Topic => 2,
            ResourceType::Group => 3,
            ResourceType::Cluster => 4,
            ResourceType::TransactionalId => 5,
            ResourceType::DelegationToken => 6,
            ResourceType::User => 7,
        }
    }

    /// The level of the `kafka` service type that holds resources of this type.
    pub fn level(self) -> &'static str {
        match self {
            ResourceType::Topic => "topic",
            ResourceType::Group => "group",
            ResourceType::Cluster => "cluster",
            ResourceType::TransactionalId => "transactional_id",
            ResourceType::DelegationToken => "delegation_token",
            ResourceType::User => "user",
        }
    }

    pub fn from_level(level: &str) -> Option<ResourceType> {
        Self::ALL.into_iter().find(|t| t.level() == level)
    }
}

/// Kafka's `AclOperation`, by its code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Operation {
    All,
    Read,
    Write,
    Create,
    Delete,
    Alter,
    Describe,
    ClusterAction,
    DescribeConfigs,
    AlterConfigs,
    IdempotentWrite,
    CreateTokens,
    DescribeTokens,
}

impl Operation {
    pub(crate) const ALL: [Operation; 13] = [
        Operation::All,
        Operation::Read,
        Operation::Write,
        Operation::Create,
        Operation::Delete,
        Operation::Alter,
        Operation::Describe,
        Operation::ClusterAction,
        Operation::DescribeConfigs,
        Operation::AlterConfigs,
        Operation::IdempotentWrite,
        Operation::CreateTokens,
        Operation::DescribeTokens,
    ];

    /// The operation for an `AclOperation.code()`; `None` for UNKNOWN (0), ANY (1) and codes of
    /// newer Kafka releases, which the agent refuses.
    pub fn from_code(code: u8) -> Option<Operation> {
        Self::ALL.into_iter().find(|o| o.code() == code)
    }

    pub fn code(self) -> u8 {
        match self {
            Operation::All => 2,
            Operation::Read => 3,
            Operation::Write => 4,
            Operation::Create => 5,
            Operation::Delete => 6,
            Operation::Alter => 7,
            Operation::Describe => 8,
            Operation::ClusterAction => 9,
            Operation::DescribeConfigs => 10,
            Operation::AlterConfigs => 11,
            Operation::IdempotentWrite => 12,
            Operation::CreateTokens => 13,
            Operation::DescribeTokens => 14,
        }
    }

    /// The access type of the `kafka` service type: Kafka's operation in lower case.
    pub fn access_type(self) -> &'static str {
        match self {
            Operation::All => "all",
            Operation::Read => "read",
            Operation::Write => "write",
            Operation::Create => "create",
            Operation::Delete => "delete",
            Operation::Alter => "alter",
            Operation::Describe => "describe",
            Operation::ClusterAction => "cluster_action",
            Operation::DescribeConfigs => "describe_configs",
            Operation::AlterConfigs => "alter_configs",
            Operation::IdempotentWrite => "idempotent_write",
            Operation::CreateTokens => "create_tokens",
            Operation::DescribeTokens => "describe_tokens",
        }
    }

    pub fn from_access_type(name: &str) -> Option<Operation> {
        Self::ALL.into_iter().find(|o| o.access_type() == name)
    }

    /// Kafka's enum constant name, for log lines in Kafka's own authorizer style.
    pub fn kafka_name(self) -> &'static str {
        match self {
            Operation::All => "ALL",
            Operation::Read => "READ",
            Operation::Write => "WRITE",
            Operation::Create => "CREATE",
            Operation::Delete => "DELETE",
            Operation::Alter => "ALTER",
            Operation::Describe => "DESCRIBE",
            Operation::ClusterAction => "CLUSTER_ACTION",
            Operation::DescribeConfigs => "DESCRIBE_CONFIGS",
            Operation::AlterConfigs => "ALTER_CONFIGS",
            Operation::IdempotentWrite => "IDEMPOTENT_WRITE",
            Operation::CreateTokens => "CREATE_TOKENS",
            Operation::DescribeTokens => "DESCRIBE_TOKENS",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // That the codes are Kafka's own (a round trip holds for swapped codes too) is tested against
    // kafka-clients' codes in tests/kafka_codes.rs.
    #[test]
    fn codes_round_trip_and_unknown_codes_are_refused() {
        for code in 0..=20u8 {
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
        assert_eq!(ResourceType::from_code(1), None);
        assert_eq!(ResourceType::from_code(8), None);
    }

    #[test]
    fn kafka_names_are_the_constants_of_acl_operation() {
        // AclOperation's constant names are its access types in upper case (READ, CLUSTER_ACTION...).
        for operation in Operation::ALL {
            assert_eq!(
                operation.kafka_name(),
                operation.access_type().to_uppercase()
            );
        }
        assert_eq!(Operation::IdempotentWrite.kafka_name(), "IDEMPOTENT_WRITE");
    }
}
