package org.ksasl;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What {@link Config#check} found for one scope.
 *
 * @param scope {@code client}, or {@code listener <NAME>} for a listener of a broker configuration
 * @param effective the effective settings as name/value pairs, in order; secrets are shown as
 *     {@code [hidden]}
 * @param unknown the {@code sasl.*} and {@code ksasl.*} names the library does not know
 * @param warnings the settings without effect, one sentence each
 */
public record ConfigReport(String scope, List<Map.Entry<String, String>> effective, List<String> unknown,
        List<String> warnings) {
    public ConfigReport {
        effective = List.copyOf(effective);
        unknown = List.copyOf(unknown);
        warnings = List.copyOf(warnings);
    }

    /** From the native record of a count and the reports (scope, effective, unknown, warnings). */
    static List<ConfigReport> all(byte[] record) {
        Fields f = new Fields(record);
        int n = f.i32();
        List<ConfigReport> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            String scope = f.str();
            List<String> flat = f.strs();
            List<Map.Entry<String, String>> effective = new ArrayList<>(flat.size() / 2);
            for (int j = 0; j + 1 < flat.size(); j += 2) {
                effective.add(Map.entry(flat.get(j), flat.get(j + 1)));
            }
            out.add(new ConfigReport(scope, effective, f.strs(), f.strs()));
        }
        return List.copyOf(out);
    }
}
