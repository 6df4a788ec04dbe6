//! The conditions the Kafka agent can evaluate, registered by evaluator name.
//!
//! A snapshot's definition names its conditions and the evaluator behind each; the engine maps a
//! condition to the evaluator registered here under that evaluator name. A condition whose
//! evaluator is missing, or whose values do not compile, follows the engine's safe direction.

use std::collections::HashSet;
use std::net::IpAddr;
use std::sync::Arc;

use grantforge_engine::{
    wildcard_matches, CompiledCondition, ConditionEvaluator, Evaluators, PolicyEngine,
};

/// What a condition may read about one request.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct KafkaContext {
    /// The client's address; `None` when Kafka gave none (conditions on it are then unsure).
    pub client_address: Option<IpAddr>,
    /// The listener the request arrived on.
    pub listener: String,
    /// The client id the client sent (may be empty).
    pub client_id: String,
}

/// Which parts of a request a snapshot's conditions read, so that a decision cache keys on
/// exactly that.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConditionReads {
    pub client_address: bool,
    pub listener: bool,
    pub client_id: bool,
}

impl ConditionReads {
    const NOTHING: ConditionReads = ConditionReads {
        client_address: false,
        listener: false,
        client_id: false,
    };

    fn or(self, other: ConditionReads) -> ConditionReads {
        ConditionReads {
            client_address: self.client_address || other.client_address,
            listener: self.listener || other.listener,
            client_id: self.client_id || other.client_id,
        }
    }

    /// What the engine's decisions read: the union over the evaluators its items' conditions are
    /// evaluated with, taken from the engine's own condition-to-evaluator mapping (one source).
    pub(crate) fn of<C: ?Sized>(engine: &PolicyEngine<C>) -> ConditionReads {
        let reads_of = |name: &str| {
            KAFKA_EVALUATORS
                .iter()
                .find(|e| e.name == name)
                .map_or(ConditionReads::NOTHING, |e| e.reads)
        };
        engine
            .evaluators_in_use()
            .iter()
            .fold(ConditionReads::NOTHING, |all, name| all.or(reads_of(name)))
    }
}

/// An evaluator the agent offers, and the one part of the request it reads.
struct KafkaEvaluator {
    name: &'static str,
    reads: ConditionReads,
    make: fn() -> Arc<dyn ConditionEvaluator<KafkaContext>>,
}

/// Every evaluator of the agent: what it is registered as, and what its conditions read. Adding
/// one here is the only edit: registration and the decision cache's key both follow this table.
const KAFKA_EVALUATORS: [KafkaEvaluator; 3] = [
    KafkaEvaluator {
        name: "ip-range",
        reads: ConditionReads {
            client_address: true,
            ..ConditionReads::NOTHING
        },
        make: || Arc::new(IpRangeEvaluator),
    },
    KafkaEvaluator {
        name: "listener",
        reads: ConditionReads {
            listener: true,
            ..ConditionReads::NOTHING
        },
        make: || Arc::new(ListenerEvaluator),
    },
    KafkaEvaluator {
        name: "client-id",
        reads: ConditionReads {
            client_id: true,
            ..ConditionReads::NOTHING
        },
        make: || Arc::new(ClientIdEvaluator),
    },
];

/// The evaluators the Kafka agent registers: `ip-range`, `listener` and `client-id`.
pub fn kafka_evaluators() -> Evaluators<KafkaContext> {
    let mut evaluators = Evaluators::new();
    for evaluator in &KAFKA_EVALUATORS {
        evaluators.register(evaluator.name, (evaluator.make)());
    }
    evaluators
}

/// `ip-range`: holds when the client address lies in one of the values (addresses or CIDR blocks,
/// IPv4 or IPv6). An IPv4-mapped IPv6 client address is compared as IPv4.
struct IpRangeEvaluator;

/// The values of one `ip-range` condition, indexed: per prefix length present, the set of networks.
/// A question costs one set look-up per distinct prefix length (one for plain addresses), however
/// many values there are; a linear scan made `authorizeByResourceType` grow with them
/// (docs/benchmarks.md, finding 6).
struct IpRanges {
    v4: Vec<(u8, HashSet<u32>)>,
    v6: Vec<(u8, HashSet<u128>)>,
}

/// One parsed value: the network with its host bits cleared, and the prefix length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cidr {
    V4(u32, u8),
    V6(u128, u8),
}

impl Cidr {
    fn parse(text: &str) -> Result<Cidr, String> {
        let text = text.trim();
        let (address, prefix) = match text.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (text, None),
        };
        let network: IpAddr = address
            .parse()
            .map_err(|_| format!("`{text}` is not an IP address or CIDR block"))?;
        let max = if network.is_ipv4() { 32 } else { 128 };
        let prefix_len = match prefix {
            None => max,
            Some(p) => p
                .parse::<u8>()
                .ok()
                .filter(|len| *len <= max)
                .ok_or_else(|| format!("`{text}` has a prefix length that is not 0..={max}"))?,
        };
        Ok(match network {
            IpAddr::V4(v4) => Cidr::V4(mask_v4(u32::from(v4), prefix_len), prefix_len),
            IpAddr::V6(v6) => Cidr::V6(mask_v6(u128::from(v6), prefix_len), prefix_len),
        })
    }
}

/// The first `prefix_len` bits of an address (0 to 32).
fn mask_v4(bits: u32, prefix_len: u8) -> u32 {
    if prefix_len == 0 {
        0
    } else {
        bits & (u32::MAX << (32 - u32::from(prefix_len)))
    }
}

/// The first `prefix_len` bits of an address (0 to 128).
fn mask_v6(bits: u128, prefix_len: u8) -> u128 {
    if prefix_len == 0 {
        0
    } else {
        bits & (u128::MAX << (128 - u32::from(prefix_len)))
    }
}

/// Kafka hands `::ffff:10.0.0.1` for IPv4 clients on a dual-stack socket: compare those as IPv4.
fn canonical(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(address),
        v4 => v4,
    }
}

impl IpRanges {
    fn new(values: &[Cidr]) -> IpRanges {
        let mut ranges = IpRanges {
            v4: Vec::new(),
            v6: Vec::new(),
        };
        for value in values {
            match *value {
                Cidr::V4(network, len) => set_for(&mut ranges.v4, len).insert(network),
                Cidr::V6(network, len) => set_for(&mut ranges.v6, len).insert(network),
            };
        }
        ranges
    }

    fn contains(&self, address: IpAddr) -> bool {
        match canonical(address) {
            IpAddr::V4(v4) => self
                .v4
                .iter()
                .any(|(len, networks)| networks.contains(&mask_v4(u32::from(v4), *len))),
            IpAddr::V6(v6) => self
                .v6
                .iter()
                .any(|(len, networks)| networks.contains(&mask_v6(u128::from(v6), *len))),
        }
    }
}

fn set_for<T>(sets: &mut Vec<(u8, HashSet<T>)>, prefix_len: u8) -> &mut HashSet<T> {
    let at = match sets.iter().position(|(len, _)| *len == prefix_len) {
        Some(at) => at,
        None => {
            sets.push((prefix_len, HashSet::new()));
            sets.len() - 1
        }
    };
    &mut sets[at].1
}

impl ConditionEvaluator<KafkaContext> for IpRangeEvaluator {
    fn compile(
        &self,
        values: &[String],
    ) -> Result<Box<dyn CompiledCondition<KafkaContext>>, String> {
        let ranges = values
            .iter()
            .map(|v| Cidr::parse(v))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Box::new(IpRanges::new(&ranges)))
    }
}

impl CompiledCondition<KafkaContext> for IpRanges {
    fn holds(&self, context: &KafkaContext) -> Result<bool, String> {
        let address = context
            .client_address
            .ok_or_else(|| "the request carries no client address".to_string())?;
        Ok(self.contains(address))
    }
}

/// `listener`: holds when the request arrived on one of the named listeners (exact names, as in
/// Kafka's `listeners` setting; Kafka upper-cases them).
struct ListenerEvaluator;

struct Listeners(Vec<String>);

impl ConditionEvaluator<KafkaContext> for ListenerEvaluator {
    fn compile(
        &self,
        values: &[String],
    ) -> Result<Box<dyn CompiledCondition<KafkaContext>>, String> {
        Ok(Box::new(Listeners(values.to_vec())))
    }
}

impl CompiledCondition<KafkaContext> for Listeners {
    fn holds(&self, context: &KafkaContext) -> Result<bool, String> {
        Ok(self.0.contains(&context.listener))
    }
}

/// `client-id`: holds when the client id matches one of the wildcard patterns (`*` any run,
/// `?` one character, whole string, as GrantForge's WILDCARD matcher).
struct ClientIdEvaluator;

struct ClientIds(Vec<String>);

impl ConditionEvaluator<KafkaContext> for ClientIdEvaluator {
    fn compile(
        &self,
        values: &[String],
    ) -> Result<Box<dyn CompiledCondition<KafkaContext>>, String> {
        Ok(Box::new(ClientIds(values.to_vec())))
    }
}

/// The longest client id a `client-id` condition evaluates. Matching costs up to the product of
/// the pattern's and the id's lengths, the id is the client's choice, and such a question is not
/// kept in the decision cache: a longer id is "unsure" (an allow does not hold, a deny does).
pub const CLIENT_ID_EVALUATED_MAX_BYTES: usize = 1024;

impl CompiledCondition<KafkaContext> for ClientIds {
    fn holds(&self, context: &KafkaContext) -> Result<bool, String> {
        let client_id = &context.client_id;
        if client_id.len() > CLIENT_ID_EVALUATED_MAX_BYTES {
            return Err(format!(
                "a client id of {} bytes, more than the {CLIENT_ID_EVALUATED_MAX_BYTES} a client-id condition evaluates",
                client_id.len()
            ));
        }
        Ok(self
            .0
            .iter()
            .any(|pattern| wildcard_matches(pattern, client_id)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context(address: &str) -> KafkaContext {
        KafkaContext {
            client_address: Some(address.parse().unwrap()),
            ..Default::default()
        }
    }

    fn ranges(values: &[&str]) -> Box<dyn CompiledCondition<KafkaContext>> {
        let values: Vec<String> = values.iter().map(|v| v.to_string()).collect();
        IpRangeEvaluator.compile(&values).unwrap()
    }

    #[test]
    fn ip_ranges_match_addresses_and_cidr_blocks_of_both_families() {
        let r = ranges(&["10.0.0.0/8", "192.168.1.7", "2001:db8::/32"]);
        assert!(r.holds(&context("10.200.3.4")).unwrap());
        assert!(!r.holds(&context("11.0.0.1")).unwrap());
        assert!(r.holds(&context("192.168.1.7")).unwrap());
        assert!(!r.holds(&context("192.168.1.8")).unwrap());
        assert!(r.holds(&context("2001:db8:ffff::1")).unwrap());
        assert!(!r.holds(&context("2001:db9::1")).unwrap());
        assert!(
            r.holds(&context("::ffff:10.1.2.3")).unwrap(),
            "IPv4-mapped IPv6 is IPv4"
        );
        assert!(ranges(&["0.0.0.0/0"]).holds(&context("8.8.8.8")).unwrap());
        assert!(ranges(&["10.1.2.3/31"])
            .holds(&context("10.1.2.2"))
            .unwrap());
        assert!(!ranges(&["10.1.2.3/31"])
            .holds(&context("10.1.2.4"))
            .unwrap());
        assert!(ranges(&["::/0"]).holds(&context("2001:db8::1")).unwrap());
        assert!(
            !ranges(&["::/0"]).holds(&context("8.8.8.8")).unwrap(),
            "an IPv6 block holds no IPv4 client"
        );
        assert!(ranges(&["10.1.2.3/32", "10.1.2.0/24"])
            .holds(&context("10.1.2.99"))
            .unwrap());
    }

    #[test]
    fn many_values_are_indexed_by_prefix_length() {
        let mut values: Vec<String> = (0..20_000)
            .map(|i| format!("10.{}.{}.{}", i / 65536, (i / 256) % 256, i % 256))
            .collect();
        values.push("172.16.0.0/12".into());
        let refs: Vec<&str> = values.iter().map(String::as_str).collect();
        let r = ranges(&refs);
        assert!(r.holds(&context("10.0.78.31")).unwrap());
        assert!(!r.holds(&context("10.1.78.31")).unwrap());
        assert!(r.holds(&context("172.31.255.255")).unwrap());
        assert!(!r.holds(&context("172.32.0.0")).unwrap());
    }

    #[test]
    fn bad_ip_values_do_not_compile_and_a_missing_address_is_unsure() {
        for bad in ["10.0.0.0/33", "nonsense", "::1/129", "10.0.0.1/x"] {
            assert!(
                IpRangeEvaluator.compile(&[bad.to_string()]).is_err(),
                "{bad}"
            );
        }
        assert!(ranges(&["10.0.0.0/8"])
            .holds(&KafkaContext::default())
            .is_err());
    }

    #[test]
    fn listeners_and_client_ids() {
        let listeners = ListenerEvaluator
            .compile(&["INTERNAL".to_string()])
            .unwrap();
        let on = |l: &str| KafkaContext {
            listener: l.into(),
            ..Default::default()
        };
        assert!(listeners.holds(&on("INTERNAL")).unwrap());
        assert!(!listeners.holds(&on("EXTERNAL")).unwrap());
        let ids = ClientIdEvaluator
            .compile(&["etl-*".to_string(), "app-?".to_string()])
            .unwrap();
        let with = |c: &str| KafkaContext {
            client_id: c.into(),
            ..Default::default()
        };
        assert!(ids.holds(&with("etl-")).unwrap());
        assert!(ids.holds(&with("etl-nightly")).unwrap());
        assert!(ids.holds(&with("app-1")).unwrap());
        assert!(!ids.holds(&with("app-12")).unwrap());
        assert!(!ids.holds(&with("xetl-1")).unwrap());
    }

    #[test]
    fn a_client_id_past_the_evaluated_length_is_unsure_not_matched() {
        let ids = ClientIdEvaluator.compile(&["*".to_string()]).unwrap();
        let with = |c: String| KafkaContext {
            client_id: c,
            ..Default::default()
        };
        let longest = "c".repeat(CLIENT_ID_EVALUATED_MAX_BYTES);
        assert!(ids.holds(&with(longest.clone())).unwrap());
        let error = ids.holds(&with(format!("{longest}c"))).unwrap_err();
        assert!(error.contains("1025 bytes"), "{error}");
    }

    #[test]
    fn wildcards_match_whole_strings() {
        assert!(wildcard_matches("*", ""));
        assert!(wildcard_matches("a*b*c", "a-b-b-c"));
        assert!(!wildcard_matches("a*b*c", "a-b-b-c-"));
        assert!(wildcard_matches("**", "x"));
        assert!(!wildcard_matches("?", ""));
        assert!(wildcard_matches("é?", "éü"));
    }
}
