/*
 * Delegation tokens (KIP-48) through the C ABI: the reference HMAC vector, the authority's
 * rules and error codes, records, tokenauth logins through the Kafka drivers with a
 * refresher (the session capped by the token), logins served from an authority next to a
 * store, a callback or the pull form, the client codec of the token APIs round-tripped
 * through ksasl_token_authority_handle_request (directly, and as application requests over
 * authenticated connections), the token APIs in ApiVersions, authorities shared by threads,
 * and NULL / invalid arguments for every function of the token API.
 */
#include <stdlib.h>
#include <threads.h>

#include "check.h"

#define T0 ((int64_t)1800000000000)

static const char BAD_UTF8[] = "\xff\xfe";

/* Reference section 7.2's example: HMAC-SHA512("secret", "AAECAwQFBgcICQoLDA0ODw"). */
static const char REF_ID[] = "AAECAwQFBgcICQoLDA0ODw";
static const char REF_HMAC_B64[] =
    "zDhguo/2PVSfITrhlis6BT+5v3s0Oy7l4jYnltLyE9BvFDBx8qbFztUm7I96FCKkHQ1oIyQ+o0kv3VCkXQdFWA==";

/* Standard base64 (with padding) decoding, independent of the library; returns the length
 * or -1. */
static int b64_decode(const char *s, uint8_t *out, size_t cap) {
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    uint32_t acc = 0;
    int bits = 0;
    size_t n = 0;
    for (; *s != '\0' && *s != '='; s++) {
        const char *p = strchr(alphabet, *s);
        if (p == NULL) {
            return -1;
        }
        acc = (acc << 6) | (uint32_t)(p - alphabet);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (n == cap) {
                return -1;
            }
            out[n++] = (uint8_t)(acc >> bits);
        }
    }
    return (int)n;
}

static int32_t rd32(const uint8_t *p) {
    return (int32_t)(((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) |
                     (uint32_t)p[3]);
}

/* Kafka's defaults (delegation.token.max.lifetime.ms, .expiry.time.ms and
 * .expiry.check.interval.ms): what ksasl_token_authority_new takes for a negative value. */
#define DEFAULT_MAX_LIFETIME_MS (7LL * 24 * 3600 * 1000)
#define DEFAULT_EXPIRY_TIME_MS (24LL * 3600 * 1000)
#define DEFAULT_CHECK_INTERVAL_MS (3600LL * 1000)

/* An authority with Kafka's sweep interval (-1 for a value takes Kafka's default). */
static ksasl_token_authority *authority(const char *key, int64_t max_lifetime,
                                        int64_t expiry_time) {
    ksasl_token_authority *a = NULL;
    CHECK_OK(ksasl_token_authority_new(key, max_lifetime, expiry_time, -1, &a));
    return a;
}

/* The password servers with delegation-token logins answered by `a`. */
static ksasl_result with_tokens(ksasl_mechanism_registry *r, const ksasl_credential_store *s,
                                const ksasl_token_authority *a) {
    ksasl_result rc = ksasl_mechanism_registry_add_password_servers(r, s);
    return rc != KSASL_OK ? rc : ksasl_mechanism_registry_set_token_authority(r, a);
}

static int token_hmac_equals(const ksasl_delegation_token *t, const uint8_t *h, size_t n) {
    const uint8_t *p = NULL;
    size_t len = 0;
    if (ksasl_delegation_token_hmac(t, &p, &len) != KSASL_OK) {
        return 0;
    }
    return len == n && p != NULL && memcmp(p, h, n) == 0;
}

/* ---- the reference vector ---- */

static void reference_vector(void) {
    uint8_t expected[64];
    const uint8_t *h = NULL;
    size_t n = 0;
    ksasl_delegation_token *t = NULL;
    ksasl_token_authority *a = authority("secret", DEFAULT_MAX_LIFETIME_MS,
                                         DEFAULT_EXPIRY_TIME_MS);

    CHECK_INT(b64_decode(REF_HMAC_B64, expected, sizeof expected), 64);
    CHECK_OK(ksasl_token_authority_hmac(a, REF_ID, &h, &n));
    CHECK_INT(n, 64);
    CHECK(h != NULL && memcmp(h, expected, 64) == 0);
    /* The SCRAM password of a token with that HMAC is its standard base64. */
    CHECK_OK(ksasl_delegation_token_new(REF_ID, "User:alice", NULL, h, n, T0, T0 + 1, T0 + 2, &t));
    CHECK_STR(ksasl_delegation_token_hmac_base64(t), REF_HMAC_B64);
    CHECK_STR(ksasl_delegation_token_id(t), REF_ID);
    CHECK_STR(ksasl_delegation_token_owner(t), "User:alice");
    CHECK_STR(ksasl_delegation_token_requester(t), "User:alice");
    CHECK_INT(ksasl_delegation_token_renewer_count(t), 0);
    CHECK(ksasl_delegation_token_renewer(t, 0) == NULL);
    CHECK_INT(ksasl_delegation_token_issue_ms(t), T0);
    CHECK_INT(ksasl_delegation_token_expiry_ms(t), T0 + 1);
    CHECK_INT(ksasl_delegation_token_max_ms(t), T0 + 2);
    CHECK(token_hmac_equals(t, expected, 64));
    ksasl_delegation_token_free(t);

    /* Another key gives another HMAC; the HMAC is a function of the id. */
    {
        ksasl_token_authority *b = authority("Secret", DEFAULT_MAX_LIFETIME_MS,
                                             DEFAULT_EXPIRY_TIME_MS);
        CHECK_OK(ksasl_token_authority_hmac(b, REF_ID, &h, &n));
        CHECK(n == 64 && memcmp(h, expected, 64) != 0);
        CHECK_OK(ksasl_token_authority_hmac(b, "", &h, &n));
        CHECK_INT(n, 64);
        ksasl_token_authority_free(b);
    }

    /* A created token's HMAC is the HMAC of its id; ids are 22 base64url characters, never
     * starting with '-'; passwords are 88 characters. */
    for (int i = 0; i < 16; i++) {
        const char *id;
        uint8_t copy[64];
        CHECK_OK(ksasl_token_authority_create(a, "User:alice", NULL, NULL, 0, -1, T0, &t));
        id = ksasl_delegation_token_id(t);
        CHECK(id != NULL && strlen(id) == 22 && id[0] != '-');
        CHECK(id != NULL && strspn(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                       "0123456789-_") == 22);
        CHECK_INT(strlen(ksasl_delegation_token_hmac_base64(t)), 88);
        CHECK_INT(b64_decode(ksasl_delegation_token_hmac_base64(t), copy, sizeof copy), 64);
        CHECK(token_hmac_equals(t, copy, 64));
        CHECK_OK(ksasl_token_authority_hmac(a, id, &h, &n));
        CHECK(token_hmac_equals(t, h, n));
        ksasl_delegation_token_free(t);
        t = NULL;
    }
    ksasl_token_authority_free(a);
}

/* ---- the authority's rules ---- */

static void configuration(void) {
    ksasl_token_authority *a = NULL;
    static char sentinel;
    ksasl_token_authority *const before = (ksasl_token_authority *)(void *)&sentinel;

    a = before;
    CHECK_RC(ksasl_token_authority_new("", 1, 1, 1, &a), KSASL_INVALID_CONFIG);
    CHECK(a == before);
    CHECK(strstr(ksasl_last_constructor_error(), "delegation.token.secret.key") != NULL);
    CHECK_RC(ksasl_token_authority_new("k", 0, 1, 1, &a), KSASL_INVALID_CONFIG);
    CHECK(strstr(ksasl_last_constructor_error(), "delegation.token.max.lifetime.ms") != NULL);
    CHECK_RC(ksasl_token_authority_new("k", 1, 0, 1, &a), KSASL_INVALID_CONFIG);
    CHECK(strstr(ksasl_last_constructor_error(), "delegation.token.expiry.time.ms") != NULL);
    CHECK_RC(ksasl_token_authority_new("k", 1, 1, 0, &a), KSASL_INVALID_CONFIG);
    CHECK(strstr(ksasl_last_constructor_error(), "delegation.token.expiry.check.interval.ms") !=
          NULL);
    CHECK(a == before);

    /* Kafka's defaults (a negative value): a token lives 1 day, renewable up to 7 days, and
     * the sweep runs every hour. */
    {
        ksasl_delegation_token *t = NULL;
        size_t n = 0;
        a = authority("k", -1, -1);
        CHECK_OK(ksasl_token_authority_sweep(a, T0, NULL, &n));
        CHECK_INT(ksasl_token_authority_next_sweep_ms(a), T0 + DEFAULT_CHECK_INTERVAL_MS);

        CHECK_STR(ksasl_token_authority_last_error(a), "");
        CHECK_OK(ksasl_token_authority_create(a, "User:alice", NULL, NULL, 0, 0, T0, &t));
        CHECK_INT(ksasl_delegation_token_expiry_ms(t), T0 + DEFAULT_EXPIRY_TIME_MS);
        CHECK_INT(ksasl_delegation_token_max_ms(t), T0 + DEFAULT_MAX_LIFETIME_MS);
        ksasl_delegation_token_free(t);
        ksasl_token_authority_free(a);
    }
}

static void rules(void) {
    static const char *const bob[] = {"User:bob"};
    static const char *const group[] = {"Group:ops"};
    static const char *const bob_and_carol[] = {"User:bob", "User:carol"};
    static const uint8_t zeros[64] = {0};
    ksasl_token_authority *a = authority("k", 100000, 10000);
    ksasl_delegation_token *t = NULL, *short_t = NULL, *capped = NULL, *other = NULL;
    static char sentinel;
    ksasl_delegation_token *const before = (ksasl_delegation_token *)(void *)&sentinel;
    const uint8_t *h = NULL;
    size_t hn = 0;
    int64_t e = 7;

    CHECK_OK(ksasl_token_authority_create(a, "User:alice", NULL, bob, 1, -1, T0, &t));
    CHECK_STR(ksasl_delegation_token_owner(t), "User:alice");
    CHECK_STR(ksasl_delegation_token_requester(t), "User:alice");
    CHECK_INT(ksasl_delegation_token_renewer_count(t), 1);
    CHECK_STR(ksasl_delegation_token_renewer(t, 0), "User:bob");
    CHECK(ksasl_delegation_token_renewer(t, 1) == NULL);
    CHECK_INT(ksasl_delegation_token_issue_ms(t), T0);
    CHECK_INT(ksasl_delegation_token_expiry_ms(t), T0 + 10000);
    CHECK_INT(ksasl_delegation_token_max_ms(t), T0 + 100000);
    CHECK_OK(ksasl_delegation_token_hmac(t, &h, &hn));
    CHECK_INT(hn, 64);

    /* Renew: the owner or a renewer; now + period, the period capped by the expiry time. */
    CHECK_OK(ksasl_token_authority_renew(a, h, hn, "User:bob", -1, T0 + 1, &e));
    CHECK_INT(e, T0 + 10001);
    CHECK_OK(ksasl_token_authority_renew(a, h, hn, "User:bob", 0, T0 + 2, &e));
    CHECK_INT(e, T0 + 10002);
    CHECK_OK(ksasl_token_authority_renew(a, h, hn, "User:bob", 5000, T0 + 3, &e));
    CHECK_INT(e, T0 + 5003);
    CHECK_OK(ksasl_token_authority_renew(a, h, hn, "User:alice", 500000, T0 + 4, &e));
    CHECK_INT(e, T0 + 10004);
    /* Anyone else: owner mismatch; an unknown HMAC: not found. *expiry is left alone. */
    e = 7;
    CHECK_RC(ksasl_token_authority_renew(a, h, hn, "User:carol", 0, T0 + 5, &e),
             KSASL_DELEGATION_TOKEN_OWNER_MISMATCH);
    CHECK(strstr(ksasl_token_authority_last_error(a), "User:carol") != NULL);
    CHECK_STR(ksasl_result_name(KSASL_DELEGATION_TOKEN_OWNER_MISMATCH),
              "DELEGATION_TOKEN_OWNER_MISMATCH");
    CHECK_STR(ksasl_result_kind(KSASL_DELEGATION_TOKEN_OWNER_MISMATCH), "credential");
    /* The principal type matters: Group:bob is not User:bob. */
    CHECK_RC(ksasl_token_authority_renew(a, h, hn, "Group:bob", 0, T0 + 5, &e),
             KSASL_DELEGATION_TOKEN_OWNER_MISMATCH);
    CHECK_RC(ksasl_token_authority_renew(a, zeros, sizeof zeros, "User:alice", 0, T0 + 5, &e),
             KSASL_DELEGATION_TOKEN_NOT_FOUND);
    CHECK_RC(ksasl_token_authority_renew(a, h, hn - 1, "User:alice", 0, T0 + 5, &e),
             KSASL_DELEGATION_TOKEN_NOT_FOUND);
    CHECK_RC(ksasl_token_authority_renew(a, NULL, 0, "User:alice", 0, T0 + 5, &e),
             KSASL_DELEGATION_TOKEN_NOT_FOUND);
    CHECK_RC(ksasl_token_authority_expire(a, zeros, sizeof zeros, "User:alice", -1, T0 + 5, &e),
             KSASL_DELEGATION_TOKEN_NOT_FOUND);
    CHECK_INT(e, 7);
    CHECK_STR(ksasl_result_name(KSASL_DELEGATION_TOKEN_NOT_FOUND), "DELEGATION_TOKEN_NOT_FOUND");

    /* Principals are TYPE:NAME or bare user names (the core's parser, shared with the Python
     * and Java bindings); only User principals own or renew tokens. */
    CHECK_RC(ksasl_token_authority_create(a, "User:alice", NULL, group, 1, 0, T0, &other),
             KSASL_INVALID_PRINCIPAL_TYPE);
    CHECK(strstr(ksasl_token_authority_last_error(a), "Group:ops") != NULL);
    CHECK_RC(ksasl_token_authority_create(a, "Group:ops", NULL, NULL, 0, 0, T0, &other),
             KSASL_INVALID_PRINCIPAL_TYPE);
    CHECK_STR(ksasl_result_name(KSASL_INVALID_PRINCIPAL_TYPE), "INVALID_PRINCIPAL_TYPE");
    other = before;
    CHECK_RC(ksasl_token_authority_create(a, "User:", NULL, NULL, 0, 0, T0, &other),
             KSASL_INVALID_ARGUMENT);
    CHECK(strstr(ksasl_token_authority_last_error(a), "TYPE:NAME") != NULL);
    CHECK(strstr(ksasl_token_authority_last_error(a), "owner") != NULL);
    CHECK_RC(ksasl_token_authority_create(a, ":alice", NULL, NULL, 0, 0, T0, &other),
             KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_token_authority_create(a, "", NULL, NULL, 0, 0, T0, &other),
             KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_token_authority_create(a, "User:alice", "User:", NULL, 0, 0, T0, &other),
             KSASL_INVALID_ARGUMENT);
    CHECK(strstr(ksasl_token_authority_last_error(a), "requester") != NULL);
    CHECK_RC(ksasl_token_authority_renew(a, h, hn, "", 0, T0 + 5, &e), KSASL_INVALID_ARGUMENT);
    CHECK(other == before);
    other = NULL;
    /* A bare name is a user: "bob" renews as User:bob; "alice" owns as User:alice. */
    CHECK_OK(ksasl_token_authority_renew(a, h, hn, "bob", 0, T0 + 5, &e));
    CHECK_INT(e, T0 + 10005);
    CHECK_OK(ksasl_token_authority_create(a, "alice", "admin", (const char *const[]){"carol"}, 1,
                                          0, T0, &other));
    CHECK_STR(ksasl_delegation_token_owner(other), "User:alice");
    CHECK_STR(ksasl_delegation_token_requester(other), "User:admin");
    CHECK_STR(ksasl_delegation_token_renewer(other, 0), "User:carol");
    ksasl_delegation_token_free(other);
    other = NULL;
    /* The type is everything before the first colon. */
    CHECK_OK(ksasl_token_authority_create(a, "User:svc:reports", "User:admin", bob_and_carol, 2,
                                          0, T0, &other));
    CHECK_STR(ksasl_delegation_token_owner(other), "User:svc:reports");
    CHECK_STR(ksasl_delegation_token_requester(other), "User:admin");
    CHECK_INT(ksasl_delegation_token_renewer_count(other), 2);
    CHECK_STR(ksasl_delegation_token_renewer(other, 1), "User:carol");
    ksasl_delegation_token_free(other);
    other = NULL;

    /* A shorter requested lifetime caps both timestamps; a longer one is the authority's. */
    CHECK_OK(ksasl_token_authority_create(a, "User:alice", NULL, NULL, 0, 5000, T0, &short_t));
    CHECK_INT(ksasl_delegation_token_expiry_ms(short_t), T0 + 5000);
    CHECK_INT(ksasl_delegation_token_max_ms(short_t), T0 + 5000);
    CHECK_OK(ksasl_token_authority_create(a, "User:alice", NULL, NULL, 0, 999999999, T0, &other));
    CHECK_INT(ksasl_delegation_token_max_ms(other), T0 + 100000);
    ksasl_delegation_token_free(other);
    other = NULL;

    /* Renewing near the maximum is capped by it. */
    CHECK_OK(ksasl_token_authority_create(a, "User:alice", NULL, NULL, 0, 15000, T0, &capped));
    CHECK_INT(ksasl_delegation_token_expiry_ms(capped), T0 + 10000);
    CHECK_OK(ksasl_delegation_token_hmac(capped, &h, &hn));
    CHECK_OK(ksasl_token_authority_renew(a, h, hn, "User:alice", 0, T0 + 9000, &e));
    CHECK_INT(e, T0 + 15000);

    /* Expire with a period: now + period, capped by the maximum; negative: now, and the token
     * is gone. */
    CHECK_OK(ksasl_delegation_token_hmac(short_t, &h, &hn));
    CHECK_OK(ksasl_token_authority_expire(a, h, hn, "User:alice", 1000, T0 + 100, &e));
    CHECK_INT(e, T0 + 1100);
    CHECK_OK(ksasl_token_authority_expire(a, h, hn, "User:alice", 999999, T0 + 200, &e));
    CHECK_INT(e, T0 + 5000);
    CHECK_RC(ksasl_token_authority_expire(a, h, hn, "User:carol", -1, T0 + 300, &e),
             KSASL_DELEGATION_TOKEN_OWNER_MISMATCH);
    CHECK_OK(ksasl_token_authority_expire(a, h, hn, "User:alice", -1, T0 + 300, &e));
    CHECK_INT(e, T0 + 300);
    CHECK_RC(ksasl_token_authority_expire(a, h, hn, "User:alice", -1, T0 + 301, &e),
             KSASL_DELEGATION_TOKEN_NOT_FOUND);
    CHECK_RC(ksasl_token_authority_renew(a, h, hn, "User:alice", -1, T0 + 301, &e),
             KSASL_DELEGATION_TOKEN_NOT_FOUND);

    /* Past its expiry (or its maximum) a token can be neither renewed nor expired. */
    CHECK_OK(ksasl_delegation_token_hmac(t, &h, &hn));
    e = 7;
    CHECK_RC(ksasl_token_authority_renew(a, h, hn, "User:alice", 0, T0 + 50000, &e),
             KSASL_DELEGATION_TOKEN_EXPIRED);
    CHECK(strstr(ksasl_token_authority_last_error(a), ksasl_delegation_token_id(t)) != NULL);
    CHECK_RC(ksasl_token_authority_expire(a, h, hn, "User:bob", -1, T0 + 50000, &e),
             KSASL_DELEGATION_TOKEN_EXPIRED);
    CHECK_RC(ksasl_token_authority_expire(a, h, hn, "User:bob", 10, T0 + 50000, &e),
             KSASL_DELEGATION_TOKEN_EXPIRED);
    CHECK_INT(e, 7);
    CHECK_STR(ksasl_result_name(KSASL_DELEGATION_TOKEN_EXPIRED), "DELEGATION_TOKEN_EXPIRED");
    /* Exactly at its expiry it is still valid (Kafka: expired when the timestamp is past). */
    CHECK_OK(ksasl_token_authority_renew(a, h, hn, "User:alice", 0, T0 + 10004, &e));
    CHECK_INT(e, T0 + 20004);

    ksasl_delegation_token_free(t);
    ksasl_delegation_token_free(short_t);
    ksasl_delegation_token_free(capped);
    ksasl_token_authority_free(a);
}

static void describe_and_sweep(void) {
    static const char *const bob[] = {"User:bob"};
    static const char *const none[] = {NULL};
    static const char *const alice_and_bob[] = {"User:alice", "User:bob"};
    ksasl_token_authority *a = authority("k", 100000, 10000);
    ksasl_token_authority *shared = NULL;
    ksasl_delegation_token *t1 = NULL, *t2 = NULL, *t3 = NULL;
    ksasl_delegation_token_list *l = NULL;
    const char *const *ids = NULL;
    size_t n = 99;

    CHECK_INT(ksasl_token_authority_next_sweep_ms(a), 0); /* due at once */
    CHECK_OK(ksasl_token_authority_create(a, "User:alice", NULL, NULL, 0, 10, T0, &t1));
    CHECK_OK(ksasl_token_authority_create(a, "User:bob", NULL, NULL, 0, 0, T0, &t2));
    /* Another handle on the same authority sees and makes the same tokens. */
    CHECK_OK(ksasl_token_authority_share(a, &shared));
    CHECK_OK(ksasl_token_authority_create(shared, "User:carol", "User:bob", NULL, 0, 0, T0, &t3));

    CHECK_OK(ksasl_token_authority_describe(a, NULL, 0, &l));
    CHECK_INT(ksasl_delegation_token_list_count(l), 3);
    CHECK(ksasl_delegation_token_list_get(l, 3) == NULL);
    /* In token-id order, with their HMACs. */
    for (size_t i = 0; i + 1 < ksasl_delegation_token_list_count(l); i++) {
        CHECK(strcmp(ksasl_delegation_token_id(ksasl_delegation_token_list_get(l, i)),
                     ksasl_delegation_token_id(ksasl_delegation_token_list_get(l, i + 1))) < 0);
    }
    for (size_t i = 0; i < ksasl_delegation_token_list_count(l); i++) {
        const ksasl_delegation_token *d = ksasl_delegation_token_list_get(l, i);
        const uint8_t *h = NULL;
        size_t hn = 0;
        CHECK_OK(ksasl_token_authority_hmac(a, ksasl_delegation_token_id(d), &h, &hn));
        CHECK(token_hmac_equals(d, h, hn));
        CHECK_INT(strlen(ksasl_delegation_token_hmac_base64(d)), 88);
    }
    ksasl_delegation_token_list_free(l);
    l = NULL;

    CHECK_OK(ksasl_token_authority_describe(shared, bob, 1, &l));
    CHECK_INT(ksasl_delegation_token_list_count(l), 1);
    CHECK_STR(ksasl_delegation_token_id(ksasl_delegation_token_list_get(l, 0)),
              ksasl_delegation_token_id(t2));
    ksasl_delegation_token_list_free(l);
    CHECK_OK(ksasl_token_authority_describe(a, alice_and_bob, 2, &l));
    CHECK_INT(ksasl_delegation_token_list_count(l), 2);
    ksasl_delegation_token_list_free(l);
    /* An empty owner list describes nothing; NULL describes everything. */
    CHECK_OK(ksasl_token_authority_describe(a, none, 0, &l));
    CHECK_INT(ksasl_delegation_token_list_count(l), 0);
    CHECK(ksasl_delegation_token_list_get(l, 0) == NULL);
    ksasl_delegation_token_list_free(l);
    l = NULL;
    CHECK_RC(ksasl_token_authority_describe(a, none, 1, &l), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_token_authority_describe(a, (const char *const[]){"User:"}, 1, &l),
             KSASL_INVALID_ARGUMENT);
    CHECK(l == NULL);
    CHECK_OK(ksasl_token_authority_describe(a, (const char *const[]){"bob"}, 1, &l));
    CHECK_INT(ksasl_delegation_token_list_count(l), 1);
    ksasl_delegation_token_list_free(l);
    l = NULL;

    /* The sweep removes expired tokens; expired but not yet swept ones are still there. */
    CHECK_OK(ksasl_token_authority_sweep(a, T0 + 10, &ids, &n));
    CHECK_INT(n, 0);
    CHECK_INT(ksasl_token_authority_next_sweep_ms(a), T0 + 10 + 3600000);
    CHECK_OK(ksasl_token_authority_sweep(a, T0 + 11, &ids, &n));
    CHECK_INT(n, 1);
    CHECK(ids != NULL && strcmp(ids[0], ksasl_delegation_token_id(t1)) == 0);
    CHECK_INT(ksasl_token_authority_next_sweep_ms(shared), T0 + 11 + 3600000);
    CHECK_OK(ksasl_token_authority_sweep(a, T0 + 12, NULL, &n));
    CHECK_INT(n, 0);
    CHECK_OK(ksasl_token_authority_describe(a, NULL, 0, &l));
    CHECK_INT(ksasl_delegation_token_list_count(l), 2);
    ksasl_delegation_token_list_free(l);
    /* Everything expires eventually. */
    CHECK_OK(ksasl_token_authority_sweep(shared, T0 + 100001, &ids, &n));
    CHECK_INT(n, 2);
    CHECK_OK(ksasl_token_authority_describe(a, NULL, 0, &l));
    CHECK_INT(ksasl_delegation_token_list_count(l), 0);
    ksasl_delegation_token_list_free(l);

    ksasl_delegation_token_free(t1);
    ksasl_delegation_token_free(t2);
    ksasl_delegation_token_free(t3);
    /* The authority outlives the handle it was made with. */
    ksasl_token_authority_free(a);
    CHECK_INT(ksasl_token_authority_next_sweep_ms(shared), T0 + 100001 + 3600000);
    ksasl_token_authority_free(shared);
}

/* ---- records ---- */

static void records(void) {
    static const char *const bob[] = {"User:bob"};
    ksasl_token_authority *a = authority("k", 100000, 10000);
    ksasl_token_authority *b = authority("k", 100000, 10000);
    ksasl_token_authority *other_key = authority("not-k", 100000, 10000);
    ksasl_delegation_token *t = NULL;
    ksasl_delegation_token_list *l = NULL;
    const char *json = NULL;
    char *copy;
    size_t loaded = 99;

    CHECK_OK(ksasl_token_authority_export_records(a, &json));
    CHECK_STR(json, "[]");
    CHECK_OK(ksasl_token_authority_create(a, "User:alice", "User:admin", bob, 1, 0, T0 + 7, &t));
    CHECK_OK(ksasl_token_authority_export_records(a, &json));
    /* No secret inside. */
    CHECK(json != NULL && strstr(json, ksasl_delegation_token_hmac_base64(t)) == NULL);
    CHECK(json != NULL && strstr(json, ksasl_delegation_token_id(t)) != NULL);
    CHECK(json != NULL && strstr(json, "\"User:admin\"") != NULL);
    copy = dup_bytes((const uint8_t *)json, strlen(json));

    CHECK_OK(ksasl_token_authority_import_records(b, copy, &loaded));
    CHECK_INT(loaded, 1);
    CHECK_OK(ksasl_token_authority_import_records(b, copy, NULL)); /* replaces, same id */
    CHECK_OK(ksasl_token_authority_describe(b, (const char *const[]){"User:alice"}, 1, &l));
    CHECK_INT(ksasl_delegation_token_list_count(l), 1);
    {
        const ksasl_delegation_token *d = ksasl_delegation_token_list_get(l, 0);
        const uint8_t *h = NULL;
        size_t hn = 0;
        CHECK_STR(ksasl_delegation_token_id(d), ksasl_delegation_token_id(t));
        CHECK_STR(ksasl_delegation_token_requester(d), "User:admin");
        CHECK_STR(ksasl_delegation_token_renewer(d, 0), "User:bob");
        CHECK_INT(ksasl_delegation_token_issue_ms(d), T0 + 7);
        CHECK_INT(ksasl_delegation_token_expiry_ms(d), ksasl_delegation_token_expiry_ms(t));
        CHECK_INT(ksasl_delegation_token_max_ms(d), ksasl_delegation_token_max_ms(t));
        CHECK_STR(ksasl_delegation_token_hmac_base64(d), ksasl_delegation_token_hmac_base64(t));
        /* The imported token is fully usable: its renewer renews it on the new authority. */
        CHECK_OK(ksasl_delegation_token_hmac(d, &h, &hn));
        {
            int64_t e = 0;
            CHECK_OK(ksasl_token_authority_renew(b, h, hn, "User:bob", 0, T0 + 8, &e));
            CHECK_INT(e, T0 + 10008);
        }
    }
    ksasl_delegation_token_list_free(l);
    /* Under another secret key the HMAC (recomputed from the id) differs. */
    CHECK_OK(ksasl_token_authority_import_records(other_key, copy, &loaded));
    CHECK_INT(loaded, 1);
    CHECK_OK(ksasl_token_authority_describe(other_key, NULL, 0, &l));
    CHECK(strcmp(ksasl_delegation_token_hmac_base64(ksasl_delegation_token_list_get(l, 0)),
                 ksasl_delegation_token_hmac_base64(t)) != 0);
    ksasl_delegation_token_list_free(l);

    /* Malformed records: nothing is loaded, *loaded is left alone. */
    {
        static const char *const bad[] = {
            "nope",
            "",
            "{}",
            "[{}]",
            "[1]",
            "[{\"tokenId\": \"short\"}]",
            "[{\"tokenId\":\"x\",\"owner\":\"User:a\",\"requester\":\"User:a\",\"renewers\":[],"
            "\"issueTimestamp\":1,\"maxTimestamp\":2,\"expirationTimestamp\":2}]",
            "[{\"tokenId\":\"-AECAwQFBgcICQoLDA0ODw\",\"owner\":\"User:a\",\"requester\":"
            "\"User:a\",\"renewers\":[],\"issueTimestamp\":1,\"maxTimestamp\":2,"
            "\"expirationTimestamp\":2}]",
            "[{\"tokenId\":\"AAECAwQFBgcICQoLDA0ODw\",\"owner\":\"alice\",\"requester\":"
            "\"User:a\",\"renewers\":[],\"issueTimestamp\":1,\"maxTimestamp\":2,"
            "\"expirationTimestamp\":2}]",
            "[{\"tokenId\":\"AAECAwQFBgcICQoLDA0ODw\",\"owner\":\"User:a\",\"requester\":"
            "\"User:a\",\"renewers\":[\"bob\"],\"issueTimestamp\":1,\"maxTimestamp\":2,"
            "\"expirationTimestamp\":2}]",
            "[{\"tokenId\":\"AAECAwQFBgcICQoLDA0ODw\",\"owner\":\"User:a\",\"requester\":"
            "\"User:a\",\"renewers\":[],\"issueTimestamp\":1,\"maxTimestamp\":2,"
            "\"expirationTimestamp\":3}]",
            "[{\"tokenId\":\"AAECAwQFBgcICQoLDA0ODw\",\"owner\":\"User:a\",\"requester\":"
            "\"User:a\",\"renewers\":[],\"issueTimestamp\":\"1\",\"maxTimestamp\":2,"
            "\"expirationTimestamp\":2}]",
        };
        ksasl_token_authority *c = authority("k", 100000, 10000);
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            loaded = 99;
            CHECK_RC(ksasl_token_authority_import_records(c, bad[i], &loaded),
                     KSASL_INVALID_CREDENTIAL_FORMAT);
            CHECK_INT(loaded, 99);
            CHECK(strstr(ksasl_token_authority_last_error(c), "delegation token record") !=
                  NULL);
        }
        /* One good record and one bad: none loaded. */
        {
            size_t len = strlen(copy);
            char *mixed = malloc(len + 8);
            CHECK(len >= 2);
            memcpy(mixed, copy, len - 1);
            memcpy(mixed + len - 1, ",{}]", 5);
            CHECK_RC(ksasl_token_authority_import_records(c, mixed, &loaded),
                     KSASL_INVALID_CREDENTIAL_FORMAT);
            free(mixed);
        }
        CHECK_RC(ksasl_token_authority_import_records(c, BAD_UTF8, &loaded),
                 KSASL_INVALID_ARGUMENT);
        CHECK_OK(ksasl_token_authority_export_records(c, &json));
        CHECK_STR(json, "[]");
        /* A record is valid at the edges: expiry = max, empty renewers. */
        CHECK_OK(ksasl_token_authority_import_records(
            c,
            "[{\"tokenId\":\"AAECAwQFBgcICQoLDA0ODw\",\"owner\":\"User:a\",\"requester\":"
            "\"User:a\",\"renewers\":[],\"issueTimestamp\":1,\"maxTimestamp\":2,"
            "\"expirationTimestamp\":2}]",
            &loaded));
        CHECK_INT(loaded, 1);
        ksasl_token_authority_free(c);
    }
    free(copy);
    ksasl_delegation_token_free(t);
    ksasl_token_authority_free(a);
    ksasl_token_authority_free(b);
    ksasl_token_authority_free(other_key);
}

/* ---- logins ---- */

typedef struct {
    ksasl_client_connection *client;
    ksasl_server_connection *server;
    const char *password; /* answers a NEED_CREDENTIAL (NULL: unexpected) */
    int pulls, pulled_token_auth;
    int client_authenticated, server_authenticated;
    ksasl_result client_rc;
    ksasl_server_action failure; /* FAIL_AT or CLOSE_NOW, else 0 */
} login;

/* Authenticates a new client connection of `cc` against a new server connection of `sc`,
 * wired in memory. */
static void login_run(login *l, const ksasl_client_config *cc, const ksasl_server_config *sc,
                      const char *password, int64_t now) {
    buf to_server = {0}, to_client = {0}, frame = {0};
    memset(l, 0, sizeof *l);
    l->password = password;
    CHECK_OK(ksasl_client_connection_new(cc, &l->client));
    CHECK_OK(ksasl_server_connection_new(sc, &l->server));
    CHECK_OK(ksasl_client_connection_start(l->client, now));
    for (int round = 0; round < 32; round++) {
        const uint8_t *out = NULL;
        size_t len = 0;
        int moved = 0;
        CHECK_OK(ksasl_client_connection_transmit(l->client, &out, &len));
        buf_append(&to_server, out, len);
        while (buf_take_frame(&to_server, &frame)) {
            ksasl_server_action act = 99;
            int64_t dl = 0;
            moved = 1;
            CHECK_OK(ksasl_server_connection_handle_frame(l->server, frame.data, frame.len, now,
                                                          &act, &out, &len, &dl));
            while (act == KSASL_SERVER_ACTION_NEED_CREDENTIAL) {
                const char *m = NULL, *u = NULL;
                int ta = -1;
                l->pulls++;
                CHECK(l->password != NULL);
                CHECK_OK(ksasl_server_connection_credential_request(l->server, &m, &u, &ta));
                l->pulled_token_auth = ta;
                CHECK_OK(ksasl_server_connection_provide_credential(
                    l->server,
                    l->password ? KSASL_CREDENTIAL_ANSWER_PASSWORD
                                : KSASL_CREDENTIAL_ANSWER_UNKNOWN,
                    l->password, -1, NULL, now, &act, &out, &len, &dl));
            }
            buf_append(&to_client, out, len);
            if (act == KSASL_SERVER_ACTION_AUTHENTICATED) {
                l->server_authenticated++;
            } else if (act == KSASL_SERVER_ACTION_FAIL_AT || act == KSASL_SERVER_ACTION_CLOSE_NOW) {
                l->failure = act;
            }
        }
        while (buf_take_frame(&to_client, &frame)) {
            ksasl_client_event ev = 99;
            const uint8_t *app = NULL;
            size_t app_len = 0;
            ksasl_result rc;
            moved = 1;
            rc = ksasl_client_connection_handle_frame(l->client, frame.data, frame.len, now, &ev,
                                                      &app, &app_len);
            if (rc != KSASL_OK) {
                l->client_rc = rc;
                goto done;
            }
            if (ev == KSASL_CLIENT_EVENT_AUTHENTICATED) {
                l->client_authenticated++;
            }
        }
        if (!moved) {
            break;
        }
    }
done:
    buf_free(&to_server);
    buf_free(&to_client);
    buf_free(&frame);
}

static void login_free(login *l) {
    ksasl_client_connection_free(l->client);
    ksasl_server_connection_free(l->server);
}

static ksasl_server_config *server_config(const ksasl_mechanism_registry *sreg) {
    ksasl_server_config *sc = NULL;
    sc = server_config_done(server_builder(sreg));
    return sc;
}

static ksasl_client_config *client_config(const ksasl_mechanism_registry *creg,
                                          const char *mechanism) {
    ksasl_client_config *cc = NULL;
    cc = client_config_done(client_builder(creg, mechanism));
    return cc;
}

/* A token login through the drivers with the token in a refresher: the session is capped by
 * the token's expiry, and the refresher wants a renewed token before it. */
static void refresher_login(void) {
    ksasl_token_authority *a = authority("k", DEFAULT_MAX_LIFETIME_MS, 10000);
    ksasl_credential_store *store = NULL;
    ksasl_mechanism_registry *sreg = NULL, *creg = NULL, *ureg = NULL;
    ksasl_server_config *sc;
    ksasl_refresher *refresher = NULL;
    ksasl_delegation_token *t = NULL, *renewed = NULL;
    const char *principal = NULL;
    int64_t lifetime = 0, expiry = 0, reauth_at = 0, deadline;
    login l;

    CHECK_OK(ksasl_credential_store_new(&store));
    CHECK_OK(ksasl_credential_store_add_user(store, "alice", "alice-secret", 4096));
    CHECK_OK(ksasl_mechanism_registry_new(&sreg));
    CHECK_OK(with_tokens(sreg, store, a));
    CHECK_INT(ksasl_mechanism_registry_mechanism_count(sreg, 1), 3);
    sc = server_config(sreg);
    /* The registry and the configuration keep the authority alive. */
    CHECK_OK(ksasl_token_authority_create(a, "User:alice", NULL, NULL, 0, 0, T0, &t));
    ksasl_mechanism_registry_free(sreg);

    CHECK_OK(ksasl_refresher_new(NULL, &refresher));
    CHECK_INT(ksasl_refresher_poll(refresher, T0), 1);
    CHECK_OK(ksasl_refresher_set_delegation_token(refresher, t, T0));
    CHECK_INT(ksasl_refresher_generation(refresher), 1);
    CHECK_OK(ksasl_mechanism_registry_new(&creg));
    CHECK_OK(ksasl_mechanism_registry_add_refreshing_password_clients(creg, refresher));
    CHECK_INT(ksasl_mechanism_registry_mechanism_count(creg, 0), 3);

    for (int m = 0; m < 2; m++) {
        const char *mech = m == 0 ? "SCRAM-SHA-512" : "SCRAM-SHA-256";
        ksasl_client_config *cc = client_config(creg, mech);
        login_run(&l, cc, sc, NULL, T0);
        CHECK_RC(l.client_rc, KSASL_OK);
        CHECK_INT(l.client_authenticated, 1);
        CHECK_INT(l.server_authenticated, 1);
        CHECK_INT(l.pulls, 0);
        CHECK_OK(
            ksasl_server_connection_session(l.server, &principal, NULL, NULL, &lifetime, &expiry));
        CHECK_STR(principal, "User:alice");
        CHECK_INT(lifetime, 10000); /* capped by the token */
        CHECK_INT(expiry, T0 + 10000);
        CHECK_INT(conn_token_authenticated(l.server), 1);
        CHECK_OK(ksasl_client_connection_session(l.client, &lifetime, &reauth_at, &expiry));
        CHECK_INT(lifetime, 10000);
        CHECK(reauth_at > T0 && reauth_at < T0 + 10000);
        login_free(&l);
        ksasl_client_config_free(cc);
    }
    /* A token never logs in with PLAIN: the refreshing PLAIN client refuses it. */
    {
        ksasl_client_config *cc = client_config(creg, "PLAIN");
        login_run(&l, cc, sc, NULL, T0);
        CHECK_INT(l.client_authenticated, 0);
        CHECK_INT(l.server_authenticated, 0);
        login_free(&l);
        ksasl_client_config_free(cc);
    }

    /* The refresher wants a renewed token before the expiry; the renewed token installs as
     * the next generation and the next session lasts longer. */
    deadline = ksasl_refresher_next_deadline(refresher);
    CHECK(deadline > T0 && deadline < T0 + 10000);
    CHECK_INT(ksasl_refresher_poll(refresher, deadline), 1);
    {
        const uint8_t *h = NULL;
        size_t hn = 0;
        int64_t e = 0;
        ksasl_client_config *cc = client_config(creg, "SCRAM-SHA-256");
        CHECK_OK(ksasl_delegation_token_hmac(t, &h, &hn));
        CHECK_OK(ksasl_token_authority_renew(a, h, hn, "User:alice", 0, deadline, &e));
        CHECK_INT(e, deadline + 10000);
        CHECK_OK(ksasl_delegation_token_renewed(t, e, &renewed));
        CHECK_INT(ksasl_delegation_token_expiry_ms(renewed), e);
        CHECK_INT(ksasl_delegation_token_expiry_ms(t), T0 + 10000);
        CHECK_STR(ksasl_delegation_token_id(renewed), ksasl_delegation_token_id(t));
        CHECK_STR(ksasl_delegation_token_hmac_base64(renewed),
                  ksasl_delegation_token_hmac_base64(t));
        CHECK_OK(ksasl_refresher_set_delegation_token(refresher, renewed, deadline));
        CHECK_INT(ksasl_refresher_generation(refresher), 2);
        login_run(&l, cc, sc, NULL, deadline);
        CHECK_INT(l.server_authenticated, 1);
        CHECK_OK(ksasl_server_connection_session(l.server, NULL, NULL, NULL, &lifetime, &expiry));
        CHECK_INT(lifetime, 10000);
        CHECK_INT(expiry, deadline + 10000);
        login_free(&l);
        ksasl_client_config_free(cc);
    }
    /* An expired token is refused by the refresher. */
    CHECK_RC(ksasl_refresher_set_delegation_token(refresher, t, T0 + 10001),
             KSASL_INVALID_CREDENTIAL_EXPIRY);
    CHECK(strlen(ksasl_refresher_last_error(refresher)) > 0);
    CHECK_RC(ksasl_refresher_set_delegation_token(refresher, t, T0 + 10000),
             KSASL_INVALID_CREDENTIAL_EXPIRY);
    {
        ksasl_delegation_token *odd = NULL;
        const uint8_t *h = NULL;
        size_t hn = 0;
        CHECK_OK(ksasl_delegation_token_hmac(t, &h, &hn));
        CHECK_OK(ksasl_delegation_token_new(ksasl_delegation_token_id(t), "User:alice", NULL, h,
                                            hn, T0 + 5000, T0 + 4000, T0 + 9000, &odd));
        CHECK_RC(ksasl_refresher_set_delegation_token(refresher, odd, T0),
                 KSASL_INVALID_CREDENTIAL_EXPIRY);
        ksasl_delegation_token_free(odd);
    }
    CHECK_INT(ksasl_refresher_generation(refresher), 2);

    /* Users still log in from the store on the same listener, not token-authenticated. */
    CHECK_OK(ksasl_mechanism_registry_new(&ureg));
    CHECK_OK(ksasl_mechanism_registry_add_password_clients(ureg, "alice", "alice-secret"));
    for (int m = 0; m < 3; m++) {
        static const char *const mechs[] = {"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"};
        ksasl_client_config *cc = client_config(ureg, mechs[m]);
        login_run(&l, cc, sc, NULL, T0);
        CHECK_INT(l.server_authenticated, 1);
        CHECK_OK(
            ksasl_server_connection_session(l.server, &principal, NULL, NULL, &lifetime, &expiry));
        CHECK_STR(principal, "User:alice");
        CHECK_INT(lifetime, 0);
        CHECK_INT(expiry, -1);
        CHECK_INT(conn_token_authenticated(l.server), 0);
        login_free(&l);
        ksasl_client_config_free(cc);
    }
    CHECK_INT(conn_token_authenticated(NULL), 0);

    ksasl_delegation_token_free(t);
    ksasl_delegation_token_free(renewed);
    ksasl_mechanism_registry_free(creg);
    ksasl_mechanism_registry_free(ureg);
    ksasl_refresher_free(refresher);
    ksasl_server_config_free(sc);
    ksasl_credential_store_free(store);
    ksasl_token_authority_free(a);
}

static int user_cb(void *userdata, const ksasl_credential_request *request,
                   ksasl_credential_answer *answer) {
    counter *c = userdata;
    c->calls++;
    CHECK_INT(ksasl_credential_request_token_authenticated(request), 0);
    return (int)ksasl_credential_answer_set(answer, KSASL_CREDENTIAL_ANSWER_PASSWORD, "cb-secret",
                                            -1, NULL);
}

/* Tokens from an authority with users from the pull form or a callback; tokens made with
 * ksasl_mechanism_registry_add_token_clients; unknown, swept and expired tokens. */
static void authority_logins(void) {
    ksasl_token_authority *a = authority("k", 100000, 10000);
    ksasl_mechanism_registry *sreg = NULL, *treg = NULL, *ureg = NULL, *plain = NULL;
    ksasl_server_config *sc;
    ksasl_delegation_token *t = NULL;
    counter cnt = {0, 0};
    const char *principal = NULL;
    int64_t lifetime = 0, expiry = 0;
    login l;

    CHECK_OK(ksasl_token_authority_create(a, "User:alice", NULL, NULL, 0, 0, T0, &t));
    CHECK_OK(ksasl_mechanism_registry_new(&sreg));
    CHECK_OK(with_tokens(sreg, NULL, a));
    CHECK_OK(ksasl_mechanism_registry_new(&treg));
    CHECK_OK(ksasl_mechanism_registry_add_token_clients(treg, ksasl_delegation_token_id(t),
                                                        ksasl_delegation_token_hmac_base64(t)));
    CHECK_OK(ksasl_mechanism_registry_new(&ureg));
    CHECK_OK(ksasl_mechanism_registry_add_password_clients(ureg, "bob", "pulled-secret"));

    /* Pull form for users, the authority for tokens (no pull). */
    sc = server_config(sreg);
    {
        ksasl_client_config *cc = client_config(treg, "SCRAM-SHA-256");
        ksasl_client_config *uc = client_config(ureg, "SCRAM-SHA-512");
        login_run(&l, cc, sc, NULL, T0 + 1000);
        CHECK_INT(l.server_authenticated, 1);
        CHECK_INT(l.pulls, 0);
        CHECK_OK(
            ksasl_server_connection_session(l.server, &principal, NULL, NULL, &lifetime, &expiry));
        CHECK_STR(principal, "User:alice");
        CHECK_INT(lifetime, 9000);
        CHECK_INT(expiry, T0 + 10000);
        login_free(&l);
        login_run(&l, uc, sc, "pulled-secret", T0);
        CHECK_INT(l.server_authenticated, 1);
        CHECK_INT(l.pulls, 1);
        CHECK_INT(l.pulled_token_auth, 0);
        CHECK_OK(ksasl_server_connection_session(l.server, &principal, NULL, NULL, NULL, NULL));
        CHECK_STR(principal, "User:bob");
        CHECK_INT(conn_token_authenticated(l.server), 0);
        login_free(&l);
        ksasl_client_config_free(cc);
        ksasl_client_config_free(uc);
    }
    ksasl_server_config_free(sc);

    /* A callback set afterwards answers users; the authority still answers tokens. */
    CHECK_OK(ksasl_mechanism_registry_set_credential_callback(sreg, user_cb, &cnt, counter_free));
    CHECK_OK(ksasl_mechanism_registry_add_password_clients(ureg, "bob", "cb-secret"));
    sc = server_config(sreg);
    {
        ksasl_client_config *cc = client_config(treg, "SCRAM-SHA-512");
        ksasl_client_config *uc = client_config(ureg, "PLAIN");
        login_run(&l, cc, sc, NULL, T0);
        CHECK_INT(l.server_authenticated, 1);
        CHECK_INT(conn_token_authenticated(l.server), 1);
        login_free(&l);
        CHECK_INT(cnt.calls, 0);
        login_run(&l, uc, sc, NULL, T0);
        CHECK_INT(l.server_authenticated, 1);
        CHECK_INT(cnt.calls, 1);
        login_free(&l);
        ksasl_client_config_free(cc);
        ksasl_client_config_free(uc);
    }
    ksasl_server_config_free(sc);

    /* The same with ksasl_client_exchange / ksasl_server_exchange exchanges (no Kafka framing). */
    {
        exchange x;
        ksasl_delegation_token *wrong = NULL;
        ksasl_mechanism_registry *wreg = NULL;
        exchange_run(&x, treg, sreg, "SCRAM-SHA-256", NULL, T0);
        CHECK(exchange_ok(&x));
        {
            const char *p = NULL, *n = NULL, *m = NULL;
            int64_t ce = 0;
            int ta = -1;
            CHECK_OK(ksasl_server_exchange_outcome(x.server, &p, &n, &m, &ce, &ta, NULL, NULL));
            CHECK_STR(p, "User:alice");
            CHECK_STR(n, "alice");
            CHECK_INT(ce, T0 + 10000);
            CHECK_INT(ta, 1);
        }
        exchange_free(&x);
        /* The right id with a wrong HMAC fails. */
        CHECK_OK(ksasl_delegation_token_new(ksasl_delegation_token_id(t), "User:alice", NULL,
                                            (const uint8_t *)"not the hmac", 12, T0, T0 + 10000,
                                            T0 + 100000, &wrong));
        CHECK_OK(ksasl_mechanism_registry_new(&wreg));
        CHECK_OK(ksasl_mechanism_registry_add_token_clients(
            wreg, ksasl_delegation_token_id(wrong), ksasl_delegation_token_hmac_base64(wrong)));
        exchange_run(&x, wreg, sreg, "SCRAM-SHA-512", NULL, T0);
        CHECK(!exchange_ok(&x));
        CHECK_RC(x.server_rc, KSASL_INVALID_CREDENTIALS);
        exchange_free(&x);
        ksasl_mechanism_registry_free(wreg);
        ksasl_delegation_token_free(wrong);
    }

    /* Expired but not swept: still authenticates, with an already-expired session (Kafka);
     * after the sweep the token is unknown. */
    sc = server_config(sreg);
    {
        ksasl_client_config *cc = client_config(treg, "SCRAM-SHA-256");
        const char *const *ids = NULL;
        size_t n = 0;
        exchange x;
        exchange_run(&x, treg, sreg, "SCRAM-SHA-256", NULL, T0 + 20000);
        CHECK(exchange_ok(&x));
        {
            int64_t ce = 0;
            CHECK_OK(
                ksasl_server_exchange_outcome(x.server, NULL, NULL, NULL, &ce, NULL, NULL, NULL));
            CHECK_INT(ce, T0 + 10000);
        }
        exchange_free(&x);
        CHECK_OK(ksasl_token_authority_sweep(a, T0 + 20000, &ids, &n));
        CHECK_INT(n, 1);
        exchange_run(&x, treg, sreg, "SCRAM-SHA-256", NULL, T0 + 20000);
        CHECK(!exchange_ok(&x));
        CHECK(x.server_rc != KSASL_OK);
        exchange_free(&x);
        login_run(&l, cc, sc, NULL, T0 + 20000);
        CHECK_INT(l.server_authenticated, 0);
        CHECK_INT(l.client_authenticated, 0);
        CHECK(l.client_rc != KSASL_OK);
        CHECK(l.failure == KSASL_SERVER_ACTION_FAIL_AT);
        login_free(&l);
        ksasl_client_config_free(cc);
    }
    ksasl_server_config_free(sc);

    /* A registry without an authority knows no tokens (the store has none). */
    {
        ksasl_credential_store *store = NULL;
        exchange x;
        CHECK_OK(ksasl_credential_store_new(&store));
        CHECK_OK(ksasl_mechanism_registry_new(&plain));
        CHECK_OK(ksasl_mechanism_registry_add_password_servers(plain, store));
        exchange_run(&x, treg, plain, "SCRAM-SHA-256", NULL, T0);
        CHECK(!exchange_ok(&x));
        exchange_free(&x);
        /* Adding the authority afterwards keeps the store for users. */
        CHECK_OK(ksasl_credential_store_add_user(store, "carol", "carol-secret", 4096));
        CHECK_OK(ksasl_token_authority_import_records(
            a,
            "[{\"tokenId\":\"AAECAwQFBgcICQoLDA0ODw\",\"owner\":\"User:dave\",\"requester\":"
            "\"User:dave\",\"renewers\":[],\"issueTimestamp\":1,\"maxTimestamp\":"
            "4000000000000,\"expirationTimestamp\":4000000000000}]",
            NULL));
        CHECK_OK(with_tokens(plain, NULL, a));
        {
            ksasl_mechanism_registry *c1 = NULL, *c2 = NULL;
            const uint8_t *h = NULL;
            size_t hn = 0;
            ksasl_delegation_token *ref = NULL;
            CHECK_OK(ksasl_mechanism_registry_new(&c1));
            CHECK_OK(ksasl_mechanism_registry_add_password_clients(c1, "carol", "carol-secret"));
            exchange_run(&x, c1, plain, "SCRAM-SHA-256", NULL, T0);
            CHECK(exchange_ok(&x));
            exchange_free(&x);
            CHECK_OK(ksasl_token_authority_hmac(a, REF_ID, &h, &hn));
            CHECK_OK(ksasl_delegation_token_new(REF_ID, "User:dave", NULL, h, hn, 1,
                                                4000000000000, 4000000000000, &ref));
            CHECK_OK(ksasl_mechanism_registry_new(&c2));
            CHECK_OK(ksasl_mechanism_registry_add_token_clients(
                c2, REF_ID, ksasl_delegation_token_hmac_base64(ref)));
            exchange_run(&x, c2, plain, "SCRAM-SHA-512", NULL, T0);
            CHECK(exchange_ok(&x));
            {
                const char *p = NULL;
                CHECK_OK(ksasl_server_exchange_outcome(x.server, &p, NULL, NULL, NULL, NULL, NULL,
                                                       NULL));
                CHECK_STR(p, "User:dave");
            }
            exchange_free(&x);
            ksasl_delegation_token_free(ref);
            ksasl_mechanism_registry_free(c1);
            ksasl_mechanism_registry_free(c2);
        }
        ksasl_credential_store_free(store);
    }

    CHECK_INT(cnt.frees, 0);
    ksasl_mechanism_registry_free(sreg);
    CHECK_INT(cnt.frees, 1);
    ksasl_mechanism_registry_free(treg);
    ksasl_mechanism_registry_free(ureg);
    ksasl_mechanism_registry_free(plain);
    ksasl_delegation_token_free(t);
    ksasl_token_authority_free(a);
}

/* ---- the codec, round-tripped through the authority ---- */

/* Serves a request frame (with its length prefix) and checks the response's framing and
 * correlation id; returns the response without its length prefix, in `resp`. */
static ksasl_result serve(ksasl_token_authority *a, const uint8_t *req, size_t req_len,
                          const char *principal, int token_auth, int64_t now, buf *resp) {
    const uint8_t *out = NULL;
    size_t out_len = 0;
    ksasl_result rc;
    CHECK(req_len > 12 && (size_t)rd32(req) == req_len - 4);
    rc = ksasl_token_authority_handle_request(a, req + 4, req_len - 4, principal, token_auth,
                                              now, &out, &out_len);
    buf_clear(resp);
    if (rc == KSASL_OK) {
        CHECK(out_len > 8 && (size_t)rd32(out) == out_len - 4);
        CHECK_INT(rd32(out + 4), rd32(req + 8)); /* the correlation id */
        buf_append(resp, out + 4, out_len - 4);
    }
    return rc;
}

static void codec(void) {
    static const char *const bob[] = {"User:bob"};
    static const char *const alice[] = {"User:alice"};
    static const char *const group[] = {"Group:ops"};
    ksasl_token_authority *a = authority("k", DEFAULT_MAX_LIFETIME_MS,
                                         DEFAULT_EXPIRY_TIME_MS);
    ksasl_delegation_token_codec *c = NULL;
    ksasl_delegation_token *t = NULL, *t2 = NULL;
    ksasl_delegation_token_list *l = NULL;
    const uint8_t *req = NULL, *h = NULL, *ah = NULL;
    size_t req_len = 0, hn = 0, ahn = 0;
    int64_t e = 0;
    buf resp = {0};

    CHECK_OK(ksasl_delegation_token_codec_new(&c));
    CHECK_STR(ksasl_delegation_token_codec_last_error(c), "");
    CHECK_INT(ksasl_delegation_token_codec_kafka_error(c), 0);

    /* Create (v3) for the caller, renewable by bob. */
    CHECK_OK(ksasl_delegation_token_codec_create_request(c, 3, 5, "c-test", NULL, bob, 1, -1, &req,
                                                         &req_len));
    CHECK(req != NULL && req_len > 12);
    CHECK(bytes_contain(req, req_len, "c-test") && bytes_contain(req, req_len, "bob"));
    CHECK_OK(serve(a, req, req_len, "User:alice", 0, T0, &resp));
    CHECK_OK(ksasl_delegation_token_codec_parse_create_response(c, 3, resp.data, resp.len, &t));
    CHECK_INT(ksasl_delegation_token_codec_kafka_error(c), 0);
    CHECK_STR(ksasl_delegation_token_owner(t), "User:alice");
    CHECK_STR(ksasl_delegation_token_requester(t), "User:alice");
    CHECK_INT(ksasl_delegation_token_renewer_count(t), 0); /* not in the response */
    CHECK_INT(ksasl_delegation_token_issue_ms(t), T0);
    CHECK_INT(ksasl_delegation_token_expiry_ms(t), T0 + DEFAULT_EXPIRY_TIME_MS);
    CHECK_INT(ksasl_delegation_token_max_ms(t), T0 + DEFAULT_MAX_LIFETIME_MS);
    CHECK_OK(ksasl_delegation_token_hmac(t, &h, &hn));
    CHECK_OK(ksasl_token_authority_hmac(a, ksasl_delegation_token_id(t), &ah, &ahn));
    CHECK(hn == 64 && ahn == 64 && memcmp(h, ah, 64) == 0);

    /* Renew (v2) by the renewer, with a period. */
    CHECK_OK(
        ksasl_delegation_token_codec_renew_request(c, 2, 6, NULL, h, hn, 1000, &req, &req_len));
    CHECK_OK(serve(a, req, req_len, "User:bob", 0, T0, &resp));
    CHECK_OK(ksasl_delegation_token_codec_parse_expiry_response(c, 2, resp.data, resp.len, &e));
    CHECK_INT(e, T0 + 1000);
    /* v0 and v1 too (classic encoding). */
    CHECK_OK(ksasl_delegation_token_codec_renew_request(c, 0, 60, "id", h, hn, -1, &req, &req_len));
    CHECK_OK(serve(a, req, req_len, "User:alice", 0, T0 + 1, &resp));
    CHECK_OK(ksasl_delegation_token_codec_parse_expiry_response(c, 0, resp.data, resp.len, &e));
    CHECK_INT(e, T0 + 1 + DEFAULT_EXPIRY_TIME_MS);
    /* By someone else: 63. */
    e = 7;
    CHECK_OK(ksasl_delegation_token_codec_renew_request(c, 1, 61, NULL, h, hn, -1, &req, &req_len));
    CHECK_OK(serve(a, req, req_len, "User:carol", 0, T0 + 2, &resp));
    CHECK_RC(ksasl_delegation_token_codec_parse_expiry_response(c, 1, resp.data, resp.len, &e),
             KSASL_DELEGATION_TOKEN_OWNER_MISMATCH);
    CHECK_INT(ksasl_delegation_token_codec_kafka_error(c), 63);
    CHECK(strstr(ksasl_delegation_token_codec_last_error(c), "63") != NULL);
    CHECK_INT(e, 7);

    /* Describe (v3 and v0): the token with its renewers and requester. */
    for (int v = 0; v <= 3; v++) {
        CHECK_OK(ksasl_delegation_token_codec_describe_request(c, (int16_t)v, 7, "c", alice, 1,
                                                               &req, &req_len));
        CHECK_OK(serve(a, req, req_len, "User:alice", 0, T0, &resp));
        CHECK_OK(ksasl_delegation_token_codec_parse_describe_response(c, (int16_t)v, resp.data,
                                                                      resp.len, &l));
        CHECK_INT(ksasl_delegation_token_codec_kafka_error(c), 0);
        CHECK_INT(ksasl_delegation_token_list_count(l), 1);
        {
            const ksasl_delegation_token *d = ksasl_delegation_token_list_get(l, 0);
            CHECK_STR(ksasl_delegation_token_id(d), ksasl_delegation_token_id(t));
            CHECK_STR(ksasl_delegation_token_owner(d), "User:alice");
            CHECK_STR(ksasl_delegation_token_requester(d), "User:alice");
            CHECK_INT(ksasl_delegation_token_renewer_count(d), 1);
            CHECK_STR(ksasl_delegation_token_renewer(d, 0), "User:bob");
            CHECK(token_hmac_equals(d, h, hn));
            CHECK_INT(ksasl_delegation_token_expiry_ms(d),
                      T0 + 1 + DEFAULT_EXPIRY_TIME_MS);
        }
        ksasl_delegation_token_list_free(l);
        l = NULL;
    }
    /* Every owner (NULL) and no owner (an empty list). */
    CHECK_OK(ksasl_delegation_token_codec_describe_request(c, 2, 8, NULL, NULL, 0, &req, &req_len));
    CHECK_OK(serve(a, req, req_len, "User:zed", 0, T0, &resp));
    CHECK_OK(ksasl_delegation_token_codec_parse_describe_response(c, 2, resp.data, resp.len, &l));
    CHECK_INT(ksasl_delegation_token_list_count(l), 1);
    ksasl_delegation_token_list_free(l);
    CHECK_OK(
        ksasl_delegation_token_codec_describe_request(c, 1, 9, NULL, alice, 0, &req, &req_len));
    CHECK_OK(serve(a, req, req_len, "User:alice", 0, T0, &resp));
    CHECK_OK(ksasl_delegation_token_codec_parse_describe_response(c, 1, resp.data, resp.len, &l));
    CHECK_INT(ksasl_delegation_token_list_count(l), 0);
    ksasl_delegation_token_list_free(l);
    l = NULL;

    /* Create for someone else (v3 owner) with a shorter lifetime. */
    CHECK_OK(ksasl_delegation_token_codec_create_request(c, 3, 10, NULL, "carol", NULL, 0, 60000,
                                                         &req, &req_len));
    CHECK_OK(serve(a, req, req_len, "User:admin", 0, T0, &resp));
    CHECK_OK(ksasl_delegation_token_codec_parse_create_response(c, 3, resp.data, resp.len, &t2));
    CHECK_STR(ksasl_delegation_token_owner(t2), "User:carol");
    CHECK_STR(ksasl_delegation_token_requester(t2), "User:admin");
    CHECK_INT(ksasl_delegation_token_max_ms(t2), T0 + 60000);
    ksasl_delegation_token_free(t2);
    t2 = NULL;
    /* v1 has no requester: it reads as the owner. */
    CHECK_OK(ksasl_delegation_token_codec_create_request(c, 1, 11, NULL, NULL, NULL, 0, -1, &req,
                                                         &req_len));
    CHECK_OK(serve(a, req, req_len, "erin", 0, T0, &resp)); /* a bare name: User:erin */
    CHECK_OK(ksasl_delegation_token_codec_parse_create_response(c, 1, resp.data, resp.len, &t2));
    CHECK_STR(ksasl_delegation_token_owner(t2), "User:erin");
    CHECK_STR(ksasl_delegation_token_requester(t2), "User:erin");
    ksasl_delegation_token_free(t2);
    t2 = NULL;

    /* A Group renewer: 67. */
    CHECK_OK(ksasl_delegation_token_codec_create_request(c, 2, 12, NULL, NULL, group, 1, -1, &req,
                                                         &req_len));
    CHECK_OK(serve(a, req, req_len, "User:alice", 0, T0, &resp));
    CHECK_RC(ksasl_delegation_token_codec_parse_create_response(c, 2, resp.data, resp.len, &t2),
             KSASL_INVALID_PRINCIPAL_TYPE);
    CHECK_INT(ksasl_delegation_token_codec_kafka_error(c), 67);
    CHECK(t2 == NULL);

    /* Connections that logged in with a token may not ask (64), whatever the API. */
    CHECK_OK(ksasl_delegation_token_codec_create_request(c, 1, 13, NULL, NULL, NULL, 0, -1, &req,
                                                         &req_len));
    CHECK_OK(serve(a, req, req_len, "User:alice", 1, T0, &resp));
    CHECK_RC(ksasl_delegation_token_codec_parse_create_response(c, 1, resp.data, resp.len, &t2),
             KSASL_DELEGATION_TOKEN_REQUEST_NOT_ALLOWED);
    CHECK_INT(ksasl_delegation_token_codec_kafka_error(c), 64);
    CHECK(strstr(ksasl_delegation_token_codec_last_error(c), "64") != NULL);
    CHECK(strstr(ksasl_delegation_token_codec_last_error(c),
                 "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED") != NULL);
    CHECK(t2 == NULL);
    CHECK_STR(ksasl_result_name(KSASL_DELEGATION_TOKEN_REQUEST_NOT_ALLOWED),
              "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED");
    CHECK_OK(ksasl_delegation_token_codec_renew_request(c, 2, 14, NULL, h, hn, -1, &req, &req_len));
    CHECK_OK(serve(a, req, req_len, "User:alice", 1, T0, &resp));
    CHECK_RC(ksasl_delegation_token_codec_parse_expiry_response(c, 2, resp.data, resp.len, &e),
             KSASL_DELEGATION_TOKEN_REQUEST_NOT_ALLOWED);
    CHECK_OK(
        ksasl_delegation_token_codec_describe_request(c, 3, 15, NULL, NULL, 0, &req, &req_len));
    CHECK_OK(serve(a, req, req_len, "User:alice", 1, T0, &resp));
    CHECK_RC(ksasl_delegation_token_codec_parse_describe_response(c, 3, resp.data, resp.len, &l),
             KSASL_DELEGATION_TOKEN_REQUEST_NOT_ALLOWED);
    CHECK_INT(ksasl_delegation_token_codec_kafka_error(c), 64);
    CHECK(l == NULL);

    /* Expire (v1) now, then again: 62. */
    CHECK_OK(
        ksasl_delegation_token_codec_expire_request(c, 1, 16, NULL, h, hn, -1, &req, &req_len));
    CHECK_OK(serve(a, req, req_len, "User:alice", 0, T0 + 5, &resp));
    CHECK_OK(ksasl_delegation_token_codec_parse_expiry_response(c, 1, resp.data, resp.len, &e));
    CHECK_INT(e, T0 + 5);
    CHECK_INT(ksasl_delegation_token_codec_kafka_error(c), 0);
    CHECK_OK(serve(a, req, req_len, "User:alice", 0, T0 + 6, &resp));
    CHECK_RC(ksasl_delegation_token_codec_parse_expiry_response(c, 1, resp.data, resp.len, &e),
             KSASL_DELEGATION_TOKEN_NOT_FOUND);
    CHECK_INT(ksasl_delegation_token_codec_kafka_error(c), 62);
    /* Expire with a period (v2), on a new token; then renew after its expiry: 66. */
    CHECK_OK(ksasl_delegation_token_codec_create_request(c, 3, 17, NULL, NULL, NULL, 0, -1, &req,
                                                         &req_len));
    CHECK_OK(serve(a, req, req_len, "User:alice", 0, T0, &resp));
    CHECK_OK(ksasl_delegation_token_codec_parse_create_response(c, 3, resp.data, resp.len, &t2));
    CHECK_OK(ksasl_delegation_token_hmac(t2, &h, &hn));
    CHECK_OK(
        ksasl_delegation_token_codec_expire_request(c, 2, 18, "x", h, hn, 500, &req, &req_len));
    CHECK_OK(serve(a, req, req_len, "User:alice", 0, T0, &resp));
    CHECK_OK(ksasl_delegation_token_codec_parse_expiry_response(c, 2, resp.data, resp.len, &e));
    CHECK_INT(e, T0 + 500);
    CHECK_OK(ksasl_delegation_token_codec_renew_request(c, 2, 19, NULL, h, hn, -1, &req, &req_len));
    CHECK_OK(serve(a, req, req_len, "User:alice", 0, T0 + 501, &resp));
    CHECK_RC(ksasl_delegation_token_codec_parse_expiry_response(c, 2, resp.data, resp.len, &e),
             KSASL_DELEGATION_TOKEN_EXPIRED);
    CHECK_INT(ksasl_delegation_token_codec_kafka_error(c), 66);
    ksasl_delegation_token_free(t2);
    t2 = NULL;
    CHECK_OK(ksasl_delegation_token_hmac(t, &h, &hn)); /* h pointed into t2 */

    /* Every Kafka error code of a response, as the core maps them (v0 response frames
     * without their length: correlation id, error code, expiry, throttle time). */
    {
        static const struct {
            int16_t kafka;
            ksasl_result want;
        } map[] = {
            {61, KSASL_DELEGATION_TOKEN_REQUEST_NOT_ALLOWED},
            {62, KSASL_DELEGATION_TOKEN_NOT_FOUND},
            {63, KSASL_DELEGATION_TOKEN_OWNER_MISMATCH},
            {64, KSASL_DELEGATION_TOKEN_REQUEST_NOT_ALLOWED},
            {65, KSASL_DELEGATION_TOKEN_REQUEST_NOT_ALLOWED},
            {66, KSASL_DELEGATION_TOKEN_EXPIRED},
            {67, KSASL_INVALID_PRINCIPAL_TYPE},
            {35, KSASL_KAFKA_ERROR},
            {-1, KSASL_KAFKA_ERROR},
            {0, KSASL_OK},
        };
        for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
            uint8_t f[18] = {0, 0, 0, 9};
            f[4] = (uint8_t)((uint16_t)map[i].kafka >> 8);
            f[5] = (uint8_t)map[i].kafka;
            f[13] = 42; /* expiry 42 */
            e = 7;
            CHECK_RC(ksasl_delegation_token_codec_parse_expiry_response(c, 0, f, sizeof f, &e),
                     map[i].want);
            CHECK_INT(ksasl_delegation_token_codec_kafka_error(c), map[i].kafka);
            CHECK_INT(e, map[i].kafka == 0 ? 42 : 7);
        }
    }

    /* Versions and fields the codec refuses. */
    req = NULL;
    CHECK_RC(ksasl_delegation_token_codec_create_request(c, 4, 1, NULL, NULL, NULL, 0, -1, &req,
                                                         &req_len),
             KSASL_UNSUPPORTED_VERSION);
    CHECK_RC(ksasl_delegation_token_codec_create_request(c, -1, 1, NULL, NULL, NULL, 0, -1, &req,
                                                         &req_len),
             KSASL_UNSUPPORTED_VERSION);
    CHECK_RC(ksasl_delegation_token_codec_create_request(c, 2, 1, NULL, "User:carol", NULL, 0, -1,
                                                         &req, &req_len),
             KSASL_UNSUPPORTED_VERSION);
    CHECK(strstr(ksasl_delegation_token_codec_last_error(c), "owner") != NULL);
    CHECK_RC(ksasl_delegation_token_codec_renew_request(c, 3, 1, NULL, h, hn, -1, &req, &req_len),
             KSASL_UNSUPPORTED_VERSION);
    CHECK_RC(ksasl_delegation_token_codec_expire_request(c, 3, 1, NULL, h, hn, -1, &req, &req_len),
             KSASL_UNSUPPORTED_VERSION);
    CHECK_RC(ksasl_delegation_token_codec_describe_request(c, 4, 1, NULL, NULL, 0, &req, &req_len),
             KSASL_UNSUPPORTED_VERSION);
    CHECK(req == NULL);
    CHECK_RC(ksasl_delegation_token_codec_parse_expiry_response(c, 3, resp.data, resp.len, &e),
             KSASL_UNSUPPORTED_VERSION);
    CHECK_RC(ksasl_delegation_token_codec_parse_create_response(c, 4, resp.data, resp.len, &t2),
             KSASL_UNSUPPORTED_VERSION);
    CHECK_RC(ksasl_delegation_token_codec_parse_describe_response(c, 4, resp.data, resp.len, &l),
             KSASL_UNSUPPORTED_VERSION);

    /* Malformed responses: truncated, trailing bytes, empty; the Kafka error resets. */
    CHECK_OK(ksasl_delegation_token_codec_create_request(c, 3, 20, NULL, NULL, NULL, 0, -1, &req,
                                                         &req_len));
    CHECK_OK(serve(a, req, req_len, "User:alice", 0, T0, &resp));
    for (size_t cut = 0; cut < resp.len; cut += 7) {
        CHECK_RC(ksasl_delegation_token_codec_parse_create_response(c, 3, resp.data, cut, &t2),
                 KSASL_INVALID_REQUEST);
        CHECK_INT(ksasl_delegation_token_codec_kafka_error(c), 0);
    }
    {
        uint8_t *longer = malloc(resp.len + 1);
        memcpy(longer, resp.data, resp.len);
        longer[resp.len] = 0;
        CHECK_RC(
            ksasl_delegation_token_codec_parse_create_response(c, 3, longer, resp.len + 1, &t2),
            KSASL_INVALID_REQUEST);
        free(longer);
    }
    CHECK(strlen(ksasl_delegation_token_codec_last_error(c)) > 0);
    CHECK_RC(ksasl_delegation_token_codec_parse_expiry_response(c, 2, NULL, 0, &e),
             KSASL_INVALID_REQUEST);
    CHECK_RC(ksasl_delegation_token_codec_parse_describe_response(c, 3, NULL, 0, &l),
             KSASL_INVALID_REQUEST);
    CHECK(t2 == NULL && l == NULL);
    /* A create response for the wrong version does not parse as a token. */
    CHECK(ksasl_delegation_token_codec_parse_create_response(c, 1, resp.data, resp.len, &t2) !=
          KSASL_OK);
    CHECK(t2 == NULL);

    /* Requests the authority cannot serve: garbage, a non-token API, a truncated frame. */
    {
        static const uint8_t garbage[] = {1, 2, 3};
        static const uint8_t metadata[] = {0, 3, 0, 1, 0, 0, 0, 1, 0xff, 0xff};
        const uint8_t *out = NULL;
        size_t out_len = 0;
        CHECK(ksasl_token_authority_handle_request(a, garbage, sizeof garbage, "User:alice", 0,
                                                   T0, &out, &out_len) != KSASL_OK);
        CHECK(strlen(ksasl_token_authority_last_error(a)) > 0);
        CHECK_RC(ksasl_token_authority_handle_request(a, metadata, sizeof metadata, "User:alice",
                                                      0, T0, &out, &out_len),
                 KSASL_INVALID_ARGUMENT);
        CHECK(out == NULL && out_len == 0);
        CHECK_OK(
            ksasl_delegation_token_codec_renew_request(c, 2, 21, NULL, h, hn, -1, &req, &req_len));
        CHECK_RC(ksasl_token_authority_handle_request(a, req + 4, req_len - 5, "User:alice", 0,
                                                      T0, &out, &out_len),
                 KSASL_INVALID_REQUEST);
        CHECK_RC(ksasl_token_authority_handle_request(a, req + 4, req_len - 4, "User:", 0, T0,
                                                      &out, &out_len),
                 KSASL_INVALID_ARGUMENT);
        CHECK(out == NULL && out_len == 0);
    }

    /* A token from a create response logs in (the codec's token is a real token). */
    {
        ksasl_mechanism_registry *sreg = NULL, *creg = NULL;
        exchange x;
        CHECK_OK(ksasl_mechanism_registry_new(&sreg));
        CHECK_OK(with_tokens(sreg, NULL, a));
        CHECK_OK(ksasl_delegation_token_codec_create_request(c, 3, 22, NULL, NULL, NULL, 0, -1,
                                                             &req, &req_len));
        CHECK_OK(serve(a, req, req_len, "User:frank", 0, T0, &resp));
        CHECK_OK(
            ksasl_delegation_token_codec_parse_create_response(c, 3, resp.data, resp.len, &t2));
        CHECK_OK(ksasl_mechanism_registry_new(&creg));
        CHECK_OK(ksasl_mechanism_registry_add_token_clients(
            creg, ksasl_delegation_token_id(t2), ksasl_delegation_token_hmac_base64(t2)));
        exchange_run(&x, creg, sreg, "SCRAM-SHA-512", NULL, T0 + 1);
        CHECK(exchange_ok(&x));
        {
            const char *p = NULL;
            int ta = 0;
            CHECK_OK(
                ksasl_server_exchange_outcome(x.server, &p, NULL, NULL, NULL, &ta, NULL, NULL));
            CHECK_STR(p, "User:frank");
            CHECK_INT(ta, 1);
        }
        exchange_free(&x);
        ksasl_mechanism_registry_free(sreg);
        ksasl_mechanism_registry_free(creg);
        ksasl_delegation_token_free(t2);
    }

    buf_free(&resp);
    ksasl_delegation_token_free(t);
    ksasl_delegation_token_codec_free(c);
    ksasl_token_authority_free(a);
}

/* One token API request over an authenticated connection, like a broker: the client asks
 * before sending, the server's gate lets it through, the authority answers as the
 * connection's principal (token-authenticated or not), and the client gets the answer as an
 * application frame. Returns the response frame (without its length) in `resp`. */
static void request_over(login *l, ksasl_token_authority *a, const uint8_t *req, size_t req_len,
                         int64_t now, buf *resp) {
    int send = -1;
    const char *principal = NULL;
    const uint8_t *out = NULL, *app = NULL;
    size_t out_len = 0, app_len = 0;
    ksasl_client_event ev = 99;
    buf_clear(resp);
    CHECK_OK(ksasl_client_connection_before_request(l->client, now, &send));
    CHECK_INT(send, 1);
    CHECK(req_len > 8);
    CHECK_INT(ksasl_server_connection_gate(l->server, (int16_t)((req[4] << 8) | req[5]), now),
              KSASL_GATE_PROCESS);
    CHECK_OK(ksasl_server_connection_session(l->server, &principal, NULL, NULL, NULL, NULL));
    CHECK_OK(ksasl_token_authority_handle_request(
        a, req + 4, req_len - 4, principal, conn_token_authenticated(l->server), now,
        &out, &out_len));
    CHECK(out_len > 4);
    CHECK_OK(ksasl_client_connection_handle_frame(l->client, out + 4, out_len - 4, now, &ev, &app,
                                                  &app_len));
    CHECK_INT(ev, KSASL_CLIENT_EVENT_APPLICATION);
    buf_append(resp, app, app_len);
}

/* A user creates a token over its connection, logs in with it on a new connection, and may
 * not ask for tokens there. */
static void over_connections(void) {
    ksasl_token_authority *a = authority("k", 100000, 10000);
    ksasl_credential_store *store = NULL;
    ksasl_mechanism_registry *sreg = NULL, *ureg = NULL, *treg = NULL;
    ksasl_server_config *sc;
    ksasl_client_config *uc, *tc;
    ksasl_delegation_token_codec *c = NULL;
    ksasl_delegation_token *t = NULL, *refused = NULL;
    ksasl_delegation_token_list *l = NULL;
    const uint8_t *req = NULL;
    size_t req_len = 0;
    buf resp = {0};
    login user, tok;

    CHECK_OK(ksasl_credential_store_new(&store));
    CHECK_OK(ksasl_credential_store_add_user(store, "alice", "alice-secret", 4096));
    CHECK_OK(ksasl_mechanism_registry_new(&sreg));
    CHECK_OK(with_tokens(sreg, store, a));
    {
        ksasl_server_config_builder *b = server_builder(sreg);
        CHECK_OK(ksasl_server_config_builder_add_token_api_versions(b, 1));
        sc = server_config_done(b);
    }
    CHECK_OK(ksasl_mechanism_registry_new(&ureg));
    CHECK_OK(ksasl_mechanism_registry_add_password_clients(ureg, "alice", "alice-secret"));
    uc = client_config(ureg, "SCRAM-SHA-256");
    CHECK_OK(ksasl_delegation_token_codec_new(&c));

    login_run(&user, uc, sc, NULL, T0);
    CHECK_INT(user.client_authenticated, 1);
    CHECK_OK(ksasl_delegation_token_codec_create_request(
        c, 3, 100, "c-test", NULL, (const char *const[]){"User:bob"}, 1, -1, &req, &req_len));
    request_over(&user, a, req, req_len, T0, &resp);
    CHECK_OK(ksasl_delegation_token_codec_parse_create_response(c, 3, resp.data, resp.len, &t));
    CHECK_STR(ksasl_delegation_token_owner(t), "User:alice");
    CHECK_INT(ksasl_delegation_token_expiry_ms(t), T0 + 10000);

    /* Log in with the new token (SCRAM-SHA-512, tokenauth). */
    CHECK_OK(ksasl_mechanism_registry_new(&treg));
    CHECK_OK(ksasl_mechanism_registry_add_token_clients(treg, ksasl_delegation_token_id(t),
                                                        ksasl_delegation_token_hmac_base64(t)));
    tc = client_config(treg, "SCRAM-SHA-512");
    login_run(&tok, tc, sc, NULL, T0 + 1000);
    CHECK_INT(tok.client_authenticated, 1);
    CHECK_INT(conn_token_authenticated(tok.server), 1);
    {
        int64_t lifetime = 0;
        CHECK_OK(ksasl_client_connection_session(tok.client, &lifetime, NULL, NULL));
        CHECK_INT(lifetime, 9000);
    }
    /* On the token connection: 64 for every token API. */
    CHECK_OK(ksasl_delegation_token_codec_create_request(c, 1, 101, NULL, NULL, NULL, 0, -1, &req,
                                                         &req_len));
    request_over(&tok, a, req, req_len, T0 + 1000, &resp);
    CHECK_RC(
        ksasl_delegation_token_codec_parse_create_response(c, 1, resp.data, resp.len, &refused),
        KSASL_DELEGATION_TOKEN_REQUEST_NOT_ALLOWED);
    CHECK_INT(ksasl_delegation_token_codec_kafka_error(c), 64);
    CHECK(refused == NULL);
    CHECK_OK(
        ksasl_delegation_token_codec_describe_request(c, 3, 102, NULL, NULL, 0, &req, &req_len));
    request_over(&tok, a, req, req_len, T0 + 1000, &resp);
    CHECK_RC(ksasl_delegation_token_codec_parse_describe_response(c, 3, resp.data, resp.len, &l),
             KSASL_DELEGATION_TOKEN_REQUEST_NOT_ALLOWED);
    /* The user's connection may: describe shows the token. */
    request_over(&user, a, req, req_len, T0 + 1000, &resp);
    CHECK_OK(ksasl_delegation_token_codec_parse_describe_response(c, 3, resp.data, resp.len, &l));
    CHECK_INT(ksasl_delegation_token_list_count(l), 1);
    CHECK_STR(ksasl_delegation_token_renewer(ksasl_delegation_token_list_get(l, 0), 0),
              "User:bob");
    ksasl_delegation_token_list_free(l);

    login_free(&user);
    login_free(&tok);
    buf_free(&resp);
    ksasl_delegation_token_free(t);
    ksasl_delegation_token_codec_free(c);
    ksasl_client_config_free(uc);
    ksasl_client_config_free(tc);
    ksasl_server_config_free(sc);
    ksasl_mechanism_registry_free(sreg);
    ksasl_mechanism_registry_free(ureg);
    ksasl_mechanism_registry_free(treg);
    ksasl_credential_store_free(store);
    ksasl_token_authority_free(a);
}


/* A listener that serves the token APIs advertises them. */
static void api_versions(void) {
    static const struct {
        int16_t key;
        int max;
    } apis[] = {{38, 3}, {39, 2}, {40, 2}, {41, 3}};
    ksasl_mechanism_registry *sreg = NULL;
    ksasl_server_config *plain, *all, *kafka4;
    int min = -1, max = -1;

    CHECK_OK(ksasl_mechanism_registry_new(&sreg));
    CHECK_OK(ksasl_mechanism_registry_add_password_servers(sreg, NULL));
    plain = server_config(sreg);
    {
        ksasl_server_config_builder *b = server_builder(sreg);
        CHECK_OK(ksasl_server_config_builder_add_token_api_versions(b, 0));
        all = server_config_done(b);
        b = server_builder(sreg);
        CHECK_OK(ksasl_server_config_builder_add_token_api_versions(b, 1));
        CHECK_OK(
            ksasl_server_config_builder_add_token_api_versions(b, 7)); /* any non-zero: Kafka 4 */
        kafka4 = server_config_done(b);
    }
    for (size_t i = 0; i < sizeof apis / sizeof apis[0]; i++) {
        CHECK_INT(api_advertised(plain, apis[i].key, &min, &max), 0);
        CHECK_INT(api_advertised(all, apis[i].key, &min, &max), 1);
        CHECK_INT(min, 0);
        CHECK_INT(max, apis[i].max);
        CHECK_INT(api_advertised(kafka4, apis[i].key, &min, &max), 1);
        CHECK_INT(min, 1);
        CHECK_INT(max, apis[i].max);
    }
    /* The SASL APIs are still there. */
    CHECK_INT(api_advertised(all, 17, &min, &max), 1);
    CHECK_RC(ksasl_server_config_builder_add_token_api_versions(NULL, 0), KSASL_NULL_ARGUMENT);
    ksasl_server_config_free(plain);
    ksasl_server_config_free(all);
    ksasl_server_config_free(kafka4);
    ksasl_mechanism_registry_free(sreg);
}

/* ---- threads ---- */

#define TOKEN_THREADS 4

typedef struct {
    ksasl_token_authority *a; /* this thread's handle */
    const ksasl_mechanism_registry *sreg;
    int index;
    int ok;
} token_worker_arg;

static int token_worker(void *arg) {
    token_worker_arg *w = arg;
    char owner[32];
    snprintf(owner, sizeof owner, "User:w%d", w->index);
    for (int i = 0; i < 4; i++) {
        ksasl_delegation_token *t = NULL;
        ksasl_mechanism_registry *creg = NULL;
        const uint8_t *h = NULL;
        size_t hn = 0;
        int64_t e = 0;
        exchange x;
        if (ksasl_token_authority_create(w->a, owner, NULL, NULL, 0, 0, T0, &t) != KSASL_OK) {
            continue;
        }
        CHECK_OK(ksasl_delegation_token_hmac(t, &h, &hn));
        CHECK_OK(ksasl_token_authority_renew(w->a, h, hn, owner, 1000, T0 + i, &e));
        CHECK_INT(e, T0 + i + 1000);
        CHECK_OK(ksasl_mechanism_registry_new(&creg));
        CHECK_OK(ksasl_mechanism_registry_add_token_clients(creg, ksasl_delegation_token_id(t),
                                                            ksasl_delegation_token_hmac_base64(t)));
        exchange_run(&x, creg, w->sreg, "SCRAM-SHA-256", NULL, T0 + i);
        if (exchange_ok(&x)) {
            w->ok++;
        }
        exchange_free(&x);
        ksasl_mechanism_registry_free(creg);
        ksasl_delegation_token_free(t);
    }
    return 0;
}

static void threads(void) {
    ksasl_token_authority *a = authority("k", 100000, 10000);
    ksasl_mechanism_registry *sreg = NULL;
    ksasl_delegation_token_list *l = NULL;
    thrd_t th[TOKEN_THREADS];
    token_worker_arg args[TOKEN_THREADS];

    CHECK_OK(ksasl_mechanism_registry_new(&sreg));
    CHECK_OK(with_tokens(sreg, NULL, a));
    for (int i = 0; i < TOKEN_THREADS; i++) {
        args[i].a = NULL;
        CHECK_OK(ksasl_token_authority_share(a, &args[i].a));
        args[i].sreg = sreg;
        args[i].index = i;
        args[i].ok = 0;
        CHECK(thrd_create(&th[i], token_worker, &args[i]) == thrd_success);
    }
    for (int i = 0; i < TOKEN_THREADS; i++) {
        thrd_join(th[i], NULL);
        CHECK_INT(args[i].ok, 4);
        ksasl_token_authority_free(args[i].a);
    }
    CHECK_OK(ksasl_token_authority_describe(a, NULL, 0, &l));
    CHECK_INT(ksasl_delegation_token_list_count(l), TOKEN_THREADS * 4);
    ksasl_delegation_token_list_free(l);
    ksasl_mechanism_registry_free(sreg);
    ksasl_token_authority_free(a);
}

/* ---- NULL and invalid arguments ---- */

static void null_arguments(void) {
    static const char *const with_null[] = {"User:bob", NULL};
    static const char *const bad_utf8[] = {BAD_UTF8};
    static const uint8_t hmac[4] = {1, 2, 3, 4};
    ksasl_token_authority *a = authority("k", 100000, 10000);
    ksasl_delegation_token_codec *c = NULL;
    ksasl_mechanism_registry *reg = NULL;
    ksasl_refresher *refresher = NULL;
    ksasl_delegation_token *t = NULL;
    static char sentinel;
    ksasl_delegation_token *const tok_before = (ksasl_delegation_token *)(void *)&sentinel;
    ksasl_delegation_token_list *const list_before =
        (ksasl_delegation_token_list *)(void *)&sentinel;
    ksasl_delegation_token *out_t = tok_before;
    ksasl_delegation_token_list *out_l = list_before;
    const uint8_t *p = (const uint8_t *)&sentinel;
    const char *s = (const char *)&sentinel;
    const char *const *ids = (const char *const *)(void *)&sentinel;
    size_t n = 77;
    int64_t e = 77;

    CHECK_OK(ksasl_token_authority_create(a, "User:alice", NULL, NULL, 0, 0, T0, &t));

    /* Tokens. */
    CHECK_RC(ksasl_delegation_token_new(NULL, "User:a", NULL, hmac, 4, 0, 1, 2, &out_t),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_delegation_token_new("id", NULL, NULL, hmac, 4, 0, 1, 2, &out_t),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_delegation_token_new("id", "User:a", NULL, NULL, 4, 0, 1, 2, &out_t),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_delegation_token_new("id", "User:a", NULL, hmac, 4, 0, 1, 2, NULL),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_delegation_token_new(BAD_UTF8, "User:a", NULL, hmac, 4, 0, 1, 2, &out_t),
             KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_delegation_token_new("id", BAD_UTF8, NULL, hmac, 4, 0, 1, 2, &out_t),
             KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_delegation_token_new("id", "", NULL, hmac, 4, 0, 1, 2, &out_t),
             KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_delegation_token_new("id", "User:a", ":b", hmac, 4, 0, 1, 2, &out_t),
             KSASL_INVALID_ARGUMENT);
    CHECK(strstr(ksasl_last_constructor_error(), "requester") != NULL);
    CHECK(out_t == tok_before);
    /* An empty HMAC may be NULL. */
    CHECK_OK(ksasl_delegation_token_new("id", "User:a", "User:b", NULL, 0, 0, 1, 2, &out_t));
    CHECK_OK(ksasl_delegation_token_hmac(out_t, &p, &n));
    CHECK_INT(n, 0);
    CHECK_STR(ksasl_delegation_token_hmac_base64(out_t), "");
    CHECK_STR(ksasl_delegation_token_requester(out_t), "User:b");
    ksasl_delegation_token_free(out_t);
    out_t = tok_before;
    CHECK_RC(ksasl_delegation_token_renewed(NULL, 1, &out_t), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_delegation_token_renewed(t, 1, NULL), KSASL_NULL_ARGUMENT);
    CHECK(out_t == tok_before);
    ksasl_delegation_token_free(NULL);
    CHECK(ksasl_delegation_token_id(NULL) == NULL);
    CHECK(ksasl_delegation_token_hmac_base64(NULL) == NULL);
    CHECK(ksasl_delegation_token_owner(NULL) == NULL);
    CHECK(ksasl_delegation_token_requester(NULL) == NULL);
    CHECK_INT(ksasl_delegation_token_renewer_count(NULL), 0);
    CHECK(ksasl_delegation_token_renewer(NULL, 0) == NULL);
    CHECK_INT(ksasl_delegation_token_issue_ms(NULL), -1);
    CHECK_INT(ksasl_delegation_token_expiry_ms(NULL), -1);
    CHECK_INT(ksasl_delegation_token_max_ms(NULL), -1);
    n = 77;
    p = (const uint8_t *)&sentinel;
    CHECK_RC(ksasl_delegation_token_hmac(NULL, &p, &n), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_delegation_token_hmac(t, NULL, &n), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_delegation_token_hmac(t, &p, NULL), KSASL_NULL_ARGUMENT);
    CHECK(p == (const uint8_t *)&sentinel && n == 77);
    ksasl_delegation_token_list_free(NULL);
    CHECK_INT(ksasl_delegation_token_list_count(NULL), 0);
    CHECK(ksasl_delegation_token_list_get(NULL, 0) == NULL);

    /* The authority. */
    {
        ksasl_token_authority *const before = (ksasl_token_authority *)(void *)&sentinel;
        ksasl_token_authority *b = before;
        CHECK_RC(ksasl_token_authority_new(NULL, 1, 1, 1, &b), KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_token_authority_new("k", 1, 1, 1, NULL), KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_token_authority_new(BAD_UTF8, 1, 1, 1, &b), KSASL_INVALID_ARGUMENT);
        CHECK_RC(ksasl_token_authority_share(NULL, &b), KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_token_authority_share(a, NULL), KSASL_NULL_ARGUMENT);
        CHECK(b == before);
    }
    ksasl_token_authority_free(NULL);
    CHECK_STR(ksasl_token_authority_last_error(NULL), "");
    CHECK_INT(ksasl_token_authority_next_sweep_ms(NULL), -1);

    CHECK_RC(ksasl_token_authority_create(NULL, "User:a", NULL, NULL, 0, 0, T0, &out_t),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_token_authority_create(a, NULL, NULL, NULL, 0, 0, T0, &out_t),
             KSASL_NULL_ARGUMENT);
    CHECK(strstr(ksasl_token_authority_last_error(a), "owner") != NULL);
    CHECK_RC(ksasl_token_authority_create(a, "User:a", NULL, NULL, 1, 0, T0, &out_t),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_token_authority_create(a, "User:a", NULL, with_null, 2, 0, T0, &out_t),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_token_authority_create(a, "User:a", NULL, NULL, 0, 0, T0, NULL),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_token_authority_create(a, BAD_UTF8, NULL, NULL, 0, 0, T0, &out_t),
             KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_token_authority_create(a, "User:a", BAD_UTF8, NULL, 0, 0, T0, &out_t),
             KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_token_authority_create(a, "User:a", NULL, bad_utf8, 1, 0, T0, &out_t),
             KSASL_INVALID_ARGUMENT);
    CHECK(out_t == tok_before);

    CHECK_RC(ksasl_token_authority_renew(NULL, hmac, 4, "User:a", 0, T0, &e),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_token_authority_renew(a, NULL, 4, "User:a", 0, T0, &e), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_token_authority_renew(a, hmac, 4, NULL, 0, T0, &e), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_token_authority_renew(a, hmac, 4, "User:a", 0, T0, NULL), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_token_authority_renew(a, hmac, 4, BAD_UTF8, 0, T0, &e),
             KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_token_authority_expire(NULL, hmac, 4, "User:a", 0, T0, &e),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_token_authority_expire(a, NULL, 4, "User:a", 0, T0, &e), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_token_authority_expire(a, hmac, 4, NULL, 0, T0, &e), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_token_authority_expire(a, hmac, 4, "User:a", 0, T0, NULL),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_token_authority_expire(a, hmac, 4, "a:", 0, T0, &e), KSASL_INVALID_ARGUMENT);
    CHECK_INT(e, 77);

    CHECK_RC(ksasl_token_authority_describe(NULL, NULL, 0, &out_l), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_token_authority_describe(a, NULL, 1, &out_l), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_token_authority_describe(a, with_null, 2, &out_l), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_token_authority_describe(a, NULL, 0, NULL), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_token_authority_describe(a, bad_utf8, 1, &out_l), KSASL_INVALID_ARGUMENT);
    CHECK(out_l == list_before);

    n = 77;
    CHECK_RC(ksasl_token_authority_sweep(NULL, T0, &ids, &n), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_token_authority_sweep(a, T0, &ids, NULL), KSASL_NULL_ARGUMENT);
    CHECK(ids == (const char *const *)(void *)&sentinel && n == 77);

    p = (const uint8_t *)&sentinel;
    CHECK_RC(ksasl_token_authority_hmac(NULL, "id", &p, &n), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_token_authority_hmac(a, NULL, &p, &n), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_token_authority_hmac(a, "id", NULL, &n), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_token_authority_hmac(a, "id", &p, NULL), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_token_authority_hmac(a, BAD_UTF8, &p, &n), KSASL_INVALID_ARGUMENT);
    CHECK(p == (const uint8_t *)&sentinel && n == 77);

    CHECK_RC(ksasl_token_authority_export_records(NULL, &s), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_token_authority_export_records(a, NULL), KSASL_NULL_ARGUMENT);
    CHECK(s == (const char *)&sentinel);
    CHECK_RC(ksasl_token_authority_import_records(NULL, "[]", &n), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_token_authority_import_records(a, NULL, &n), KSASL_NULL_ARGUMENT);
    CHECK_OK(ksasl_token_authority_import_records(a, "[]", NULL));
    CHECK_OK(ksasl_token_authority_import_records(a, "[]", &n));
    CHECK_INT(n, 0);

    {
        static const uint8_t frame[] = {0, 39, 0, 2};
        size_t len = 77;
        p = (const uint8_t *)&sentinel;
        CHECK_RC(ksasl_token_authority_handle_request(NULL, frame, 4, "User:a", 0, T0, &p, &len),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_token_authority_handle_request(a, NULL, 4, "User:a", 0, T0, &p, &len),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_token_authority_handle_request(a, frame, 4, NULL, 0, T0, &p, &len),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_token_authority_handle_request(a, frame, 4, "User:a", 0, T0, NULL, &len),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_token_authority_handle_request(a, frame, 4, "User:a", 0, T0, &p, NULL),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_token_authority_handle_request(a, frame, 4, BAD_UTF8, 0, T0, &p, &len),
                 KSASL_INVALID_ARGUMENT);
        CHECK(ksasl_token_authority_handle_request(a, NULL, 0, "User:a", 0, T0, &p, &len) !=
              KSASL_OK);
        CHECK(p == (const uint8_t *)&sentinel && len == 77);
    }

    /* Registries and refreshers. */
    CHECK_OK(ksasl_mechanism_registry_new(&reg));
    CHECK_OK(ksasl_refresher_new(NULL, &refresher));
    CHECK_RC(ksasl_mechanism_registry_set_token_authority(NULL, a), KSASL_NULL_ARGUMENT);
    /* A NULL authority sends token logins back to the user lookup; it adds no mechanism. */
    CHECK_OK(ksasl_mechanism_registry_set_token_authority(reg, NULL));
    CHECK_INT(ksasl_mechanism_registry_mechanism_count(reg, 1), 0);
    CHECK_RC(ksasl_mechanism_registry_add_refreshing_password_clients(NULL, refresher),
             KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_mechanism_registry_add_refreshing_password_clients(reg, NULL),
             KSASL_NULL_ARGUMENT);
    CHECK(strstr(ksasl_mechanism_registry_last_error(reg), "refresher") != NULL);
    CHECK_INT(ksasl_mechanism_registry_mechanism_count(reg, 0), 0);
    CHECK_RC(ksasl_refresher_set_delegation_token(NULL, t, T0), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_refresher_set_delegation_token(refresher, NULL, T0), KSASL_NULL_ARGUMENT);
    CHECK(strstr(ksasl_refresher_last_error(refresher), "token") != NULL);
    CHECK_INT(ksasl_refresher_generation(refresher), 0);
    /* A refreshing client with nothing installed yet cannot start. */
    CHECK_OK(ksasl_mechanism_registry_add_refreshing_password_clients(reg, refresher));
    {
        ksasl_client_exchange *cl = NULL;
        CHECK_RC(ksasl_client_exchange_new(reg, "SCRAM-SHA-256", &cl), KSASL_NO_VALID_CREDENTIAL);
        CHECK(cl == NULL);
    }
    CHECK_INT(conn_token_authenticated(NULL), 0);

    /* The codec. */
    CHECK_RC(ksasl_delegation_token_codec_new(NULL), KSASL_NULL_ARGUMENT);
    ksasl_delegation_token_codec_free(NULL);
    CHECK_STR(ksasl_delegation_token_codec_last_error(NULL), "");
    CHECK_INT(ksasl_delegation_token_codec_kafka_error(NULL), 0);
    CHECK_OK(ksasl_delegation_token_codec_new(&c));
    {
        size_t len = 77;
        p = (const uint8_t *)&sentinel;
        CHECK_RC(ksasl_delegation_token_codec_create_request(NULL, 3, 1, NULL, NULL, NULL, 0, -1,
                                                             &p, &len),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_delegation_token_codec_create_request(c, 3, 1, NULL, NULL, NULL, 0, -1, NULL,
                                                             &len),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(
            ksasl_delegation_token_codec_create_request(c, 3, 1, NULL, NULL, NULL, 0, -1, &p, NULL),
            KSASL_NULL_ARGUMENT);
        CHECK_RC(
            ksasl_delegation_token_codec_create_request(c, 3, 1, NULL, NULL, NULL, 2, -1, &p, &len),
            KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_delegation_token_codec_create_request(c, 3, 1, NULL, NULL, with_null, 2, -1,
                                                             &p, &len),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_delegation_token_codec_create_request(c, 3, 1, BAD_UTF8, NULL, NULL, 0, -1,
                                                             &p, &len),
                 KSASL_INVALID_ARGUMENT);
        CHECK_RC(ksasl_delegation_token_codec_create_request(c, 3, 1, NULL, BAD_UTF8, NULL, 0, -1,
                                                             &p, &len),
                 KSASL_INVALID_ARGUMENT);
        CHECK_RC(
            ksasl_delegation_token_codec_create_request(c, 3, 1, NULL, "", NULL, 0, -1, &p, &len),
            KSASL_INVALID_ARGUMENT);
        CHECK_RC(ksasl_delegation_token_codec_create_request(c, 3, 1, NULL, NULL, bad_utf8, 1, -1,
                                                             &p, &len),
                 KSASL_INVALID_ARGUMENT);

        CHECK_RC(
            ksasl_delegation_token_codec_renew_request(NULL, 2, 1, NULL, hmac, 4, -1, &p, &len),
            KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_delegation_token_codec_renew_request(c, 2, 1, NULL, NULL, 4, -1, &p, &len),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_delegation_token_codec_renew_request(c, 2, 1, NULL, hmac, 4, -1, NULL, &len),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_delegation_token_codec_renew_request(c, 2, 1, NULL, hmac, 4, -1, &p, NULL),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(
            ksasl_delegation_token_codec_renew_request(c, 2, 1, BAD_UTF8, hmac, 4, -1, &p, &len),
            KSASL_INVALID_ARGUMENT);

        CHECK_RC(
            ksasl_delegation_token_codec_expire_request(NULL, 2, 1, NULL, hmac, 4, -1, &p, &len),
            KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_delegation_token_codec_expire_request(c, 2, 1, NULL, NULL, 4, -1, &p, &len),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(
            ksasl_delegation_token_codec_expire_request(c, 2, 1, NULL, hmac, 4, -1, NULL, &len),
            KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_delegation_token_codec_expire_request(c, 2, 1, NULL, hmac, 4, -1, &p, NULL),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(
            ksasl_delegation_token_codec_expire_request(c, 2, 1, BAD_UTF8, hmac, 4, -1, &p, &len),
            KSASL_INVALID_ARGUMENT);

        CHECK_RC(ksasl_delegation_token_codec_describe_request(NULL, 3, 1, NULL, NULL, 0, &p, &len),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_delegation_token_codec_describe_request(c, 3, 1, NULL, NULL, 1, &p, &len),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(
            ksasl_delegation_token_codec_describe_request(c, 3, 1, NULL, with_null, 2, &p, &len),
            KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_delegation_token_codec_describe_request(c, 3, 1, NULL, NULL, 0, NULL, &len),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_delegation_token_codec_describe_request(c, 3, 1, NULL, NULL, 0, &p, NULL),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(
            ksasl_delegation_token_codec_describe_request(c, 3, 1, BAD_UTF8, NULL, 0, &p, &len),
            KSASL_INVALID_ARGUMENT);
        CHECK_RC(
            ksasl_delegation_token_codec_describe_request(c, 3, 1, NULL, bad_utf8, 1, &p, &len),
            KSASL_INVALID_ARGUMENT);
        CHECK(p == (const uint8_t *)&sentinel && len == 77);

        CHECK_RC(ksasl_delegation_token_codec_parse_create_response(NULL, 3, hmac, 4, &out_t),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_delegation_token_codec_parse_create_response(c, 3, NULL, 4, &out_t),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_delegation_token_codec_parse_create_response(c, 3, hmac, 4, NULL),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_delegation_token_codec_parse_expiry_response(NULL, 2, hmac, 4, &e),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_delegation_token_codec_parse_expiry_response(c, 2, NULL, 4, &e),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_delegation_token_codec_parse_expiry_response(c, 2, hmac, 4, NULL),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_delegation_token_codec_parse_describe_response(NULL, 3, hmac, 4, &out_l),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_delegation_token_codec_parse_describe_response(c, 3, NULL, 4, &out_l),
                 KSASL_NULL_ARGUMENT);
        CHECK_RC(ksasl_delegation_token_codec_parse_describe_response(c, 3, hmac, 4, NULL),
                 KSASL_NULL_ARGUMENT);
        CHECK(strstr(ksasl_delegation_token_codec_last_error(c), "list") != NULL);
        CHECK(out_t == tok_before && out_l == list_before && e == 77);
    }

    ksasl_delegation_token_codec_free(c);
    ksasl_mechanism_registry_free(reg);
    ksasl_refresher_free(refresher);
    ksasl_delegation_token_free(t);
    ksasl_token_authority_free(a);
}

void test_tokens(void) {
    reference_vector();
    configuration();
    rules();
    describe_and_sweep();
    records();
    refresher_login();
    authority_logins();
    codec();
    api_versions();
    over_connections();
    threads();
    null_arguments();
}
