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
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
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
pub const ABI_VERSION: jint = 2;

thread_local! {
    /// The request context of this (Kafka request) thread's previous call: decoded again only
    /// when it changes, and refilled without allocation once warm.
    static MEMO: std::cell::RefCell<ContextMemo> = std::cell::RefCell::new(ContextMemo::default());
}

/// `authorize` returns this when it wrote one byte per action into the buffer (more than 63
/// actions); otherwise it returns a bitmask with bit i set when action i is allowed.
const RESULTS_IN_BUFFER: jlong = -2;

/// What one `open` gives the Java shim: a never-freed shell, so a call racing `close` can never
/// touch freed memory. Closing releases the agent; the shell keeps a closed flag.
struct Shell {
    magic: u64,
    agent: Arc<Agent>,
    closed: AtomicBool,
}

const SHELL_MAGIC: u64 = 0x4752_414e_5446_4f52; // "GRANTFOR"

#[derive(Debug)]
enum BridgeError {
    Jni(jni::errors::Error),
    Malformed(MalformedRequest),
    BadHandle,
    BadBuffer,
}

impl fmt::Display for BridgeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BridgeError::Jni(e) => write!(f, "JNI call failed: {e}"),
            BridgeError::Malformed(e) => write!(f, "{e}"),
            BridgeError::BadHandle => write!(f, "the native handle is not one this library gave out"),
            BridgeError::BadBuffer => write!(f, "the request buffer's address, capacity or length is invalid"),
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
fn refused<T: Default>(err: BridgeError) -> T {
    tracing::error!("{err}; the request was refused");
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

/// `settings` is a sequence of (key, value) strings; the answer is `[0] + handle (i64 LE)` or
/// `[1] + UTF-8 message` naming the key and the fix.
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_NativeAgent_open<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    settings: JByteArray<'local>,
) -> JByteArray<'local> {
    env.with_env(|env| -> Result<JByteArray<'local>, BridgeError> {
        logging::install();
        let bytes = env.convert_byte_array(&settings)?;
        let answer = match decode_settings(&bytes)
            .map_err(|e| e.to_string())
            .and_then(|s| AgentConfig::from_settings(&s).map_err(|e| e.to_string()))
            .and_then(|config| registry::open(config).map_err(|e| e.to_string()))
        {
            Ok(agent) => {
                let shell: &'static Shell =
                    Box::leak(Box::new(Shell { magic: SHELL_MAGIC, agent, closed: AtomicBool::new(false) }));
                let mut answer = vec![0u8];
                answer.extend_from_slice(&(shell as *const Shell as i64).to_le_bytes());
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
        let agent = &shell(handle)?.agent;
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
        let agent = &shell(handle)?.agent;
        let buffer = DirectBuffer::new(address, capacity, length)?;
        MEMO.with(|memo| {
            let mut memo = memo.borrow_mut();
            let (context, operation, resource_type) = decode_by_resource_type(buffer.request(), &mut memo)?;
            Ok(agent.authorize_by_resource_type(context, operation, resource_type))
        })
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_NativeAgent_generation<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> jlong {
    env.with_env(|_env| -> Result<jlong, BridgeError> { Ok(shell(handle)?.agent.generation() as jlong) })
        .resolve::<FailClosed>()
}

/// The ACL view: `u32 count` then per row `u8 resourceType u8 patternType str name str principal
/// u8 operation u8 permission` (Kafka's codes; host `*`). Empty without a snapshot.
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_NativeAgent_acls<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> JByteArray<'local> {
    env.with_env(|env| -> Result<JByteArray<'local>, BridgeError> {
        let policies = shell(handle)?.agent.policies();
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

/// The service of the snapshot in force (UTF-8; empty without one), for messages to operators.
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_NativeAgent_serviceName<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> JByteArray<'local> {
    env.with_env(|env| -> Result<JByteArray<'local>, BridgeError> {
        let service = shell(handle)?.agent.policies().map(|p| p.service.clone()).unwrap_or_default();
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
        let stats = shell(handle)?.agent.stats();
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

/// Blocks the calling (shim-owned, never a Kafka request) thread until a snapshot is in force.
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_NativeAgent_awaitSnapshot<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    timeout_ms: jlong,
) -> jboolean {
    env.with_env(|_env| -> Result<jboolean, BridgeError> {
        let timeout = Duration::from_millis(u64::try_from(timeout_ms).unwrap_or(0));
        Ok(shell(handle)?.agent.await_snapshot(timeout))
    })
    .resolve::<FailClosed>()
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
        let shell = shell(handle)?;
        if !shell.closed.swap(true, Ordering::AcqRel) {
            registry::release(&shell.agent);
        }
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
}
