package org.devlive.grantforge.kafka.agent.jni;

import java.nio.ByteBuffer;

/**
 * The native methods of the agent's Rust library. Every method is static and takes or returns
 * primitives, direct buffers or byte arrays, so a call costs one JNI crossing and no Java objects
 * are made in Rust. The request path ({@link #authorize}, {@link #authorizeByResourceType}) passes
 * primitives only: the address of the thread's direct buffer (from {@link #bufferAddress}), its
 * capacity and the request's length. Defaults mean "refused" or "nothing": on any native error or
 * panic {@link #authorize} returns 0 (every action refused) and the byte-array methods return null.
 */
public final class NativeAgent {
    /** Must equal {@code ABI_VERSION} of the library: the payloads' layouts and these signatures. */
    static final int ABI_VERSION = 16;

    /**
     * How many actions {@link #authorize}'s bit mask holds: bit i of a non-negative long for action i (the
     * library's {@code ACTIONS_IN_A_MASK}).
     */
    public static final int ACTIONS_IN_A_MASK = 63;

    /** {@link #authorize} wrote one byte per action into the buffer instead of a bit mask (more actions than that). */
    public static final long RESULTS_IN_BUFFER = -2L;

    private NativeAgent() {
    }

    static native int abiVersion();

    /**
     * Settings as (key, value) strings; answer {@code [0] + handle + start timeout in ms} (two little-endian
     * longs; the timeout is {@code grantforge.start.timeout.ms} as the native configuration parsed it) or
     * {@code [1] + message}.
     */
    public static native byte[] open(byte[] settings);

    /** Settings as {@link #open} takes them: empty when the agent would accept them, else why not (UTF-8). */
    public static native byte[] checkSettings(byte[] settings);

    /** The codes of the {@code AclOperation}s the agent knows (its one table of Kafka's operations), in Kafka's order. */
    public static native byte[] operationCodes();

    /** The native address of a direct buffer; the buffer must stay reachable while the address is used. */
    static native long bufferAddress(ByteBuffer buffer);

    public static native long authorize(long handle, long address, int capacity, int length);

    public static native boolean authorizeByResourceType(long handle, long address, int capacity, int length);

    /** Shadow mode: Kafka's ACLs decide, the agent is compared ({@link #compare}). */
    public static final int KAFKA_DECIDES = 0;
    /** Compare mode: the agent decides, Kafka's ACLs are compared. */
    public static final int GRANTFORGE_DECIDES = 1;

    /**
     * Shadow and compare modes: the agent answers the request {@link RequestEncoder#encodeComparison} wrote and
     * compares with Kafka's answers written after it; it writes a byte of flags per action after those
     * ({@link RequestEncoder#comparisonFlags}). Returns 1 + the number of actions whose Kafka ACL it asks for
     * ({@link #describeKafkaBasis}), or 0 if it failed (no flags were written).
     */
    public static native long compare(long handle, long address, int capacity, int requestLength, int decider);

    /** The Kafka ACL behind Kafka's answer to action {@code index} of the request still in the buffer, in words. */
    public static native void describeKafkaBasis(long handle, long address, int capacity, int requestLength, int index,
                                                 int decider, byte[] basis);

    /**
     * Hybrid mode's first step: the agent decides what GrantForge's policies decide in the request
     * {@link RequestEncoder#encodeHybrid} wrote and writes a verdict per action after it
     * ({@link RequestEncoder#hybridVerdict}). Returns 1 + the number of actions left to Kafka's ACLs, or 0 if it
     * failed (no verdict was written: every action is refused).
     */
    public static native long hybrid(long handle, long address, int capacity, int requestLength);

    /**
     * Hybrid mode's second step: Kafka's answers to the actions {@link #hybrid} left to its ACLs, and the ACL behind
     * each, as {@link RequestEncoder#putAclAnswers} wrote them ({@code tailLength} bytes after the request), audited.
     */
    public static native boolean settleByAcls(long handle, long address, int capacity, int requestLength,
                                              int tailLength);

    /** Changes whenever another snapshot is applied. */
    public static native long generation(long handle);

    /** Changes whenever the ACL view may have; read before {@link #acls}; 0 once closed. */
    public static native long aclViewSerial(long handle);

    /** The ACL view's rows (at most the native cap); null once closed. */
    public static native byte[] acls(long handle);

    /**
     * How many rows of the ACL view have an operation of {@code shownOperations} (bit {@code code} for each of
     * Kafka's operation codes), without shipping them; 0 without a snapshot or once closed.
     */
    public static native int aclCount(long handle, long shownOperations);

    public static native byte[] serviceName(long handle);

    /** Whether a snapshot is in force within the timeout; if not, the native agent has queued a warning saying so. */
    public static native boolean awaitSnapshot(long handle, long timeoutMs);

    /**
     * The metrics, describing themselves: the instance name, then each metric's name, MBean attribute,
     * description and value (decoded by {@link AgentMetrics#decode}); null once closed.
     */
    public static native byte[] stats(long handle);

    static native byte[] drainLogs();

    /**
     * The topic sink's settings as (key, value) strings ({@code crates/grantforge-jni/src/audit_topic_writer.rs});
     * null when the topic is no sink of the audit, or once closed.
     */
    public static native byte[] auditTopicSettings(long handle);

    /**
     * Waits up to {@code waitMs} for the topic sink's next batch: its id (a little-endian long) and (key, value)
     * strings; empty when none came, null once closed (the writer thread stops).
     */
    public static native byte[] auditTopicTake(long handle, long waitMs);

    /** What became of batch {@code id}: 0 written, 1 not now (the agent spools it), 2 refused for good; why in UTF-8. */
    public static native void auditTopicAck(long handle, long id, int outcome, byte[] detail);

    /** Gives the agent back; the handle then answers nothing (every call refused). Idempotent. */
    public static native void close(long handle);

    /** Arguments separated by NUL and standard input, UTF-8; answer {@code [exit code] + output}. */
    public static native byte[] explain(byte[] request);

    /** {@code migrate-acls}: Kafka's ACL bindings in, the policies and the report out ({@link AclMigration}). */
    public static native byte[] migrateAcls(byte[] request);
}
