//! JNI bridge of the GrantForge Kafka agent: the native methods of
//! `org.devlive.grantforge.kafka.agent.jni.NativeAgent`.
//!
//! This crate only translates. It decodes what the Java shim sends, calls the agent runtime, and
//! encodes the answers as primitives or byte arrays. This file holds the exports only:
//!
//! - one codec per payload, each named after the Java class that writes or reads it, with its
//!   layout at the top: [`request_encoder`] (`RequestEncoder`), [`settings_encoder`]
//!   (`SettingsEncoder`), [`acl_view`] (`AclView`), [`acl_migration`] (`AclMigration`),
//!   [`agent_metrics`] (`AgentMetrics`), [`comparison_codec`] (`RequestEncoder.encodeComparison`),
//!   [`native_log_drain`] (`NativeLogDrain`), over the strings of [`wire`] (`Wire`);
//! - [`export`]: the one error policy of every export (an error or a panic is the default return
//!   value: refused, or nothing);
//! - [`shell`]: the handle Java holds; [`direct_buffer`]: the request thread's buffer.

pub mod acl_migration;
pub mod acl_view;
pub mod agent_metrics;
mod audit_topic_writer;
mod comparison_codec;
pub mod direct_buffer;
pub mod explain_codec;
pub mod export;
mod hybrid_codec;
pub mod native_log_drain;
pub mod native_quotas;
pub mod request_encoder;
pub mod settings_encoder;
pub mod shell;
pub mod wire;

use std::sync::Arc;
use std::time::Duration;

use grantforge_agent::logging;
use jni::objects::{JByteArray, JByteBuffer, JClass};
use jni::sys::{jboolean, jdouble, jint, jlong};
use jni::EnvUnowned;

use crate::direct_buffer::DirectBuffer;
use crate::export::{export, export_env, BridgeError};
use crate::request_encoder::{
    decode_authorize, decode_by_resource_type, with_request, ActionSlots, MEMO,
};
use crate::shell::{close_shell, open_shell, shell, with_agent};
use grantforge_agent::comparison::Compared;

/// Bumped whenever a native signature or a payload's layout changes; the Java shim refuses to run
/// with a library of another ABI (a stale library on `grantforge.native.library.path`, say).
/// (4: the metrics payload describes itself; 6: `migrateAcls`; 7: the quota table's `stats`;
/// 8: `aclViewSerial`; 9: `NativeQuotas.configure`, and `resolve` says whether the answer is kept;
/// 10: `operationCodes`; 11: `explain` takes one request of its codec; 12: `compare` and
/// `describeKafkaBasis`; 13: `aclCount` counts the operations the running Kafka has;
/// 14: `checkSettings`; 15: `hybrid` and `settleByAcls`; 16: `auditTopicSettings`,
/// `auditTopicTake`, `auditTopicAck`.)
pub const ABI_VERSION: jint = 16;

/// How many actions one answer's bitmask holds: bit i of a non-negative `jlong` for action i, so
/// 63 (`NativeAgent.ACTIONS_IN_A_MASK` on the Java side).
const ACTIONS_IN_A_MASK: usize = 63;

/// `authorize` returns this when it wrote one byte per action into the buffer (more than
/// [`ACTIONS_IN_A_MASK`] actions); otherwise it returns a bitmask with bit i set when action i is
/// allowed.
const RESULTS_IN_BUFFER: jlong = -2;

#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_jni_NativeAgent_abiVersion<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> jint {
    export_env(&mut env, |_env| {
        logging::install();
        Ok(ABI_VERSION)
    })
}

/// The codes of the `AclOperation`s the agent knows, one byte each in Kafka's order: the shim's
/// tools ask exactly these, from the agent's one table of Kafka's operations.
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_jni_NativeAgent_operationCodes<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> JByteArray<'local> {
    export_env(&mut env, |env| {
        let codes: Vec<u8> = grantforge_kafka::Operation::ALL
            .iter()
            .map(|o| o.code())
            .collect();
        Ok(env.byte_array_from_slice(&codes)?)
    })
}

/// `settings` and the answer: see [`settings_encoder`].
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_jni_NativeAgent_open<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    settings: JByteArray<'local>,
) -> JByteArray<'local> {
    export_env(&mut env, |env| {
        logging::install();
        let bytes = env.convert_byte_array(&settings)?;
        let answer = settings_encoder::encode_answer(open_shell(&bytes));
        Ok(env.byte_array_from_slice(&answer)?)
    })
}

/// `settings` as `open` takes them; the answer is empty when the agent would accept them, else
/// the message `open` would refuse them with (naming the key and the fix). Nothing is opened:
/// the JAR's `check-config` asks this before a node starts.
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_jni_NativeAgent_checkSettings<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    settings: JByteArray<'local>,
) -> JByteArray<'local> {
    export_env(&mut env, |env| {
        let bytes = env.convert_byte_array(&settings)?;
        let problem = settings_encoder::check_settings(&bytes)
            .err()
            .unwrap_or_default();
        Ok(env.byte_array_from_slice(problem.as_bytes())?)
    })
}

/// The address of a direct buffer: the shim registers each thread's request buffer once, and
/// passes the address with every request (0 if the buffer is not direct).
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_jni_NativeAgent_bufferAddress<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    buffer: JByteBuffer<'local>,
) -> jlong {
    export_env(&mut env, |env| {
        Ok(env.get_direct_buffer_address(&buffer)? as jlong)
    })
}

/// `authorize(context, actions)` (the request: see [`request_encoder`]): a bitmask with bit i set
/// when action i is allowed, or, beyond [`ACTIONS_IN_A_MASK`] actions, [`RESULTS_IN_BUFFER`] with one byte per action
/// written into the buffer.
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_jni_NativeAgent_authorize(
    _env: *mut jni::sys::JNIEnv,
    _class: jni::sys::jclass,
    handle: jlong,
    address: jlong,
    capacity: jint,
    length: jint,
) -> jlong {
    export(|| {
        with_agent(handle, |agent| {
            let mut buffer = DirectBuffer::new(address, capacity, length)?;
            MEMO.with(|memo| {
                let mut memo = memo.borrow_mut();
                let mut slots = ActionSlots::default();
                let (context, actions) = decode_authorize(buffer.request(), &mut memo, &mut slots)?;
                if actions.len() <= ACTIONS_IN_A_MASK {
                    let mut allowed = [false; ACTIONS_IN_A_MASK];
                    agent.authorize(context, actions, &mut allowed[..actions.len()]);
                    return Ok(allowed
                        .iter()
                        .enumerate()
                        .fold(0, |mask, (i, a)| mask | (jlong::from(*a) << i)));
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
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_jni_NativeAgent_authorizeByResourceType(
    _env: *mut jni::sys::JNIEnv,
    _class: jni::sys::jclass,
    handle: jlong,
    address: jlong,
    capacity: jint,
    length: jint,
) -> jboolean {
    export(|| {
        with_agent(handle, |agent| {
            let buffer = DirectBuffer::new(address, capacity, length)?;
            MEMO.with(|memo| {
                let mut memo = memo.borrow_mut();
                let (context, operation, resource_type) =
                    decode_by_resource_type(buffer.request(), &mut memo)?;
                Ok(agent.authorize_by_resource_type(context, operation, resource_type))
            })
        })
    })
}

/// `compare`: shadow and compare modes (the payload: see [`comparison_codec`]). Returns 1 + the
/// number of actions whose Kafka ACL the shim should tell, 0 if it failed.
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_jni_NativeAgent_compare(
    _env: *mut jni::sys::JNIEnv,
    _class: jni::sys::jclass,
    handle: jlong,
    address: jlong,
    capacity: jint,
    request_length: jint,
    decider: jint,
) -> jlong {
    export(|| {
        with_agent(handle, |agent| {
            let decider = comparison_codec::decider(decider as u8)?;
            let mut buffer = DirectBuffer::new(address, capacity, request_length)?;
            let request_length = buffer.request().len();
            // Up to INLINE actions without allocation, as `authorize` answers them.
            const INLINE: usize = ACTIONS_IN_A_MASK;
            let (mut kafka_inline, mut kafka_heap) = ([false; INLINE], Vec::new());
            let (mut compared_inline, mut compared_heap) =
                ([Compared::default(); INLINE], Vec::new());
            let n = with_request(buffer.request(), |context, actions| {
                let n = actions.len();
                let (kafka, compared) = if n <= INLINE {
                    (&mut kafka_inline[..n], &mut compared_inline[..n])
                } else {
                    kafka_heap.resize(n, false);
                    compared_heap.resize(n, Compared::default());
                    (&mut kafka_heap[..], &mut compared_heap[..])
                };
                comparison_codec::read_kafka_answers(&buffer, request_length, kafka)?;
                agent.compare(context, actions, kafka, decider, compared);
                Ok::<_, BridgeError>(n)
            })?;
            let compared = if n <= INLINE {
                &compared_inline[..n]
            } else {
                &compared_heap[..]
            };
            let wanted = comparison_codec::write_flags(&mut buffer, request_length + n, compared)?;
            Ok(1 + wanted as jlong)
        })
    })
}

/// `describeKafkaBasis`: the Kafka ACL behind Kafka's answer to action `index` of the request
/// still in the buffer, which `compare` asked for.
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_jni_NativeAgent_describeKafkaBasis<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    address: jlong,
    capacity: jint,
    request_length: jint,
    index: jint,
    decider: jint,
    basis: JByteArray<'local>,
) {
    export_env(&mut env, |env| {
        let basis = env.convert_byte_array(&basis)?;
        let basis = String::from_utf8_lossy(&basis);
        with_agent(handle, |agent| {
            let decider = comparison_codec::decider(decider as u8)?;
            let buffer = DirectBuffer::new(address, capacity, request_length)?;
            with_request(buffer.request(), |context, actions| {
                let index = usize::try_from(index).map_err(|_| BridgeError::BadBuffer)?;
                let action = actions.get(index).ok_or(BridgeError::BadBuffer)?;
                let mut kafka = vec![false; actions.len()];
                comparison_codec::read_kafka_answers(&buffer, buffer.request().len(), &mut kafka)?;
                agent.describe_kafka_basis(context, action, kafka[index], decider, &basis);
                Ok(())
            })
        })
    })
}

/// `hybrid`: hybrid mode's first step (the payload: see [`hybrid_codec`]). Returns 1 + the
/// number of actions left to Kafka's ACLs, 0 if it failed.
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_jni_NativeAgent_hybrid(
    _env: *mut jni::sys::JNIEnv,
    _class: jni::sys::jclass,
    handle: jlong,
    address: jlong,
    capacity: jint,
    request_length: jint,
) -> jlong {
    export(|| {
        with_agent(handle, |agent| {
            let mut buffer = DirectBuffer::new(address, capacity, request_length)?;
            let request_length = buffer.request().len();
            let mut verdicts = [0u8; ACTIONS_IN_A_MASK];
            let mut many = Vec::new();
            let (n, left_count) = with_request(buffer.request(), |context, actions| {
                let n = actions.len();
                // Up to ACTIONS_IN_A_MASK actions without allocation, as `authorize` answers them.
                let (mut allowed_inline, mut left_inline) =
                    ([false; ACTIONS_IN_A_MASK], [false; ACTIONS_IN_A_MASK]);
                let (mut allowed_heap, mut left_heap) = (Vec::new(), Vec::new());
                let (allowed, left) = if n <= ACTIONS_IN_A_MASK {
                    (&mut allowed_inline[..n], &mut left_inline[..n])
                } else {
                    allowed_heap.resize(n, false);
                    left_heap.resize(n, false);
                    (&mut allowed_heap[..], &mut left_heap[..])
                };
                agent.hybrid(context, actions, allowed, left);
                let out = if n <= ACTIONS_IN_A_MASK {
                    &mut verdicts[..n]
                } else {
                    many.resize(n, 0);
                    &mut many[..]
                };
                for (i, verdict) in out.iter_mut().enumerate() {
                    *verdict = hybrid_codec::verdict(allowed[i], left[i]);
                }
                Ok::<_, BridgeError>((n, left.iter().filter(|l| **l).count()))
            })?;
            let out = if n <= ACTIONS_IN_A_MASK {
                &verdicts[..n]
            } else {
                &many[..]
            };
            buffer.write_at(request_length, out)?;
            Ok(1 + left_count as jlong)
        })
    })
}

/// `settleByAcls`: hybrid mode's second step, Kafka's answers to what `hybrid` left to its ACLs
/// (`tail_length` bytes after the request: see [`hybrid_codec`]). True once audited.
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_jni_NativeAgent_settleByAcls(
    _env: *mut jni::sys::JNIEnv,
    _class: jni::sys::jclass,
    handle: jlong,
    address: jlong,
    capacity: jint,
    request_length: jint,
    tail_length: jint,
) -> jboolean {
    export(|| {
        with_agent(handle, |agent| {
            let buffer = DirectBuffer::new(address, capacity, request_length)?;
            let tail_length = usize::try_from(tail_length).map_err(|_| BridgeError::BadBuffer)?;
            let tail = buffer.tail(buffer.request().len(), tail_length)?;
            with_request(buffer.request(), |context, actions| {
                let n = actions.len();
                let (mut left, mut kafka, mut acls) = (vec![false; n], vec![false; n], Vec::new());
                hybrid_codec::read_settled(tail, &mut left, &mut kafka, &mut acls)?;
                agent.settle_by_acls(context, actions, &left, &kafka, |i| acls[i]);
                Ok(true)
            })
        })
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_jni_NativeAgent_generation<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> jlong {
    export_env(&mut env, |_env| {
        with_agent(handle, |agent| Ok(agent.generation() as jlong))
    })
}

/// Changes whenever the ACL view may have (`Agent::acl_view_serial`); 0 once closed.
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_jni_NativeAgent_aclViewSerial<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> jlong {
    export_env(&mut env, |_env| {
        with_agent(handle, |agent| Ok(agent.acl_view_serial() as jlong))
    })
}

/// The ACL view's rows: see [`acl_view`]. Empty without a snapshot.
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_jni_NativeAgent_acls<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> JByteArray<'local> {
    export_env(&mut env, |env| {
        let view = with_agent(handle, |agent| Ok(agent.policies()))?
            .map_or_else(Default::default, |p| p.acl_view());
        Ok(env.byte_array_from_slice(&acl_view::encode(&view))?)
    })
}

/// How many rows of the ACL view `acls` would list on this Kafka (`Authorizer.aclCount`), without
/// shipping them: those whose operation is in `shown_operations` (bit `code` for each operation
/// code the running Kafka has); 0 without a snapshot or once closed.
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_jni_NativeAgent_aclCount<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    shown_operations: jlong,
) -> jint {
    export_env(&mut env, |_env| acl_count(handle, shown_operations as u64))
}

fn acl_count(handle: jlong, shown_operations: u64) -> Result<jint, export::BridgeError> {
    let rows = with_agent(handle, |agent| {
        Ok(agent
            .policies()
            .map_or(0, |p| p.acl_view().len_with_operations(shown_operations)))
    })?;
    Ok(jint::try_from(rows).unwrap_or(jint::MAX))
}

/// The service of the snapshot in force (UTF-8; empty without one), for messages to operators.
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_jni_NativeAgent_serviceName<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> JByteArray<'local> {
    export_env(&mut env, |env| {
        let service = with_agent(handle, |agent| Ok(agent.policies()))?
            .map(|p| p.service.clone())
            .unwrap_or_default();
        Ok(env.byte_array_from_slice(service.as_bytes())?)
    })
}

/// The metrics, each with its name and description: see [`agent_metrics`].
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_jni_NativeAgent_stats<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> JByteArray<'local> {
    export_env(&mut env, |env| {
        let stats = with_agent(handle, |agent| Ok(agent.stats()))?;
        Ok(env.byte_array_from_slice(&agent_metrics::encode(&stats))?)
    })
}

/// Blocks the calling (shim-owned, never a Kafka request) thread until a snapshot is in force;
/// past the timeout, warns (naming the start timeout's key) and answers false.
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_jni_NativeAgent_awaitSnapshot<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    timeout_ms: jlong,
) -> jboolean {
    export_env(&mut env, |_env| {
        let timeout = Duration::from_millis(u64::try_from(timeout_ms).unwrap_or(0));
        // Waits on its own reference, outside the call: `close` does not wait for the timeout.
        let agent = with_agent(handle, |agent| Ok(Arc::clone(agent)))?;
        let in_force = agent.await_snapshot(timeout);
        if !in_force {
            tracing::warn!(target: AUTHORIZER_LOGGER, "{}", no_snapshot_warning(timeout_ms));
        }
        Ok(in_force)
    })
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

/// Queued log records: see [`native_log_drain`].
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_jni_NativeAgent_drainLogs<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> JByteArray<'local> {
    export_env(&mut env, |env| {
        Ok(env.byte_array_from_slice(&native_log_drain::encode(&logging::drain()))?)
    })
}

/// The topic sink's settings for the shim's producer (see [`audit_topic_writer`]); null when the
/// topic is no sink of the audit, or once closed.
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_jni_NativeAgent_auditTopicSettings<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> JByteArray<'local> {
    export_env(&mut env, |env| {
        let settings = with_agent(handle, |agent| Ok(agent.config().audit_topic.clone()))?;
        match settings {
            Some(settings) => {
                Ok(env.byte_array_from_slice(&audit_topic_writer::encode_settings(&settings))?)
            }
            None => Ok(JByteArray::default()),
        }
    })
}

/// Blocks the shim's producer thread (never a Kafka request thread) up to `wait_ms` for the topic
/// sink's next batch (see [`audit_topic_writer`]): empty when none came, null once closed.
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_jni_NativeAgent_auditTopicTake<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    wait_ms: jlong,
) -> JByteArray<'local> {
    export_env(&mut env, |env| {
        // Waits on its own reference, outside the call: `close` does not wait for it.
        let channel = with_agent(handle, |agent| Ok(agent.audit_topic_channel().cloned()))?;
        let Some(channel) = channel else {
            return Ok(JByteArray::default());
        };
        let wait = Duration::from_millis(u64::try_from(wait_ms).unwrap_or(0));
        match channel.take(wait) {
            Some(batch) => {
                Ok(env.byte_array_from_slice(&audit_topic_writer::encode_batch(&batch))?)
            }
            None if channel.is_closed() => Ok(JByteArray::default()),
            None => Ok(env.byte_array_from_slice(&[])?),
        }
    })
}

/// What the shim's producer did with batch `id`: `outcome` 0 written, 1 not now (spooled and sent
/// again), 2 refused for good (a record too large or invalid); `detail` says why (UTF-8).
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_jni_NativeAgent_auditTopicAck<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    id: jlong,
    outcome: jint,
    detail: JByteArray<'local>,
) {
    export_env(&mut env, |env| {
        let detail = String::from_utf8_lossy(&env.convert_byte_array(&detail)?).into_owned();
        let written = match outcome {
            0 => grantforge_agent::Written::All,
            2 => grantforge_agent::Written::Refused(detail),
            _ => grantforge_agent::Written::NotNow(detail),
        };
        with_agent(handle, |agent| {
            if let Some(channel) = agent.audit_topic_channel() {
                channel.ack(id as u64, written);
            }
            Ok(())
        })
    })
}

/// `explain` for `java -jar <agent jar> explain ...`: see [`explain_codec`]. A malformed request
/// is answered with exit code 2 and the reason.
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_jni_NativeAgent_explain<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    request: JByteArray<'local>,
) -> JByteArray<'local> {
    export_env(&mut env, |env| {
        let request = env.convert_byte_array(&request)?;
        let answer = match explain_codec::decode_request(&request) {
            Ok(request) => {
                let (code, output) = grantforge_agent::explain::run(&request.args, &request.stdin);
                explain_codec::encode_answer(code, &output)
            }
            Err(e) => explain_codec::encode_answer(2, &format!("explain: {e}\n")),
        };
        Ok(env.byte_array_from_slice(&answer)?)
    })
}

/// `migrateAcls` for `migrate-acls`: Kafka's ACL bindings in, the policies and the report out (see
/// [`acl_migration`]).
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_jni_NativeAgent_migrateAcls<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    request: JByteArray<'local>,
) -> JByteArray<'local> {
    export_env(&mut env, |env| {
        let request = env.convert_byte_array(&request)?;
        Ok(env.byte_array_from_slice(&acl_migration::answer(&request))?)
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_jni_NativeAgent_close<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) {
    export_env(&mut env, |_env| {
        close_shell(shell(handle)?);
        Ok(())
    })
}

/// `NativeQuotas.configure`: the node's `socket.request.max.bytes` (see [`native_quotas`]).
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_jni_NativeQuotas_configure<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    socket_request_max_bytes: jlong,
) -> jboolean {
    export_env(&mut env, |_env| {
        Ok(native_quotas::configure(socket_request_max_bytes))
    })
}

/// `NativeQuotas.update`: Kafka's `updateQuota` (see [`native_quotas`]).
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_jni_NativeQuotas_update<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    quota_type: jint,
    entity: JByteArray<'local>,
    value: jdouble,
) -> jboolean {
    export_env(&mut env, |env| {
        Ok(native_quotas::update(
            quota_type,
            &env.convert_byte_array(&entity)?,
            value,
        )?)
    })
}

/// `NativeQuotas.remove`: Kafka's `removeQuota`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_jni_NativeQuotas_remove<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    quota_type: jint,
    entity: JByteArray<'local>,
) -> jboolean {
    export_env(&mut env, |env| {
        Ok(native_quotas::remove(
            quota_type,
            &env.convert_byte_array(&entity)?,
        )?)
    })
}

/// `NativeQuotas.resolve`: a connection's group and limit, and whether the shim keeps the answer.
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_jni_NativeQuotas_resolve<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    quota_type: jint,
    user: JByteArray<'local>,
    client_id: JByteArray<'local>,
    not_kept: jint,
) -> JByteArray<'local> {
    export_env(&mut env, |env| {
        let answer = native_quotas::resolve(
            quota_type,
            &env.convert_byte_array(&user)?,
            &env.convert_byte_array(&client_id)?,
            not_kept,
        )?;
        Ok(env.byte_array_from_slice(&answer)?)
    })
}

/// `NativeQuotas.limitOfGroup`: Kafka's `quotaLimit`; NaN for none (and on an error).
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_jni_NativeQuotas_limitOfGroup<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    quota_type: jint,
    user_tag: JByteArray<'local>,
    client_tag: JByteArray<'local>,
) -> jdouble {
    let limit = export_env(&mut env, |env| {
        let limit = native_quotas::limit_of_group(
            quota_type,
            &env.convert_byte_array(&user_tag)?,
            &env.convert_byte_array(&client_tag)?,
        )?;
        Ok(Some(limit))
    });
    limit.unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests;

/// `NativeQuotas.stats`: the quota table's metrics, in the layout of the agent's (see
/// [`agent_metrics`]), so that the shim reads them with the same code.
#[unsafe(no_mangle)]
pub extern "system" fn Java_org_devlive_grantforge_kafka_agent_jni_NativeQuotas_stats<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> JByteArray<'local> {
    export_env(&mut env, |env| {
        Ok(env.byte_array_from_slice(&native_quotas::stats())?)
    })
}
