/*
 * The shared SCRAM vectors (tests/vectors/scram.json), replayed on the server side.
 *
 * The C API has no fixed-nonce option, so the client messages cannot be reproduced byte for
 * byte. Instead each vector's credential (salt, StoredKey, ServerKey, 4096 iterations) is
 * stored with ksasl_credential_store_set_scram / ksasl_credential_store_set_token in Kafka's text
 * form, and a ksasl client with the vector's password authenticates against it end to end: that
 * only succeeds if the published keys are the ones the password derives. The server-first message
 * is checked against the vector (client nonce prefix, salt, iterations), the client is fed the
 * vector's client-first message to check the server's parsing, and a wrong password must fail.
 *
 * Values copied from tests/vectors/scram.json.
 */
#include <stdlib.h>

#include "check.h"

typedef struct {
    const char *name;
    const char *mechanism;
    const char *username;
    const char *password;
    int token_auth;
    const char *client_nonce;
    const char *salt_b64;
    const char *client_first;
    const char *stored_key_b64;
    const char *server_key_b64;
    const char *kafka_credential; /* NULL: built from the fields above */
} scram_vector;

const char RFC7677_KAFKA_CREDENTIAL[] =
    "salt=W22ZaJ0SNY7soEsUEjb6gQ==,stored_key=WG5d8oPm3OtcPnkdi4Uo7BkeZkBFzpcXkuLmtbsT4qY=,"
    "server_key=wfPLwcE6nTWhTAmQ7tl2KeoiWGPlZqQxSrmfPwDl2dU=,iterations=4096";

const char SHA512_KAFKA_CREDENTIAL[] =
    "salt=W22ZaJ0SNY7soEsUEjb6gQ==,stored_key=6AAub3065EYRmyFpM2RNwqK+eGnrkYuEWbXn19LsEmBqzu8QaCX"
    "Nc1FwpnX9NhH2hK/60dzj9DoO5DvVkOHbvg==,server_key=jZHbYjC1aHh0/hKbxyBuGFjDrgjgKTT1esA7awWiKcRZ"
    "0o/0b1yWEebBeSVkkCFewf91nLDfKF24mvD5nmE6rA==,iterations=4096";

static const scram_vector VECTORS[] = {
    {
        "rfc7677-sha256",
        "SCRAM-SHA-256",
        "user",
        "pencil",
        0,
        "rOprNGfwEbeRWgbNEkqO",
        "W22ZaJ0SNY7soEsUEjb6gQ==",
        "n,,n=user,r=rOprNGfwEbeRWgbNEkqO",
        "WG5d8oPm3OtcPnkdi4Uo7BkeZkBFzpcXkuLmtbsT4qY=",
        "wfPLwcE6nTWhTAmQ7tl2KeoiWGPlZqQxSrmfPwDl2dU=",
        RFC7677_KAFKA_CREDENTIAL,
    },
    {
        "sha512",
        "SCRAM-SHA-512",
        "user",
        "pencil",
        0,
        "rOprNGfwEbeRWgbNEkqO",
        "W22ZaJ0SNY7soEsUEjb6gQ==",
        "n,,n=user,r=rOprNGfwEbeRWgbNEkqO",
        "6AAub3065EYRmyFpM2RNwqK+eGnrkYuEWbXn19LsEmBqzu8QaCXNc1FwpnX9NhH2hK/60dzj9DoO5DvVkOHbvg==",
        "jZHbYjC1aHh0/hKbxyBuGFjDrgjgKTT1esA7awWiKcRZ0o/0b1yWEebBeSVkkCFewf91nLDfKF24mvD5nmE6rA==",
        SHA512_KAFKA_CREDENTIAL,
    },
    {
        "sha256-tokenauth",
        "SCRAM-SHA-256",
        "user",
        "pencil",
        1,
        "rOprNGfwEbeRWgbNEkqO",
        "W22ZaJ0SNY7soEsUEjb6gQ==",
        "n,,n=user,r=rOprNGfwEbeRWgbNEkqO,tokenauth=true",
        "WG5d8oPm3OtcPnkdi4Uo7BkeZkBFzpcXkuLmtbsT4qY=",
        "wfPLwcE6nTWhTAmQ7tl2KeoiWGPlZqQxSrmfPwDl2dU=",
        NULL,
    },
};

static void replay(const scram_vector *v) {
    char cred[512];
    char prefix[128];
    ksasl_credential_store *store = NULL;
    ksasl_mechanism_registry *sreg = NULL, *good = NULL, *bad = NULL;
    exchange x;

    if (v->kafka_credential != NULL) {
        snprintf(cred, sizeof cred, "%s", v->kafka_credential);
    } else {
        snprintf(cred, sizeof cred, "salt=%s,stored_key=%s,server_key=%s,iterations=4096",
                 v->salt_b64, v->stored_key_b64, v->server_key_b64);
    }

    CHECK_OK(ksasl_credential_store_new(&store));
    if (v->token_auth) {
        CHECK_OK(
            ksasl_credential_store_set_token(store, v->username, v->mechanism, cred, "owner", -1));
    } else {
        CHECK_OK(ksasl_credential_store_set_scram(store, v->username, v->mechanism, cred));
    }
    CHECK_OK(ksasl_mechanism_registry_new(&sreg));
    CHECK_OK(ksasl_mechanism_registry_add_password_servers(sreg, store));
    CHECK_OK(ksasl_mechanism_registry_new(&good));
    CHECK_OK(ksasl_mechanism_registry_new(&bad));
    if (v->token_auth) {
        CHECK_OK(ksasl_mechanism_registry_add_token_clients(good, v->username, v->password));
        CHECK_OK(ksasl_mechanism_registry_add_token_clients(bad, v->username, "pencil2"));
    } else {
        CHECK_OK(ksasl_mechanism_registry_add_password_clients(good, v->username, v->password));
        CHECK_OK(ksasl_mechanism_registry_add_password_clients(bad, v->username, "pencil2"));
    }

    /* End to end with the vector's password. */
    exchange_run(&x, good, sreg, v->mechanism, NULL, 1000);
    CHECK(exchange_ok(&x));
    {
        const char *p = NULL, *m = NULL;
        int token = -1;
        CHECK_OK(ksasl_server_exchange_outcome(x.server, &p, NULL, &m, NULL, &token, NULL, NULL));
        CHECK_STR(p, v->token_auth ? "User:owner" : "User:user");
        CHECK_STR(m, v->mechanism);
        CHECK_INT(token, v->token_auth);
    }
    /* The server-first message carries the vector's salt and iterations. */
    CHECK(bytes_contain(x.challenge.data, x.challenge.len, ",s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"));
    exchange_free(&x);

    /* A wrong password fails, with Kafka's generic text (token logins: the same code). */
    exchange_run(&x, bad, sreg, v->mechanism, NULL, 1000);
    CHECK(!exchange_ok(&x));
    CHECK_RC(x.server_rc, KSASL_INVALID_CREDENTIALS);
    {
        char generic[200];
        snprintf(generic, sizeof generic,
                 "Authentication failed during authentication due to invalid credentials with "
                 "SASL mechanism %s",
                 v->mechanism);
        CHECK_STR(ksasl_server_exchange_client_message(x.server), generic);
    }
    exchange_free(&x);

    /* The vector's client-first message: the server answers with the client nonce plus its
     * own, the salt and the iterations (r=<client nonce><server nonce>,s=...,i=4096). */
    {
        ksasl_server_exchange *s = NULL;
        ksasl_server_step_kind st = 0;
        const uint8_t *out = NULL;
        size_t len = 0;
        CHECK_OK(ksasl_server_exchange_new(sreg, v->mechanism, &s));
        CHECK_OK(ksasl_server_exchange_step(s, (const uint8_t *)v->client_first,
                                            strlen(v->client_first), 1000, &st, &out, &len));
        CHECK_INT(st, KSASL_SERVER_STEP_CHALLENGE);
        snprintf(prefix, sizeof prefix, "r=%s", v->client_nonce);
        CHECK(out != NULL && len > strlen(prefix) &&
              memcmp(out, prefix, strlen(prefix)) == 0);
        CHECK(bytes_contain(out, len, ",s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"));
        /* The server nonce is fresh: not the vector's. */
        CHECK(!bytes_contain(out, len, "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"));
        /* The vector's client-final message does not match this server nonce. */
        {
            static const char final256[] =
                "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
            CHECK(ksasl_server_exchange_step(s, (const uint8_t *)final256, strlen(final256), 1000,
                                             &st, &out, &len) != KSASL_OK);
        }
        ksasl_server_exchange_free(s);
    }

    ksasl_mechanism_registry_free(sreg);
    ksasl_mechanism_registry_free(good);
    ksasl_mechanism_registry_free(bad);
    ksasl_credential_store_free(store);
}

void test_vectors(void) {
    for (size_t i = 0; i < sizeof VECTORS / sizeof VECTORS[0]; i++) {
        replay(&VECTORS[i]);
    }
    /* PLAIN against a store holding only SCRAM credentials (either hash): the password is
     * checked against the SCRAM keys. */
    for (int k = 0; k < 2; k++) {
        ksasl_credential_store *store = NULL;
        ksasl_mechanism_registry *sreg = NULL, *good = NULL, *bad = NULL;
        exchange x;
        CHECK_OK(ksasl_credential_store_new(&store));
        CHECK_OK(ksasl_credential_store_set_scram(
            store, "user", k ? "SCRAM-SHA-512" : "SCRAM-SHA-256",
            k ? SHA512_KAFKA_CREDENTIAL : RFC7677_KAFKA_CREDENTIAL));
        CHECK_OK(ksasl_mechanism_registry_new(&sreg));
        CHECK_OK(ksasl_mechanism_registry_add_password_servers(sreg, store));
        CHECK_OK(ksasl_mechanism_registry_new(&good));
        CHECK_OK(ksasl_mechanism_registry_add_password_clients(good, "user", "pencil"));
        CHECK_OK(ksasl_mechanism_registry_new(&bad));
        CHECK_OK(ksasl_mechanism_registry_add_password_clients(bad, "user", "pencil2"));
        exchange_run(&x, good, sreg, "PLAIN", NULL, 1000);
        CHECK(exchange_ok(&x));
        exchange_free(&x);
        exchange_run(&x, bad, sreg, "PLAIN", NULL, 1000);
        CHECK_RC(x.server_rc, KSASL_INVALID_CREDENTIALS);
        exchange_free(&x);
        ksasl_mechanism_registry_free(sreg);
        ksasl_mechanism_registry_free(good);
        ksasl_mechanism_registry_free(bad);
        ksasl_credential_store_free(store);
    }
    /* A stored credential with fewer than 4096 iterations is refused at login. */
    {
        ksasl_credential_store *store = NULL;
        ksasl_mechanism_registry *sreg = NULL, *good = NULL;
        exchange x;
        CHECK_OK(ksasl_credential_store_new(&store));
        CHECK_OK(ksasl_credential_store_set_scram(
            store, "user", "SCRAM-SHA-256",
            "salt=W22ZaJ0SNY7soEsUEjb6gQ==,stored_key=WG5d8oPm3OtcPnkdi4Uo7BkeZkBFzpcXkuLmtbsT4qY=,"
            "server_key=wfPLwcE6nTWhTAmQ7tl2KeoiWGPlZqQxSrmfPwDl2dU=,iterations=1000"));
        CHECK_OK(ksasl_mechanism_registry_new(&sreg));
        CHECK_OK(ksasl_mechanism_registry_add_password_servers(sreg, store));
        CHECK_OK(ksasl_mechanism_registry_new(&good));
        CHECK_OK(ksasl_mechanism_registry_add_password_clients(good, "user", "pencil"));
        exchange_run(&x, good, sreg, "SCRAM-SHA-256", NULL, 1000);
        CHECK_RC(x.server_rc, KSASL_CREDENTIAL_ITERATIONS_TOO_LOW);
        exchange_free(&x);
        ksasl_mechanism_registry_free(sreg);
        ksasl_mechanism_registry_free(good);
        ksasl_credential_store_free(store);
    }
    /* The credential of one mechanism does not serve the other. */
    {
        ksasl_credential_store *store = NULL;
        ksasl_mechanism_registry *sreg = NULL, *good = NULL;
        exchange x;
        CHECK_OK(ksasl_credential_store_new(&store));
        CHECK_OK(ksasl_credential_store_set_scram(store, "user", "SCRAM-SHA-256",
                                                  RFC7677_KAFKA_CREDENTIAL));
        CHECK_OK(ksasl_mechanism_registry_new(&sreg));
        CHECK_OK(ksasl_mechanism_registry_add_password_servers(sreg, store));
        CHECK_OK(ksasl_mechanism_registry_new(&good));
        CHECK_OK(ksasl_mechanism_registry_add_password_clients(good, "user", "pencil"));
        exchange_run(&x, good, sreg, "SCRAM-SHA-512", NULL, 1000);
        CHECK(!exchange_ok(&x));
        CHECK(x.server_rc != KSASL_OK);
        exchange_free(&x);
        ksasl_mechanism_registry_free(sreg);
        ksasl_mechanism_registry_free(good);
        ksasl_credential_store_free(store);
    }
}
