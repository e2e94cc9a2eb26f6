/*
 * ksasl_client_setup: a client built from its .properties (Kafka's or librdkafka's names).
 *
 * Each configuration's client (ksasl_client_connection) authenticates in memory against a
 * ksasl_server_connection whose store has the user (the pump of test_kafka.c, reduced to the
 * first authentication): PLAIN by Kafka's names, SCRAM-SHA-256 by librdkafka's, OAUTHBEARER
 * with unsecured tokens made by the setup's own refresher (run at T0, next due at T0 + half
 * the token's lifetime). Invalid values fail with the key named; GSSAPI is left to the host;
 * no secret appears in any string or error the library returns.
 */
#include <stdlib.h>

#include "check.h"

#define T0 ((int64_t)1700000000000)

static const char SECRET[] = "alice-secret";

/* Authenticates `cc` against `sc` at `now`; returns the server's principal ("" if none),
 * copied into `principal`. */
static int authenticate(const ksasl_client_config *cc, const ksasl_server_config *sc, int64_t now,
                        char *principal, size_t size) {
    link_outcome o = link_authenticate(cc, sc, now, SECRET);
    snprintf(principal, size, "%s", o.principal);
    return o.ok;
}

/* Every string the setup hands out, none holding the secret. */
static void no_secret(const ksasl_client_setup *s) {
    CHECK(strstr(ksasl_client_setup_mechanism(s), SECRET) == NULL);
    CHECK(strstr(ksasl_client_setup_security_protocol(s), SECRET) == NULL);
    CHECK(strstr(ksasl_client_setup_last_error(s), SECRET) == NULL);
    for (size_t i = 0; i < ksasl_client_setup_unknown_count(s); i++) {
        CHECK(strstr(ksasl_client_setup_unknown(s, i), SECRET) == NULL);
    }
    for (size_t i = 0; i < ksasl_client_setup_warning_count(s); i++) {
        CHECK(strstr(ksasl_client_setup_warning(s, i), SECRET) == NULL);
    }
    const char *k[3] = {ksasl_client_setup_kerberos_service_name(s),
                        ksasl_client_setup_kerberos_principal(s),
                        ksasl_client_setup_kerberos_keytab(s)};
    for (int i = 0; i < 3; i++) {
        CHECK(k[i] == NULL || strstr(k[i], SECRET) == NULL);
    }
}

static ksasl_client_setup *setup_text(const char *text) {
    ksasl_client_setup *s = NULL;
    ksasl_result rc = ksasl_client_setup_new(text, strlen(text), &s);
    if (rc != KSASL_OK) {
        fprintf(stderr, "client setup: %s\n", ksasl_last_constructor_error());
    }
    CHECK_OK(rc);
    if (s != NULL) {
        no_secret(s);
    }
    return s;
}

/* The configuration of a setup (a new reference), checked to exist. */
static ksasl_client_config *setup_config(const ksasl_client_setup *s) {
    ksasl_client_config *c = NULL;
    CHECK_OK(ksasl_client_setup_config(s, &c));
    CHECK(c != NULL);
    return c;
}

/* A failing configuration: NULL handle, INVALID_CONFIG naming `key`, no secret. */
static void invalid(const char *text, const char *key) {
    ksasl_client_setup *s = NULL;
    CHECK_STR(ksasl_result_name(ksasl_client_setup_new(text, strlen(text), &s)),
              "INVALID_CONFIG");
    CHECK(s == NULL);
    const char *e = ksasl_last_constructor_error();
    if (strstr(e, key) == NULL) {
        fprintf(stderr, "client setup: \"%s\" not in \"%s\"\n", key, e);
    }
    CHECK(strstr(e, key) != NULL);
    CHECK(strstr(e, SECRET) == NULL);
    CHECK(strncmp(e, "INVALID_CONFIG: ", 16) == 0);
}

static void password_logins(const ksasl_server_config *sc) {
    char who[128];

    /* PLAIN by Kafka's names, with a name the library does not know. */
    ksasl_client_setup *s = setup_text(
        "bootstrap.servers=localhost:9092\n"
        "security.protocol=SASL_PLAINTEXT\n"
        "sasl.mechanism=PLAIN\n"
        "sasl.typo=1\n"
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        "username=\"alice\" password=\"alice-secret\";\n");
    CHECK_INT(ksasl_client_setup_login(s), KSASL_CLIENT_LOGIN_READY);
    CHECK_STR(ksasl_client_setup_mechanism(s), "PLAIN");
    CHECK_STR(ksasl_client_setup_security_protocol(s), "SASL_PLAINTEXT");
    CHECK_STR(ksasl_client_setup_kerberos_service_name(s), NULL);
    CHECK_STR(ksasl_client_setup_kerberos_principal(s), NULL);
    CHECK_STR(ksasl_client_setup_kerberos_keytab(s), NULL);
    CHECK_INT(ksasl_client_setup_unknown_count(s), 1);
    CHECK_STR(ksasl_client_setup_unknown(s, 0), "sasl.typo");
    CHECK_STR(ksasl_client_setup_unknown(s, 1), NULL);
    CHECK_INT(ksasl_client_setup_warning_count(s), 0);
    CHECK_STR(ksasl_client_setup_warning(s, 0), NULL);
    ksasl_refresher *r = (ksasl_refresher *)&r; /* overwritten with NULL: none */
    CHECK_OK(ksasl_client_setup_refresher(s, &r));
    CHECK(r == NULL);
    ksasl_client_config *c = setup_config(s);
    /* The configuration outlives the setup. */
    ksasl_client_setup_free(s);
    CHECK(authenticate(c, sc, T0, who, sizeof who));
    CHECK_STR(who, "User:alice");
    ksasl_client_config_free(c);

    /* SCRAM-SHA-256 by librdkafka's names, from pairs. */
    const char *keys[] = {"security.protocol", "sasl.mechanisms", "sasl.username",
                          "sasl.password"};
    const char *values[] = {"sasl_ssl", "SCRAM-SHA-256", "alice", SECRET};
    s = NULL;
    CHECK_OK(ksasl_client_setup_new_from_pairs(keys, values, 4, &s));
    no_secret(s);
    CHECK_INT(ksasl_client_setup_login(s), KSASL_CLIENT_LOGIN_READY);
    CHECK_STR(ksasl_client_setup_mechanism(s), "SCRAM-SHA-256");
    CHECK_STR(ksasl_client_setup_security_protocol(s), "SASL_SSL");
    CHECK_INT(ksasl_client_setup_unknown_count(s), 0);
    c = setup_config(s);
    CHECK(authenticate(c, sc, T0, who, sizeof who));
    CHECK_STR(who, "User:alice");
    ksasl_client_config_free(c);
    /* Two references to the configuration are two handles, each freed. */
    ksasl_client_config *c1 = setup_config(s), *c2 = setup_config(s);
    CHECK(c1 != c2);
    ksasl_client_config_free(c1);
    ksasl_client_config_free(c2);

    /* with_registry: the same mechanism from another registry (bob), then a registry that
     * lacks it (nothing changes). */
    ksasl_mechanism_registry *creg = NULL;
    CHECK_OK(ksasl_mechanism_registry_new(&creg));
    CHECK_OK(ksasl_mechanism_registry_add_password_clients(creg, "bob", "bob-secret"));
    CHECK_OK(ksasl_client_setup_with_registry(s, creg));
    c = setup_config(s);
    CHECK(authenticate(c, sc, T0, who, sizeof who));
    CHECK_STR(who, "User:bob");
    ksasl_client_config_free(c);
    ksasl_mechanism_registry_free(creg);
    CHECK_OK(ksasl_mechanism_registry_new(&creg));
    CHECK_STR(ksasl_result_name(ksasl_client_setup_with_registry(s, creg)), "UNKNOWN_MECHANISM");
    CHECK(strstr(ksasl_client_setup_last_error(s), "SCRAM-SHA-256") != NULL);
    c = setup_config(s);
    CHECK(authenticate(c, sc, T0, who, sizeof who));
    CHECK_STR(who, "User:bob");
    ksasl_client_config_free(c);
    ksasl_mechanism_registry_free(creg);
    ksasl_client_setup_free(s);
}

static void oauthbearer_unsecured(const ksasl_server_config *sc) {
    char who[128];
    ksasl_client_setup *s = setup_text(
        "security.protocol=SASL_SSL\n"
        "sasl.mechanism=OAUTHBEARER\n"
        "sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule "
        "required unsecuredLoginStringClaim_sub=\"alice\" unsecuredLoginLifetimeSeconds=\"60\";\n"
        "sasl.login.refresh.window.factor=0.5\n"
        "sasl.login.refresh.window.jitter=0\n"
        "sasl.login.refresh.min.period.seconds=0\n"
        "sasl.login.refresh.buffer.seconds=0\n");
    CHECK_INT(ksasl_client_setup_login(s), KSASL_CLIENT_LOGIN_READY);
    CHECK_STR(ksasl_client_setup_mechanism(s), "OAUTHBEARER");
    ksasl_refresher *r = NULL, *r2 = NULL;
    CHECK_OK(ksasl_client_setup_refresher(s, &r));
    CHECK(r != NULL);
    ksasl_client_config *c = setup_config(s);
    /* A second handle on the same refresher, freed first: the core's callback stays. */
    CHECK_OK(ksasl_client_setup_refresher(s, &r2));
    CHECK(r2 != NULL && r2 != r);
    ksasl_refresher_free(r2);
    ksasl_client_setup_free(s);

    CHECK_INT(ksasl_refresher_generation(r), 0);
    CHECK_INT(ksasl_refresher_next_deadline(r), 0);
    int ran = 0;
    CHECK_OK(ksasl_refresher_run_due(r, T0, &ran));
    CHECK_INT(ran, 1);
    CHECK_INT(ksasl_refresher_generation(r), 1);
    /* The token lives 60 s: factor 0.5, no jitter, no minimum period, no buffer. */
    CHECK_INT(ksasl_refresher_next_deadline(r), T0 + 30000);
    /* The configuration's client presents the refresher's token. */
    CHECK(authenticate(c, sc, T0 + 1000, who, sizeof who));
    CHECK_STR(who, "User:alice");
    CHECK_OK(ksasl_refresher_run_due(r, T0 + 29999, &ran));
    CHECK_INT(ran, 0);
    CHECK_OK(ksasl_refresher_run_due(r, T0 + 30000, &ran));
    CHECK_INT(ran, 1);
    CHECK_INT(ksasl_refresher_generation(r), 2);
    CHECK_INT(ksasl_refresher_next_deadline(r), T0 + 60000);
    ksasl_refresher_free(r);
    /* The configuration keeps the refresher alive. */
    CHECK(authenticate(c, sc, T0 + 31000, who, sizeof who));
    ksasl_client_config_free(c);

    /* librdkafka's host-supplied tokens: HOST_TOKEN, a refresher to answer. */
    const char *keys[] = {"security.protocol", "sasl.mechanisms"};
    const char *values[] = {"SASL_PLAINTEXT", "OAUTHBEARER"};
    s = NULL;
    CHECK_OK(ksasl_client_setup_new_from_pairs(keys, values, 2, &s));
    CHECK_INT(ksasl_client_setup_login(s), KSASL_CLIENT_LOGIN_HOST_TOKEN);
    r = NULL;
    CHECK_OK(ksasl_client_setup_refresher(s, &r));
    CHECK(r != NULL);
    ksasl_refresher_free(r);
    ksasl_client_setup_free(s);
}

static void kerberos(void) {
    ksasl_client_setup *s = setup_text(
        "security.protocol=SASL_PLAINTEXT\n"
        "sasl.mechanism=GSSAPI\n"
        "sasl.kerberos.service.name=kafka\n"
        "sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required "
        "useKeyTab=true keyTab=\"/etc/kafka/client.keytab\" principal=\"app@EXAMPLE.COM\";\n");
    CHECK_INT(ksasl_client_setup_login(s), KSASL_CLIENT_LOGIN_KERBEROS);
    CHECK_STR(ksasl_client_setup_mechanism(s), "GSSAPI");
    CHECK_STR(ksasl_client_setup_kerberos_service_name(s), "kafka");
    CHECK_STR(ksasl_client_setup_kerberos_principal(s), "app@EXAMPLE.COM");
    CHECK_STR(ksasl_client_setup_kerberos_keytab(s), "/etc/kafka/client.keytab");
    ksasl_client_config *c = (ksasl_client_config *)&c;
    CHECK_OK(ksasl_client_setup_config(s, &c));
    CHECK(c == NULL);
    ksasl_refresher *r = (ksasl_refresher *)&r;
    CHECK_OK(ksasl_client_setup_refresher(s, &r));
    CHECK(r == NULL);
    /* A registry without a GSSAPI client: nothing changes. */
    ksasl_mechanism_registry *creg = NULL;
    CHECK_OK(ksasl_mechanism_registry_new(&creg));
    CHECK_OK(ksasl_mechanism_registry_add_password_clients(creg, "alice", SECRET));
    CHECK_STR(ksasl_result_name(ksasl_client_setup_with_registry(s, creg)), "UNKNOWN_MECHANISM");
    CHECK(strstr(ksasl_client_setup_last_error(s), "GSSAPI") != NULL);
    no_secret(s);
    CHECK_OK(ksasl_client_setup_config(s, &c));
    CHECK(c == NULL);
    ksasl_mechanism_registry_free(creg);
    ksasl_client_setup_free(s);

    /* librdkafka's default mechanism is GSSAPI: the password is unused, and said so. */
    s = setup_text("security.protocol=SASL_SSL\nsasl.username=alice\nsasl.password=alice-secret\n");
    CHECK_INT(ksasl_client_setup_login(s), KSASL_CLIENT_LOGIN_KERBEROS);
    CHECK_STR(ksasl_client_setup_kerberos_service_name(s), "kafka");
    CHECK_STR(ksasl_client_setup_kerberos_principal(s), NULL);
    CHECK_INT(ksasl_client_setup_warning_count(s), 1);
    CHECK(ksasl_client_setup_warning(s, 0) != NULL && strlen(ksasl_client_setup_warning(s, 0)) > 0);
    ksasl_client_setup_free(s);
}

static void failures(void) {
    invalid("security.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER\n"
            "sasl.login.refresh.window.factor=2\n"
            "sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule "
            "required unsecuredLoginStringClaim_sub=\"alice\";\n",
            "sasl.login.refresh.window.factor");
    invalid("security.protocol=SASL-SSL\nsasl.mechanism=PLAIN\n"
            "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
            "username=\"alice\" password=\"alice-secret\";\n",
            "security.protocol");
    /* A JAAS text without its ';': the error quotes none of it. */
    invalid("security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\n"
            "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
            "username=\"alice\" password=\"alice-secret\"\n",
            "sasl.jaas.config");
    /* No SASL: nothing to build. */
    invalid("security.protocol=PLAINTEXT\n", "security.protocol");
    const char *keys[] = {"security.protocol", "sasl.mechanisms", "sasl.username",
                          "sasl.password"};
    const char *bad[] = {"SASL_SSL", "SCRAM-SHA-256,PLAIN", "alice", SECRET};
    ksasl_client_setup *s = NULL;
    CHECK_STR(ksasl_result_name(ksasl_client_setup_new_from_pairs(keys, bad, 4, &s)),
              "INVALID_CONFIG");
    CHECK(s == NULL);
    CHECK(strstr(ksasl_last_constructor_error(), "sasl.mechanisms") != NULL);
    CHECK(strstr(ksasl_last_constructor_error(), SECRET) == NULL);

    /* Arguments. */
    CHECK_STR(ksasl_result_name(ksasl_client_setup_new(NULL, 3, &s)), "NULL_ARGUMENT");
    CHECK_STR(ksasl_result_name(ksasl_client_setup_new("a=b", 3, NULL)), "NULL_ARGUMENT");
    CHECK_STR(ksasl_result_name(ksasl_client_setup_new_from_pairs(NULL, bad, 1, &s)),
              "NULL_ARGUMENT");
    CHECK_STR(ksasl_result_name(ksasl_client_setup_new_from_pairs(keys, NULL, 1, &s)),
              "NULL_ARGUMENT");
    const char *not_utf8[] = {"\xff"};
    CHECK(ksasl_client_setup_new_from_pairs(not_utf8, not_utf8, 1, &s) != KSASL_OK);
    /* No pairs: PLAINTEXT, Kafka's default. */
    CHECK_STR(ksasl_result_name(ksasl_client_setup_new_from_pairs(NULL, NULL, 0, &s)),
              "INVALID_CONFIG");
    CHECK(s == NULL);
    /* Bytes that are not UTF-8 are ISO-8859-1. */
    const char latin1[] = "security.protocol=SASL_PLAINTEXT\nsasl.mechanisms=PLAIN\n"
                          "sasl.username=caf\xe9\nsasl.password=p\nsasl.caf\xe9=1\n";
    CHECK_OK(ksasl_client_setup_new(latin1, sizeof latin1 - 1, &s));
    CHECK_STR(ksasl_client_setup_unknown(s, 0), "sasl.caf\xc3\xa9");
    ksasl_client_config *c = NULL;
    ksasl_refresher *r = NULL;
    CHECK_STR(ksasl_result_name(ksasl_client_setup_config(s, NULL)), "NULL_ARGUMENT");
    CHECK_STR(ksasl_result_name(ksasl_client_setup_refresher(s, NULL)), "NULL_ARGUMENT");
    CHECK(strstr(ksasl_client_setup_last_error(s), "out") != NULL);
    CHECK_STR(ksasl_result_name(ksasl_client_setup_with_registry(s, NULL)), "NULL_ARGUMENT");
    CHECK(strstr(ksasl_client_setup_last_error(s), "registry") != NULL);
    ksasl_client_setup_free(s);
    CHECK_STR(ksasl_result_name(ksasl_client_setup_config(NULL, &c)), "NULL_ARGUMENT");
    CHECK_STR(ksasl_result_name(ksasl_client_setup_refresher(NULL, &r)), "NULL_ARGUMENT");
    CHECK_STR(ksasl_result_name(ksasl_client_setup_with_registry(NULL, NULL)), "NULL_ARGUMENT");
    CHECK(c == NULL && r == NULL);
    CHECK_INT(ksasl_client_setup_login(NULL), 0);
    CHECK_STR(ksasl_client_setup_mechanism(NULL), NULL);
    CHECK_STR(ksasl_client_setup_security_protocol(NULL), NULL);
    CHECK_STR(ksasl_client_setup_kerberos_service_name(NULL), NULL);
    CHECK_STR(ksasl_client_setup_kerberos_principal(NULL), NULL);
    CHECK_STR(ksasl_client_setup_kerberos_keytab(NULL), NULL);
    CHECK_INT(ksasl_client_setup_unknown_count(NULL), 0);
    CHECK_STR(ksasl_client_setup_unknown(NULL, 0), NULL);
    CHECK_INT(ksasl_client_setup_warning_count(NULL), 0);
    CHECK_STR(ksasl_client_setup_warning(NULL, 0), NULL);
    CHECK_STR(ksasl_client_setup_last_error(NULL), "");
    ksasl_client_setup_free(NULL);
}

void test_client_setup(void) {
    /* The broker: alice (and bob) in the store for PLAIN and SCRAM, unsecured OAUTHBEARER. */
    ksasl_credential_store *store = NULL;
    ksasl_mechanism_registry *sreg = NULL;
    CHECK_OK(ksasl_credential_store_new(&store));
    CHECK_OK(ksasl_credential_store_add_user(store, "alice", SECRET, 4096));
    CHECK_OK(ksasl_credential_store_add_user(store, "bob", "bob-secret", 4096));
    CHECK_OK(ksasl_mechanism_registry_new(&sreg));
    CHECK_OK(ksasl_mechanism_registry_add_password_servers(sreg, store));
    CHECK_OK(ksasl_mechanism_registry_add_oauthbearer_unsecured_server(sreg, NULL, 0));
    ksasl_server_config *sc = server_config_done(server_builder(sreg));

    password_logins(sc);
    oauthbearer_unsecured(sc);
    kerberos();
    failures();

    ksasl_server_config_free(sc);
    ksasl_mechanism_registry_free(sreg);
    ksasl_credential_store_free(store);
}
