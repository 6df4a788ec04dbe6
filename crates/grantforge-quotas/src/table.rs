//! The quota table: the entities Kafka configured, indexed for the eight rules of the resolution.

use std::collections::{BTreeMap, HashMap};

use crate::bounds::SafeBounds;
use crate::entity::{Entity, Part, QuotaType};
use crate::sanitize::sanitize;

/// The rule of the resolution table that gave a connection its group and limit (see the crate's
/// documentation for the table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rule {
    /// 1: `<U, C>`, a sub-quota reserved for U's clients named C.
    UserClient,
    /// 2: `<U, default client>`.
    UserDefaultClient,
    /// 3: `<U>`, shared by U's clients without a sub-quota, less U's reserved sub-quotas.
    User,
    /// 4: `<default user, C>`.
    DefaultUserClient,
    /// 5: `<default user, default client>`.
    DefaultUserDefaultClient,
    /// 6: `<default user>`, U's own share of the default, less U's reserved sub-quotas and the
    /// `<default user, C>` sub-quotas of its other client ids.
    DefaultUser,
    /// 7: `<C>`, per user.
    Client,
    /// 8: `<default client>`, per user and client id.
    DefaultClient,
    /// No entity applies: unthrottled, in a group of its own (U, C), as Kafka's built-in callback
    /// measures a client apart when user and client-id quotas are in use.
    Unlimited,
}

impl Rule {
    /// The row of the table, as `explain --quota` shows it.
    pub fn describe(self) -> &'static str {
        match self {
            Rule::UserClient => {
                "rule 1: <user, client> (a sub-quota reserved for this user's clients of this id)"
            }
            Rule::UserDefaultClient => "rule 2: <user, default client>",
            Rule::User => {
                "rule 3: <user> (shared by the user's other clients, less its reserved sub-quotas)"
            }
            Rule::DefaultUserClient => "rule 4: <default user, client>",
            Rule::DefaultUserDefaultClient => "rule 5: <default user, default client>",
            Rule::DefaultUser => {
                "rule 6: <default user> (the user's own share, less its reserved and default sub-quotas)"
            }
            Rule::Client => "rule 7: <client> (per user)",
            Rule::DefaultClient => "rule 8: <default client> (per user and client id)",
            Rule::Unlimited => "no quota applies: unthrottled",
        }
    }
}

/// What one connection gets for one quota type.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    /// The `user` tag: the principal name as Kafka's `Sanitizer` writes it, or empty.
    pub user_tag: String,
    /// The `client-id` tag: the raw client id, or empty (the group is the user's shared one).
    pub client_tag: String,
    pub rule: Rule,
    /// The limit; `None` is unthrottled.
    pub limit: Option<f64>,
    /// Rules 3 and 6: the user's reserved sub-quotas left less of its total than the smallest
    /// bound Kafka enforces ([`SafeBounds::smallest`]), and the limit is that bound.
    pub oversubscribed: bool,
}

impl Resolved {
    /// The tags (`user`, `client-id`), in Kafka's order.
    pub fn tags(&self) -> (&str, &str) {
        (&self.user_tag, &self.client_tag)
    }
}

/// The entities of one quota type.
#[derive(Clone, Debug, Default)]
struct TypeTable {
    /// `<U, C>`: user → client id → value (ordered, so that a sum does not depend on arrival order).
    user_client: HashMap<String, BTreeMap<String, f64>>,
    /// R(U): the sum of `user_client[U]`, recomputed from it on every change.
    reserved: HashMap<String, f64>,
    user_default_client: HashMap<String, f64>,
    user: HashMap<String, f64>,
    /// `<default user, C>`: client id → value (ordered, as `user_client`).
    default_user_client: BTreeMap<String, f64>,
    default_user_default_client: Option<f64>,
    default_user: Option<f64>,
    client: HashMap<String, f64>,
    default_client: Option<f64>,
}

impl TypeTable {
    /// Sets (`Some`) or removes (`None`) the value of an entity.
    fn set(&mut self, entity: &Entity, value: Option<f64>) {
        fn put(map: &mut HashMap<String, f64>, key: &str, value: Option<f64>) {
            match value {
                Some(v) => map.insert(key.to_string(), v),
                None => map.remove(key),
            };
        }
        match (&entity.user, &entity.client_id) {
            (Some(Part::Named(u)), Some(Part::Named(c))) => {
                let clients = self.user_client.entry(u.clone()).or_default();
                match value {
                    Some(v) => clients.insert(c.clone(), v),
                    None => clients.remove(c),
                };
                if clients.is_empty() {
                    self.user_client.remove(u);
                    self.reserved.remove(u);
                } else {
                    self.reserved.insert(u.clone(), clients.values().sum());
                }
            }
            (Some(Part::Named(u)), Some(Part::Default)) => {
                put(&mut self.user_default_client, u, value)
            }
            (Some(Part::Named(u)), None) => put(&mut self.user, u, value),
            (Some(Part::Default), Some(Part::Named(c))) => match value {
                Some(v) => {
                    self.default_user_client.insert(c.clone(), v);
                }
                None => {
                    self.default_user_client.remove(c);
                }
            },
            (Some(Part::Default), Some(Part::Default)) => self.default_user_default_client = value,
            (Some(Part::Default), None) => self.default_user = value,
            (None, Some(Part::Named(c))) => put(&mut self.client, c, value),
            (None, Some(Part::Default)) => self.default_client = value,
            (None, None) => {}
        }
    }

    /// The value of an entity, if it has one.
    fn get(&self, entity: &Entity) -> Option<f64> {
        match (&entity.user, &entity.client_id) {
            (Some(Part::Named(u)), Some(Part::Named(c))) => self
                .user_client
                .get(u)
                .and_then(|clients| clients.get(c))
                .copied(),
            (Some(Part::Named(u)), Some(Part::Default)) => self.user_default_client.get(u).copied(),
            (Some(Part::Named(u)), None) => self.user.get(u).copied(),
            (Some(Part::Default), Some(Part::Named(c))) => self.default_user_client.get(c).copied(),
            (Some(Part::Default), Some(Part::Default)) => self.default_user_default_client,
            (Some(Part::Default), None) => self.default_user,
            (None, Some(Part::Named(c))) => self.client.get(c).copied(),
            (None, Some(Part::Default)) => self.default_client,
            (None, None) => None,
        }
    }

    /// How many entities have a value.
    fn len(&self) -> usize {
        let singles = [
            self.default_user_default_client,
            self.default_user,
            self.default_client,
        ]
        .iter()
        .flatten()
        .count();
        self.user_client.values().map(BTreeMap::len).sum::<usize>()
            + self.user_default_client.len()
            + self.user.len()
            + self.default_user_client.len()
            + self.client.len()
            + singles
    }

    fn is_empty(&self) -> bool {
        self.user_client.is_empty()
            && self.user_default_client.is_empty()
            && self.user.is_empty()
            && self.default_user_client.is_empty()
            && self.default_user_default_client.is_none()
            && self.default_user.is_none()
            && self.client.is_empty()
            && self.default_client.is_none()
    }

    /// What a user's total is less for its other clients under `rule` (3 or 6), if anything: its
    /// own sub-quotas, and under rule 6 also the `<default user, C>` sub-quotas of the client ids
    /// it has no sub-quota of its own for (each user's share of the default has them carved out,
    /// as a user's own total has its own).
    fn reserved_under(&self, rule: Rule, user: &str) -> Option<f64> {
        let own = self.user_client.get(user);
        let own_sum = own.map(|_| self.reserved.get(user).copied().unwrap_or(0.0));
        if rule != Rule::DefaultUser || self.default_user_client.is_empty() {
            return own_sum;
        }
        // Summed in client-id order (a BTreeMap), so the sum does not depend on arrival order.
        let defaults = self
            .default_user_client
            .iter()
            .filter(|(client_id, _)| own.is_none_or(|clients| !clients.contains_key(*client_id)))
            .fold(None, |sum: Option<f64>, (_, value)| {
                Some(sum.unwrap_or(0.0) + value)
            });
        match (own_sum, defaults) {
            (None, None) => None,
            (own_sum, defaults) => Some(own_sum.unwrap_or(0.0) + defaults.unwrap_or(0.0)),
        }
    }

    /// The first rule that applies to (user, client id), with its value.
    fn first_rule(&self, user: &str, client_id: &str) -> (Rule, Option<f64>) {
        if let Some(v) = self
            .user_client
            .get(user)
            .and_then(|clients| clients.get(client_id))
        {
            return (Rule::UserClient, Some(*v));
        }
        let found = [
            (
                Rule::UserDefaultClient,
                self.user_default_client.get(user).copied(),
            ),
            (Rule::User, self.user.get(user).copied()),
            (
                Rule::DefaultUserClient,
                self.default_user_client.get(client_id).copied(),
            ),
            (
                Rule::DefaultUserDefaultClient,
                self.default_user_default_client,
            ),
            (Rule::DefaultUser, self.default_user),
            (Rule::Client, self.client.get(client_id).copied()),
            (Rule::DefaultClient, self.default_client),
        ]
        .into_iter()
        .find(|(_, value)| value.is_some());
        found.unwrap_or((Rule::Unlimited, None))
    }
}

/// Every quota entity Kafka configured, per quota type.
#[derive(Clone, Debug, Default)]
pub struct QuotaTable {
    types: [TypeTable; QuotaType::COUNT],
    bounds: SafeBounds,
}

impl QuotaTable {
    pub fn new() -> QuotaTable {
        QuotaTable::default()
    }

    /// Sets the bounds a remainder may not fall below (from the node's `socket.request.max.bytes`;
    /// Kafka's default until then).
    pub fn set_bounds(&mut self, bounds: SafeBounds) {
        self.bounds = bounds;
    }

    /// The bounds a remainder may not fall below.
    pub fn bounds(&self) -> SafeBounds {
        self.bounds
    }

    /// Kafka's `updateQuota`: `entity` has `value` for `quota_type` (replacing an earlier value).
    pub fn update(&mut self, entity: &Entity, quota_type: QuotaType, value: f64) {
        self.types[quota_type.index()].set(entity, Some(value));
    }

    /// Kafka's `removeQuota`: `entity` no longer has a value for `quota_type`.
    pub fn remove(&mut self, entity: &Entity, quota_type: QuotaType) {
        self.types[quota_type.index()].set(entity, None);
    }

    /// The value `entity` has for `quota_type`, if any.
    pub fn value(&self, entity: &Entity, quota_type: QuotaType) -> Option<f64> {
        self.types[quota_type.index()].get(entity)
    }

    /// The table in one line: entities per quota type, and how many users reserve sub-quotas.
    pub fn summary(&self) -> String {
        let per_type: Vec<String> = QuotaType::ALL
            .iter()
            .map(|t| format!("{} {}", self.types[t.index()].len(), t.config_key()))
            .collect();
        format!(
            "{} quota entities ({}); users reserving sub-quotas: {}",
            self.entities(),
            per_type.join(", "),
            self.users_reserving()
        )
    }

    /// How many (entity, quota type) values are configured.
    pub fn entities(&self) -> usize {
        self.types.iter().map(TypeTable::len).sum()
    }

    /// How many users reserve sub-quotas (`<U, C>` entities) of any type.
    pub fn users_reserving(&self) -> usize {
        let mut reserving: Vec<&String> = self
            .types
            .iter()
            .flat_map(|t| t.user_client.keys())
            .collect();
        reserving.sort_unstable();
        reserving.dedup();
        reserving.len()
    }

    /// Whether no entity of `quota_type` is configured (Kafka's `quotaLimit` is then never
    /// asked for a group of that type).
    pub fn is_empty(&self, quota_type: QuotaType) -> bool {
        self.types[quota_type.index()].is_empty()
    }

    /// The group and limit of a connection of `user` (the principal's name) with `client_id`.
    pub fn resolve(&self, quota_type: QuotaType, user: &str, client_id: &str) -> Resolved {
        let table = &self.types[quota_type.index()];
        let (rule, value) = table.first_rule(user, client_id);
        let (mut limit, mut oversubscribed) = (value, false);
        // Only a remainder is computed here; every value an operator set is used as set.
        let reserved = match rule {
            Rule::User | Rule::DefaultUser => table.reserved_under(rule, user),
            _ => None,
        };
        if let (Some(total), Some(reserved)) = (value, reserved) {
            let remainder = total - reserved;
            let smallest = self.bounds.smallest(quota_type);
            oversubscribed = remainder.is_nan() || remainder < smallest;
            limit = Some(if oversubscribed { smallest } else { remainder });
        }
        let (user_tag, client_tag) = match rule {
            Rule::User | Rule::DefaultUser => (sanitize(user), String::new()),
            _ => (sanitize(user), client_id.to_string()),
        };
        Resolved {
            user_tag,
            client_tag,
            rule,
            limit,
            oversubscribed,
        }
    }

    /// The limit of a group Kafka names by its tags (`quotaLimit(type, tags)`): the group's
    /// limit, whichever connection of it asks. `user_tag` is sanitized, as in the tags.
    pub fn limit_of_group(
        &self,
        quota_type: QuotaType,
        user_tag: &str,
        client_tag: &str,
    ) -> Option<f64> {
        // Tags hold the sanitized name; a name that sanitizes to itself is the common case.
        let user = unsanitize(user_tag);
        self.resolve(quota_type, &user, client_tag).limit
    }
}

/// The name a sanitized `user` tag was made from (Kafka's `Sanitizer.desanitize`: URL decoding).
fn unsanitize(tag: &str) -> String {
    if !tag.contains('%') {
        return tag.to_string();
    }
    let bytes = tag.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |at: usize| bytes.get(at).and_then(|b| (*b as char).to_digit(16));
        match (bytes[i], hex(i + 1), hex(i + 2)) {
            (b'%', Some(high), Some(low)) => {
                out.push((high * 16 + low) as u8);
                i += 3;
            }
            (byte, _, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sanitized_tag_reads_back_as_the_name() {
        for name in ["user2", "CN=alice,O=acme", "with space", "*", "ü", "a%b"] {
            assert_eq!(unsanitize(&sanitize(name)), name);
        }
    }
}
