package org.devlive.grantforge.kafka.it;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.Optional;

/**
 * Entry point of a node's JVM: watches the JVM that started it and halts this one when that is gone
 * (a test run killed with SIGKILL runs no shutdown hooks), then runs the real main class.
 *
 * <p>{@link KafkaNode} copies only this class file onto the node's classpath, so it must stay
 * self-contained: JDK classes only, no nested or anonymous classes (lambdas are fine).
 *
 * <p>Usage: {@code NodeLauncher <parent pid> <main class> [args...]}
 */
public final class NodeLauncher {

    private NodeLauncher() {
    }

    public static void main(String[] args) throws Throwable {
        if (args.length < 2) {
            System.err.println("usage: NodeLauncher <parent pid> <main class> [args...]");
            System.exit(2);
        }
        long parentPid = Long.parseLong(args[0]);
        Thread watchdog = new Thread(() -> {
            Optional<ProcessHandle> parent = ProcessHandle.of(parentPid);
            while (true) {
                if (parent.isEmpty() || !parent.get().isAlive()) {
                    System.err.println("[NodeLauncher] parent process " + parentPid + " is gone; halting this node");
                    Runtime.getRuntime().halt(3);
                }
                try {
                    Thread.sleep(1000);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "grantforge-it-parent-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();

        Method main = Class.forName(args[1]).getMethod("main", String[].class);
        try {
            main.invoke(null, (Object) Arrays.copyOfRange(args, 2, args.length));
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
