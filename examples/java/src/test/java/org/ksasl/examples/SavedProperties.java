package org.ksasl.examples;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** JVM system properties a test changes, put back as they were by {@link #restore()}. */
final class SavedProperties {
    private final Map<String, String> saved = new HashMap<>();

    /** Remembers the current values of {@code names} (the first value of each counts). */
    void save(List<String> names) {
        for (String name : names) {
            saved.putIfAbsent(name, System.getProperty(name));
        }
    }

    /** Puts every remembered property back (cleared if it was not set). */
    void restore() {
        saved.forEach((name, value) -> {
            if (value == null) {
                System.clearProperty(name);
            } else {
                System.setProperty(name, value);
            }
        });
        saved.clear();
    }
}
