package org.ksasl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/**
 * The binding on a machine without MIT Kerberos: {@code tests/nokrb5/run.sh} runs the Java
 * tests with {@code libgssapi_krb5.so*} hidden and {@code KSASL_TEST_NO_GSSAPI} set. The jar
 * loads and everything else passes (the rest of the suite, in the same run); GSSAPI reports
 * {@code GSSAPI_UNAVAILABLE} and names what to install.
 */
@EnabledIfEnvironmentVariable(named = "KSASL_TEST_NO_GSSAPI", matches = ".+",
        disabledReason = "only meaningful with the Kerberos libraries hidden (tests/nokrb5/run.sh)")
class NoKerberosTest {
    @Test
    void gssapiIsUnavailableAndSaysWhy() throws Exception {
        assertFalse(Ksasl.gssapiAvailable());
        try (MechanismRegistry registry = new MechanismRegistry()) {
            KsaslException e = assertThrows(KsaslException.class,
                    () -> registry.addGssapiServer(null, "kafka/localhost@EXAMPLE.COM", null, null, true));
            assertEquals("GSSAPI_UNAVAILABLE", e.codeName());
            assertTrue(e.getMessage().contains("MIT Kerberos GSS-API library"), e.getMessage());
            // the registry is unchanged and still usable
            registry.addPasswordClients("alice", "pw");
            assertEquals(java.util.List.of("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"),
                    registry.clientMechanisms().stream().sorted().toList());
        }
        try (KerberosLogin login = KerberosLogin.fromKeytab("alice@EXAMPLE.COM", "/nonexistent.keytab")) {
            KsaslException e = assertThrows(KsaslException.class, () -> login.login(System.currentTimeMillis()));
            assertEquals("GSSAPI_UNAVAILABLE", e.codeName());
            assertEquals(1, login.failures());
        }
    }
}
