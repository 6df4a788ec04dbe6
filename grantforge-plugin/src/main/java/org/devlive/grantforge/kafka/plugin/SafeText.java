package org.devlive.grantforge.kafka.plugin;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

import org.devlive.grantforge.plugin.api.ServiceConfig;

/**
 * Messages fit to show an admin: one line, at most {@value #MAX_LENGTH} characters, every secret of the service
 * (each SECRET field's value, each line of a multi-line one, and the JAAS line made from them) replaced by
 * {@code ***}. The host scrubs lookup failures itself but shows connection-test failures as they are.
 */
final class SafeText {

    static final int MAX_LENGTH = 300;
    private static final String MASK = "***";

    private final List<String> secrets;

    private SafeText(List<String> secrets) {
        this.secrets = secrets;
    }

    static SafeText of(ServiceConfig config) {
        List<String> secrets = new ArrayList<>();
        for (String field : KafkaConfigFields.SECRETS) {
            String value = config.get(field);
            if (value == null || value.isBlank()) {
                continue;
            }
            secrets.add(value);
            secrets.add(AdminSettings.quoted(value));
            for (String line : value.split("\\R")) {
                if (line.strip().length() >= 4) {
                    secrets.add(line.strip());
                }
            }
        }
        // longest first, so a secret holding another is masked whole
        secrets.sort(Comparator.comparingInt(String::length).reversed());
        return new SafeText(List.copyOf(secrets));
    }

    String line(String text) {
        String masked = text;
        for (String secret : secrets) {
            masked = masked.replace(secret, MASK);
        }
        String oneLine = masked.strip().lines().findFirst().orElse("").strip();
        return oneLine.length() <= MAX_LENGTH ? oneLine : oneLine.substring(0, MAX_LENGTH - 1) + "…";
    }
}
