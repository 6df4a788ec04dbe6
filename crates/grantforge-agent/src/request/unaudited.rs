//! Actions asked with Kafka's audit flags cleared: how shadow mode's questions and the requests of
//! principals excluded from audit are decided without being audited, on the same path as any other.

use grantforge_kafka::Action;

/// Nearly every call asks about one action: no allocation up to this many of them.
pub(crate) const INLINE: usize = 16;

/// Runs `decide` with copies of `actions` that ask for no audit.
pub(crate) fn with_unaudited<'a, R>(
    actions: &[Action<'a>],
    decide: impl FnOnce(&[Action<'a>]) -> R,
) -> R {
    let n = actions.len();
    let (mut inline, mut heap) = ([Action::NONE; INLINE], Vec::new());
    let unaudited: &mut [Action<'a>] = if n <= INLINE {
        &mut inline[..n]
    } else {
        heap.resize(n, Action::NONE);
        &mut heap
    };
    for (slot, action) in unaudited.iter_mut().zip(actions) {
        *slot = unaudited_copy(action);
    }
    decide(unaudited)
}

/// `action` as a question that asks for no audit.
pub(crate) fn unaudited_copy<'a>(action: &Action<'a>) -> Action<'a> {
    Action {
        log_if_allowed: false,
        log_if_denied: false,
        ..*action
    }
}
