package org.devlive.grantforge.kafka.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.devlive.grantforge.plugin.api.ServiceConfig;
import org.devlive.grantforge.plugin.api.model.ConfigField;
import org.junit.jupiter.api.Test;

/**
 * The service's fields as the operator's page lists them: every field in the table of docs/grantforge-plugin.md
 * ("Create the data service"), marked (SECRET) exactly where the server stores it sealed, and every SECRET field's
 * value masked in what the plugin says.
 */
class ConfigFieldsTest {

    /** A field named in the first cell of a row, and whether the page marks it SECRET. */
    private static final Pattern NAMED = Pattern.compile("`([a-z][a-z0-9.]*)`( \\(SECRET\\))?");

    @Test
    void thePagesFieldTableNamesEveryFieldAndMarksTheSecretOnes() throws Exception {
        String page = Files.readString(Path.of(System.getProperty("grantforge.docs", "../docs"), "grantforge-plugin.md"));
        String section = page.substring(page.indexOf("## 2. Create the data service"), page.indexOf("## 3."));
        Map<String, Boolean> listed = new TreeMap<>();
        for (String row : section.lines().filter(l -> l.startsWith("| `")).toList()) {
            Matcher named = NAMED.matcher(row.split(" \\| ")[0]);
            while (named.find()) {
                listed.put(named.group(1), named.group(2) != null);
            }
        }
        Map<String, Boolean> fields = new TreeMap<>();
        for (ConfigField field : KafkaConfigFields.ALL) {
            fields.put(field.name(), field.sensitive());
        }
        assertEquals(fields, listed, "docs/grantforge-plugin.md's field table: each field, (SECRET) where it is one");
    }

    @Test
    void everySecretFieldsValueIsMasked() {
        assertFalse(KafkaConfigFields.SECRETS.isEmpty());
        for (String secret : KafkaConfigFields.SECRETS) {
            String value = "s3cret-of-" + secret;
            String line = SafeText.of(new ServiceConfig("kafka-prod", Map.of(secret, value))).line("failed with " + value);
            assertTrue(!line.contains(value) && line.contains("***"), secret + ": " + line);
        }
    }
}
