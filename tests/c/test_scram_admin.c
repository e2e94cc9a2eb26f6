/*
 * KIP-554 through the C ABI: ksasl_credential_store_handle_scram_request answers
 * DescribeUserScramCredentials (50) and AlterUserScramCredentials (51) frames written here by
 * hand from Kafka's schemas (version 0, flexible), and
 * ksasl_server_config_builder_add_scram_credential_api_versions lists both APIs in a listener's
 * ApiVersions answer. The bytes of a whole answer are compared where nothing is random; bad
 * frames and NULL arguments get their codes. (The rules themselves are tests/scram_admin.rs's;
 * the answers equal a Kafka 4.4 broker's in tests/broker/test_scram_admin.py.)
 */
#include <stdlib.h>

#include "check.h"

static int32_t be32(const uint8_t *p) {
    return (int32_t)(((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3]);
}

/* A request frame (no length prefix): header v2 (api key, version 0, correlation id, a null
 * client id, no tagged fields), then `body`. */
static size_t request(uint8_t *out, int16_t api_key, int16_t version, int32_t corr,
                      const uint8_t *body, size_t body_len) {
    uint8_t h[] = {(uint8_t)(api_key >> 8), (uint8_t)api_key, (uint8_t)(version >> 8), (uint8_t)version,
                   (uint8_t)(corr >> 24),  (uint8_t)(corr >> 16), (uint8_t)(corr >> 8), (uint8_t)corr,
                   0xff, 0xff, 0x00};
    memcpy(out, h, sizeof h);
    memcpy(out + sizeof h, body, body_len);
    return sizeof h + body_len;
}

/* Serves `frame`; the answer (length-prefixed) must carry `corr`; returns its body after the
 * response header (correlation id, empty tagged fields). */
static const uint8_t *answer(ksasl_credential_store *s, const uint8_t *frame, size_t len, int32_t corr,
                             size_t *body_len) {
    const uint8_t *out = NULL;
    size_t out_len = 0;
    *body_len = 0;
    CHECK_OK(ksasl_credential_store_handle_scram_request(s, frame, len, &out, &out_len));
    if (out == NULL || out_len < 9) {
        CHECK(0);
        return NULL;
    }
    CHECK_INT(be32(out), (int32_t)out_len - 4);
    CHECK_INT(be32(out + 4), corr);
    CHECK_INT(out[8], 0);
    *body_len = out_len - 9;
    return out + 9;
}

static void describe_and_alter(void) {
    ksasl_credential_store *s = NULL;
    uint8_t frame[256];
    size_t len, body_len;
    const uint8_t *body;
    CHECK_OK(ksasl_credential_store_new(&s));
    CHECK_OK(ksasl_credential_store_add_user(s, "alice", "alice-secret", 4096));

    /* Describe every user: alice, both mechanisms at 4096, messages empty (not null). */
    static const uint8_t all[] = {0x00, 0x00};
    len = request(frame, 50, 0, 7, all, sizeof all);
    body = answer(s, frame, len, 7, &body_len);
    static const uint8_t want_all[] = {
        0, 0, 0, 0,                 /* throttle */
        0, 0, 0x01,                 /* no error, "" */
        0x02,                       /* one result */
        0x06, 'a', 'l', 'i', 'c', 'e', 0, 0, 0x01,
        0x03, 1, 0, 0, 0x10, 0, 0x00, 2, 0, 0, 0x10, 0, 0x00, /* SHA-256 and SHA-512 at 4096 */
        0x00,                       /* the result's tagged fields */
        0x00};                      /* the response's */
    CHECK_INT(body_len, sizeof want_all);
    CHECK(body != NULL && body_len == sizeof want_all && memcmp(body, want_all, body_len) == 0);

    /* Upsert bob (SCRAM-SHA-256, 8192 iterations, salt "salt", a 32-byte salted password) and
     * delete a credential nobody has: bob first (upsertions), then the error. */
    uint8_t alter[128];
    size_t n = 0;
    alter[n++] = 0x02; /* deletions: 1 */
    alter[n++] = 0x07;
    memcpy(alter + n, "nobody", 6);
    n += 6;
    alter[n++] = 1;
    alter[n++] = 0x00;
    alter[n++] = 0x02; /* upsertions: 1 */
    alter[n++] = 0x04;
    memcpy(alter + n, "bob", 3);
    n += 3;
    alter[n++] = 1;
    alter[n++] = 0; /* 8192 */
    alter[n++] = 0;
    alter[n++] = 0x20;
    alter[n++] = 0;
    alter[n++] = 0x05;
    memcpy(alter + n, "salt", 4);
    n += 4;
    alter[n++] = 33;
    memset(alter + n, 0x5a, 32);
    n += 32;
    alter[n++] = 0x00;
    alter[n++] = 0x00;
    len = request(frame, 51, 0, 8, alter, n);
    body = answer(s, frame, len, 8, &body_len);
    static const char missing[] = "Attempt to delete a user credential that does not exist";
    CHECK(body_len == 4 + 1 + (1 + 3 + 2 + 1 + 1) + (1 + 6 + 2 + 1 + sizeof missing - 1 + 1) + 1);
    if (body != NULL && body_len > 30) {
        CHECK_INT(body[4], 3); /* two results */
        CHECK(memcmp(body + 5, "\x04" "bob\x00\x00\x00\x00", 8) == 0); /* no error, null message */
        CHECK(memcmp(body + 13, "\x07" "nobody\x00\x5b", 9) == 0);   /* RESOURCE_NOT_FOUND (91) */
        CHECK_INT(body[22], (int)sizeof missing);
        CHECK(memcmp(body + 23, missing, sizeof missing - 1) == 0);
    }

    /* bob is described with his mechanism and iterations. */
    static const uint8_t named[] = {0x02, 0x04, 'b', 'o', 'b', 0x00, 0x00};
    len = request(frame, 50, 0, 9, named, sizeof named);
    body = answer(s, frame, len, 9, &body_len);
    static const uint8_t want_bob[] = {0, 0, 0, 0, 0, 0, 0x01, 0x02, 0x04, 'b', 'o', 'b', 0, 0, 0x01,
                                       0x02, 1, 0, 0, 0x20, 0, 0x00, 0x00, 0x00};
    CHECK(body != NULL && body_len == sizeof want_bob && memcmp(body, want_bob, body_len) == 0);

    /* Frames that do not parse change nothing and are refused with their codes. */
    const uint8_t *out = NULL;
    size_t out_len = 0;
    len = request(frame, 51, 0, 10, alter, n);
    CHECK_RC(ksasl_credential_store_handle_scram_request(s, frame, len - 1, &out, &out_len),
             KSASL_INVALID_REQUEST);
    CHECK(strlen(ksasl_credential_store_last_error(s)) > 0);
    len = request(frame, 51, 1, 10, alter, n);
    CHECK_RC(ksasl_credential_store_handle_scram_request(s, frame, len, &out, &out_len),
             KSASL_UNSUPPORTED_VERSION);
    len = request(frame, 3, 0, 10, all, sizeof all); /* Metadata is not one of them */
    CHECK_RC(ksasl_credential_store_handle_scram_request(s, frame, len, &out, &out_len),
             KSASL_INVALID_REQUEST);
    CHECK_RC(ksasl_credential_store_handle_scram_request(NULL, frame, len, &out, &out_len),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_credential_store_handle_scram_request(s, NULL, 4, &out, &out_len),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_credential_store_handle_scram_request(s, frame, len, NULL, &out_len),
             KSASL_NULL_ARGUMENT);
    len = request(frame, 50, 0, 11, all, sizeof all);
    body = answer(s, frame, len, 11, &body_len);
    CHECK(body != NULL && body_len > 8 && body[7] == 0x03); /* still alice and bob */
    ksasl_credential_store_free(s);
}

/* A listener built with the KIP-554 versions lists them in its ApiVersions answer. */
static void api_versions(void) {
    ksasl_mechanism_registry *r = NULL;
    ksasl_server_config_builder *b = NULL;
    ksasl_server_config *sc = NULL;
    int min = -1, max = -1;
    CHECK_OK(ksasl_mechanism_registry_new(&r));
    CHECK_OK(ksasl_mechanism_registry_add_password_servers(r, NULL));
    CHECK_OK(ksasl_server_config_builder_new(r, &b));
    CHECK_OK(ksasl_server_config_builder_add_scram_credential_api_versions(b));
    CHECK_OK(ksasl_server_config_builder_build(b, &sc));
    for (int16_t key = 50; key <= 51; key++) {
        CHECK_INT(api_advertised(sc, key, &min, &max), 1);
        CHECK(min == 0 && max == 0); /* version 0 only */
    }
    CHECK_RC(ksasl_server_config_builder_add_scram_credential_api_versions(NULL), KSASL_NULL_ARGUMENT);
    ksasl_server_config_free(sc);
    ksasl_server_config_builder_free(b);
    ksasl_mechanism_registry_free(r);
}

void test_scram_admin(void) {
    describe_and_alter();
    api_versions();
}
