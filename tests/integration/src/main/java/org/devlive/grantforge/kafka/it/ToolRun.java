package org.devlive.grantforge.kafka.it;

/** What a tool run printed and how it ended ({@link NodeTools}). */
public record ToolRun(int exitCode, String stdout, String stderr) {
    @Override
    public String toString() {
        return "exit code " + exitCode + "\n--- stdout\n" + stdout + "\n--- stderr\n" + stderr;
    }
}
