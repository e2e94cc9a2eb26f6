package org.ksasl;

import java.util.LinkedHashMap;
import java.util.Map;

/** Turns the native layer's arrays into maps. */
final class Decode {
    private Decode() {}

    static Map<String, String> pairs(String[] kv) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i + 1 < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return m;
    }

    static String[] flatten(Map<String, String> m) {
        String[] kv = new String[m.size() * 2];
        int i = 0;
        for (Map.Entry<String, String> e : m.entrySet()) {
            kv[i++] = e.getKey();
            kv[i++] = e.getValue();
        }
        return kv;
    }

    /** Called by native code: metrics by name. */
    static Map<String, Double> metrics(String[] names, double[] values) {
        Map<String, Double> out = new LinkedHashMap<>();
        for (int i = 0; i < names.length; i++) {
            out.put(names[i], values[i]);
        }
        return out;
    }
}
