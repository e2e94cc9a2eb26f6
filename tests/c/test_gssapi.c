/*
 * GSSAPI without a KDC: the library loads, the settings are checked, a missing keytab is
 * reported with its own code, the login's schedule is empty before a login, and NULL handles
 * are refused. Exchanges against a real KDC and broker are in tests/broker (kafka_client.c)
 * and tests/gssapi.rs.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define NOW ((int64_t)1700000000000)

void test_gssapi(void) {
    ksasl_kerberos_login *login = NULL;
    ksasl_mechanism_registry *r = NULL;
    ksasl_server_config_builder *b = NULL;
    int logged_in = -1;

    if (getenv("KSASL_TEST_NO_GSSAPI") != NULL) {
        /* tests/nokrb5/run.sh hides the MIT library: GSSAPI says what is missing, and
         * everything else (the rest of this suite) works. */
        CHECK_INT(ksasl_gssapi_available(), 0);
        CHECK_OK(ksasl_mechanism_registry_new(&r));
        CHECK_RC(ksasl_mechanism_registry_add_gssapi_server(r, NULL, "kafka/localhost@EXAMPLE.COM",
                                                            NULL, NULL, 1),
                 KSASL_GSSAPI_UNAVAILABLE);
        CHECK(strstr(ksasl_mechanism_registry_last_error(r), "libgssapi-krb5-2") != NULL);
        CHECK_OK(ksasl_kerberos_login_new("alice@EXAMPLE.COM", "/tmp/a.keytab", NULL, -1, -1, -1,
                                          &login));
        CHECK_RC(ksasl_kerberos_login_login(login, NOW), KSASL_GSSAPI_UNAVAILABLE);
        ksasl_kerberos_login_free(login);
        ksasl_mechanism_registry_free(r);
        return;
    }
    CHECK_INT(ksasl_gssapi_available(), 1);

    /* A keytab login needs its principal; negative schedule values keep Kafka's defaults,
     * invalid ones are refused. */
    CHECK_RC(ksasl_kerberos_login_new(NULL, "/tmp/a.keytab", NULL, -1, -1, -1, &login),
             KSASL_INVALID_CONFIG);
    CHECK(login == NULL);
    CHECK(strstr(ksasl_last_constructor_error(), "principal") != NULL);
    CHECK_RC(ksasl_kerberos_login_new("alice@EXAMPLE.COM", "/tmp/a.keytab", NULL, 1.5, -1, -1,
                                      &login),
             KSASL_INVALID_CONFIG);
    CHECK_OK(ksasl_kerberos_login_new("alice@EXAMPLE.COM", "/nonexistent/alice.keytab", NULL,
                                      -1, -1, -1, &login));
    CHECK_INT(ksasl_kerberos_login_count(login), 0);
    CHECK_INT(ksasl_kerberos_login_ticket_end_ms(login), -1);
    CHECK_INT(ksasl_kerberos_login_next_login_ms(login), 0); /* due at once */

    /* The login fails with its own code; a retry is planned. */
    CHECK_RC(ksasl_kerberos_login_login(login, NOW), KSASL_KERBEROS_LOGIN_FAILED);
    CHECK(strstr(ksasl_kerberos_login_last_error(login), "alice@EXAMPLE.COM") != NULL);
    CHECK(ksasl_kerberos_login_next_login_ms(login) >= NOW + 1000);
    CHECK_OK(ksasl_kerberos_login_poll(login, NOW, &logged_in));
    CHECK_INT(logged_in, 0); /* not due yet */
    CHECK_OK(ksasl_kerberos_login_poll(login, NOW, NULL));

    /* A client on a login without a ticket is accepted; its exchange fails at start. */
    CHECK_OK(ksasl_mechanism_registry_new(&r));
    CHECK_RC(ksasl_mechanism_registry_add_gssapi_client(r, login, "", "localhost", 0),
             KSASL_INVALID_CONFIG);
    CHECK_RC(ksasl_mechanism_registry_add_gssapi_client(r, NULL, "kafka", "localhost", 0),
             KSASL_NULL_ARGUMENT);
    CHECK_OK(ksasl_mechanism_registry_add_gssapi_client(r, login, "kafka", "localhost", 0));
    CHECK_INT(ksasl_mechanism_registry_mechanism_count(r, 0), 1);
    {
        ksasl_client_exchange *x = NULL;
        const uint8_t *out = NULL;
        size_t out_len = 0;
        int done = 0;
        CHECK_OK(ksasl_client_exchange_new(r, "GSSAPI", &x));
        CHECK_RC(ksasl_client_exchange_start(x, NOW, &out, &out_len, &done),
                 KSASL_KERBEROS_LOGIN_FAILED);
        ksasl_client_exchange_free(x);
    }

    /* A server whose keytab is missing is refused when it is added; bad rules too. */
    CHECK(ksasl_mechanism_registry_add_gssapi_server(r, "/nonexistent/kafka.keytab",
                                                     "kafka/localhost@EXAMPLE.COM", NULL, NULL,
                                                     1) != KSASL_OK);
    CHECK_RC(ksasl_mechanism_registry_add_gssapi_server(r, NULL, "kafka/localhost@EXAMPLE.COM",
                                                        NULL, "RULE:[1:$1", 1),
             KSASL_INVALID_CONFIG);
    CHECK_RC(ksasl_mechanism_registry_add_gssapi_server(r, NULL, NULL, NULL, NULL, 1),
             KSASL_INVALID_CONFIG);
    CHECK_INT(ksasl_mechanism_registry_mechanism_count(r, 1), 0);

    CHECK_OK(ksasl_server_config_builder_new(r, &b));
    CHECK_OK(ksasl_server_config_builder_set_legacy_gssapi(b, 1));
    CHECK_RC(ksasl_server_config_builder_set_legacy_gssapi(NULL, 1), KSASL_NULL_ARGUMENT);
    ksasl_server_config_builder_free(b);

    /* NULL handles. */
    CHECK_RC(ksasl_kerberos_login_login(NULL, NOW), KSASL_NULL_ARGUMENT);
    CHECK_RC(ksasl_kerberos_login_poll(NULL, NOW, &logged_in), KSASL_NULL_ARGUMENT);
    CHECK_INT(ksasl_kerberos_login_next_login_ms(NULL), -1);
    CHECK_INT(ksasl_kerberos_login_ticket_end_ms(NULL), -1);
    CHECK_INT(ksasl_kerberos_login_count(NULL), 0);
    CHECK_STR(ksasl_kerberos_login_last_error(NULL), "");
    ksasl_kerberos_login_free(NULL);

    /* The registry keeps the login alive. */
    ksasl_kerberos_login_free(login);
    CHECK_INT(ksasl_mechanism_registry_mechanism_count(r, 0), 1);
    ksasl_mechanism_registry_free(r);
}
