//! Actions asked with other audit flags than Kafka gave them: how shadow mode's questions and the
//! requests of principals excluded from audit are decided without being audited, and compare
//! mode's are audited once, on the same path as any other.

use grantforge_kafka::Action;

/// Nearly every call asks about one action: no allocation up to this many of them.
pub(crate) const INLINE: usize = 16;

/// Runs `decide` with copies of `actions` that ask for no audit.
pub(crate) fn with_unaudited<'a, R>(
    actions: &[Action<'a>],
    decide: impl FnOnce(&[Action<'a>]) -> R,
) -> R {
    with_reflagged(actions, |_, action| unaudited_copy(action), decide)
}

/// Runs `decide` with `reflag(i, action)` in place of each action `i`: the same questions with
/// other audit flags, without allocating up to [`INLINE`] of them.
pub(crate) fn with_reflagged<'a, R>(
    actions: &[Action<'a>],
    reflag: impl Fn(usize, &Action<'a>) -> Action<'a>,
    decide: impl FnOnce(&[Action<'a>]) -> R,
) -> R {
    // One action is nearly every call: no array of slots to fill on the request's path.
    if let [action] = actions {
        return decide(std::slice::from_ref(&reflag(0, action)));
    }
    let n = actions.len();
    let (mut inline, mut heap) = ([Action::NONE; INLINE], Vec::new());
    let asked: &mut [Action<'a>] = if n <= INLINE {
        &mut inline[..n]
    } else {
        heap.resize(n, Action::NONE);
        &mut heap
    };
    for (i, (slot, action)) in asked.iter_mut().zip(actions).enumerate() {
        *slot = reflag(i, action);
    }
    decide(asked)
}

/// `action` as a question that asks for no audit.
pub(crate) fn unaudited_copy<'a>(action: &Action<'a>) -> Action<'a> {
    Action {
        log_if_allowed: false,
        log_if_denied: false,
        ..*action
    }
}
