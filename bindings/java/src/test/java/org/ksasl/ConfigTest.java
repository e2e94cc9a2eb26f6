package org.ksasl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The table of invalid configuration values every binding shares
 * (tests/vectors/config_invalid.json, read at run time): each case goes through the Java
 * builders and must fail with the table's code. A setter the table names that this test does not
 * know fails the test, so a new case cannot be skipped silently.
 */
class ConfigTest {
    interface Build {
        void run() throws Exception;
    }

    static JsonNode cases() throws Exception {
        String dir = System.getProperty("ksasl.vectors", "../../tests/vectors");
        return new ObjectMapper().readTree(new File(dir, "config_invalid.json")).get("cases");
    }

    static ClientConfig.Builder client(MechanismRegistry r, String set, JsonNode v) {
        ClientConfig.Builder b = ClientConfig.builder(r, set.equals("mechanism") ? v.asText() : "PLAIN");
        switch (set) {
            case "mechanism": return b;
            case "api_versions_version": return b.setApiVersionsVersion(v.asLong());
            case "reauth_retry_ms": return b.setReauthRetryMs(v.asLong());
            case "reauth_min_delay_ms": return b.setReauthMinDelayMs(v.asLong());
            case "max_receive_size": return b.setMaxReceiveSize(v.asLong());
            case "known_versions":
                return v.get(1).isNull() ? b.setKnownVersions(v.get(0).asLong())
                        : b.setKnownVersions(v.get(0).asLong(), v.get(1).asLong());
            case "software": return b.setSoftware(v.get(0).asText(), v.get(1).asText());
            default: throw new AssertionError("no client setter for " + set);
        }
    }

    static ServerConfig.Builder server(MechanismRegistry r, String set, JsonNode v) {
        ServerConfig.Builder b = ServerConfig.builder(r);
        switch (set) {
            case "max_reauth_ms": return b.setMaxReauthMs(v.asLong());
            case "max_reauth_ms_for": return b.setMaxReauthMsFor(v.get(0).asText(), v.get(1).asLong());
            case "failed_authentication_delay_ms": return b.setFailedAuthenticationDelayMs(v.asLong());
            case "reauth_retry_ms": return b.setReauthRetryMs(v.asLong());
            case "max_receive_size": return b.setMaxReceiveSize(v.asLong());
            case "max_request_size": return b.setMaxRequestSize(v.asLong());
            case "unknown_user_mask":
                return b.setUnknownUserMask(v.get(0).asText().getBytes(java.nio.charset.StandardCharsets.UTF_8),
                        v.get(1).asInt());
            case "api_version": return b.setApiVersion(v.get(0).asLong(), v.get(1).asLong(), v.get(2).asLong());
            case "enabled_mechanisms": {
                List<String> names = new ArrayList<>();
                v.forEach(n -> names.add(n.asText()));
                return b.setEnabledMechanisms(names);
            }
            default: throw new AssertionError("no server setter for " + set);
        }
    }

    static Refresher.Builder refresher(String set, JsonNode v) {
        Refresher.Builder b = Refresher.builder();
        switch (set) {
            case "window_factor": return b.setWindowFactor(v.asDouble());
            case "window_jitter": return b.setWindowJitter(v.asDouble());
            case "min_period_seconds": return b.setMinPeriodSeconds(v.asLong());
            case "buffer_seconds": return b.setBufferSeconds(v.asLong());
            case "retry_backoff_ms": return b.setRetryBackoffMs(v.asLong());
            case "retry_backoff_max_ms": return b.setRetryBackoffMaxMs(v.asLong());
            default: throw new AssertionError("no refresher setter for " + set);
        }
    }

    @Test
    void everyInvalidValueOfTheSharedTableGetsItsCode() throws Exception {
        JsonNode cases = cases();
        assertTrue(cases.size() >= 30, "cases: " + cases.size());
        List<String> wrong = new ArrayList<>();
        try (MechanismRegistry r = new MechanismRegistry().addPasswordClients("u", "p").addPasswordServers()) {
            for (JsonNode c : cases) {
                String config = c.get("config").asText();
                String set = c.get("set").asText();
                JsonNode value = c.get("value");
                Build build;
                switch (config) {
                    case "client": build = () -> client(r, set, value).build().close(); break;
                    case "server": build = () -> server(r, set, value).build().close(); break;
                    case "refresher": build = () -> refresher(set, value).build().close(); break;
                    default: throw new AssertionError("unknown configuration " + config);
                }
                String got;
                try {
                    build.run();
                    got = "no error";
                } catch (KsaslArgumentException e) {
                    got = e.codeName();
                } catch (KsaslException e) {
                    got = e.codeName() + " (checked)";
                }
                if (!got.equals(c.get("code").asText())) {
                    wrong.add(c + ": " + got);
                }
            }
        }
        assertEquals(List.of(), wrong);
    }

    @Test
    void theSameBuildersAcceptValidValues() throws Exception {
        try (MechanismRegistry r = new MechanismRegistry().addPasswordClients("u", "p").addPasswordServers();
                ClientConfig c = ClientConfig.builder(r, "PLAIN").setApiVersionsVersion(3).setKnownVersions(1, 2)
                        .setSoftware("my-app", "1.0").setReauthMinDelayMs(0).setMaxReceiveSize(1024)
                        .setReauthRetryMs(100).setClientId("id").setReauthTiming(ReauthTiming.FRANZ_GO).build();
                ServerConfig s = ServerConfig.builder(r).setEnabledMechanisms(List.of("SCRAM-SHA-512", "PLAIN"))
                        .setMaxReauthMs(1000).setMaxReauthMsFor("PLAIN", 500).setMaxReceiveSize(4096)
                        .setFailedAuthenticationDelayMs(0).setReauthRetryMs(0).setApiVersion(3, 0, 12).build();
                Refresher f = Refresher.builder().setWindowFactor(0.5).setWindowJitter(0).setMinPeriodSeconds(0)
                        .setBufferSeconds(0).setReloginAllowedBeforeLogout(false).setRetryBackoffMs(1)
                        .setRetryBackoffMaxMs(2).build()) {
            assertNotNull(c.metrics(Wire.T0));
            assertNotNull(s.metrics(Wire.T0));
            assertEquals(0, f.generation());
        }
    }
}
