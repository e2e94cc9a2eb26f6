/* A minimal Kafka-protocol server for the C examples' tests: it authenticates connections
 * with the ksasl server connection driver (PLAIN and SCRAM for one user), enforces the
 * session lifetime through the per-request gate, and answers Metadata v0 with an empty
 * cluster. It binds 127.0.0.1 on a free port, writes the port number to PORT_FILE, and exits
 * by itself after SECONDS.
 *
 *   mini_broker PORT_FILE MAX_REAUTH_MS USERNAME PASSWORD SECONDS [JWKS_FILE]
 *
 * With JWKS_FILE it also takes OAUTHBEARER tokens signed by an identity provider, as a Kafka
 * listener does with the same property names, one "name=value" per line:
 * sasl.oauthbearer.jwks.endpoint.url, sasl.oauthbearer.expected.issuer,
 * sasl.oauthbearer.expected.audience, and the HTTPS settings (ssl.truststore.location,
 * sasl.login.connect.timeout.ms, ...). The key set is fetched at start (an unreachable
 * provider stops the broker there) and kept fresh from the poll loop. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ksasl.h"
#include "frames.h"

#define MAX_CONNS 16

typedef struct {
    int fd;
    ksasl_server_connection *conn;
    buf_t in;
} conn_t;

/* Reads a JWKS_FILE (see above) into a JWKS endpoint: the URL, issuer and audience make the
 * validator, every other line goes to the HTTPS settings. */
static int jwks_from_file(const char *path, ksasl_jwks_validator **v, ksasl_jwks_endpoint **e) {
    char url[2048] = "", iss[2048] = "", aud[2048] = "", line[4096];
    ksasl_oidc_settings *s = NULL;
    FILE *f = fopen(path, "r");
    if (!f || ksasl_oidc_settings_new(&s)) {
        perror(path);
        if (f) fclose(f);
        return -1;
    }
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        char *eq = strchr(line, '=');
        if (line[0] == '#' || line[0] == 0 || !eq) continue;
        *eq = 0;
        char *dest = strcmp(line, "sasl.oauthbearer.jwks.endpoint.url") == 0   ? url
                     : strcmp(line, "sasl.oauthbearer.expected.issuer") == 0   ? iss
                     : strcmp(line, "sasl.oauthbearer.expected.audience") == 0 ? aud
                                                                               : NULL;
        if (dest)
            snprintf(dest, sizeof url, "%s", eq + 1);
        else if ((rc = ksasl_oidc_settings_set(s, line, eq + 1)) != 0)
            fprintf(stderr, "%s: %s\n", path, ksasl_oidc_settings_last_error(s));
    }
    fclose(f);
    if (rc == 0 && (rc = ksasl_jwks_validator_new(iss[0] ? iss : NULL, aud[0] ? aud : NULL, v)) != 0)
        fprintf(stderr, "%s: %s\n", path, ksasl_last_constructor_error());
    if (rc == 0 && (rc = ksasl_jwks_endpoint_new(url, *v, s, e)) != 0)
        fprintf(stderr, "%s: %s\n", path, ksasl_last_constructor_error());
    size_t keys = 0;
    if (rc == 0 && (rc = ksasl_jwks_endpoint_fetch(*e, wall_ms(), &keys)) != 0)
        fprintf(stderr, "JWKS endpoint: %s\n", ksasl_jwks_endpoint_last_error(*e));
    if (rc == 0) printf("mini_broker: %zu keys from %s\n", keys, url);
    ksasl_oidc_settings_free(s);
    return rc;
}

static void drop(conn_t *c) {
    close(c->fd);
    ksasl_server_connection_free(c->conn);
    buf_free(&c->in);
    c->fd = -1;
    c->conn = NULL;
}

int main(int argc, char **argv) {
    if (argc != 6 && argc != 7) {
        fprintf(stderr, "usage: mini_broker PORT_FILE MAX_REAUTH_MS USERNAME PASSWORD SECONDS [JWKS_FILE]\n");
        return 2;
    }
    ksasl_credential_store *store;
    ksasl_mechanism_registry *reg;
    ksasl_server_config_builder *builder;
    ksasl_server_config *cfg;
    ksasl_jwks_validator *jwks_validator = NULL;
    ksasl_jwks_endpoint *jwks = NULL;
    setvbuf(stdout, NULL, _IOLBF, 0); /* one line at a time, also into a file */
    if (argc == 7 && jwks_from_file(argv[6], &jwks_validator, &jwks) != 0) {
        ksasl_jwks_endpoint_free(jwks);
        ksasl_jwks_validator_free(jwks_validator);
        return 1;
    }
    if (ksasl_credential_store_new(&store) || ksasl_credential_store_add_user(store, argv[3], argv[4], 4096) || ksasl_mechanism_registry_new(&reg) ||
        ksasl_mechanism_registry_add_password_servers(reg, store) ||
        (jwks && ksasl_mechanism_registry_add_oauthbearer_jwks_endpoint_server(reg, jwks)) ||
        ksasl_server_config_builder_new(reg, &builder) ||
        ksasl_server_config_builder_set_max_reauth_ms(builder, NULL, atoll(argv[2])) ||
        ksasl_server_config_builder_set_api_version(builder, 3, 0, 0) || ksasl_server_config_builder_build(builder, &cfg)) {
        fprintf(stderr, "setup failed\n");
        return 1;
    }
    ksasl_server_config_builder_free(builder);
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {0};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof addr;
    if (bind(lfd, (struct sockaddr *)&addr, sizeof addr) || listen(lfd, 8) || getsockname(lfd, (struct sockaddr *)&addr, &alen)) {
        perror("mini_broker: listen");
        return 1;
    }
    FILE *pf = fopen(argv[1], "w");
    if (!pf) return 1;
    fprintf(pf, "%d\n", ntohs(addr.sin_port));
    fclose(pf);

    conn_t conns[MAX_CONNS];
    for (int i = 0; i < MAX_CONNS; i++) conns[i] = (conn_t){.fd = -1};
    int64_t end = wall_ms() + 1000 * atoll(argv[5]);
    int64_t next_jwks = jwks ? ksasl_jwks_endpoint_poll(jwks, wall_ms()) : INT64_MAX;
    while (wall_ms() < end) {
        /* The key set's refresh (hourly, or after a failed fetch on a backoff) runs here; a
         * token of an unknown key makes the exchange itself wait for one fetch. */
        if (wall_ms() >= next_jwks) next_jwks = ksasl_jwks_endpoint_poll(jwks, wall_ms());
        struct pollfd p[MAX_CONNS + 1];
        p[0] = (struct pollfd){.fd = lfd, .events = POLLIN};
        for (int i = 0; i < MAX_CONNS; i++) p[i + 1] = (struct pollfd){.fd = conns[i].fd, .events = POLLIN};
        if (poll(p, MAX_CONNS + 1, 50) <= 0) continue;
        if (p[0].revents) {
            int fd = accept(lfd, NULL, NULL);
            for (int i = 0; fd >= 0 && i < MAX_CONNS; i++)
                if (conns[i].fd < 0) {
                    conns[i].fd = fd;
                    ksasl_server_connection_new(cfg, &conns[i].conn);
                    fd = -1;
                }
            if (fd >= 0) close(fd);
        }
        for (int i = 0; i < MAX_CONNS; i++) {
            conn_t *c = &conns[i];
            if (c->fd < 0 || !p[i + 1].revents) continue;
            uint8_t tmp[65536];
            /* A length prefix is read alone, so it is checked before any body byte is. */
            ssize_t r = read(c->fd, tmp, c->in.len < 4 ? 4 - c->in.len : sizeof tmp);
            if (r <= 0) { drop(c); continue; }
            buf_push(&c->in, tmp, (size_t)r);
            const uint8_t *f;
            size_t n;
            long used;
            for (;;) {
                /* Kafka's limits on the 4-byte length alone, before any of the body is kept:
                 * sasl.server.max.receive.size until the session is live, then
                 * socket.request.max.bytes. */
                size_t max = 0;
                if (c->fd < 0 || c->in.len < 4) break;
                if (ksasl_server_connection_check_frame_size(c->conn, be32(c->in.data), wall_ms(), &max) != KSASL_OK) {
                    printf("refusing a frame: %s\n", ksasl_server_connection_last_error(c->conn));
                    drop(c);
                    break;
                }
                if ((used = frame_next(&c->in, &f, &n, max)) <= 0) { if (used < 0) drop(c); break; }
                int64_t now = wall_ms();
                /* The gate routes every frame: only PROCESS reaches the request handlers (a live
                 * session); the exchange's frames go to the connection; the rest closes. */
                ksasl_gate g = ksasl_server_connection_gate(c->conn, n >= 2 ? be16(f) : -1, now);
                if (g == KSASL_GATE_CLOSE_EXPIRED) { printf("closing an expired session\n"); drop(c); break; }
                if (g == KSASL_GATE_CLOSE) { drop(c); break; }
                if (g == KSASL_GATE_PROCESS && n >= 8) {
                    /* Metadata v0 response: correlation id, no brokers, no topics. */
                    uint8_t resp[16];
                    put32(resp, 12);
                    memcpy(resp + 4, f + 4, 4);
                    put32(resp + 8, 0);
                    put32(resp + 12, 0);
                    if (write(c->fd, resp, sizeof resp) < 0) { drop(c); break; }
                    buf_consume(&c->in, (size_t)used);
                    continue;
                }
                ksasl_server_action a;
                const uint8_t *out;
                size_t out_len;
                int64_t deadline;
                if (ksasl_server_connection_handle_frame(c->conn, f, n, now, &a, &out, &out_len, &deadline) != KSASL_OK) { drop(c); break; }
                if (out_len && write(c->fd, out, out_len) < 0) { drop(c); break; }
                buf_consume(&c->in, (size_t)used);
                if (a == KSASL_SERVER_ACTION_FAIL_AT || a == KSASL_SERVER_ACTION_CLOSE_NOW) {
                    const char *why = NULL, *told = NULL;
                    ksasl_result reason = ksasl_server_connection_error(c->conn, &why, &told);
                    int16_t api_key = 0, version = 0;
                    printf("authentication failed: %s: %s (the client was told: \"%s\")\n", ksasl_result_name(reason), why, told);
                    /* ksasl answers the requests whose schema it has; this broker implements no
                     * other API, so it closes without answering, as Kafka does for what it cannot
                     * read. (A broker that can read the request writes its error response.) */
                    if (ksasl_server_connection_refused_request(c->conn, &api_key, &version, NULL, NULL))
                        printf("no answer for API %d v%d: closing\n", api_key, version);
                    drop(c);
                }
            }
        }
    }
    for (int i = 0; i < MAX_CONNS; i++)
        if (conns[i].fd >= 0) drop(&conns[i]);
    double reauths = 0;
    ksasl_server_config_metric(cfg, "successful-reauthentication-total", wall_ms(), &reauths);
    printf("mini_broker: %g re-authentications\n", reauths);
    close(lfd);
    ksasl_server_config_free(cfg);
    ksasl_mechanism_registry_free(reg);
    ksasl_credential_store_free(store);
    ksasl_jwks_endpoint_free(jwks);
    ksasl_jwks_validator_free(jwks_validator);
    return 0;
}
