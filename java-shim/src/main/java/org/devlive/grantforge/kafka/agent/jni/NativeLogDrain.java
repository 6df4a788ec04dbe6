package org.devlive.grantforge.kafka.agent.jni;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves the native library's log records into SLF4J (and so into Kafka's log4j output) from a
 * daemon thread of its own: Rust threads never call into Java, and request threads never log.
 */
public final class NativeLogDrain {
    private static final long INTERVAL_MS = 200;
    private static Thread thread;

    private NativeLogDrain() {
    }

    /** Starts the drain thread once per class loader. */
    public static synchronized void start() {
        if (thread != null) {
            return;
        }
        thread = new Thread(new Runnable() {
            @Override
            public void run() {
                while (!Thread.currentThread().isInterrupted()) {
                    try {
                        Thread.sleep(INTERVAL_MS);
                    } catch (InterruptedException e) {
                        return;
                    }
                    drainOnce();
                }
            }
        }, "grantforge-log-drain");
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * One round of the drain thread: a failure (a logging backend that throws, say) is reported and the thread goes
     * on, so the native library's records are not silenced for the rest of the JVM's life.
     */
    private static void drainOnce() {
        try {
            drainNow();
        } catch (RuntimeException e) {
            LoggerFactory.getLogger(NativeLogDrain.class).warn("moving the GrantForge agent's log records failed: {}", e.toString());
        }
    }

    /** Logs every queued record now (also called right after configure and close). */
    public static synchronized void drainNow() {
        byte[] records = NativeAgent.drainLogs();
        if (records == null) {
            return;
        }
        decode(records, new Sink() {
            @Override
            public void record(int level, String loggerName, String message) {
                Logger logger = LoggerFactory.getLogger(loggerName);
                switch (level) {
                    case 1: logger.error(message); break;
                    case 2: logger.warn(message); break;
                    case 3: logger.info(message); break;
                    case 4: logger.debug(message); break;
                    default: logger.trace(message); break;
                }
            }
        });
    }

    /** Where {@link #decode} hands each record. */
    public interface Sink {
        /** {@code level}: 1 error, 2 warn, 3 info, 4 debug, 5 trace. */
        void record(int level, String logger, String message);
    }

    /** The records of one drain, in order (layout and golden bytes: {@code crates/grantforge-jni/src/native_log_drain.rs}). */
    public static void decode(byte[] records, Sink sink) {
        ByteBuffer in = ByteBuffer.wrap(records).order(ByteOrder.LITTLE_ENDIAN);
        while (in.hasRemaining()) {
            int level = in.get();
            String logger = Wire.readString(in);
            String message = Wire.readString(in);
            sink.record(level, logger, message);
        }
    }
}
