/*
 * ksasl_config_check against tests/vectors/config_table.json, the table of real-world client
 * and broker configurations every binding replays: a valid entry's report must be exactly its
 * effective settings and unknown names, followed by its number of warning lines; an invalid
 * one must fail with KSASL_INVALID_CONFIG and a detail containing the expected text. No output
 * may contain the table's password. The table becomes config_table.h at build time
 * (mk/ctest.mk, tests/c/config_table.py).
 */
#include <stdlib.h>

#include "check.h"

typedef struct {
    const char *name, *properties, *listener, *expected, *error;
    int warnings;
} table_case;

#include "config_table.h"

static const char SECRET[] = "hunter2-secret-XYZ";

static void valid_case(const table_case *c, const char *text) {
    size_t n = strlen(c->expected);
    int same = strncmp(text, c->expected, n) == 0;
    if (!same) {
        fprintf(stderr, "config table: %s\n  expected:\n%s  got:\n%s", c->name, c->expected, text);
    }
    CHECK(same);
    if (!same) {
        return;
    }
    int warnings = 0;
    for (const char *p = text + n; *p != '\0';) {
        const char *end = strchr(p, '\n');
        CHECK(strncmp(p, "warning ", 8) == 0);
        warnings++;
        p = end == NULL ? p + strlen(p) : end + 1;
    }
    if (warnings != c->warnings) {
        fprintf(stderr, "config table: %s: %d warnings, expected %d\n%s", c->name, warnings,
                c->warnings, text);
    }
    CHECK_INT(warnings, c->warnings);
}

void test_config_table(void) {
    size_t n = sizeof TABLE_CASES / sizeof TABLE_CASES[0];
    size_t valid = 0, invalid = 0;
    for (size_t i = 0; i < n; i++) {
        const table_case *c = &TABLE_CASES[i];
        ksasl_config_report *r = NULL;
        ksasl_result rc = ksasl_config_check((const uint8_t *)c->properties,
                                             strlen(c->properties), c->listener, &r);
        if (c->expected != NULL) {
            valid++;
            if (rc != KSASL_OK) {
                fprintf(stderr, "config table: %s: %s\n", c->name, ksasl_last_constructor_error());
            }
            CHECK_OK(rc);
            if (rc == KSASL_OK) {
                const char *text = ksasl_config_report_text(r);
                valid_case(c, text);
                CHECK(strstr(text, SECRET) == NULL);
            }
        } else {
            invalid++;
            CHECK_STR(ksasl_result_name(rc), "INVALID_CONFIG");
            CHECK(r == NULL);
            const char *detail = ksasl_last_constructor_error();
            if (strstr(detail, c->error) == NULL) {
                fprintf(stderr, "config table: %s: \"%s\" not in \"%s\"\n", c->name, c->error,
                        detail);
            }
            CHECK(strstr(detail, c->error) != NULL);
            CHECK(strstr(detail, SECRET) == NULL);
        }
        ksasl_config_report_free(r);
    }
    CHECK(valid >= 30 && invalid >= 30);
    /* Arguments: NULL text with a length, NULL out, a listener that is not UTF-8, bytes that
     * are not UTF-8 (read as ISO-8859-1). */
    ksasl_config_report *r = NULL;
    CHECK_STR(ksasl_result_name(ksasl_config_check(NULL, 3, NULL, &r)), "NULL_ARGUMENT");
    CHECK_STR(ksasl_result_name(ksasl_config_check((const uint8_t *)"a=b", 3, NULL, NULL)),
              "NULL_ARGUMENT");
    CHECK(ksasl_config_check((const uint8_t *)"a=b", 3, "\xff", &r) != KSASL_OK);
    const char latin1[] = "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
                          "sasl.username=caf\xe9\nsasl.password=p\n";
    CHECK_OK(ksasl_config_check((const uint8_t *)latin1, sizeof latin1 - 1, NULL, &r));
    CHECK(strstr(ksasl_config_report_text(r), "username=caf\xc3\xa9\n") != NULL);
    ksasl_config_report_free(r);
    CHECK_STR(ksasl_config_report_text(NULL), "");
    ksasl_config_report_free(NULL);
}
