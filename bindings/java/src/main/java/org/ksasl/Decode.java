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

    /** Metrics by name, from the native record (the names, then the values). */
    static Map<String, Double> metrics(byte[] record) {
        Fields f = new Fields(record);
        Map<String, Double> out = new LinkedHashMap<>();
        for (String name : f.strs()) {
            out.put(name, f.f64());
        }
        return out;
    }
}
