package org.devlive.grantforge.kafka.it;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * The files of a node's directory that the harness writes: {@code server.properties}, the log
 * configuration of each JVM role (Log4j2 XML from Kafka 4.0, reload4j properties before), and the
 * launcher class, the only harness class on a node's classpath.
 */
final class NodeFiles {

    private NodeFiles() {
    }

    /** A properties file of {@code properties} in their order, under one comment line. */
    static void writeProperties(Path file, String comment, Map<String, String> properties) throws IOException {
        StringBuilder sb = new StringBuilder("# " + comment + "\n");
        properties.forEach((k, v) -> sb.append(k).append('=').append(escapeProperty(v)).append('\n'));
        Files.writeString(file, sb.toString(), StandardCharsets.UTF_8);
    }

    /**
     * A log configuration in {@code file} that appends to {@code logFile} with these logger levels, in the
     * release's logging library.
     */
    static void writeLogConfig(Path file, KafkaDist dist, Path logFile, Map<String, String> levels, String rootLevel)
            throws IOException {
        // an explicit date format: %d{ISO8601} is "2026-01-31T12:00:00,000" in Log4j2 but "2026-01-31 12:00:00,000"
        // in reload4j, and the log should read the same on every release
        String pattern = "[%d{yyyy-MM-dd'T'HH:mm:ss,SSS}] %-5p [%c] %m%n";
        String text;
        if (dist.usesLog4j2()) {
            StringBuilder loggers = new StringBuilder();
            levels.forEach((name, level) -> loggers.append("    <Logger name=\"").append(xml(name))
                    .append("\" level=\"").append(xml(level)).append("\"/>\n"));
            text = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                    + "<Configuration status=\"WARN\" shutdownHook=\"disable\">\n"
                    + "  <Appenders>\n"
                    + "    <File name=\"file\" fileName=\"" + xml(logFile.toString()) + "\" append=\"true\" immediateFlush=\"true\">\n"
                    + "      <PatternLayout pattern=\"" + xml(pattern) + "\"/>\n"
                    + "    </File>\n"
                    + "  </Appenders>\n"
                    + "  <Loggers>\n"
                    + loggers
                    + "    <Root level=\"" + xml(rootLevel) + "\"><AppenderRef ref=\"file\"/></Root>\n"
                    + "  </Loggers>\n"
                    + "</Configuration>\n";
        } else {
            StringBuilder sb = new StringBuilder();
            sb.append("log4j.rootLogger=").append(rootLevel).append(", file\n");
            sb.append("log4j.appender.file=org.apache.log4j.FileAppender\n");
            sb.append("log4j.appender.file.File=").append(escapeProperty(logFile.toString())).append('\n');
            sb.append("log4j.appender.file.Append=true\n");
            sb.append("log4j.appender.file.ImmediateFlush=true\n");
            sb.append("log4j.appender.file.layout=org.apache.log4j.PatternLayout\n");
            sb.append("log4j.appender.file.layout.ConversionPattern=").append(pattern).append('\n');
            levels.forEach((name, level) -> sb.append("log4j.logger.").append(name).append('=').append(level).append('\n'));
            text = sb.toString();
        }
        Files.writeString(file, text, StandardCharsets.UTF_8);
    }

    /** Copies {@link NodeLauncher}'s class file under {@code dir}, a classpath directory of its own. */
    static void installLauncher(Path dir) throws IOException {
        Path launcherFile = dir.resolve(NodeLauncher.class.getName().replace('.', '/') + ".class");
        Files.createDirectories(launcherFile.getParent());
        try (InputStream in = NodeLauncher.class.getResourceAsStream(NodeLauncher.class.getSimpleName() + ".class")) {
            if (in == null) {
                throw new IllegalStateException("Cannot find the class file of " + NodeLauncher.class.getName());
            }
            Files.copy(in, launcherFile);
        }
    }

    /** A value as a properties file reads it back. */
    static String escapeProperty(String v) {
        StringBuilder out = new StringBuilder();
        for (char c : v.toCharArray()) {
            switch (c) {
                case '\\': out.append("\\\\"); break;
                case '\n': out.append("\\n"); break;
                case '\r': out.append("\\r"); break;
                default: out.append(c);
            }
        }
        return out.toString();
    }

    private static String xml(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
