//! The order of the agent's rules, defined once for the broker's path and for `explain`.
//!
//! For each action: a principal of `super.users` is allowed, whatever is in force; otherwise the
//! snapshot in force answers, and without one (none yet, or one of another service type) the
//! action is refused; the snapshot's own rules follow (`KafkaPolicies::decide`: a disabled
//! service, an action the policies cannot place, then the policies). Every answer is a
//! [`Reason`]. The broker asks the snapshot's rules through its decision cache; `explain` asks
//! them directly; both come here first, so they answer alike by construction.

use grantforge_kafka::{Principal, Reason};

/// The principals of Kafka's `super.users`, compared as Kafka's authorizers compare them: the
/// whole `Type:name` string of the request's principal.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SuperUsers(Vec<String>);

impl SuperUsers {
    /// Parses `super.users` (`User:admin;User:kafka`; blanks around entries are ignored). The
    /// error names the entry that is not a principal, or the principals joined by commas.
    pub fn parse(value: &str) -> Result<SuperUsers, String> {
        let entries: Vec<&str> = value
            .split(';')
            .map(str::trim)
            .filter(|entry| !entry.is_empty())
            .collect();
        if entries
            .iter()
            .any(|entry| joins_principals_with_commas(entry))
        {
            return Err(commas_instead_of_semicolons(&entries));
        }
        entries
            .iter()
            .map(|entry| match entry.split_once(':') {
                Some((kind, name)) if !kind.is_empty() && !name.is_empty() => Ok(entry.to_string()),
                _ => Err(format!("`{entry}` is not a principal; write entries as Type:name separated by `;`, such as User:kafka")),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(SuperUsers)
    }

    /// Whether `principal` is one of them (without building its `Type:name` string).
    pub fn contains(&self, principal: &Principal) -> bool {
        self.0.iter().any(|entry| {
            entry
                .strip_prefix(principal.principal_type.as_str())
                .and_then(|rest| rest.strip_prefix(':'))
                .is_some_and(|name| name == principal.name)
        })
    }

    /// The entries, as configured.
    pub fn entries(&self) -> &[String] {
        &self.0
    }
}

/// Whether `entry` is several principals joined by commas (`User:admin,User:kafka`), which Kafka
/// reads as one principal named `admin,User:kafka` that no client ever is. A comma followed by
/// `Type:` starts another principal; a certificate's name (`User:CN=broker,OU=ops`) has commas
/// followed by `attribute=`, never by `Type:`.
fn joins_principals_with_commas(entry: &str) -> bool {
    entry.split(',').skip(1).any(starts_a_principal)
}

fn starts_a_principal(text: &str) -> bool {
    text.trim().split_once(':').is_some_and(|(kind, _)| {
        kind.starts_with(|c: char| c.is_ascii_alphabetic())
            && kind.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// The error for `super.users` written with commas: what Kafka makes of it, and the value
/// corrected (each comma that starts a principal becomes `;`).
fn commas_instead_of_semicolons(entries: &[&str]) -> String {
    let corrected: Vec<String> = entries
        .iter()
        .map(|entry| split_joined_principals(entry).join(";"))
        .collect();
    format!(
        "separates principals with commas ({}), but Kafka separates super.users entries with `;` and reads each of those as one principal that no client is; write super.users={}",
        entries
            .iter()
            .filter(|entry| joins_principals_with_commas(entry))
            .map(|entry| format!("`{entry}`"))
            .collect::<Vec<_>>()
            .join(", "),
        corrected.join(";")
    )
}

/// `User:admin,User:kafka` → `User:admin`, `User:kafka`; commas inside a principal's name stay.
fn split_joined_principals(entry: &str) -> Vec<String> {
    let mut principals: Vec<String> = Vec::new();
    for piece in entry.split(',') {
        match principals.last_mut() {
            Some(last) if !starts_a_principal(piece) => {
                last.push(',');
                last.push_str(piece);
            }
            _ => principals.push(piece.trim().to_string()),
        }
    }
    principals
}

/// The rules asked before a snapshot's own, in order: a super user is allowed (whatever is in
/// force, so `in_force` is not even asked); otherwise what is in force, or why nothing is.
pub fn before_policies<T>(
    super_users: &SuperUsers,
    principal: &Principal,
    in_force: impl FnOnce() -> Result<T, Reason>,
) -> Result<T, Reason> {
    if super_users.contains(principal) {
        return Err(Reason::SuperUser);
    }
    in_force()
}

/// What keeps the snapshot in force from deciding.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Refusing {
    /// A snapshot of another service type is being refused.
    pub service_type: bool,
    /// The snapshot in force is past the staleness limit (`grantforge.snapshot.max.age.ms`).
    pub too_old: bool,
}

/// What may decide: the snapshot in force, unless a snapshot of another service type is being
/// refused ([`Reason::RefusedServiceType`]), the one in force is too old
/// ([`Reason::SnapshotTooOld`]), or there is none yet ([`Reason::NoSnapshot`]).
pub fn in_force<T>(refusing: Refusing, snapshot: Option<T>) -> Result<T, Reason> {
    if refusing.service_type {
        return Err(Reason::RefusedServiceType);
    }
    if refusing.too_old {
        return Err(Reason::SnapshotTooOld);
    }
    snapshot.ok_or(Reason::NoSnapshot)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn principal(kind: &str, name: &str) -> Principal {
        Principal {
            principal_type: kind.into(),
            name: name.into(),
        }
    }

    #[test]
    fn super_users_are_whole_type_and_name_strings() {
        let super_users = SuperUsers::parse(" User:admin ; Group:ops;;User:a:b").unwrap();
        assert!(super_users.contains(&principal("User", "admin")));
        assert!(super_users.contains(&principal("Group", "ops")));
        assert!(
            super_users.contains(&principal("User", "a:b")),
            "a name may hold a colon"
        );
        assert!(!super_users.contains(&principal("User", "ops")));
        assert!(!super_users.contains(&principal("Group", "admin")));
        assert!(!super_users.contains(&principal("User", "admi")));
        assert!(!super_users.contains(&principal("Use", "r:admin")));
        for bad in ["admin", "User:", ":admin"] {
            assert!(SuperUsers::parse(bad).unwrap_err().contains(bad), "{bad}");
        }
        assert_eq!(SuperUsers::parse("").unwrap(), SuperUsers::default());
    }

    #[test]
    fn principals_joined_by_commas_are_refused_with_the_value_written_with_semicolons() {
        let err = SuperUsers::parse("User:admin,User:kafka").unwrap_err();
        assert!(err.contains("`User:admin,User:kafka`"), "{err}");
        assert!(err.contains("super.users=User:admin;User:kafka"), "{err}");
        let err = SuperUsers::parse("User:ops ; User:admin, User:CN=broker,OU=b").unwrap_err();
        assert!(
            err.contains("super.users=User:ops;User:admin;User:CN=broker,OU=b"),
            "{err}"
        );
    }

    #[test]
    fn commas_inside_a_certificates_name_are_part_of_one_principal() {
        let super_users = SuperUsers::parse("User:CN=broker,OU=brokers,O=Example").unwrap();
        assert!(super_users.contains(&principal("User", "CN=broker,OU=brokers,O=Example")));
    }

    const TYPE: Refusing = Refusing {
        service_type: true,
        too_old: false,
    };

    #[test]
    fn a_super_user_is_allowed_before_anything_is_asked_of_what_is_in_force() {
        let admins = SuperUsers::parse("User:admin").unwrap();
        let asked = std::cell::Cell::new(false);
        let answer = before_policies(&admins, &principal("User", "admin"), || {
            asked.set(true);
            in_force::<()>(TYPE, None)
        });
        assert_eq!((answer, asked.get()), (Err(Reason::SuperUser), false));
        assert_eq!(
            before_policies(&admins, &principal("User", "bob"), || in_force::<()>(
                TYPE,
                Some(())
            )),
            Err(Reason::RefusedServiceType)
        );
        assert_eq!(
            before_policies(&admins, &principal("User", "bob"), || in_force::<()>(
                Refusing::default(),
                None
            )),
            Err(Reason::NoSnapshot)
        );
        assert_eq!(
            before_policies(&admins, &principal("User", "bob"), || in_force(
                Refusing::default(),
                Some(7)
            )),
            Ok(7)
        );
    }

    #[test]
    fn a_snapshot_too_old_refuses_after_a_refused_service_type_and_before_none() {
        let too_old = Refusing {
            too_old: true,
            ..Refusing::default()
        };
        assert_eq!(in_force(too_old, Some(7)), Err(Reason::SnapshotTooOld));
        assert_eq!(in_force::<()>(too_old, None), Err(Reason::SnapshotTooOld));
        let both = Refusing {
            service_type: true,
            too_old: true,
        };
        assert_eq!(in_force(both, Some(7)), Err(Reason::RefusedServiceType));
    }
}
