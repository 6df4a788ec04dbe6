//! The error policy of every export, in one place: the body's value, or, after an error or a panic,
//! the default return value (0, false, null), which means "refused" or "nothing". A Rust failure
//! never reaches the JVM as an exception on a request thread, and never opens a door.
//!
//! Every export runs its body in [`export`]; one that handles Java objects reaches jni-rs's `Env`
//! through [`export_env`], which runs in [`export`] too. The two request-path exports take
//! primitives only (the address of the thread's direct buffer, registered once through
//! `bufferAddress`) and call [`export`] directly, which spares them jni-rs's guards: those cost more
//! than the rest of a cached decision (see docs/benchmarks.md).

use std::fmt;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use jni::{Env, EnvUnowned, Outcome};

use crate::wire::MalformedRequest;

#[derive(Debug)]
pub(crate) enum BridgeError {
    Jni(jni::errors::Error),
    Malformed(MalformedRequest),
    BadHandle,
    BadBuffer,
    /// The handle was closed: it answers nothing.
    Closed,
}

impl fmt::Display for BridgeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BridgeError::Jni(e) => write!(f, "JNI call failed: {e}"),
            BridgeError::Malformed(e) => write!(f, "{e}"),
            BridgeError::BadHandle => {
                write!(f, "the native handle is not one this library gave out")
            }
            BridgeError::BadBuffer => write!(
                f,
                "the request buffer's address, capacity or length is invalid"
            ),
            BridgeError::Closed => write!(f, "the authorizer was closed"),
        }
    }
}

impl From<jni::errors::Error> for BridgeError {
    fn from(e: jni::errors::Error) -> Self {
        BridgeError::Jni(e)
    }
}

impl From<MalformedRequest> for BridgeError {
    fn from(e: MalformedRequest) -> Self {
        BridgeError::Malformed(e)
    }
}

/// Runs the body of an export: an error returns `T::default()` after one log record
/// ([`refused`]); a panic is caught (the panic hook has recorded its message and location) and
/// returns `T::default()`.
#[inline]
pub(crate) fn export<T: Default>(body: impl FnOnce() -> Result<T, BridgeError>) -> T {
    catch_unwind(AssertUnwindSafe(|| body().unwrap_or_else(refused))).unwrap_or_default()
}

/// [`export`] for an export that handles Java objects: `body` gets jni-rs's `Env`.
pub(crate) fn export_env<'local, T: Default>(
    env: &mut EnvUnowned<'local>,
    body: impl FnOnce(&mut Env<'local>) -> Result<T, BridgeError>,
) -> T {
    export(|| match env.with_env(body).into_outcome() {
        Outcome::Ok(value) => Ok(value),
        Outcome::Err(err) => Err(err),
        // jni-rs caught it; `export` takes it as its own (the panic hook is not called again).
        Outcome::Panic(payload) => resume_unwind(payload),
    })
}

/// What an error returns, after one ERROR record for the log: the default, which means refused.
/// A closed handle refuses without an ERROR: a call after `close` is Kafka shutting down.
fn refused<T: Default>(err: BridgeError) -> T {
    match err {
        BridgeError::Closed => tracing::debug!("{err}; the request was refused"),
        err => tracing::error!("{err}; the request was refused"),
    }
    T::default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_or_a_panic_is_the_default() {
        assert_eq!(export(|| Ok(7i64)), 7);
        assert_eq!(export::<i64>(|| Err(BridgeError::BadHandle)), 0);
        assert_eq!(export::<i64>(|| Err(BridgeError::Closed)), 0);
        assert!(!export::<bool>(|| panic!("a bug")));
    }
}
