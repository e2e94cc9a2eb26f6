package org.ksasl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link Config#check} over the table every binding shares (tests/vectors/config_table.json,
 * read at run time): each valid configuration gives its effective settings, unknown names and
 * number of warnings in the first report; each invalid one throws {@code INVALID_CONFIG} with
 * the table's text. The table's password never appears in a report, an error, or their
 * {@code toString()}. All mismatches are reported together, each with its entry's name.
 */
class ConfigCheckTest {
    /** Every password, secret and key in the table contains this marker. */
    static final String SECRET = "hunter2-secret-XYZ";

    static JsonNode table() throws Exception {
        String dir = System.getProperty("ksasl.vectors", "../../tests/vectors");
        return new ObjectMapper().readTree(new File(dir, "config_table.json"));
    }

    /** The entry's configuration through the binding: a listener for a broker's. */
    static List<ConfigReport> check(JsonNode e) throws KsaslException {
        String listener = e.get("side").asText().equals("server") ? e.get("listener").asText() : null;
        return Config.check(e.get("properties").asText(), listener);
    }

    static List<String> strings(JsonNode list) {
        List<String> out = new ArrayList<>();
        list.forEach(s -> out.add(s.asText()));
        return out;
    }

    static void noSecret(String name, String what, String text, List<String> problems) {
        if (text != null && text.contains(SECRET)) {
            problems.add(name + ": a password appears in " + what + ": " + text);
        }
    }

    @Test
    void everyValidConfigurationGivesItsReport() throws Exception {
        JsonNode valid = table().get("valid");
        assertTrue(valid.size() >= 32, "valid: " + valid.size());
        List<String> problems = new ArrayList<>();
        for (JsonNode e : valid) {
            String name = e.get("name").asText();
            List<ConfigReport> reports;
            try {
                reports = check(e);
            } catch (KsaslException | KsaslArgumentException x) {
                problems.add(name + ": expected a valid configuration, got " + x);
                noSecret(name, "the error", x.toString(), problems);
                continue;
            }
            List<Map.Entry<String, String>> effective = new ArrayList<>();
            e.get("effective").forEach(p -> effective.add(Map.entry(p.get(0).asText(), p.get(1).asText())));
            ConfigReport r = reports.get(0);
            if (!r.effective().equals(effective)) {
                problems.add(name + ": effective settings: expected " + effective + ", actual " + r.effective());
            }
            if (!r.unknown().equals(strings(e.get("unknown")))) {
                problems.add(name + ": unknown names: expected " + e.get("unknown") + ", actual " + r.unknown());
            }
            if (r.warnings().size() != e.get("warnings").asInt()) {
                problems.add(name + ": expected " + e.get("warnings") + " warning(s), got " + r.warnings());
            }
            for (ConfigReport each : reports) {
                noSecret(name, "a report", each.toString(), problems);
                for (Map.Entry<String, String> kv : each.effective()) {
                    noSecret(name, "effective " + kv.getKey(), kv.getValue(), problems);
                }
                for (String w : each.warnings()) {
                    noSecret(name, "a warning", w, problems);
                }
            }
        }
        assertEquals(List.of(), problems);
    }

    @Test
    void everyInvalidConfigurationThrowsInvalidConfig() throws Exception {
        JsonNode invalid = table().get("invalid");
        assertTrue(invalid.size() >= 32, "invalid: " + invalid.size());
        List<String> problems = new ArrayList<>();
        for (JsonNode e : invalid) {
            String name = e.get("name").asText();
            String want = e.get("error").asText();
            try {
                problems.add(name + ": expected an error containing \"" + want + "\", got " + check(e));
            } catch (KsaslArgumentException x) {
                if (!x.codeName().equals("INVALID_CONFIG")) {
                    problems.add(name + ": expected INVALID_CONFIG, got " + x);
                }
                if (!x.getMessage().contains(want)) {
                    problems.add(name + ": expected an error containing \"" + want + "\", got " + x.getMessage());
                }
                noSecret(name, "the error", x.toString(), problems);
                noSecret(name, "the error's details", x.details().toString(), problems);
            } catch (KsaslException x) {
                problems.add(name + ": expected INVALID_CONFIG, got " + x);
                noSecret(name, "the error", x.toString(), problems);
            }
        }
        assertEquals(List.of(), problems);
    }

    @Test
    void theListenerIsOptionalAndTheReportImmutable() throws Exception {
        String broker = "listeners=A://:1,B://:2\nlistener.security.protocol.map=A:SASL_SSL,B:PLAINTEXT\n"
                + "sasl.enabled.mechanisms=SCRAM-SHA-256\nlistener.name.a.scram-sha-256.sasl.jaas.config="
                + "org.apache.kafka.common.security.scram.ScramLoginModule required;\n";
        List<ConfigReport> all = Config.check(broker, null);
        assertEquals(1, all.size());
        assertEquals("listener A", all.get(0).scope());
        assertEquals(all, Config.check(broker, "A"));
        assertFalse(all.get(0).effective().isEmpty());
        assertThrows(UnsupportedOperationException.class, () -> all.get(0).effective().clear());
        KsaslArgumentException x = assertThrows(KsaslArgumentException.class, () -> Config.check(broker, "B"));
        assertEquals("INVALID_CONFIG", x.codeName());
        assertThrows(NullPointerException.class, () -> Config.check(null, null));
    }
}
