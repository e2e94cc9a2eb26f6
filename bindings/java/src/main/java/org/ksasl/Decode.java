package org.ksasl;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalLong;

/** Turns the native layer's arrays into records. */
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

    static CredentialRequest request(Object[] r) {
        return r == null ? null : new CredentialRequest((String) r[0], (String) r[1], (Boolean) r[2]);
    }

    static AuthenticationOutcome outcome(Object[] o) {
        if (o == null) {
            return null;
        }
        Long expiry = (Long) o[3];
        return new AuthenticationOutcome((String) o[0], (String) o[1], (String) o[2],
                expiry == null ? OptionalLong.empty() : OptionalLong.of(expiry), pairs((String[]) o[4]), (Boolean) o[5]);
    }

    static Map<String, Double> metrics(Object[] m) {
        String[] names = (String[]) m[0];
        double[] values = (double[]) m[1];
        Map<String, Double> out = new LinkedHashMap<>();
        for (int i = 0; i < names.length; i++) {
            out.put(names[i], values[i]);
        }
        return out;
    }
}
