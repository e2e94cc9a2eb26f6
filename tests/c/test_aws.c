/*
 * AWS_MSK_IAM through the C ABI: credentials and key stores, an AWS_MSK_IAM client and
 * verifying server through the Kafka drivers (fixed credentials and a refresher), MSK's
 * presigned OAUTHBEARER token (the bytes of aws-msk-iam-sasl-signer-python, from
 * tests/vectors/aws_msk_iam.json) and an OAUTHBEARER login with it, refusals, and bad
 * arguments. (The rules are tests/aws_msk_iam.rs's.)
 */
#include "check.h"

/* 2026-12-03T12:34:56Z, the vectors' time. */
#define NOW 1796301296000LL

/* aws-msk-iam-sasl-signer-python 1.0.2's token for AKIDEXAMPLE in us-east-1 at NOW. */
static const char SIGNER_TOKEN[] =
    "aHR0cHM6Ly9rYWZrYS51cy1lYXN0LTEuYW1hem9uYXdzLmNvbS8_QWN0aW9uPWthZmthLWNsdXN0ZXIlM0FDb25uZWN0JlgtQW16LUFsZ29yaXRobT1BV1M0LUhNQUMtU0hBMjU2JlgtQW16LUNyZWRlbnRpYWw9QUtJREVYQU1QTEUlMkYyMDI2MTIwMyUyRnVzLWVhc3QtMSUyRmthZmthLWNsdXN0ZXIlMkZhd3M0X3JlcXVlc3QmWC1BbXotRGF0ZT0yMDI2MTIwM1QxMjM0NTZaJlgtQW16LUV4cGlyZXM9OTAwJlgtQW16LVNpZ25lZEhlYWRlcnM9aG9zdCZYLUFtei1TaWduYXR1cmU9YmM0MGQxNjZkNWQ3OThlYzVkMjBjMDNkNjNmMjYyNDU1ODI1OWY2OWYzMzQ0YjM4Mjk4NjJkYzdjZDViZDJhOSZVc2VyLUFnZW50PWF3cy1tc2staWFtLXNhc2wtc2lnbmVyLXB5dGhvbiUyRjEuMC4y";

static ksasl_aws_credentials *creds(const char *id, const char *secret, const char *token, int64_t expiry) {
    ksasl_aws_credentials *c = NULL;
    CHECK_OK(ksasl_aws_credentials_new(id, secret, token, expiry, &c));
    return c;
}

/* A server registry verifying AWS_MSK_IAM and MSK tokens against `keys` in us-east-1 (for
 * `host` only, when given). */
static ksasl_mechanism_registry *aws_server(ksasl_aws_key_store *keys, const char *host) {
    ksasl_mechanism_registry *r = NULL;
    const char *hosts[] = {host};
    CHECK_OK(ksasl_mechanism_registry_new(&r));
    CHECK_OK(ksasl_mechanism_registry_add_aws_msk_iam_server(r, keys, "us-east-1", host ? hosts : NULL,
                                                             host ? 1 : 0));
    CHECK_OK(ksasl_mechanism_registry_add_msk_oauthbearer_server(r, keys, "us-east-1"));
    return r;
}

/* A refresher with Kafka's default schedule. */
static ksasl_refresher *new_refresher(void) {
    ksasl_refresher_config_builder *rb = NULL;
    ksasl_refresher_config *rc = NULL;
    ksasl_refresher *r = NULL;
    CHECK_OK(ksasl_refresher_config_builder_new(&rb));
    CHECK_OK(ksasl_refresher_config_builder_build(rb, &rc));
    CHECK_OK(ksasl_refresher_new(rc, &r));
    ksasl_refresher_config_builder_free(rb);
    ksasl_refresher_config_free(rc);
    return r;
}

/* A client registry with one AWS_MSK_IAM client for `host` in us-east-1, signing with `c`. */
static ksasl_mechanism_registry *aws_client(const char *host, const ksasl_aws_credentials *c, const char *user_agent,
                                            const char *key_order) {
    ksasl_mechanism_registry *r = NULL;
    CHECK_OK(ksasl_mechanism_registry_new(&r));
    CHECK_OK(ksasl_mechanism_registry_add_aws_msk_iam_client(r, host, "us-east-1", c, NULL, user_agent, key_order));
    return r;
}

static link_outcome login(const ksasl_mechanism_registry *creg, const char *mech,
                          const ksasl_mechanism_registry *sreg, int64_t now, const char *secret) {
    ksasl_server_config_builder *sb = server_builder(sreg);
    CHECK_OK(ksasl_server_config_builder_set_max_reauth_ms(sb, NULL, 3600000));
    ksasl_server_config *sc = server_config_done(sb);
    ksasl_client_config *cc = client_config_done(client_builder(creg, mech));
    link_outcome o = link_authenticate(cc, sc, now, secret);
    ksasl_client_config_free(cc);
    ksasl_server_config_free(sc);
    return o;
}

static void aws_msk_iam_logins(void) {
    ksasl_aws_key_store *keys = NULL;
    ksasl_mechanism_registry *sreg, *creg = NULL, *wrong = NULL;
    ksasl_aws_credentials *alice = creds("AKIAALICE", "alice-secret", NULL, -1);
    ksasl_aws_credentials *temp = creds("ASIATEMP", "temp-secret", "temp-token", NOW + 1800000);
    ksasl_aws_credentials *bad = creds("AKIAALICE", "not-alices-secret", NULL, -1);
    int removed = -1;
    link_outcome o;

    CHECK_OK(ksasl_aws_key_store_new(&keys));
    CHECK_OK(ksasl_aws_key_store_add(keys, alice, "arn:aws:iam::123456789012:user/alice"));
    CHECK_OK(ksasl_aws_key_store_add(keys, temp, "temp"));
    sreg = aws_server(keys, "b-1.example");

    creg = aws_client("b-1.example", alice, NULL, "kafka-python");
    o = login(creg, "AWS_MSK_IAM", sreg, NOW, "alice-secret");
    CHECK(o.ok);
    CHECK_STR(o.principal, "User:arn:aws:iam::123456789012:user/alice");
    CHECK_INT(o.lifetime_ms, 3600000);
    ksasl_mechanism_registry_free(creg);

    /* Temporary credentials: the session ends with them. */
    creg = aws_client("b-1.example", temp, "c-test", NULL);
    o = login(creg, "AWS_MSK_IAM", sreg, NOW, "temp-secret");
    CHECK(o.ok);
    CHECK_STR(o.principal, "User:temp");
    CHECK_INT(o.lifetime_ms, 1800000);
    ksasl_mechanism_registry_free(creg);

    /* A wrong secret, and a host the server does not serve: refused, no secret in the text. */
    wrong = aws_client("b-1.example", bad, NULL, NULL);
    o = login(wrong, "AWS_MSK_IAM", sreg, NOW, "not-alices-secret");
    CHECK(!o.ok);
    ksasl_mechanism_registry_free(wrong);
    wrong = aws_client("b-2.example", alice, NULL, NULL);
    o = login(wrong, "AWS_MSK_IAM", sreg, NOW, "alice-secret");
    CHECK(!o.ok);
    ksasl_mechanism_registry_free(wrong);

    /* A removed key no longer logs in. */
    CHECK_OK(ksasl_aws_key_store_remove(keys, "AKIAALICE", &removed));
    CHECK_INT(removed, 1);
    CHECK_OK(ksasl_aws_key_store_remove(keys, "AKIAALICE", &removed));
    CHECK_INT(removed, 0);
    creg = aws_client("b-1.example", alice, NULL, NULL);
    o = login(creg, "AWS_MSK_IAM", sreg, NOW, "alice-secret");
    CHECK(!o.ok);
    ksasl_mechanism_registry_free(creg);

    ksasl_mechanism_registry_free(sreg);
    ksasl_aws_key_store_free(keys);
    ksasl_aws_credentials_free(alice);
    ksasl_aws_credentials_free(temp);
    ksasl_aws_credentials_free(bad);
}

/* A refresher holds the credentials: the client signs with the newest. */
static void refresher_credentials(void) {
    ksasl_refresher *r = new_refresher();
    ksasl_aws_key_store *keys = NULL;
    ksasl_mechanism_registry *sreg, *creg = NULL;
    ksasl_aws_credentials *one = creds("ASIAONE", "one", "t1", NOW + 3600000);
    ksasl_aws_credentials *two = creds("ASIATWO", "two", "t2", NOW + 7200000);
    ksasl_aws_credentials *forever = creds("AKIAFOREVER", "f", NULL, -1);
    uint64_t generation = 0;

    CHECK_RC(ksasl_refresher_set_aws_credentials(r, forever, "alice", NOW, &generation),
             KSASL_INVALID_CREDENTIAL_EXPIRY);
    CHECK_OK(ksasl_refresher_set_aws_credentials(r, one, "alice", NOW, &generation));
    CHECK_INT(generation, 1);

    CHECK_OK(ksasl_aws_key_store_new(&keys));
    CHECK_OK(ksasl_aws_key_store_add(keys, one, "alice"));
    CHECK_OK(ksasl_aws_key_store_add(keys, two, "alice"));
    sreg = aws_server(keys, NULL);
    CHECK_OK(ksasl_mechanism_registry_new(&creg));
    CHECK_OK(ksasl_mechanism_registry_add_aws_msk_iam_client(creg, "b-1", "us-east-1", NULL, r, NULL, NULL));
    CHECK(login(creg, "AWS_MSK_IAM", sreg, NOW, "one").ok);
    CHECK_OK(ksasl_refresher_set_aws_credentials(r, two, "alice", NOW + 1000, NULL));
    CHECK_OK(ksasl_aws_key_store_remove(keys, "ASIAONE", NULL));
    link_outcome o = login(creg, "AWS_MSK_IAM", sreg, NOW + 2000, "two");
    CHECK(o.ok);
    CHECK_INT(o.lifetime_ms, 3600000);

    ksasl_mechanism_registry_free(creg);
    ksasl_mechanism_registry_free(sreg);
    ksasl_aws_key_store_free(keys);
    ksasl_refresher_free(r);
    ksasl_aws_credentials_free(one);
    ksasl_aws_credentials_free(two);
    ksasl_aws_credentials_free(forever);
}

/* MSK's OAUTHBEARER tokens: the signer's bytes, and a login with them. */
static void msk_tokens(void) {
    ksasl_aws_credentials *c = creds("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", NULL, -1);
    ksasl_oauth_token *t = NULL;
    ksasl_aws_key_store *keys = NULL;
    ksasl_mechanism_registry *sreg, *creg = NULL;

    CHECK_OK(ksasl_msk_token_new("us-east-1", c, NULL, "aws-msk-iam-sasl-signer-python/1.0.2", NOW, &t));
    CHECK_STR(ksasl_oauth_token_value(t), SIGNER_TOKEN);
    CHECK_INT(ksasl_oauth_token_expiry_ms(t), NOW + 900000);
    ksasl_oauth_token_free(t);

    CHECK_OK(ksasl_aws_key_store_new(&keys));
    CHECK_OK(ksasl_aws_key_store_add(keys, c, "example"));
    sreg = aws_server(keys, NULL);
    CHECK_OK(ksasl_mechanism_registry_new(&creg));
    CHECK_OK(ksasl_mechanism_registry_add_msk_oauthbearer_client(creg, "us-east-1", c, NULL, NULL));
    link_outcome o = login(creg, "OAUTHBEARER", sreg, NOW, "wJalrXUtnFEMI");
    CHECK(o.ok);
    CHECK_STR(o.principal, "User:example");
    CHECK_INT(o.lifetime_ms, 900000);
    ksasl_mechanism_registry_free(creg);
    ksasl_mechanism_registry_free(sreg);
    ksasl_aws_key_store_free(keys);
    ksasl_aws_credentials_free(c);
}

static void bad_arguments(void) {
    ksasl_aws_credentials *c = NULL;
    ksasl_aws_key_store *keys = NULL;
    ksasl_mechanism_registry *r = NULL;
    ksasl_refresher *ref = new_refresher();
    ksasl_oauth_token *t = NULL;

    CHECK_RC(ksasl_aws_credentials_new("", "s", NULL, -1, &c), KSASL_INVALID_ARGUMENT);
    CHECK(c == NULL);
    CHECK_RC(ksasl_aws_credentials_new("AK/ID", "s", NULL, -1, &c), KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_aws_credentials_new("AKID", "", NULL, -1, &c), KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_aws_credentials_new("AKID", "s", "", -1, &c), KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_aws_credentials_new(NULL, "s", NULL, -1, &c), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_aws_credentials_new("AKID", "s", NULL, -1, NULL), KSASL_NULL_ARGUMENT);
    CHECK_OK(ksasl_aws_credentials_new("AKID", "s", NULL, -1, &c));
    CHECK_OK(ksasl_aws_key_store_new(&keys));
    CHECK_RC(ksasl_aws_key_store_add(keys, c, ""), KSASL_INVALID_ARGUMENT);
    CHECK(strlen(ksasl_aws_key_store_last_error(keys)) > 0);
    CHECK_RC(ksasl_aws_key_store_add(keys, NULL, "p"), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_aws_key_store_add(NULL, c, "p"), KSASL_NULL_ARGUMENT);

    CHECK_OK(ksasl_mechanism_registry_new(&r));
    /* Exactly one credential source. */
    CHECK_RC(ksasl_mechanism_registry_add_aws_msk_iam_client(r, "h", "us-east-1", NULL, NULL, NULL, NULL),
             KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_mechanism_registry_add_aws_msk_iam_client(r, "h", "us-east-1", c, ref, NULL, NULL),
             KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_mechanism_registry_add_aws_msk_iam_client(r, "h", "us-east-1", c, NULL, NULL, "yaml"),
             KSASL_INVALID_ARGUMENT);
    CHECK(occurrences(ksasl_mechanism_registry_last_error(r), "java or kafka-python") == 1);
    CHECK_RC(ksasl_mechanism_registry_add_msk_oauthbearer_client(r, "us-east-1", NULL, NULL, NULL),
             KSASL_INVALID_ARGUMENT);
    CHECK_RC(ksasl_mechanism_registry_add_aws_msk_iam_server(r, NULL, "us-east-1", NULL, 0), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_mechanism_registry_add_msk_oauthbearer_server(r, keys, NULL), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_msk_token_new("us east", c, NULL, NULL, NOW, &t), KSASL_INVALID_ARGUMENT);
    CHECK(t == NULL);
    /* An empty refresher has nothing to sign with. */
    CHECK_RC(ksasl_msk_token_new("us-east-1", NULL, ref, NULL, NOW, &t), KSASL_NO_VALID_CREDENTIAL);
    CHECK_RC(ksasl_refresher_set_aws_credentials(ref, NULL, "p", NOW, NULL), KSASL_NULL_ARGUMENT);

    ksasl_mechanism_registry_free(r);
    ksasl_refresher_free(ref);
    ksasl_aws_key_store_free(keys);
    ksasl_aws_credentials_free(c);
    ksasl_aws_credentials_free(NULL);
    ksasl_aws_key_store_free(NULL);
}

void test_aws(void) {
    aws_msk_iam_logins();
    refresher_credentials();
    msk_tokens();
    bad_arguments();
}
