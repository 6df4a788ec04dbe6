//! The handle Java holds: a never-freed shell around the agent, so that a call racing `close` can
//! never touch freed memory, and the bookkeeping that lets `close` wait for the calls in flight.

use std::mem::ManuallyDrop;
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use grantforge_agent::{registry, Agent, AgentConfig};
use jni::sys::jlong;

use crate::export::BridgeError;
use crate::settings_encoder::decode_settings;

/// What one `open` gives the Java shim: a never-freed shell (16 bytes), so a call racing `close`
/// can never touch freed memory. The shell holds one reference to the agent; `close` takes it out
/// (the shell then answers nothing: every call is refused, super users' included), waits until no
/// thread is inside a call on the shell ([`InCall`]), and drops it, so the agent, its token and its
/// snapshots are freed once no other authorizer of the JVM holds it.
pub(crate) struct Shell {
    magic: u64,
    /// From `Arc::into_raw`; null once closed.
    agent: AtomicPtr<Agent>,
}

const SHELL_MAGIC: u64 = 0x4752_414e_5446_4f52; // "GRANTFOR"

/// The shell a thread is inside a call on, null between calls: one per thread that ever called,
/// on a cache line of its own, so a call writes only to its own thread's line and `close` can tell
/// when no call still uses the agent it takes out of a shell.
#[repr(align(64))]
struct InCall(AtomicPtr<Shell>);

/// The [`InCall`] of every living thread that ever called; `close` reads them all.
static THREADS: Mutex<Vec<Arc<InCall>>> = Mutex::new(Vec::new());

/// This thread's entry in [`THREADS`], removed when the thread ends.
struct Registered(Arc<InCall>);

impl Registered {
    fn new() -> Registered {
        let in_call = Arc::new(InCall(AtomicPtr::new(ptr::null_mut())));
        THREADS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Arc::clone(&in_call));
        Registered(in_call)
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        THREADS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|t| !Arc::ptr_eq(t, &self.0));
    }
}

/// Leaves the call (clears the thread's [`InCall`]) when dropped, unwinding included.
struct Leave<'a>(&'a InCall);

impl Drop for Leave<'_> {
    fn drop(&mut self) {
        self.0 .0.store(ptr::null_mut(), Ordering::Release);
    }
}

#[inline]
pub(crate) fn shell(handle: jlong) -> Result<&'static Shell, BridgeError> {
    if handle == 0 {
        return Err(BridgeError::BadHandle);
    }
    // SAFETY: non-zero handles come from `open`, which leaks a `Shell` and never frees it; the
    // magic catches a handle of another origin as well as a raw pointer can.
    let shell = unsafe { &*(handle as *const Shell) };
    if shell.magic != SHELL_MAGIC {
        return Err(BridgeError::BadHandle);
    }
    Ok(shell)
}

thread_local! {
    static IN_CALL: Registered = Registered::new();
}

/// Runs `body` with the agent of an open handle; a closed handle is [`BridgeError::Closed`].
///
/// The thread names the shell in its [`InCall`] before it reads the agent, and `close` takes the
/// agent out before it reads every thread's [`InCall`] (all four `SeqCst`): so either this call
/// sees null, or `close` sees this thread inside the call and waits before dropping its
/// reference. The hot path pays two stores to its own thread's line and no shared write.
pub(crate) fn with_agent<T>(
    handle: jlong,
    body: impl FnOnce(&Arc<Agent>) -> Result<T, BridgeError>,
) -> Result<T, BridgeError> {
    let shell = shell(handle)?;
    IN_CALL
        .try_with(|registered| {
            let in_call = &*registered.0;
            in_call
                .0
                .store(shell as *const Shell as *mut Shell, Ordering::SeqCst);
            let _leave = Leave(in_call);
            let agent = shell.agent.load(Ordering::SeqCst);
            if agent.is_null() {
                return Err(BridgeError::Closed);
            }
            // SAFETY: `agent` came from `Arc::into_raw` in `open`, and the shell's reference is
            // dropped only by `close`, after it waited for this call to leave (see above). The
            // `ManuallyDrop` borrows that reference without giving it back; `body` may clone it.
            let agent = ManuallyDrop::new(unsafe { Arc::from_raw(agent) });
            body(&agent)
        })
        .unwrap_or(Err(BridgeError::Closed))
}

/// Takes the agent out of the shell (later calls are refused), gives its `open` back to the
/// registry (the last one stops the agent), waits until no thread is inside a call on the shell,
/// and drops the shell's reference. Idempotent.
pub(crate) fn close_shell(shell: &Shell) {
    let agent = shell.agent.swap(ptr::null_mut(), Ordering::SeqCst);
    if agent.is_null() {
        return;
    }
    // SAFETY: from `Arc::into_raw` in `open`; the swap hands it out exactly once.
    let agent = unsafe { Arc::from_raw(agent) };
    registry::release(&agent);
    let this = shell as *const Shell as *mut Shell;
    while THREADS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .any(|t| t.0.load(Ordering::SeqCst) == this)
    {
        std::thread::sleep(Duration::from_micros(200));
    }
    drop(agent);
}

/// Validates the settings and opens (or joins) the agent: its handle and the start timeout.
pub(crate) fn open_shell(settings: &[u8]) -> Result<(jlong, Duration), String> {
    let settings = decode_settings(settings).map_err(|e| e.to_string())?;
    let config = AgentConfig::from_settings(&settings).map_err(|e| e.to_string())?;
    let start_timeout = config.start_timeout;
    let agent = registry::open(config).map_err(|e| e.to_string())?;
    let shell: &'static Shell = Box::leak(Box::new(Shell {
        magic: SHELL_MAGIC,
        agent: AtomicPtr::new(Arc::into_raw(agent) as *mut Agent),
    }));
    Ok((shell as *const Shell as jlong, start_timeout))
}
