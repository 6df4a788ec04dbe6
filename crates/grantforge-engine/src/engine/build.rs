//! Building a [`PolicyEngine`]: each policy compiled (and so checked) in file order, shown to the
//! caller's [`PolicyVisitor`], then all of them indexed and the snapshot's memberships resolved.
//! Both ways in share it: [`PolicyEngine::build`] over a parsed snapshot, and the one-pass
//! [`PolicyEngine::read`], policy by policy as they are read.

use std::collections::BTreeMap;

use super::{Membership, PolicyEngine};
use crate::condition::Evaluators;
use crate::error::SnapshotError;
use crate::index::Indexes;
use crate::intern::Interner;
use crate::is_blank;
use crate::policy::{CompiledPolicy, Compiler};
use crate::record::{Definition, PolicyRecord};
use crate::snapshot::Snapshot;
use crate::time::Instant;

/// Takes each ACCESS policy of a snapshot once [`PolicyEngine::read`] has compiled it, to derive
/// something else from it on the way (a listing, say) without a second pass over a parsed model.
/// It runs on the thread that compiles, beside the one that reads.
pub trait PolicyVisitor: Send {
    /// One policy, compiled and so checked, in file order.
    fn visit(&mut self, policy: &PolicyRecord);
    /// Forget every policy visited so far: they are visited again from the first (a snapshot with
    /// a field repeated after its policies is read twice).
    fn restart(&mut self);
    /// Every policy has been visited, and the snapshot is good so far: what is derived from them
    /// can be finished, while the engine indexes its own.
    fn finish(&mut self) {}
}

/// Compiles the policies of a parsed snapshot in order, showing each to `visitor`, and indexes
/// them.
pub(super) fn compile_all<C: ?Sized>(
    snapshot: &Snapshot,
    evaluators: &Evaluators<C>,
    visitor: &mut dyn PolicyVisitor,
) -> Result<PolicyEngine<C>, SnapshotError> {
    let mut building = Building::new(&snapshot.definition, evaluators)?;
    building.policies.reserve_exact(snapshot.policies.len());
    for (index, record) in snapshot.policies.iter().enumerate() {
        building.add(record, index)?;
        visitor.visit(record);
    }
    visitor.finish();
    Ok(building.finish(&snapshot.roles, &snapshot.groups))
}

/// The visitor of a build that derives nothing else.
pub(super) struct Unvisited;

impl PolicyVisitor for Unvisited {
    fn visit(&mut self, _policy: &PolicyRecord) {}
    fn restart(&mut self) {}
}

/// A [`PolicyEngine`] being built, one policy after the other.
pub(super) struct Building<'e, C: ?Sized> {
    compiler: Compiler<'e, C>,
    policies: Vec<CompiledPolicy<C>>,
}

impl<'e, C: ?Sized> Building<'e, C> {
    pub(super) fn new(
        definition: &Definition,
        evaluators: &'e Evaluators<C>,
    ) -> Result<Self, SnapshotError> {
        Ok(Building {
            compiler: Compiler::new(definition.model()?, definition, evaluators),
            policies: Vec::new(),
        })
    }

    /// Checks and compiles one policy; `index` is its place in `policies`, for errors.
    pub(super) fn add(&mut self, record: &PolicyRecord, index: usize) -> Result<(), SnapshotError> {
        self.policies.push(self.compiler.compile(record, index)?);
        Ok(())
    }

    /// Indexes the policies and resolves the snapshot's memberships.
    pub(super) fn finish(self, roles: &Members, groups: &Members) -> PolicyEngine<C> {
        let Compiler {
            model,
            mut users,
            groups: mut group_codes,
            roles: mut role_codes,
            warnings,
            in_use,
            mut names,
            ..
        } = self.compiler;
        let mut policies = self.policies;
        policies.shrink_to_fit();
        names.shrink_to_fit();
        let memberships = memberships(
            [
                (true, groups, &mut group_codes),
                (false, roles, &mut role_codes),
            ],
            &mut users,
        );
        users.shrink();
        group_codes.shrink();
        role_codes.shrink();
        let indexes = Indexes::build(model.levels().len(), &policies);
        let mut validity_changes: Vec<Instant> = policies
            .iter()
            .flat_map(CompiledPolicy::validity_boundaries)
            .collect();
        validity_changes.sort_unstable();
        validity_changes.dedup();
        PolicyEngine {
            model,
            policies,
            indexes,
            users,
            groups: group_codes,
            roles: role_codes,
            memberships,
            warnings,
            evaluators_in_use: in_use.into_iter().collect(),
            names,
            validity_changes: validity_changes.into_boxed_slice(),
        }
    }
}

/// A snapshot's `roles` or `groups`: code → its members' user names.
pub(super) type Members = BTreeMap<String, Vec<String>>;

/// Inverts the snapshot's `roles` and `groups` (code → users) into user → codes, by user id, codes
/// in map order and without repeats (Java's `LinkedHashSet`). `sources` are (whether they are
/// groups, code → members, the codes' interner).
fn memberships(
    sources: [(bool, &Members, &mut Interner); 2],
    users: &mut Interner,
) -> Vec<Option<Box<Membership>>> {
    let mut of_user: Vec<Option<Box<Membership>>> = Vec::new();
    for (is_group, by_code, codes) in sources {
        for (code, members) in by_code {
            let code_id = codes.intern(code);
            for member in members {
                let user = users.intern(member) as usize;
                if of_user.len() <= user {
                    of_user.resize_with(user + 1, || None);
                }
                of_user[user]
                    .get_or_insert_with(Box::default)
                    .add(code, code_id, is_group);
            }
        }
    }
    of_user.resize_with(users.len(), || None);
    of_user
}

impl Membership {
    fn add(&mut self, code: &str, id: u32, is_group: bool) {
        let (names, ids) = if is_group {
            (&mut self.groups, &mut self.group_ids)
        } else {
            (&mut self.roles, &mut self.role_ids)
        };
        if !ids.contains(&id) {
            names.push(code.to_string());
            ids.push(id);
        }
        self.blank |= is_blank(code);
    }
}
