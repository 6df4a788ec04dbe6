package org.devlive.grantforge.plugin.api;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** A plugin API version; a host supports a plugin of the same major built for the same or an older minor. */
public record ApiVersion(int major, int minor, int patch) implements Comparable<ApiVersion> {

    public static final ApiVersion CURRENT = new ApiVersion(1, 1, 0);

    private static final Pattern FORMAT = Pattern.compile("(\\d{1,4})\\.(\\d{1,4})(\\.(\\d{1,4}))?");

    public ApiVersion {
        if (major < 0 || minor < 0 || patch < 0) {
            throw new IllegalArgumentException("API version numbers must not be negative");
        }
    }

    public static ApiVersion parse(String text) {
        Matcher m = FORMAT.matcher(text.strip());
        if (!m.matches()) {
            throw new IllegalArgumentException("not an API version (major.minor[.patch]): " + text);
        }
        int patch = m.group(4) == null ? 0 : Integer.parseInt(m.group(4));
        return new ApiVersion(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)), patch);
    }

    public boolean supports(ApiVersion required) {
        return major == required.major && compareTo(required) >= 0;
    }

    @Override
    public int compareTo(ApiVersion other) {
        int byMajor = Integer.compare(major, other.major);
        if (byMajor != 0) {
            return byMajor;
        }
        int byMinor = Integer.compare(minor, other.minor);
        return byMinor != 0 ? byMinor : Integer.compare(patch, other.patch);
    }

    @Override
    public String toString() {
        return major + "." + minor + "." + patch;
    }
}
