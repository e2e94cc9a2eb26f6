package org.ksasl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.internals.BrokerSecurityConfigs;
import org.apache.kafka.common.security.kerberos.BadFormatString;
import org.apache.kafka.common.security.kerberos.KerberosName;
import org.apache.kafka.common.security.kerberos.KerberosShortNamer;
import org.apache.kafka.common.security.kerberos.NoMatchingRule;
import org.junit.jupiter.api.Test;

/**
 * Replays {@code tests/vectors/kerberos_rules.json} through Kafka's own
 * {@code KerberosShortNamer} (kafka-clients, test scope only), so that the table the Rust
 * core is tested with says what Kafka does. The binding itself is not involved.
 */
class KerberosRulesTest {
    /** What Kafka did with one case: a short name, or the kind and text of its failure. */
    record Outcome(String shortName, String errorKind, String message) {
        static Outcome error(String kind, Exception e) {
            return new Outcome(null, kind, e.getMessage());
        }
    }

    /**
     * Runs one case as Kafka's broker does: the rules are parsed first, then the principal,
     * then mapped. No default realm is the empty string, as in Kafka's SaslChannelBuilder.
     */
    static Outcome kafka(JsonNode c) {
        List<String> rules = new ArrayList<>();
        c.get("rules").forEach(r -> rules.add(r.asText()));
        String realm = c.get("default_realm").isNull() ? "" : c.get("default_realm").asText();
        KerberosShortNamer namer;
        try {
            namer = KerberosShortNamer.fromUnparsedRules(realm, rules);
        } catch (IllegalArgumentException e) {
            return Outcome.error("invalid_rule", e);
        }
        KerberosName name;
        try {
            name = KerberosName.parse(c.get("principal").asText());
        } catch (IllegalArgumentException e) {
            return Outcome.error("malformed_name", e);
        }
        try {
            return new Outcome(namer.shortName(name), null, null);
        } catch (NoMatchingRule e) {
            return Outcome.error("no_matching_rule", e);
        } catch (BadFormatString e) {
            return Outcome.error("bad_format", e);
        } catch (IllegalArgumentException | IndexOutOfBoundsException e) {
            return Outcome.error("bad_replacement", e);
        } catch (java.io.IOException e) {
            return Outcome.error("io:" + e.getClass().getName(), e);
        }
    }

    /** The expected short name; {@code expected_utf16} carries one that is not valid Unicode. */
    static String expected(JsonNode c) {
        if (!c.has("expected_utf16")) {
            return c.get("expected").asText();
        }
        StringBuilder units = new StringBuilder();
        c.get("expected_utf16").forEach(u -> units.append((char) u.asInt()));
        return units.toString();
    }

    /** Every case's {@code expected} or {@code error} (and {@code message}) is Kafka's. */
    @Test
    void everyCaseIsWhatKafkaDoes() throws Exception {
        String dir = System.getProperty("ksasl.vectors", "../../tests/vectors");
        JsonNode cases = new ObjectMapper().readTree(new File(dir, "kerberos_rules.json")).get("cases");
        assertTrue(cases.size() >= 30, "only " + cases.size() + " cases");
        List<String> problems = new ArrayList<>();
        for (JsonNode c : cases) {
            Outcome got = kafka(c);
            String name = c.get("name").asText();
            if (c.has("error")) {
                if (!c.get("error").asText().equals(got.errorKind())) {
                    problems.add(name + ": Kafka gave " + got);
                } else if (c.has("message") && !c.get("message").asText().equals(got.message())) {
                    problems.add(name + ": Kafka's message is " + got.message());
                }
            } else if (!expected(c).equals(got.shortName())) {
                problems.add(name + ": Kafka gave " + got);
            }
        }
        assertEquals(List.of(), problems);
    }

    /** Every {@code config_values} entry is read as Kafka's broker configuration reads it. */
    @Test
    void configValuesAreReadAsKafkaReadsThem() throws Exception {
        String dir = System.getProperty("ksasl.vectors", "../../tests/vectors");
        JsonNode values = new ObjectMapper().readTree(new File(dir, "kerberos_rules.json")).get("config_values");
        assertTrue(values.size() >= 5, "only " + values.size() + " config values");
        String key = BrokerSecurityConfigs.SASL_KERBEROS_PRINCIPAL_TO_LOCAL_RULES_CONFIG;
        List<String> problems = new ArrayList<>();
        for (JsonNode v : values) {
            String value = v.get("value").asText();
            try {
                Object got = BrokerSecurityConfigs.CONFIG_DEF.parse(Map.of(key, value)).get(key);
                List<String> want = new ArrayList<>();
                if (v.has("rules")) {
                    v.get("rules").forEach(r -> want.add(r.asText()));
                }
                if (!v.has("rules") || !want.equals(got)) {
                    problems.add("[" + value + "]: Kafka read " + got);
                }
            } catch (ConfigException e) {
                if (!v.has("error") || !v.get("error").asText().equals(e.getMessage())) {
                    problems.add("[" + value + "]: Kafka refused it: " + e.getMessage());
                }
            }
        }
        assertEquals(List.of(), problems);
    }
}
