//! Hybrid mode (`GrantForgeHybridAuthorizer`): a GrantForge allow or deny is final, and a question
//! no policy decides is answered by Kafka's own ACLs, kept in the metadata log as ever. It moves a
//! cluster from ACLs to policies team by team (`grantforge.hybrid.resource.prefixes`): the share of
//! questions still left to the ACLs (the metric `hybrid-acl-decisions` beside the decisions) tells
//! when the ACLs can go.
//!
//! One `authorize` call is two steps. [`Agent::hybrid`] decides what the policies decide, audits
//! it as any decision, and marks the rest as left to Kafka; the shim asks Kafka's
//! `StandardAuthorizer` about those alone and hands its answers, with the ACL behind each, to
//! [`Agent::settle_by_acls`], which audits them as enforced `NATIVE`. Without a snapshot every
//! question the policies would be asked is refused (a deny among them may be the answer: fail
//! closed); super users are allowed, as everywhere.

use grantforge_engine::Instant;
use grantforge_kafka::{Action, RequestContext};

use super::Agent;
use crate::request::lane::AclAnswer;
use crate::request::unaudited::with_unaudited;

impl Agent {
    /// Decides what the policies decide into `allowed`, and marks in `left` each action left to
    /// Kafka's ACLs (module doc). `allowed` and `left` start all false.
    pub fn hybrid(
        &self,
        context: &RequestContext,
        actions: &[Action<'_>],
        allowed: &mut [bool],
        left: &mut [bool],
    ) {
        if self.excluded_from_audit(context) {
            with_unaudited(actions, |unaudited| {
                self.decide_all(context, unaudited, allowed, Some(left), |_, _, _| ())
            });
        } else {
            self.decide_all(context, actions, allowed, Some(left), |_, _, _| ());
        }
    }

    /// Kafka's answers to the actions [`Agent::hybrid`] left to its ACLs: `kafka[i]` for each
    /// action marked in `left`, and `acl(i)` the ACL behind it in words. Audited where Kafka asks
    /// to report it, enforced `NATIVE`.
    pub fn settle_by_acls<'a>(
        &self,
        context: &RequestContext,
        actions: &[Action<'_>],
        left: &[bool],
        kafka: &[bool],
        acl: impl Fn(usize) -> &'a str,
    ) {
        let excluded = self.excluded_from_audit(context);
        self.lanes.with_mine(|lane, _| {
            let mut now: Option<Instant> = None;
            for (i, action) in actions.iter().enumerate() {
                if left[i] {
                    let answer = AclAnswer {
                        allowed: kafka[i],
                        acl: acl(i),
                        audited: !excluded,
                    };
                    lane.settle_by_acls(context, action, answer, &self.auditor, &mut now);
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use grantforge_kafka::Action;

    use crate::audit::events::AccessEvent;
    use crate::test_support::{context, e2e_agent, write};

    const ACL: &str = "TOPIC:LITERAL:inventory User:alice from * ALLOW WRITE";

    /// Asks the agent about `topics` as `user`: (allowed, left to Kafka) per topic.
    fn ask(agent: &super::Agent, user: &str, topics: &[&str]) -> Vec<(bool, bool)> {
        let actions: Vec<Action<'_>> = topics.iter().map(|t| write(t)).collect();
        let (mut allowed, mut left) = (vec![false; topics.len()], vec![false; topics.len()]);
        agent.hybrid(&context(user), &actions, &mut allowed, &mut left);
        allowed.into_iter().zip(left).collect()
    }

    #[test]
    fn a_policys_allow_and_deny_are_final_and_an_open_question_is_left_to_kafka() {
        let agent = e2e_agent(&[]);
        assert_eq!(
            ask(&agent, "alice", &["orders", "payments", "inventory"]),
            [(true, false), (false, false), (false, true)],
            "policy 1 allows, policy 5 denies, no policy speaks of inventory"
        );
        let (inventory, left) = ([write("inventory")], [true]);
        agent.settle_by_acls(&context("alice"), &inventory, &left, &[false], |_| "no ACL");
        let stats = agent.stats();
        assert_eq!(
            (
                stats.decisions_allowed,
                stats.decisions_denied,
                stats.hybrid_acl_decisions
            ),
            (1, 1, 1)
        );
        assert_eq!(stats.hybrid_acl_share_percent, 34, "a third, rounded up");
        agent.shutdown();
    }

    #[test]
    fn a_question_left_to_kafka_is_audited_once_as_kafka_answered_it() {
        let agent = e2e_agent(&[]);
        let actions = [write("inventory")];
        let (mut allowed, mut left) = ([false], [false]);
        agent.hybrid(&context("alice"), &actions, &mut allowed, &mut left);
        assert!(
            agent.take_audit_events(true).is_empty(),
            "no GrantForge refusal of a question it left open"
        );
        agent.settle_by_acls(&context("alice"), &actions, &left, &[true], |_| ACL);
        let events: Vec<AccessEvent> = agent.take_audit_events(true);
        assert_eq!(events.len(), 1, "{events:?}");
        let json = events[0].to_json();
        assert_eq!(json["enforcer"], "NATIVE");
        assert_eq!(json["outcome"], "ALLOWED");
        assert_eq!(json["policyId"], serde_json::Value::Null);
        assert!(json["request"].as_str().unwrap().contains(ACL), "{json}");
        assert!(events[0].log_line().contains(ACL));
        agent.shutdown();
    }

    #[test]
    fn outside_the_prefixes_the_policies_are_not_asked() {
        let agent = e2e_agent(&[("grantforge.hybrid.resource.prefixes", "pay, inv")]);
        assert_eq!(
            ask(&agent, "alice", &["orders", "payments", "inventory"]),
            [(false, true), (false, false), (false, true)],
            "orders is outside the prefixes though a policy allows it"
        );
        let actions = [write("orders"), write("inventory")];
        let left = [true, true];
        agent.settle_by_acls(&context("alice"), &actions, &left, &[false, true], |_| ACL);
        assert_eq!(
            agent.stats().hybrid_acl_decisions,
            2,
            "both, settled by the ACLs"
        );
        agent.shutdown();
    }

    #[test]
    fn a_filter_question_the_acls_refuse_is_not_theirs_to_count() {
        let agent = e2e_agent(&[]);
        let probe = Action {
            log_if_denied: false,
            ..write("inventory")
        };
        let (actions, left) = ([probe, probe], [true, true]);
        agent.settle_by_acls(&context("alice"), &actions, &left, &[false, true], |_| "");
        assert_eq!(
            agent.stats().hybrid_acl_decisions,
            1,
            "the one they allowed: without the ACLs it would be refused"
        );
        agent.shutdown();
    }

    #[test]
    fn a_principal_excluded_from_audit_is_not_audited_on_either_side() {
        let agent = e2e_agent(&[("grantforge.audit.excluded.principals", "User:alice")]);
        let actions = [write("orders"), write("inventory")];
        let (mut allowed, mut left) = ([false; 2], [false; 2]);
        agent.hybrid(&context("alice"), &actions, &mut allowed, &mut left);
        agent.settle_by_acls(&context("alice"), &actions, &left, &[false, true], |_| ACL);
        assert_eq!(agent.take_audit_events(true), Vec::<AccessEvent>::new());
        assert_eq!(
            agent.stats().hybrid_acl_decisions,
            1,
            "decided by the ACLs all the same"
        );
        agent.shutdown();
    }
}
