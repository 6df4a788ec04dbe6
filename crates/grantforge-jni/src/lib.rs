//! JNI bridge of the GrantForge Kafka agent: the native methods of
//! `org.devlive.grantforge.kafka.agent.NativeAgent`.
//!
//! This crate only translates. It decodes what the Java shim sends (see [`codec`]), calls the agent
//! runtime, and encodes the answers as primitives or byte arrays. Every export catches panics and
//! turns any error or panic into the default return value, and every default means "refused" or
//! "nothing": a Rust failure never reaches the JVM as an exception on a request thread, and never
//! opens a door. Exports that handle Java objects run inside jni-rs's `EnvUnowned::with_env` with
//! the [`FailClosed`] policy; the two request-path exports take primitives only (the address of the
//! thread's direct buffer, registered once through `bufferAddress`) and use [`fail_closed`], which
//! spares them jni-rs's guards: those cost more than the rest of a cached decision (see
//! docs/benchmarks.md).

pub mod codec;

use std::fmt;
use std::mem::ManuallyDrop;
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use grantforge_agent::logging::{self, LogLevel};
use grantforge_agent::{registry, Agent, AgentConfig};
use jni::errors::ErrorPolicy;
use jni::objects::{JByteArray, JByteBuffer, JClass};
use jni::sys::{jboolean, jint, jlong};
use jni::{Env, EnvUnowned};

use crate::codec::{decode_authorize, decode_by_resource_type, decode_settings, put_str, ActionSlots, ContextMemo, MalformedRequest};

/// Bumped whenever a native signature or the buffer layout changes; the Java shim refuses to run
/// with a library of another ABI (a stale library on `grantforge.native.library.path`, say).
pub const ABI_VERSION: jint = 3;

thread_local! {
    /// The request context of this (Kafka request) thread's previous call: decoded again only
    /// when it changes, and refilled without allocation once warm.
    static MEMO: std::cell::RefCell<ContextMemo> = std::cell::RefCell::new(ContextMemo::default());
}

/// `authorize` returns this when it wrote one byte per action into the buffer (more than 63
/// actions); otherwise it returns a bitmask with bit i set when action i is allowed.
const RESULTS_IN_BUFFER: jlong = -2;

/// What one `open` gives the Java shim: a never-freed shell (16 bytes), so a call racing `close`
/// can never touch freed memory. The shell holds one reference to the agent; `close` takes it out
/// (the shell then answers nothing: every call is refused, super users' included), waits until no
/// thread is inside a call on the shell ([`InCall`]), and drops it, so the agent, its token and its
/// snapshots are freed once no other authorizer of the JVM holds it.
struct Shell {
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
        THREADS.lock().unwrap_or_else(PoisonError::into_inner).push(Arc::clone(&in_call));
        Registered(in_call)
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        THREADS.lock().unwrap_or_else(PoisonError::into_inner).retain(|t| !Arc::ptr_eq(t, &self.0));
    }
}

/// Leaves the call (clears the thread's [`InCall`]) when dropped, unwinding included.
struct Leave<'a>(&'a InCall);

impl Drop for Leave<'_> {
    fn drop(&mut self) {
        self.0 .0.store(ptr::null_mut(), Ordering::Release);
    }
}

#[derive(Debug)]
enum BridgeError {
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
            BridgeError::BadHandle => write!(f, "the native handle is not one this library gave out"),
            BridgeError::BadBuffer => write!(f, "the request buffer's address, capacity or length is invalid"),
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

/// Errors and panics become the default return value (0, false, null: refused / nothing) plus an
/// ERROR record for the log; the panic hook has already recorded a panic's message and location.
struct FailClosed;

impl<T: Default> ErrorPolicy<T, BridgeError> for FailClosed {
    type Captures<'unowned_env_local: 'native_method, 'native_method> = ();

    fn on_error<'unowned_env_local: 'native_method, 'native_method>(
        _env: &mut Env<'unowned_env_local>,
        _captures: &mut (),
        err: BridgeError,
    ) -> jni::errors::Result<T> {
        Ok(refused(err))
    }

    fn on_panic<'unowned_env_local: 'native_method, 'native_method>(
        _env: &mut Env<'unowned_env_local>,
        _captures: &mut (),
        _payload: Box<dyn std::any::Any + Send + 'static>,
    ) -> jni::errors::Result<T> {
        Ok(T::default())
    }
}

fn shell(handle: jlong) -> Result<&'static Shell, BridgeError> {
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
fn with_agent<T>(handle: jlong, body: impl FnOnce(&Arc<Agent>) -> Result<T, BridgeError>) -> Result<T, BridgeError> {
    let shell = shell(handle)?;
    IN_CALL
        .try_with(|registered| {
            let in_call = &*registered.0;
            in_call.0.store(shell as *const Shell as *mut Shell, Ordering::SeqCst);
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
fn close_shell(shell: &Shell) {
    let agent = shell.agent.swap(ptr::null_mut(), Ordering::SeqCst);
    if agent.is_null() {
        return;
    }
    // SAFETY: from `Arc::into_raw` in `open`; the swap hands it out exactly once.
    let agent = unsafe { Arc::from_raw(agent) };
    registry::release(&agent);
    let this = shell as *const Shell as *mut Shell;
    while THREADS.lock().unwrap_or_else(PoisonError::into_inner).iter().any(|t| t.0.load(Ordering::SeqCst) == this) {
        std::thread::sleep(Duration::from_micros(200));
    }
    drop(agent);
}

/// Runs the body of an export that takes primitives only: a panic is caught here (the panic hook
/// has recorded its message), and an error or a panic returns `T::default()`, which means refused.
fn fail_closed<T: Default>(body: impl FnOnce() -> Result<T, BridgeError>) -> T {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(Ok(value)) => value,
        Ok(Err(err)) => refused(err),
        Err(_) => T::default(),
    }
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

/// The calling thread's direct buffer, as the shim passed it: the address `bufferAddress` gave
/// for it, its capacity, and the length of the request written into it.
struct DirectBuffer {
    address: *mut u8,
    capacity: usize,
    length: usize,
}

impl DirectBuffer {
    fn new(address: jlong, capacity: jint, length: jint) -> Result<DirectBuffer, BridgeError> {
        let capacity = usize::try_from(capacity).map_err(|_| BridgeError::BadBuffer)?;
        let length = usize::try_from(length).ok().filter(|len| *len <= capacity).ok_or(BridgeError::BadBuffer)?;
        if address == 0 {
            return Err(BridgeError::BadBuffer);
        }
        Ok(DirectBuffer { address: address as *mut u8, capacity, length })
    }

    fn request(&self) -> &[u8] {
        // SAFETY: the shim passes the address and capacity of a direct buffer that its calling
        // thread holds (a thread-local `RequestEncoder`), so the memory stays valid while that
        // thread is blocked in this call, and nothing else writes to it.
        unsafe { std::slice::from_raw_parts(self.address, self.length) }
    }

    /// Writes one byte per action (1 allowed, 0 refused) at the start of the buffer.
    fn write_results(&mut self, allowed: &[bool]) -> Result<(), BridgeError> {
        if allowed.len() > self.capacity {
            return Err(BridgeError::BadBuffer);
        }
        // SAFETY: as in `request`, and within the capacity; no borrow of the request is alive.
        let out = unsafe { std::slice::from_raw_parts_mut(self.address, allowed.len()) };
        out.iter_mut().zip(allowed).for_each(|(byte, a)| *byte = u8::from(*a));
        Ok(())
    }
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_NativeAgent_abiVersion<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> jint {
    env.with_env(|_env| -> Result<jint, BridgeError> {
        logging::install();
        Ok(ABI_VERSION)
    })
    .resolve::<FailClosed>()
}

/// `settings` is a sequence of (key, value) strings; the answer is `[0] + handle (i64 LE) + start
/// timeout in ms (i64 LE, `grantforge.start.timeout.ms` as the agent's configuration parsed it)`
/// or `[1] + UTF-8 message` naming the key and the fix.
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_NativeAgent_open<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    settings: JByteArray<'local>,
) -> JByteArray<'local> {
    env.with_env(|env| -> Result<JByteArray<'local>, BridgeError> {
        logging::install();
        let bytes = env.convert_byte_array(&settings)?;
        let answer = match open_shell(&bytes) {
            Ok((handle, start_timeout)) => {
                let mut answer = vec![0u8];
                answer.extend_from_slice(&handle.to_le_bytes());
                answer.extend_from_slice(&(start_timeout.as_millis() as i64).to_le_bytes());
                answer
            }
            Err(message) => {
                let mut answer = vec![1u8];
                answer.extend_from_slice(message.as_bytes());
                answer
            }
        };
        Ok(env.byte_array_from_slice(&answer)?)
    })
    .resolve::<FailClosed>()
}

/// Validates the settings and opens (or joins) the agent: its handle and the start timeout.
fn open_shell(settings: &[u8]) -> Result<(jlong, Duration), String> {
    let settings = decode_settings(settings).map_err(|e| e.to_string())?;
    let config = AgentConfig::from_settings(&settings).map_err(|e| e.to_string())?;
    let start_timeout = config.start_timeout;
    let agent = registry::open(config).map_err(|e| e.to_string())?;
    let shell: &'static Shell =
        Box::leak(Box::new(Shell { magic: SHELL_MAGIC, agent: AtomicPtr::new(Arc::into_raw(agent) as *mut Agent) }));
    Ok((shell as *const Shell as jlong, start_timeout))
}

/// The address of a direct buffer: the shim registers each thread's request buffer once, and
/// passes the address with every request (0 if the buffer is not direct).
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_NativeAgent_bufferAddress<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    buffer: JByteBuffer<'local>,
) -> jlong {
    env.with_env(|env| -> Result<jlong, BridgeError> { Ok(env.get_direct_buffer_address(&buffer)? as jlong) })
        .resolve::<FailClosed>()
}

/// `authorize(context, actions)`: a bitmask with bit i set when action i is allowed, or, beyond
/// 63 actions, [`RESULTS_IN_BUFFER`] with one byte per action written into the buffer.
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_NativeAgent_authorize(
    _env: *mut jni::sys::JNIEnv,
    _class: jni::sys::jclass,
    handle: jlong,
    address: jlong,
    capacity: jint,
    length: jint,
) -> jlong {
    fail_closed(|| {
        with_agent(handle, |agent| {
            let mut buffer = DirectBuffer::new(address, capacity, length)?;
            MEMO.with(|memo| {
                let mut memo = memo.borrow_mut();
                let mut slots = ActionSlots::default();
                let (context, actions) = decode_authorize(buffer.request(), &mut memo, &mut slots)?;
                if actions.len() <= 63 {
                    let mut allowed = [false; 63];
                    agent.authorize(context, actions, &mut allowed[..actions.len()]);
                    return Ok(allowed.iter().enumerate().fold(0, |mask, (i, a)| mask | (jlong::from(*a) << i)));
                }
                let mut allowed = vec![false; actions.len()];
                agent.authorize(context, actions, &mut allowed);
                drop(slots);
                buffer.write_results(&allowed)?;
                Ok(RESULTS_IN_BUFFER)
            })
        })
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_NativeAgent_authorizeByResourceType(
    _env: *mut jni::sys::JNIEnv,
    _class: jni::sys::jclass,
    handle: jlong,
    address: jlong,
    capacity: jint,
    length: jint,
) -> jboolean {
    fail_closed(|| {
        with_agent(handle, |agent| {
            let buffer = DirectBuffer::new(address, capacity, length)?;
            MEMO.with(|memo| {
                let mut memo = memo.borrow_mut();
                let (context, operation, resource_type) = decode_by_resource_type(buffer.request(), &mut memo)?;
                Ok(agent.authorize_by_resource_type(context, operation, resource_type))
            })
        })
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_NativeAgent_generation<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> jlong {
    env.with_env(|_env| -> Result<jlong, BridgeError> { with_agent(handle, |agent| Ok(agent.generation() as jlong)) })
        .resolve::<FailClosed>()
}

/// The ACL view: `u32 count` then per row `u8 resourceType u8 patternType str name str principal
/// u8 operation u8 permission` (Kafka's codes; host `*`). Empty without a snapshot. At most
/// `grantforge_kafka::ACL_VIEW_MAX_ROWS` rows: the view is bounded when the snapshot is loaded.
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_NativeAgent_acls<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> JByteArray<'local> {
    env.with_env(|env| -> Result<JByteArray<'local>, BridgeError> {
        let policies = with_agent(handle, |agent| Ok(agent.policies()))?;
        let rows = policies.as_ref().map_or(&[][..], |p| p.acl_rows());
        let mut out = Vec::with_capacity(4 + rows.len() * 32);
        out.extend_from_slice(&(rows.len() as u32).to_le_bytes());
        for row in rows {
            out.push(row.resource_type);
            out.push(row.pattern_type.code());
            put_str(&mut out, &row.name);
            put_str(&mut out, &row.principal);
            out.push(row.operation.code());
            out.push(row.permission.code());
        }
        Ok(env.byte_array_from_slice(&out)?)
    })
    .resolve::<FailClosed>()
}

/// How many rows the ACL view has (`Authorizer.aclCount`), without shipping them; 0 without a
/// snapshot or once closed.
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_NativeAgent_aclCount<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> jint {
    env.with_env(|_env| -> Result<jint, BridgeError> { acl_count(handle) }).resolve::<FailClosed>()
}

fn acl_count(handle: jlong) -> Result<jint, BridgeError> {
    let rows = with_agent(handle, |agent| Ok(agent.policies().map_or(0, |p| p.acl_rows().len())))?;
    Ok(jint::try_from(rows).unwrap_or(jint::MAX))
}

/// The service of the snapshot in force (UTF-8; empty without one), for messages to operators.
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_NativeAgent_serviceName<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> JByteArray<'local> {
    env.with_env(|env| -> Result<JByteArray<'local>, BridgeError> {
        let service = with_agent(handle, |agent| Ok(agent.policies()))?.map(|p| p.service.clone()).unwrap_or_default();
        Ok(env.byte_array_from_slice(service.as_bytes())?)
    })
    .resolve::<FailClosed>()
}

/// The metrics: 12 little-endian i64 (see `NativeAgent.stats`), then `str lastError str instance`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_NativeAgent_stats<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> JByteArray<'local> {
    env.with_env(|env| -> Result<JByteArray<'local>, BridgeError> {
        let stats = with_agent(handle, |agent| Ok(agent.stats()))?;
        let numbers = [
            stats.decisions_allowed as i64,
            stats.decisions_denied as i64,
            stats.cache_hits as i64,
            stats.cache_misses as i64,
            stats.cache_size as i64,
            stats.snapshot_version,
            stats.snapshot_age_seconds,
            stats.heartbeat_failures as i64,
            stats.audit_queued as i64,
            stats.audit_spooled_bytes as i64,
            stats.audit_sent as i64,
            stats.audit_dropped as i64,
        ];
        let mut out = Vec::with_capacity(numbers.len() * 8 + 64);
        numbers.iter().for_each(|n| out.extend_from_slice(&n.to_le_bytes()));
        put_str(&mut out, &stats.last_error);
        put_str(&mut out, &stats.instance);
        Ok(env.byte_array_from_slice(&out)?)
    })
    .resolve::<FailClosed>()
}

/// Blocks the calling (shim-owned, never a Kafka request) thread until a snapshot is in force;
/// past the timeout, warns (naming the start timeout's key) and answers false.
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_NativeAgent_awaitSnapshot<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    timeout_ms: jlong,
) -> jboolean {
    env.with_env(|_env| -> Result<jboolean, BridgeError> {
        let timeout = Duration::from_millis(u64::try_from(timeout_ms).unwrap_or(0));
        // Waits on its own reference, outside the call: `close` does not wait for the timeout.
        let agent = with_agent(handle, |agent| Ok(Arc::clone(agent)))?;
        let in_force = agent.await_snapshot(timeout);
        if !in_force {
            tracing::warn!(target: AUTHORIZER_LOGGER, "{}", no_snapshot_warning(timeout_ms));
        }
        Ok(in_force)
    })
    .resolve::<FailClosed>()
}

/// The logger of the shim's authorizer, for the lines the agent writes in its name.
const AUTHORIZER_LOGGER: &str = "org.devlive.grantforge.kafka.agent.GrantForgeKafkaAuthorizer";

/// The warning when listeners open without a snapshot.
fn no_snapshot_warning(timeout_ms: jlong) -> String {
    format!(
        "GrantForge agent has no policy snapshot after {timeout_ms} ms ({}); listeners open now and refuse every request but the super users' until one arrives",
        grantforge_agent::settings::START_TIMEOUT.key
    )
}

/// Queued log records: per record `u8 level(1 error..5 trace) str logger str message`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_NativeAgent_drainLogs<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> JByteArray<'local> {
    env.with_env(|env| -> Result<JByteArray<'local>, BridgeError> {
        let mut out = Vec::new();
        for record in logging::drain() {
            out.push(record.level as u8);
            put_str(&mut out, &record.logger);
            put_str(&mut out, &record.message);
        }
        Ok(env.byte_array_from_slice(&out)?)
    })
    .resolve::<FailClosed>()
}

/// `explain` for `java -jar <agent jar> explain ...`: arguments and standard input as UTF-8 (the
/// arguments separated by NUL); the answer is `[exit code] + output`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_NativeAgent_explain<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    args: JByteArray<'local>,
    stdin: JByteArray<'local>,
) -> JByteArray<'local> {
    env.with_env(|env| -> Result<JByteArray<'local>, BridgeError> {
        let args = String::from_utf8_lossy(&env.convert_byte_array(&args)?).into_owned();
        let args: Vec<String> = args.split('\0').filter(|a| !a.is_empty()).map(str::to_string).collect();
        let stdin = String::from_utf8_lossy(&env.convert_byte_array(&stdin)?).into_owned();
        let (code, output) = grantforge_agent::explain::run(&args, &stdin);
        let mut answer = vec![code as u8];
        answer.extend_from_slice(output.as_bytes());
        Ok(env.byte_array_from_slice(&answer)?)
    })
    .resolve::<FailClosed>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_NativeAgent_close<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) {
    env.with_env(|_env| -> Result<(), BridgeError> {
        close_shell(shell(handle)?);
        Ok(())
    })
    .resolve::<FailClosed>()
}

// Keep the log level codes in one place with the Java side (`NativeLogDrain.java`).
const _: () = assert!(LogLevel::Error as u8 == 1 && LogLevel::Trace as u8 == 5);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_and_foreign_handles_are_refused() {
        assert!(matches!(shell(0), Err(BridgeError::BadHandle)));
        let not_a_shell = Box::leak(Box::new([0u64; 4]));
        assert!(matches!(shell(not_a_shell.as_ptr() as jlong), Err(BridgeError::BadHandle)));
    }

    use std::path::PathBuf;
    use std::sync::atomic::AtomicBool;

    use crate::codec::VERSION;

    const READ: u8 = 3;
    const WRITE: u8 = 4;
    const DELETE: u8 = 6;
    const TOPIC: u8 = 2;
    const LITERAL: u8 = 3;

    fn e2e() -> String {
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/snapshots/e2e.json")).unwrap()
    }

    /// A policy file of its own per test: one agent per file in the registry.
    fn policy_file(test: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("gf-jni-{}-{test}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("policies.json");
        std::fs::write(&file, text).unwrap();
        file
    }

    fn settings(pairs: &[(&str, &str)]) -> Vec<u8> {
        let mut bytes = Vec::new();
        for (key, value) in pairs {
            put_str(&mut bytes, key);
            put_str(&mut bytes, value);
        }
        bytes
    }

    fn open(file: &std::path::Path) -> jlong {
        open_shell(&settings(&[("grantforge.policy.file", file.to_str().unwrap()), ("super.users", "User:admin")])).unwrap().0
    }

    /// A request in the layout of `RequestEncoder.java` (see `codec.rs`).
    fn request(user: &str, actions: &[(u8, &str)]) -> Vec<u8> {
        let mut context = Vec::new();
        put_str(&mut context, "User");
        put_str(&mut context, user);
        context.extend_from_slice(&[4, 127, 0, 0, 1]);
        put_str(&mut context, "SASL_PLAINTEXT");
        put_str(&mut context, "client");
        context.extend_from_slice(&0i16.to_le_bytes());
        context.extend_from_slice(&9i16.to_le_bytes());
        let mut bytes = vec![VERSION];
        bytes.extend_from_slice(&(context.len() as u32).to_le_bytes());
        bytes.extend_from_slice(&context);
        bytes.extend_from_slice(&(actions.len() as u32).to_le_bytes());
        for (operation, name) in actions {
            bytes.extend_from_slice(&[*operation, TOPIC, LITERAL, 0]);
            put_str(&mut bytes, name);
        }
        bytes
    }

    /// Calls the export as the shim does, with `bytes` as the thread's buffer.
    fn authorize(handle: jlong, bytes: &mut [u8]) -> jlong {
        let length = bytes.len() as jint;
        Java_org_devlive_grantforge_kafka_agent_NativeAgent_authorize(
            ptr::null_mut(),
            ptr::null_mut(),
            handle,
            bytes.as_mut_ptr() as jlong,
            length,
            length,
        )
    }

    #[test]
    fn after_close_a_handle_answers_nothing_and_the_agent_is_freed() {
        let handle = open(&policy_file("close", &e2e()));
        let write_orders = || request("alice", &[(WRITE, "orders")]);
        assert_eq!(authorize(handle, &mut write_orders()), 1);
        assert_eq!(authorize(handle, &mut request("admin", &[(DELETE, "orders")])), 1, "a super user");
        assert_eq!(acl_count(handle).unwrap(), 7);
        let agent = with_agent(handle, |agent| Ok(Arc::downgrade(agent))).unwrap();

        close_shell(shell(handle).unwrap());
        assert!(agent.upgrade().is_none(), "the agent (its token, its snapshots) is freed");
        assert_eq!(authorize(handle, &mut write_orders()), 0);
        assert_eq!(authorize(handle, &mut request("admin", &[(DELETE, "orders")])), 0, "not even a super user");
        assert!(matches!(acl_count(handle), Err(BridgeError::Closed)));
        close_shell(shell(handle).unwrap());
        assert_eq!(authorize(handle, &mut write_orders()), 0, "closing twice changes nothing");
    }

    #[test]
    fn closing_while_other_threads_authorize_is_safe() {
        let handle = open(&policy_file("close-racing", &e2e()));
        let agent = with_agent(handle, |agent| Ok(Arc::downgrade(agent))).unwrap();
        let closed = Arc::new(AtomicBool::new(false));
        let callers: Vec<_> = (0..4)
            .map(|_| {
                let closed = Arc::clone(&closed);
                std::thread::spawn(move || {
                    let mut calls = 0u64;
                    loop {
                        let was_closed = closed.load(Ordering::SeqCst);
                        let answer = authorize(handle, &mut request("alice", &[(WRITE, "orders")]));
                        calls += 1;
                        if was_closed {
                            assert_eq!(answer, 0, "a call that starts after close is refused");
                            return calls;
                        }
                        assert!(answer == 0 || answer == 1);
                    }
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(50));
        close_shell(shell(handle).unwrap());
        closed.store(true, Ordering::SeqCst);
        assert!(agent.upgrade().is_none(), "close waited for the calls in flight, then freed the agent");
        for caller in callers {
            assert!(caller.join().unwrap() > 0);
        }
    }

    #[test]
    fn seventy_thousand_actions_in_one_call_are_answered() {
        let handle = open(&policy_file("many-actions", &e2e()));
        let actions: Vec<(u8, &str)> = (0..70_000).map(|i| (if i % 2 == 0 { READ } else { DELETE }, "orders")).collect();
        let mut bytes = request("alice", &actions);
        assert_eq!(authorize(handle, &mut bytes), RESULTS_IN_BUFFER);
        for (i, answer) in bytes[..70_000].iter().enumerate() {
            assert_eq!(*answer, u8::from(i % 2 == 0), "action {i}");
        }
        close_shell(shell(handle).unwrap());
    }

    #[test]
    fn the_no_snapshot_warning_names_the_start_timeout() {
        assert_eq!(
            no_snapshot_warning(4000),
            "GrantForge agent has no policy snapshot after 4000 ms (grantforge.start.timeout.ms); listeners open now and refuse every request but the super users' until one arrives"
        );
    }

    #[test]
    fn open_answers_the_start_timeout_and_refuses_a_blank_one_naming_the_key() {
        let file = policy_file("start-timeout", &e2e());
        let file = file.to_str().unwrap();
        let (handle, timeout) =
            open_shell(&settings(&[("grantforge.policy.file", file), ("grantforge.start.timeout.ms", "4500")])).unwrap();
        assert_eq!(timeout, Duration::from_millis(4500));
        close_shell(shell(handle).unwrap());
        for blank in ["", " "] {
            let err = open_shell(&settings(&[("grantforge.policy.file", file), ("grantforge.start.timeout.ms", blank)])).unwrap_err();
            assert!(err.starts_with("grantforge.start.timeout.ms:"), "{err}");
        }
        let (handle, timeout) = open_shell(&settings(&[("grantforge.policy.file", file)])).unwrap();
        assert_eq!(timeout, Duration::from_secs(30), "the default");
        close_shell(shell(handle).unwrap());
    }

    #[test]
    fn snapshot_warnings_are_logged_once_at_warn_when_the_snapshot_is_applied() {
        logging::install();
        let text = e2e().replacen(
            "\"accessTypes\":[\"describe\"],\"conditions\":[]",
            "\"accessTypes\":[\"describe\"],\"conditions\":[{\"type\":\"ip-range\",\"values\":[\"10.0.0.0/99\"]}]",
            1,
        );
        let handle = open(&policy_file("warnings", &text));
        let warnings: Vec<_> = logging::drain()
            .into_iter()
            .filter(|r| r.level == LogLevel::Warn && r.message.contains("10.0.0.0/99"))
            .collect();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].message.starts_with("policy version 1: policy 3: the values"), "{}", warnings[0].message);
        close_shell(shell(handle).unwrap());
    }
}
