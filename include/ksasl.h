/*
 * ksasl: sans-IO SASL authentication for Apache Kafka (PLAIN, SCRAM-SHA-256/512,
 * OAUTHBEARER), Kafka framing and KIP-368 re-authentication.
 *
 * Generated from src/ffi by cbindgen (build.rs). Do not edit.
 *
 * Conventions: opaque handles made by ksasl_<object>_new and freed by ksasl_<object>_free
 * (NULL is a no-op); functions return ksasl_result (0 = KSASL_OK, otherwise a stable code
 * named by ksasl_result_name) and keep a detail message on the handle
 * (ksasl_<object>_last_error); out-parameters are written only on success; output bytes
 * and strings are borrowed from the handle until the next call on it. Callbacks get
 * void *userdata first and return int (0 = success); the library never calls back from a
 * thread of its own. Per-connection handles are used by one thread at a time.
 */

#ifndef KSASL_H
#define KSASL_H

#include <stdint.h>
#include <stddef.h>

#define KSASL_VERSION_MAJOR 0
#define KSASL_VERSION_MINOR 1
#define KSASL_VERSION_PATCH 0
#define KSASL_VERSION_STRING "0.1.0"

/* Result codes (src/error.rs): 1xx misuse, 2xx protocol, 3xx authentication, 4xx credential, 5xx internal. */
#define KSASL_OK 0


/**
 * Kafka's default `delegation.token.max.lifetime.ms` (7 days).
 */
#define KSASL_TOKEN_DEFAULT_MAX_LIFETIME_MS 604800000

/**
 * Kafka's default `delegation.token.expiry.time.ms` (1 day).
 */
#define KSASL_TOKEN_DEFAULT_EXPIRY_TIME_MS 86400000

/**
 * Kafka's default `delegation.token.expiry.check.interval.ms` (1 hour).
 */
#define KSASL_TOKEN_DEFAULT_EXPIRY_CHECK_INTERVAL_MS 3600000

/**
 * A client exchange for one mechanism.
 */
typedef struct ksasl_client ksasl_client;

/**
 * Configuration of client connections (shared by the connections made from it).
 */
typedef struct ksasl_client_config ksasl_client_config;

/**
 * A client connection's SASL state.
 */
typedef struct ksasl_client_conn ksasl_client_conn;

/**
 * Where a credential callback writes its answer.
 */
typedef struct ksasl_credential_answer ksasl_credential_answer;

/**
 * A credential request, as a credential callback sees it.
 */
typedef struct ksasl_credential_request ksasl_credential_request;

/**
 * A delegation token: its id, its HMAC (the secret the SCRAM password is made of), owner,
 * requester, renewers and timestamps. Immutable; free it with `ksasl_delegation_token_free`
 * (tokens borrowed from a `ksasl_delegation_token_list` belong to the list).
 */
typedef struct ksasl_delegation_token ksasl_delegation_token;

/**
 * Tokens from `ksasl_token_authority_describe` or a DescribeDelegationToken response.
 */
typedef struct ksasl_delegation_token_list ksasl_delegation_token_list;

/**
 * Where a host mechanism's callback writes its answer. Valid only during the callback that
 * received it.
 *
 * A client callback sets a message to send (`ksasl_host_output_set_message`) and/or says the
 * client side is complete (`ksasl_host_output_set_done`); a server callback sets a challenge,
 * or authenticates the client (`ksasl_host_output_set_authenticated`, optionally after a last
 * message). A failure is reported with `ksasl_host_output_set_error` and a non-zero return.
 * The message, if any, comes first: `set_done` and `set_authenticated` complete the answer,
 * and nothing may be set after them. Instead of answering, a callback may say that the answer
 * comes later (`ksasl_host_output_set_pending`); the host then gives it, in an output of its
 * own (`ksasl_host_output_new`), to the connection's or exchange's `resume` function.
 */
typedef struct ksasl_host_output ksasl_host_output;

/**
 * A signed-JWT validator (KIP-768) whose JWKS the host supplies.
 */
typedef struct ksasl_jwks_validator ksasl_jwks_validator;

/**
 * Refreshes expiring credentials on Kafka's schedule (librdkafka's shape). Thread-safe.
 */
typedef struct ksasl_refresher ksasl_refresher;

/**
 * A set of client and server mechanisms by name, with the credentials they use.
 */
typedef struct ksasl_registry ksasl_registry;

/**
 * A server exchange for one mechanism.
 */
typedef struct ksasl_server ksasl_server;

/**
 * Configuration of server connections (one listener).
 */
typedef struct ksasl_server_config ksasl_server_config;

/**
 * A server connection's SASL state.
 */
typedef struct ksasl_server_conn ksasl_server_conn;

/**
 * An in-memory credential store (users and delegation tokens). Thread-safe.
 */
typedef struct ksasl_store ksasl_store;

/**
 * An OAUTHBEARER token.
 */
typedef struct ksasl_token ksasl_token;

/**
 * Creates, renews, expires, describes and sweeps delegation tokens by Kafka's rules, serves
 * Kafka's token APIs, and answers `tokenauth` logins (see
 * `ksasl_registry_add_password_servers_with_tokens`). The authority is shared (reference
 * counted) and thread-safe; a handle's outputs and last error are per handle, so threads
 * that use an authority at the same time each take a handle from
 * `ksasl_token_authority_share`.
 */
typedef struct ksasl_token_authority ksasl_token_authority;

/**
 * Builds delegation-token request frames and reads their responses (the client side of api
 * keys 38-41). Request frames include their length prefix; responses are given without it
 * (as `ksasl_client_conn_handle_frame` returns application frames).
 */
typedef struct ksasl_token_codec ksasl_token_codec;

/**
 * Where a token-validation callback writes its verdict.
 */
typedef struct ksasl_token_verdict ksasl_token_verdict;

/**
 * Tracks which connections use which credential generation.
 */
typedef struct ksasl_tracker ksasl_tracker;

/**
 * A result code: 0 is success; anything else is an error code (see `ksasl_result_name`).
 */
typedef uint32_t ksasl_result;

/**
 * Re-authentication timing.
 */
typedef uint32_t ksasl_reauth_timing;

/**
 * What a received frame meant.
 */
typedef uint32_t ksasl_client_event;

/**
 * What the host does after a server frame.
 */
typedef uint32_t ksasl_server_action;

/**
 * A credential kind, in answers to credential requests.
 */
typedef uint32_t ksasl_credential_kind;

/**
 * The per-request gate's verdicts.
 */
typedef uint32_t ksasl_gate;

/**
 * What a server step produced.
 */
typedef uint32_t ksasl_server_status;

/**
 * A client mechanism written by the host. The library copies the table at registration.
 *
 * - `new_exchange(userdata)` makes the state of one exchange (called when a connection or
 *   `ksasl_client_new` starts using the mechanism) and returns it; NULL fails the exchange.
 * - `start(exchange, now_ms, out)` produces the first message (Kafka always starts with a
 *   client message; an empty one is allowed).
 * - `step(exchange, challenge, challenge_len, now_ms, out)` answers a server challenge
 *   (`challenge` is borrowed for the call).
 * - `dispose(exchange)` (may be NULL) frees the exchange state: called exactly once for
 *   every exchange `new_exchange` made, when the exchange is freed.
 *
 * `start` and `step` answer through `out` and return 0, or non-zero to fail the exchange (with
 * `ksasl_host_output_set_error`'s message). A client that is not done must set a message.
 * The callbacks are called from the threads that use the connections and exchanges of the
 * registry, never from a thread of the library's own: `new_exchange` may run on several
 * threads at once (the userdata is shared), while one exchange is used by one thread at a
 * time. A callback must not call into the connection or exchange that is calling it.
 */
typedef struct {
  /**
   * Makes one exchange's state (required).
   */
  void *(*new_exchange)(void *userdata);
  /**
   * The first message (required).
   */
  int (*start)(void *exchange, int64_t now_ms, ksasl_host_output *out);
  /**
   * The answer to a server challenge (required).
   */
  int (*step)(void *exchange,
              const uint8_t *challenge,
              size_t challenge_len,
              int64_t now_ms,
              ksasl_host_output *out);
  /**
   * Frees one exchange's state (optional).
   */
  void (*dispose)(void *exchange);
} ksasl_client_mechanism_vtable;

/**
 * Frees a userdata pointer handed to the library with a callback.
 */
typedef void (*ksasl_free_fn)(void *userdata);

/**
 * A server mechanism written by the host. The library copies the table at registration.
 *
 * - `new_exchange(userdata)` makes the state of one exchange (called when a client selects
 *   the mechanism, or by `ksasl_server_new`); NULL fails the exchange.
 * - `step(exchange, response, response_len, now_ms, out)` evaluates one client message
 *   (borrowed for the call) and sets a challenge (`ksasl_host_output_set_message`) or
 *   authenticates the client (`ksasl_host_output_set_authenticated`, after an optional last
 *   message); returns 0, or non-zero to fail the exchange (with
 *   `ksasl_host_output_set_error`'s message).
 * - `dispose(exchange)` (may be NULL): as for client mechanisms, once per exchange.
 *
 * Threads and re-entrancy as for `ksasl_client_mechanism_vtable`. The host looks credentials
 * up itself (the registry's store or credential callback is not consulted).
 */
typedef struct {
  /**
   * Makes one exchange's state (required).
   */
  void *(*new_exchange)(void *userdata);
  /**
   * Evaluates one client message (required).
   */
  int (*step)(void *exchange,
              const uint8_t *response,
              size_t response_len,
              int64_t now_ms,
              ksasl_host_output *out);
  /**
   * Frees one exchange's state (optional).
   */
  void (*dispose)(void *exchange);
} ksasl_server_mechanism_vtable;

/**
 * A token-validation callback: judge `token` at `now_ms` and answer with
 * `ksasl_token_verdict_accept` or `_reject`. Return 0 (non-zero rejects the token).
 */
typedef int (*ksasl_token_validator_cb)(void *userdata,
                                        const char *token,
                                        int64_t now_ms,
                                        ksasl_token_verdict *verdict);

/**
 * The refresh callback: fetch a token and answer with `ksasl_refresher_set_token` or
 * `ksasl_refresher_set_token_failure` (now, or later from any thread).
 */
typedef void (*ksasl_refresh_cb)(void *userdata, ksasl_refresher *refresher, int64_t now_ms);

/**
 * A credential callback: look `request` up and answer with `ksasl_credential_answer_set`.
 * Return 0, or non-zero if the lookup failed (the login then fails as "credentials could not
 * be verified"). It may be called from any thread that steps a server.
 */
typedef int (*ksasl_credential_cb)(void *userdata,
                                   const ksasl_credential_request *request,
                                   ksasl_credential_answer *answer);

/**
 * Kafka's Java client: random 85-95 % of the session.
 */
#define KSASL_REAUTH_KAFKA 0

/**
 * librdkafka: 90 %.
 */
#define KSASL_REAUTH_LIBRDKAFKA 1

/**
 * franz-go: random 95-98 %, at least 1 s before the end.
 */
#define KSASL_REAUTH_FRANZ_GO 2

/**
 * Never re-authenticate.
 */
#define KSASL_REAUTH_DISABLED 3

/**
 * A SASL response was consumed.
 */
#define KSASL_CLIENT_CONTINUE 0

/**
 * A response to an application request: `*app_frame` holds it.
 */
#define KSASL_CLIENT_APPLICATION 1

/**
 * Authenticated for the first time.
 */
#define KSASL_CLIENT_AUTHENTICATED 2

/**
 * Re-authenticated.
 */
#define KSASL_CLIENT_REAUTHENTICATED 3

/**
 * A re-authentication failed; the old session holds (retry policy).
 */
#define KSASL_CLIENT_REAUTH_FAILED 4

/**
 * A host mechanism answers later (`ksasl_host_output_set_pending`): finish its work
 * (`ksasl_client_conn_pending_work`) and continue with `ksasl_client_conn_resume`.
 */
#define KSASL_CLIENT_PENDING 5

/**
 * Write the output; keep reading authentication frames.
 */
#define KSASL_SERVER_ACTION_CONTINUE 0

/**
 * Look up a credential (`ksasl_server_conn_credential_request`) and answer it.
 */
#define KSASL_SERVER_ACTION_NEED_CREDENTIAL 1

/**
 * Write the output; the connection is authenticated.
 */
#define KSASL_SERVER_ACTION_AUTHENTICATED 2

/**
 * Write the output; the connection re-authenticated.
 */
#define KSASL_SERVER_ACTION_REAUTHENTICATED 3

/**
 * Write the output; the re-authentication failed but the session holds.
 */
#define KSASL_SERVER_ACTION_REAUTH_FAILED 4

/**
 * At `*deadline_ms` write the output, then close (KIP-306 delay).
 */
#define KSASL_SERVER_ACTION_FAIL_AT 5

/**
 * Close now, writing nothing.
 */
#define KSASL_SERVER_ACTION_CLOSE_NOW 6

/**
 * A host mechanism answers later (`ksasl_host_output_set_pending`): finish its work
 * (`ksasl_server_conn_pending_work`) and continue with `ksasl_server_conn_resume`.
 */
#define KSASL_SERVER_ACTION_PENDING 7

/**
 * Process the request.
 */
#define KSASL_GATE_PROCESS 0

/**
 * A SaslHandshake that starts re-authentication: pass the frame to the driver.
 */
#define KSASL_GATE_BEGIN_REAUTH 1

/**
 * The session expired: close without a response.
 */
#define KSASL_GATE_CLOSE_EXPIRED 2

/**
 * Send the output as a challenge and wait for the client.
 */
#define KSASL_SERVER_CHALLENGE 1

/**
 * A credential is needed: see `ksasl_server_credential_request`, answer with
 * `ksasl_server_provide_credential`.
 */
#define KSASL_SERVER_NEED_CREDENTIAL 2

/**
 * The client is authenticated; send the output (if any) as the last message.
 */
#define KSASL_SERVER_DONE 3

/**
 * A host mechanism answers later: see `ksasl_server_pending_work`, continue with
 * `ksasl_server_resume`.
 */
#define KSASL_SERVER_PENDING 4

/**
 * The user's clear-text password.
 */
#define KSASL_CREDENTIAL_PASSWORD 1

/**
 * A SCRAM credential in Kafka's text form.
 */
#define KSASL_CREDENTIAL_SCRAM 2

/**
 * No such user.
 */
#define KSASL_CREDENTIAL_UNKNOWN 3

/**
 * The store could not answer (the value is the reason, kept from the client).
 */
#define KSASL_CREDENTIAL_UNAVAILABLE 4

/**
 * (Callback only) the answer will come later through the pull form.
 */
#define KSASL_CREDENTIAL_LATER 5

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

/**
 * The library version, e.g. `"0.1.0"`.
 */
const char *ksasl_version(void);

/**
 * The stable name of a result code (`"OK"`, `"INVALID_CREDENTIALS"`, ...; `"UNKNOWN"` for
 * numbers that are not codes).
 */
const char *ksasl_result_name(ksasl_result result);

/**
 * The kind of a result code: `"misuse"`, `"protocol"`, `"authentication"`, `"credential"`,
 * `"internal"`, or `"ok"` / `"unknown"`.
 */
const char *ksasl_result_kind(ksasl_result result);

/**
 * The detail of the last failed constructor (`ksasl_*_new`) on this thread.
 */
const char *ksasl_last_constructor_error(void);

/**
 * Deliberately panics inside the library and returns what the boundary made of it
 * (`KSASL_PANIC`): a way for tests and hosts to check that no panic unwinds into C.
 */
ksasl_result ksasl_check_panic_boundary(void);

/**
 * Creates a client configuration using `mechanism` from the registry's client mechanisms.
 */
ksasl_result ksasl_client_config_new(const ksasl_registry *registry,
                                     const char *mechanism,
                                     ksasl_client_config **out);

/**
 * Frees a client configuration (connections keep what they need).
 */
void ksasl_client_config_free(ksasl_client_config *c);

/**
 * The detail of the configuration's last failure.
 */
const char *ksasl_client_config_last_error(const ksasl_client_config *c);

/**
 * Sets `client.id` (NULL: none).
 */
ksasl_result ksasl_client_config_set_client_id(ksasl_client_config *c, const char *client_id);

/**
 * Chooses when connections re-authenticate.
 */
ksasl_result ksasl_client_config_set_reauth_timing(ksasl_client_config *c,
                                                   ksasl_reauth_timing timing);

/**
 * The ApiVersions version sent first (0 to 5; librdkafka sends 3).
 */
ksasl_result ksasl_client_config_set_api_versions_version(ksasl_client_config *c, int16_t version);

/**
 * After a failed re-authentication: 0 closes (Kafka); a positive delay keeps the old session
 * and retries after that delay, then twice it, then four times it.
 */
ksasl_result ksasl_client_config_set_reauth_retry(ksasl_client_config *c, int64_t initial_delay_ms);

/**
 * A metric of every connection of this client configuration, by Kafka name
 * (`"successful-reauthentication-total"`, `"reauthentication-latency-avg"`, ...).
 */
ksasl_result ksasl_client_config_metric(ksasl_client_config *c,
                                        const char *name,
                                        int64_t now_ms,
                                        double *value);

/**
 * Creates a client connection from a configuration.
 */
ksasl_result ksasl_client_conn_new(const ksasl_client_config *config, ksasl_client_conn **out);

/**
 * Frees a client connection (NULL is a no-op).
 */
void ksasl_client_conn_free(ksasl_client_conn *c);

/**
 * The detail of the connection's last failure.
 */
const char *ksasl_client_conn_last_error(const ksasl_client_conn *c);

/**
 * Starts the initial authentication.
 */
ksasl_result ksasl_client_conn_start(ksasl_client_conn *c, int64_t now_ms);

/**
 * The bytes to write to the socket (length-prefixed frames; borrowed; `*len` 0 if none).
 */
ksasl_result ksasl_client_conn_transmit(ksasl_client_conn *c, const uint8_t **out, size_t *len);

/**
 * Handles one received frame (without its length prefix). On success `*event` says what it
 * was; for `KSASL_CLIENT_APPLICATION`, `*app_frame`/`*app_len` are `frame`/`frame_len`
 * themselves (the library neither copies nor keeps application responses). A fatal
 * authentication failure is returned as the error code (close the connection).
 */
ksasl_result ksasl_client_conn_handle_frame(ksasl_client_conn *c,
                                            const uint8_t *frame,
                                            size_t frame_len,
                                            int64_t now_ms,
                                            ksasl_client_event *event,
                                            const uint8_t **app_frame,
                                            size_t *app_len);

/**
 * After `KSASL_CLIENT_PENDING`: the work pointer the mechanism gave
 * `ksasl_host_output_set_pending` (NULL when nothing is pending, or if it gave NULL).
 */
void *ksasl_client_conn_pending_work(const ksasl_client_conn *c);

/**
 * Continues after `KSASL_CLIENT_PENDING` with the mechanism's late answer: `answer` (from
 * `ksasl_host_output_new(0, ...)`) holds what its callback would have set, and `rc` what it
 * would have returned (0, or non-zero with `ksasl_host_output_set_error` for a failure). The
 * answer's content is taken. Outputs and errors as `ksasl_client_conn_handle_frame`; write
 * `ksasl_client_conn_transmit` afterwards. Without pending work (`KSASL_WRONG_STATE`), with a
 * NULL or server answer, nothing changes.
 */
ksasl_result ksasl_client_conn_resume(ksasl_client_conn *c,
                                      ksasl_host_output *answer,
                                      int rc,
                                      int64_t now_ms,
                                      ksasl_client_event *event,
                                      const uint8_t **app_frame,
                                      size_t *app_len);

/**
 * Reports that the broker closed the connection; returns the error to report.
 */
ksasl_result ksasl_client_conn_closed(ksasl_client_conn *c, int64_t now_ms);

/**
 * The next instant to call `ksasl_client_conn_handle_timeout` (-1: none).
 */
int64_t ksasl_client_conn_next_deadline(const ksasl_client_conn *c);

/**
 * Starts a re-authentication if one is due; `*started` (if not NULL) tells whether it did.
 */
ksasl_result ksasl_client_conn_handle_timeout(ksasl_client_conn *c, int64_t now_ms, int *started);

/**
 * Starts a re-authentication now (for example when a tracker asks for one after a
 * credential refresh). The connection must be authenticated and idle. Brokers refuse a
 * re-authentication less than a second after the previous one: then `*started` (may be
 * NULL) is 0 and the re-authentication is scheduled for 1.1 s after the previous start
 * (see `ksasl_client_conn_next_deadline`).
 */
ksasl_result ksasl_client_conn_start_reauthentication(ksasl_client_conn *c,
                                                      int64_t now_ms,
                                                      int *started);

/**
 * 1 if a re-authentication is due at `now_ms` (for synchronous clients).
 */
int ksasl_client_conn_reauth_pending(const ksasl_client_conn *c, int64_t now_ms);

/**
 * Call before sending an application request: `*send_now` is 1 to send it, 0 to hold it
 * until re-authentication completes (a due re-authentication starts here).
 */
ksasl_result ksasl_client_conn_before_request(ksasl_client_conn *c, int64_t now_ms, int *send_now);

/**
 * The session: lifetime granted by the broker (0: none), re-authentication time and expiry
 * as the client sees them (-1: none). `KSASL_WRONG_STATE`-class error before authentication.
 */
ksasl_result ksasl_client_conn_session(ksasl_client_conn *c,
                                       int64_t *lifetime_ms,
                                       int64_t *reauth_at_ms,
                                       int64_t *expiry_ms);

/**
 * 1 while a re-authentication is in progress.
 */
int ksasl_client_conn_is_reauthenticating(const ksasl_client_conn *c);

/**
 * Creates a listener configuration enabling every server mechanism of the registry.
 */
ksasl_result ksasl_server_config_new(const ksasl_registry *registry, ksasl_server_config **out);

/**
 * Frees a listener configuration (connections keep what they need).
 */
void ksasl_server_config_free(ksasl_server_config *c);

/**
 * The detail of the configuration's last failure.
 */
const char *ksasl_server_config_last_error(const ksasl_server_config *c);

/**
 * `connections.max.reauth.ms`, for all mechanisms (`mechanism` NULL) or one.
 */
ksasl_result ksasl_server_config_set_max_reauth_ms(ksasl_server_config *c,
                                                   const char *mechanism,
                                                   int64_t ms);

/**
 * `connection.failed.authentication.delay.ms` (default 100).
 */
ksasl_result ksasl_server_config_set_failed_auth_delay_ms(ksasl_server_config *c, int64_t ms);

/**
 * After a failed re-authentication: 0 closes (Kafka); a positive delay keeps the session.
 */
ksasl_result ksasl_server_config_set_reauth_retry(ksasl_server_config *c, int64_t initial_delay_ms);

/**
 * Adds an API to the ApiVersions response (a broker lists all of its APIs).
 */
ksasl_result ksasl_server_config_add_api_version(ksasl_server_config *c,
                                                 int16_t api_key,
                                                 int16_t min_version,
                                                 int16_t max_version);

/**
 * A metric of every connection of this configuration, by Kafka name
 * (`"successful-reauthentication-total"`, ...), as of `now_ms`.
 */
ksasl_result ksasl_server_config_metric(ksasl_server_config *c,
                                        const char *name,
                                        int64_t now_ms,
                                        double *value);

/**
 * Creates a server connection for a listener configuration.
 */
ksasl_result ksasl_server_conn_new(const ksasl_server_config *config, ksasl_server_conn **out);

/**
 * Frees a server connection (NULL is a no-op).
 */
void ksasl_server_conn_free(ksasl_server_conn *c);

/**
 * The detail of the connection's last failure (also set for FAIL_AT and CLOSE_NOW).
 */
const char *ksasl_server_conn_last_error(const ksasl_server_conn *c);

/**
 * Handles one authentication frame (without its length prefix). `*action` says what to do;
 * `*out`/`*out_len` are the frames to write (borrowed); `*deadline_ms` (may be NULL) is set
 * for `KSASL_SERVER_ACTION_FAIL_AT`.
 */
ksasl_result ksasl_server_conn_handle_frame(ksasl_server_conn *c,
                                            const uint8_t *frame,
                                            size_t frame_len,
                                            int64_t now_ms,
                                            ksasl_server_action *action,
                                            const uint8_t **out,
                                            size_t *out_len,
                                            int64_t *deadline_ms);

/**
 * After `KSASL_SERVER_ACTION_PENDING`: the work pointer the mechanism gave
 * `ksasl_host_output_set_pending` (NULL when nothing is pending, or if it gave NULL).
 */
void *ksasl_server_conn_pending_work(const ksasl_server_conn *c);

/**
 * Continues after `KSASL_SERVER_ACTION_PENDING` with the mechanism's late answer: `answer`
 * (from `ksasl_host_output_new(1, ...)`) holds what its step callback would have set, and
 * `rc` what it would have returned. The answer's content is taken. Outputs as
 * `ksasl_server_conn_handle_frame`: a failed answer fails the exchange as a failed callback
 * does (`KSASL_SERVER_ACTION_FAIL_AT` with Kafka's response). Without pending work
 * (`KSASL_WRONG_STATE`), with a NULL or client answer, an error is returned and nothing
 * changes.
 */
ksasl_result ksasl_server_conn_resume(ksasl_server_conn *c,
                                      ksasl_host_output *answer,
                                      int rc,
                                      int64_t now_ms,
                                      ksasl_server_action *action,
                                      const uint8_t **out,
                                      size_t *out_len,
                                      int64_t *deadline_ms);

/**
 * The pending credential request (after `KSASL_SERVER_ACTION_NEED_CREDENTIAL`).
 */
ksasl_result ksasl_server_conn_credential_request(ksasl_server_conn *c,
                                                  const char **mechanism,
                                                  const char **username,
                                                  int *token_authenticated);

/**
 * Answers the pending credential request and continues; outputs as `handle_frame`.
 */
ksasl_result ksasl_server_conn_provide_credential(ksasl_server_conn *c,
                                                  ksasl_credential_kind kind,
                                                  const char *value,
                                                  int64_t expiry_ms,
                                                  const char *token_owner,
                                                  int64_t now_ms,
                                                  ksasl_server_action *action,
                                                  const uint8_t **out,
                                                  size_t *out_len,
                                                  int64_t *deadline_ms);

/**
 * The per-request gate of an authenticated connection (`KSASL_GATE_*`). Allocation-free.
 */
ksasl_gate ksasl_server_conn_gate(const ksasl_server_conn *c, int16_t api_key, int64_t now_ms);

/**
 * 1 when authenticated and no exchange is in progress (requests go through the gate).
 */
int ksasl_server_conn_is_ready(const ksasl_server_conn *c);

/**
 * The authenticated session: principal (`"User:alice"`, borrowed), lifetime sent to the
 * client, and session expiry (-1: never).
 */
ksasl_result ksasl_server_conn_session(ksasl_server_conn *c,
                                       const char **principal,
                                       int64_t *lifetime_ms,
                                       int64_t *expiry_ms);

/**
 * 1 when the connection's session logged in with a delegation token (`tokenauth`), which
 * `ksasl_token_authority_handle_request` needs to know; 0 otherwise, before authentication
 * and for NULL.
 */
int ksasl_server_conn_token_authenticated(const ksasl_server_conn *c);

/**
 * Creates a client exchange for `mechanism` from the registry's client mechanisms.
 */
ksasl_result ksasl_client_new(const ksasl_registry *registry,
                              const char *mechanism,
                              ksasl_client **out);

/**
 * Frees a client exchange (NULL is a no-op).
 */
void ksasl_client_free(ksasl_client *c);

/**
 * The detail of the client's last failure.
 */
const char *ksasl_client_last_error(const ksasl_client *c);

/**
 * Produces the first message. `*out`/`*out_len` receive the bytes to send (borrowed until
 * the next call on `c`; `*out` is NULL when there is nothing to send); `*done` is 1 when the
 * client side is complete (the server's verdict is still to come). No message with `*done` 0
 * means a host mechanism answers later: see `ksasl_client_pending_work`.
 */
ksasl_result ksasl_client_start(ksasl_client *c,
                                int64_t now_ms,
                                const uint8_t **out,
                                size_t *out_len,
                                int *done);

/**
 * Evaluates a server challenge; outputs as `ksasl_client_start`.
 */
ksasl_result ksasl_client_step(ksasl_client *c,
                               const uint8_t *challenge,
                               size_t challenge_len,
                               int64_t now_ms,
                               const uint8_t **out,
                               size_t *out_len,
                               int *done);

/**
 * After a start or step that gave no message and `*done` 0: the mechanism answers later
 * (`ksasl_host_output_set_pending`), and this is the work pointer it gave (NULL if it gave
 * NULL, or when nothing is pending).
 */
void *ksasl_client_pending_work(const ksasl_client *c);

/**
 * Continues a pending start or step with the mechanism's late answer (`answer` from
 * `ksasl_host_output_new(0, ...)`, its content taken; `rc` as the callback would have
 * returned); outputs as `ksasl_client_start`. Without pending work (`KSASL_WRONG_STATE`), with
 * a NULL or server answer, nothing changes.
 */
ksasl_result ksasl_client_resume(ksasl_client *c,
                                 ksasl_host_output *answer,
                                 int rc,
                                 const uint8_t **out,
                                 size_t *out_len,
                                 int *done);

/**
 * Reports that the server failed the exchange (with its message, or NULL). Returns the
 * resulting error code; the detail is in `ksasl_client_last_error`.
 */
ksasl_result ksasl_client_server_failed(ksasl_client *c, const char *server_message);

/**
 * Creates a server exchange for `mechanism` from the registry's server mechanisms (with the
 * registry's store or credential callback).
 */
ksasl_result ksasl_server_new(const ksasl_registry *registry,
                              const char *mechanism,
                              ksasl_server **out);

/**
 * Frees a server exchange (NULL is a no-op).
 */
void ksasl_server_free(ksasl_server *s);

/**
 * The detail of the server's last failure.
 */
const char *ksasl_server_last_error(const ksasl_server *s);

/**
 * After a failed step: the text a Kafka broker sends the client (Kafka's generic sentence
 * unless the mechanism discloses a specific one).
 */
const char *ksasl_server_client_message(const ksasl_server *s);

/**
 * Evaluates one client message: `*status` is one of `KSASL_SERVER_*`, `*out`/`*out_len` the
 * bytes to send (borrowed; NULL when none).
 */
ksasl_result ksasl_server_step(ksasl_server *s,
                               const uint8_t *response,
                               size_t response_len,
                               int64_t now_ms,
                               ksasl_server_status *status,
                               const uint8_t **out,
                               size_t *out_len);

/**
 * After `KSASL_SERVER_PENDING`: the work pointer the mechanism gave
 * `ksasl_host_output_set_pending` (NULL if it gave NULL, or when nothing is pending).
 */
void *ksasl_server_pending_work(const ksasl_server *s);

/**
 * Continues after `KSASL_SERVER_PENDING` with the mechanism's late answer (`answer` from
 * `ksasl_host_output_new(1, ...)`, its content taken; `rc` as the step callback would have
 * returned); outputs as `ksasl_server_step`. Without pending work (`KSASL_WRONG_STATE`), with
 * a NULL or client answer, nothing changes.
 */
ksasl_result ksasl_server_resume(ksasl_server *s,
                                 ksasl_host_output *answer,
                                 int rc,
                                 int64_t now_ms,
                                 ksasl_server_status *status,
                                 const uint8_t **out,
                                 size_t *out_len);

/**
 * The pending credential request (after `KSASL_SERVER_NEED_CREDENTIAL`): mechanism,
 * username (borrowed) and whether it is a delegation-token login.
 */
ksasl_result ksasl_server_credential_request(ksasl_server *s,
                                             const char **mechanism,
                                             const char **username,
                                             int *token_authenticated);

/**
 * Answers the pending credential request (`kind`: `KSASL_CREDENTIAL_PASSWORD`, `_SCRAM`,
 * `_UNKNOWN` or `_UNAVAILABLE`; see `ksasl_credential_answer_set`) and continues; outputs as
 * `ksasl_server_step`.
 */
ksasl_result ksasl_server_provide_credential(ksasl_server *s,
                                             ksasl_credential_kind kind,
                                             const char *value,
                                             int64_t expiry_ms,
                                             const char *token_owner,
                                             int64_t now_ms,
                                             ksasl_server_status *status,
                                             const uint8_t **out,
                                             size_t *out_len);

/**
 * After `KSASL_SERVER_DONE`: the principal (`"User:alice"`), its name, the mechanism
 * (borrowed), the credential expiry (-1: none) and whether a delegation token was used.
 */
ksasl_result ksasl_server_outcome(ksasl_server *s,
                                  const char **principal,
                                  const char **principal_name,
                                  const char **mechanism,
                                  int64_t *credential_expiry_ms,
                                  int *token_authenticated);

/**
 * Creates an output for a late answer: the host writes into it with the
 * `ksasl_host_output_set_*` functions (any thread, no connection needed) and hands it to
 * `ksasl_client_conn_resume`, `ksasl_server_conn_resume`, `ksasl_client_resume` or
 * `ksasl_server_resume`, which take its content and leave it empty for reuse. `for_server` is
 * 1 for a server mechanism's answer, 0 for a client's. Free it with `ksasl_host_output_free`.
 */
ksasl_result ksasl_host_output_new(int for_server, ksasl_host_output **out);

/**
 * Frees an output made by `ksasl_host_output_new` (NULL is a no-op). Never pass the output a
 * callback received.
 */
void ksasl_host_output_free(ksasl_host_output *out);

/**
 * Sets the message to send: the client's next message, or the server's challenge (or its
 * last message, when followed by `ksasl_host_output_set_authenticated`). `message` may be
 * NULL when `len` is 0 (an empty message). Once per callback, before the answer is completed.
 * A wrong call returns an error code and fails the step with `KSASL_HOST_MECHANISM_FAILED`.
 */
ksasl_result ksasl_host_output_set_message(ksasl_host_output *out,
                                           const uint8_t *message,
                                           size_t len);

/**
 * Client mechanisms only: the client side is complete (after the message, if one is to be
 * sent). The server's verdict is still to come.
 */
ksasl_result ksasl_host_output_set_done(ksasl_host_output *out);

/**
 * Server mechanisms only: the client is authenticated as `authorization_id` (UTF-8, not
 * empty; the Kafka principal is `User:<authorization_id>`). `credential_expiry_ms` is the
 * absolute expiry of the credential used (ms since the epoch), which bounds the KIP-368
 * session, or -1 (any negative value) for none. A message set before is sent as the last
 * challenge.
 */
ksasl_result ksasl_host_output_set_authenticated(ksasl_host_output *out,
                                                 const char *authorization_id,
                                                 int64_t credential_expiry_ms);

/**
 * Says that the answer comes later (the mechanism started work that finishes outside the
 * callback: a request to a signer, a job on a worker thread). `work` is the host's own pointer
 * (may be NULL), given back by the `*_pending_work` functions; the library never dereferences
 * or frees it (free the exchange's work in `dispose`, which also runs when a connection is
 * freed while its answer is pending). The driver then reports
 * `KSASL_CLIENT_PENDING` / `KSASL_SERVER_ACTION_PENDING` (exchanges: see
 * `ksasl_client_pending_work`, `KSASL_SERVER_PENDING`), and the host continues with a
 * `*_resume` function and the answer in an output from `ksasl_host_output_new`. Nothing else
 * may be set in the same callback.
 */
ksasl_result ksasl_host_output_set_pending(ksasl_host_output *out, void *work);

/**
 * Fails the step with `message` (a NUL-terminated text, kept in the error the library reports
 * as `KSASL_HOST_MECHANISM_FAILED`; the Kafka client is sent only Kafka's generic sentence).
 * The callback should then return non-zero; the step fails in any case. The first message
 * set is kept.
 */
ksasl_result ksasl_host_output_set_error(ksasl_host_output *out, const char *message);

/**
 * As `ksasl_host_output_set_error`, reporting the failure with one of the library's own codes
 * instead of `KSASL_HOST_MECHANISM_FAILED`: for example `KSASL_UNKNOWN_USER` or
 * `KSASL_INVALID_CREDENTIALS`, as a built-in mechanism would. A code that is not one of the
 * library's (or is `KSASL_OK`) returns `KSASL_INVALID_ARGUMENT` and fails the step as a
 * misuse.
 */
ksasl_result ksasl_host_output_set_error_code(ksasl_host_output *out,
                                              ksasl_result code,
                                              const char *message);

/**
 * Registers (or replaces) a client mechanism written by the host, under `name` (1 to 20 of
 * `A-Z 0-9 - _`). `vtable` is copied. The library takes `userdata` in every case:
 * `free_userdata` (may be NULL) is called once, when the registry, every configuration and
 * connection made from it and every exchange of the mechanism are gone, or at once if this
 * call fails.
 */
ksasl_result ksasl_registry_add_client_mechanism(ksasl_registry *r,
                                                 const char *name,
                                                 const ksasl_client_mechanism_vtable *vtable,
                                                 void *userdata,
                                                 ksasl_free_fn free_userdata);

/**
 * Registers (or replaces) a server mechanism written by the host, under `name`; a server
 * configuration made from the registry afterwards offers it next to the other mechanisms.
 * Ownership of `vtable` and `userdata` as for `ksasl_registry_add_client_mechanism`.
 */
ksasl_result ksasl_registry_add_server_mechanism(ksasl_registry *r,
                                                 const char *name,
                                                 const ksasl_server_mechanism_vtable *vtable,
                                                 void *userdata,
                                                 ksasl_free_fn free_userdata);

/**
 * Builds an unsecured (`alg: none`) token as Kafka's development login does: principal
 * claim `sub`, `lifetime_seconds`, optional space-separated `scope` (NULL: none).
 */
ksasl_result ksasl_token_new_unsecured(const char *principal,
                                       int64_t lifetime_seconds,
                                       const char *scope,
                                       int64_t now_ms,
                                       ksasl_token **out);

/**
 * Frees a token (NULL is a no-op).
 */
void ksasl_token_free(ksasl_token *t);

/**
 * The token text (a secret: do not log it), borrowed from the token.
 */
const char *ksasl_token_value(const ksasl_token *t);

/**
 * The token's absolute expiry in ms (-1 for NULL).
 */
int64_t ksasl_token_expiry_ms(const ksasl_token *t);

/**
 * Adds an OAUTHBEARER server with Kafka's unsecured validator: `required_scope`
 * space-separated (NULL: none), `clock_skew_ms` >= 0. Verdicts are cached.
 */
ksasl_result ksasl_registry_add_oauthbearer_unsecured_server(ksasl_registry *r,
                                                             const char *required_scope,
                                                             int64_t clock_skew_ms);

/**
 * Creates a JWKS validator with Kafka's defaults (30 s skew, asymmetric algorithms only);
 * `expected_issuer` and `expected_audience` may be NULL.
 */
ksasl_result ksasl_jwks_validator_new(const char *expected_issuer,
                                      const char *expected_audience,
                                      ksasl_jwks_validator **out);

/**
 * Frees a JWKS validator (registries that use it keep it alive).
 */
void ksasl_jwks_validator_free(ksasl_jwks_validator *v);

/**
 * The detail of the validator's last failure.
 */
const char *ksasl_jwks_validator_last_error(const ksasl_jwks_validator *v);

/**
 * Replaces the key set with a JWKS document fetched at `now_ms`.
 */
ksasl_result ksasl_jwks_validator_set_jwks(ksasl_jwks_validator *v,
                                           const char *jwks_json,
                                           int64_t now_ms);

/**
 * When the JWKS should be fetched next (ms; 0 means now, as when none is loaded; -1 for a
 * NULL validator).
 */
int64_t ksasl_jwks_validator_next_refresh_ms(const ksasl_jwks_validator *v);

/**
 * Adds an OAUTHBEARER server validating signed JWTs with `v` (verdicts cached).
 */
ksasl_result ksasl_registry_add_oauthbearer_jwks_server(ksasl_registry *r,
                                                        const ksasl_jwks_validator *v);

/**
 * Accepts the token: its principal and absolute expiry (ms).
 */
ksasl_result ksasl_token_verdict_accept(ksasl_token_verdict *v,
                                        const char *principal,
                                        int64_t expiry_ms);

/**
 * Rejects the token; `reason` (may be NULL) stays on the server side, the client gets
 * `{"status":"invalid_token"}`.
 */
ksasl_result ksasl_token_verdict_reject(ksasl_token_verdict *v, const char *reason);

/**
 * Adds an OAUTHBEARER server whose tokens the host validates with `cb`. The library takes
 * `userdata` in every case: `free_userdata` (if given) is called when the registry no
 * longer needs it, and also at once if this call fails.
 */
ksasl_result ksasl_registry_add_oauthbearer_callback_server(ksasl_registry *r,
                                                            ksasl_token_validator_cb cb,
                                                            void *userdata,
                                                            ksasl_free_fn free_userdata);

/**
 * Creates a refresher with `sasl.login.refresh.*` values (window factor 0.8, jitter 0.05,
 * min period 60 s, buffer 300 s are Kafka's defaults); out-of-range values fail with Kafka's
 * message (`ksasl_last_constructor_error`).
 */
ksasl_result ksasl_refresher_new(double window_factor,
                                 double window_jitter,
                                 int64_t min_period_seconds,
                                 int64_t buffer_seconds,
                                 ksasl_refresher **out);

/**
 * Frees a refresher (NULL is a no-op); connections and trackers using it keep it alive.
 */
void ksasl_refresher_free(ksasl_refresher *r);

/**
 * The detail of the refresher's last failure.
 */
const char *ksasl_refresher_last_error(const ksasl_refresher *r);

/**
 * Sets the refresh callback used by `ksasl_refresher_run_due`. The library takes
 * `userdata` in every case: `free_userdata` (if given) is called when the callback is
 * replaced or the refresher freed, and also at once if this call fails.
 */
ksasl_result ksasl_refresher_set_refresh_callback(ksasl_refresher *r,
                                                  ksasl_refresh_cb cb,
                                                  void *userdata,
                                                  ksasl_free_fn free_userdata);

/**
 * Runs the refresh callback for a request already claimed by `ksasl_refresher_poll` or
 * reported by `ksasl_tracker_poll` (`*refresh` = 1). Without a callback, the request is
 * answered as a failure.
 */
ksasl_result ksasl_refresher_invoke_callback(ksasl_refresher *r, int64_t now_ms);

/**
 * Runs the callback if a refresh is due; `*ran` (may be NULL) tells whether it did.
 */
ksasl_result ksasl_refresher_run_due(ksasl_refresher *r, int64_t now_ms, int *ran);

/**
 * Pull form: 1 when the host must fetch a credential now (the request is then outstanding).
 */
int ksasl_refresher_poll(const ksasl_refresher *r, int64_t now_ms);

/**
 * Installs a token: text, absolute expiry in ms, principal, and `n_extensions` extension
 * names and values (arrays may be NULL when `n_extensions` is 0).
 */
ksasl_result ksasl_refresher_set_token(ksasl_refresher *r,
                                       const char *token,
                                       int64_t expiry_ms,
                                       const char *principal,
                                       const char *const *extension_names,
                                       const char *const *extension_values,
                                       size_t n_extensions,
                                       int64_t now_ms);

/**
 * Reports a failed refresh; the old token stays while valid and the next attempt is due
 * after the retry backoff (10 s).
 */
ksasl_result ksasl_refresher_set_token_failure(ksasl_refresher *r,
                                               const char *reason,
                                               int64_t now_ms);

/**
 * When a refresh is next due (ms; 0 means now, as for a refresher that holds nothing yet),
 * or -1 if none is scheduled (stopped, or a request is outstanding).
 */
int64_t ksasl_refresher_next_deadline(const ksasl_refresher *r);

/**
 * The generation of the current credential (0: none yet).
 */
uint64_t ksasl_refresher_generation(const ksasl_refresher *r);

/**
 * Adds an OAUTHBEARER client that presents the refresher's current token.
 */
ksasl_result ksasl_registry_add_oauthbearer_client(ksasl_registry *reg, const ksasl_refresher *r);

/**
 * Creates a tracker for `refresher`; after a refresh, connections on the old credential are
 * asked to re-authenticate spread over `spread_window_ms`.
 */
ksasl_result ksasl_tracker_new(const ksasl_refresher *r,
                               int64_t spread_window_ms,
                               ksasl_tracker **out);

/**
 * Frees a tracker (NULL is a no-op).
 */
void ksasl_tracker_free(ksasl_tracker *t);

/**
 * The detail of the tracker's last failure.
 */
const char *ksasl_tracker_last_error(const ksasl_tracker *t);

/**
 * Records that connection `id` (re-)authenticated with credential `generation`; `lifetime_ms`,
 * `reauth_at_ms` and `expiry_ms` come from `ksasl_client_conn_session` (-1: none).
 */
ksasl_result ksasl_tracker_authenticated(ksasl_tracker *t,
                                         uint64_t id,
                                         uint64_t generation,
                                         int64_t lifetime_ms,
                                         int64_t reauth_at_ms,
                                         int64_t expiry_ms);

/**
 * Forgets a closed connection.
 */
ksasl_result ksasl_tracker_forget(ksasl_tracker *t, uint64_t id);

/**
 * The next instant to call `ksasl_tracker_poll` (-1: none; 0: now).
 */
int64_t ksasl_tracker_next_deadline(const ksasl_tracker *t);

/**
 * What is due at `now_ms`: `*refresh` is 1 when a credential must be fetched (answer the
 * refresher); `*ids`/`*n` list connections to re-authenticate (borrowed).
 */
ksasl_result ksasl_tracker_poll(ksasl_tracker *t,
                                int64_t now_ms,
                                int *refresh,
                                const uint64_t **ids,
                                size_t *n);

/**
 * Creates an empty store.
 */
ksasl_result ksasl_store_new(ksasl_store **out);

/**
 * Frees a store (NULL is a no-op). Registries that use it keep it alive.
 */
void ksasl_store_free(ksasl_store *store);

/**
 * The detail of the store's last failure.
 */
const char *ksasl_store_last_error(const ksasl_store *store);

/**
 * Adds or replaces a user for PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 (SCRAM credentials
 * derived with random salts and `iterations`, at least 4096).
 */
ksasl_result ksasl_store_add_user(ksasl_store *store,
                                  const char *username,
                                  const char *password,
                                  uint32_t iterations);

/**
 * Sets a user's SCRAM credential from Kafka's text form
 * (`salt=...,stored_key=...,server_key=...,iterations=...`) for `mechanism`.
 */
ksasl_result ksasl_store_set_scram(ksasl_store *store,
                                   const char *username,
                                   const char *mechanism,
                                   const char *credential);

/**
 * Sets (expiry_ms >= 0) or clears (expiry_ms < 0) an absolute expiry on a user's credentials.
 */
ksasl_result ksasl_store_set_user_expiry(ksasl_store *store,
                                         const char *username,
                                         int64_t expiry_ms);

/**
 * Removes a user. `*existed` (if not NULL) tells whether it was there.
 */
ksasl_result ksasl_store_remove_user(ksasl_store *store, const char *username, int *existed);

/**
 * Adds a delegation token's SCRAM credential (Kafka text form) for `mechanism`, owned by
 * `owner`, expiring at `expiry_ms` (< 0: no expiry).
 */
ksasl_result ksasl_store_set_token(ksasl_store *store,
                                   const char *token_id,
                                   const char *mechanism,
                                   const char *credential,
                                   const char *owner,
                                   int64_t expiry_ms);

/**
 * The mechanism asking (`"SCRAM-SHA-256"`, ...).
 */
const char *ksasl_credential_request_mechanism(const ksasl_credential_request *r);

/**
 * The username (the token id for delegation-token logins).
 */
const char *ksasl_credential_request_username(const ksasl_credential_request *r);

/**
 * 1 for a delegation-token login (`tokenauth=true`).
 */
int ksasl_credential_request_token_auth(const ksasl_credential_request *r);

/**
 * Answers a credential request from inside the callback: `kind` is one of
 * `KSASL_CREDENTIAL_*`; `value` is the password, the Kafka SCRAM string or the reason;
 * `expiry_ms` < 0 means none; `token_owner` (NULL for users) marks a delegation token.
 */
ksasl_result ksasl_credential_answer_set(ksasl_credential_answer *a,
                                         ksasl_credential_kind kind,
                                         const char *value,
                                         int64_t expiry_ms,
                                         const char *token_owner);

/**
 * Creates an empty registry.
 */
ksasl_result ksasl_registry_new(ksasl_registry **out);

/**
 * Frees a registry (NULL is a no-op).
 */
void ksasl_registry_free(ksasl_registry *r);

/**
 * The detail of the registry's last failure.
 */
const char *ksasl_registry_last_error(const ksasl_registry *r);

/**
 * Adds the PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 servers. With a store they look
 * credentials up there; with NULL they use the credential callback if one is set, and
 * otherwise stop with a credential request (the pull form). A token authority given to
 * `ksasl_registry_add_password_servers_with_tokens` keeps answering `tokenauth` logins.
 */
ksasl_result ksasl_registry_add_password_servers(ksasl_registry *r, const ksasl_store *store);

/**
 * Sets a credential callback consulted by every server exchange of this registry (it
 * replaces a store given to `ksasl_registry_add_password_servers`; `tokenauth` logins still
 * go to a token authority given to `ksasl_registry_add_password_servers_with_tokens`).
 * `free_userdata`, if given, is called when the registry no longer needs `userdata`; the
 * library takes `userdata` in every case, so it is also freed at once if this call fails.
 */
ksasl_result ksasl_registry_set_credential_callback(ksasl_registry *r,
                                                    ksasl_credential_cb cb,
                                                    void *userdata,
                                                    ksasl_free_fn free_userdata);

/**
 * Adds PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 clients for a username and password.
 */
ksasl_result ksasl_registry_add_password_clients(ksasl_registry *r,
                                                 const char *username,
                                                 const char *password);

/**
 * Adds SCRAM-SHA-256 and SCRAM-SHA-512 clients that log in with a delegation token (token id
 * and base64 HMAC; `tokenauth=true`).
 */
ksasl_result ksasl_registry_add_token_clients(ksasl_registry *r,
                                              const char *token_id,
                                              const char *token_hmac);

/**
 * The number of client (`server` = 0) or server (`server` = 1) mechanisms.
 */
size_t ksasl_registry_mechanism_count(const ksasl_registry *r, int server);

/**
 * Makes a token from its parts (for example a token a client persisted): id, owner
 * (`TYPE:NAME` or a bare user name), requester (NULL: the owner), HMAC bytes and
 * timestamps. Renewers are not needed to log in and are left empty.
 */
ksasl_result ksasl_delegation_token_new(const char *token_id,
                                        const char *owner,
                                        const char *requester,
                                        const uint8_t *hmac,
                                        size_t hmac_len,
                                        int64_t issue_ms,
                                        int64_t expiry_ms,
                                        int64_t max_ms,
                                        ksasl_delegation_token **out);

/**
 * The same token with a new expiry (after a renewal), as a new token.
 */
ksasl_result ksasl_delegation_token_renewed(const ksasl_delegation_token *t,
                                            int64_t expiry_ms,
                                            ksasl_delegation_token **out);

/**
 * Frees a token (NULL is a no-op). Never free a token borrowed from a list.
 */
void ksasl_delegation_token_free(ksasl_delegation_token *t);

/**
 * The token id (the SCRAM username of a `tokenauth` login); NULL for NULL.
 */
const char *ksasl_delegation_token_id(const ksasl_delegation_token *t);

/**
 * The HMAC (64 bytes from an authority; a secret), borrowed from the token.
 */
ksasl_result ksasl_delegation_token_hmac(const ksasl_delegation_token *t,
                                         const uint8_t **hmac,
                                         size_t *hmac_len);

/**
 * The SCRAM password of the token: standard base64 of the HMAC, with padding (a secret: do
 * not log it); NULL for NULL.
 */
const char *ksasl_delegation_token_hmac_base64(const ksasl_delegation_token *t);

/**
 * The owner (`"User:alice"`): whom a login with the token authenticates as; NULL for NULL.
 */
const char *ksasl_delegation_token_owner(const ksasl_delegation_token *t);

/**
 * Who asked for the token (the owner unless created on someone's behalf); NULL for NULL.
 */
const char *ksasl_delegation_token_requester(const ksasl_delegation_token *t);

/**
 * How many renewers the token has (0 for NULL, and for a token from a
 * CreateDelegationToken response, which does not carry them).
 */
size_t ksasl_delegation_token_renewer_count(const ksasl_delegation_token *t);

/**
 * Renewer `index` (`"User:bob"`); NULL for NULL or an index out of range.
 */
const char *ksasl_delegation_token_renewer(const ksasl_delegation_token *t, size_t index);

/**
 * When the token was issued (ms since the epoch; -1 for NULL).
 */
int64_t ksasl_delegation_token_issue_ms(const ksasl_delegation_token *t);

/**
 * When the token expires unless renewed (-1 for NULL).
 */
int64_t ksasl_delegation_token_expiry_ms(const ksasl_delegation_token *t);

/**
 * The latest expiry any renewal can reach (-1 for NULL).
 */
int64_t ksasl_delegation_token_max_ms(const ksasl_delegation_token *t);

/**
 * Frees a token list and the tokens borrowed from it (NULL is a no-op).
 */
void ksasl_delegation_token_list_free(ksasl_delegation_token_list *l);

/**
 * The number of tokens in the list (0 for NULL).
 */
size_t ksasl_delegation_token_list_count(const ksasl_delegation_token_list *l);

/**
 * Token `index`, borrowed from the list (valid until the list is freed); NULL for NULL or an
 * index out of range.
 */
const ksasl_delegation_token *ksasl_delegation_token_list_get(const ksasl_delegation_token_list *l,
                                                              size_t index);

/**
 * Creates an authority: `secret_key` is `delegation.token.secret.key` (the same on every
 * broker; must not be empty), then `delegation.token.max.lifetime.ms`,
 * `delegation.token.expiry.time.ms` and `delegation.token.expiry.check.interval.ms` (each at
 * least 1; Kafka's defaults are `KSASL_TOKEN_DEFAULT_*`). `KSASL_INVALID_CONFIG` otherwise.
 */
ksasl_result ksasl_token_authority_new(const char *secret_key,
                                       int64_t max_lifetime_ms,
                                       int64_t expiry_time_ms,
                                       int64_t expiry_check_interval_ms,
                                       ksasl_token_authority **out);

/**
 * Another handle on the same authority (the same tokens), with its own outputs and last
 * error. The authority lives while any handle or registry uses it.
 */
ksasl_result ksasl_token_authority_share(const ksasl_token_authority *a,
                                         ksasl_token_authority **out);

/**
 * Frees a handle (NULL is a no-op); registries and other handles keep the authority alive.
 */
void ksasl_token_authority_free(ksasl_token_authority *a);

/**
 * The detail of the handle's last failure.
 */
const char *ksasl_token_authority_last_error(const ksasl_token_authority *a);

/**
 * Creates a token for `owner` (`TYPE:NAME`, or a bare name for `User:<name>`; only `User`
 * principals may own or renew tokens: `KSASL_INVALID_PRINCIPAL_TYPE`) requested by `requester` (NULL: the owner),
 * renewable by the `n_renewers` principals of `renewers` (NULL when 0). `max_lifetime_ms` > 0
 * shortens the maximum lifetime; 0 or less takes the authority's. `*token` is a new token
 * (free it).
 */
ksasl_result ksasl_token_authority_create(ksasl_token_authority *a,
                                          const char *owner,
                                          const char *requester,
                                          const char *const *renewers,
                                          size_t n_renewers,
                                          int64_t max_lifetime_ms,
                                          int64_t now_ms,
                                          ksasl_delegation_token **token);

/**
 * Renews the token whose HMAC is `hmac` for `caller` (`TYPE:NAME`, its owner or a renewer):
 * the new expiry, written to `*expiry_ms`, is `now + period` capped by the token's maximum,
 * the period being `delegation.token.expiry.time.ms` or the smaller `period_ms` when
 * positive. Fails with `KSASL_DELEGATION_TOKEN_NOT_FOUND`, `_OWNER_MISMATCH` or `_EXPIRED`.
 */
ksasl_result ksasl_token_authority_renew(ksasl_token_authority *a,
                                         const uint8_t *hmac,
                                         size_t hmac_len,
                                         const char *caller,
                                         int64_t period_ms,
                                         int64_t now_ms,
                                         int64_t *expiry_ms);

/**
 * Expires the token whose HMAC is `hmac` for `caller`: a negative `period_ms` removes it now
 * (`*expiry_ms` = `now_ms`); otherwise its expiry becomes `now + period_ms` capped by its
 * maximum. Errors as `ksasl_token_authority_renew`.
 */
ksasl_result ksasl_token_authority_expire(ksasl_token_authority *a,
                                          const uint8_t *hmac,
                                          size_t hmac_len,
                                          const char *caller,
                                          int64_t period_ms,
                                          int64_t now_ms,
                                          int64_t *expiry_ms);

/**
 * The tokens owned by one of the `n_owners` principals of `owners`, with their HMACs, in
 * token-id order; `owners` NULL (with `n_owners` 0) describes every token. `*list` is a new
 * list (free it). Who may see what is the host's decision.
 */
ksasl_result ksasl_token_authority_describe(ksasl_token_authority *a,
                                            const char *const *owners,
                                            size_t n_owners,
                                            ksasl_delegation_token_list **list);

/**
 * Removes every token expired at `now_ms`: `*n_removed` is how many, and `*ids` (may be
 * NULL) their ids (borrowed until the next call on this handle). Call at
 * `ksasl_token_authority_next_sweep_ms`.
 */
ksasl_result ksasl_token_authority_sweep(ksasl_token_authority *a,
                                         int64_t now_ms,
                                         const char *const **ids,
                                         size_t *n_removed);

/**
 * When the next sweep is due (ms; 0 means now, as before the first sweep; -1 for NULL).
 */
int64_t ksasl_token_authority_next_sweep_ms(const ksasl_token_authority *a);

/**
 * The HMAC of `token_id` under the authority's secret key (HMAC-SHA512; a secret), borrowed
 * until the next call on this handle.
 */
ksasl_result ksasl_token_authority_hmac(ksasl_token_authority *a,
                                        const char *token_id,
                                        const uint8_t **hmac,
                                        size_t *hmac_len);

/**
 * Every token as a JSON array of records, for the host to persist (no secret inside: HMACs
 * are recomputed from the secret key). Borrowed until the next call on this handle.
 */
ksasl_result ksasl_token_authority_export_records(ksasl_token_authority *a, const char **json);

/**
 * Loads records written by `ksasl_token_authority_export_records` (replacing tokens with
 * the same id); `*loaded` (may be NULL) is how many. Nothing is loaded if any record is
 * malformed (`KSASL_INVALID_CREDENTIAL_FORMAT`).
 */
ksasl_result ksasl_token_authority_import_records(ksasl_token_authority *a,
                                                  const char *json,
                                                  size_t *loaded);

/**
 * Serves one delegation-token request (api key 38-41; `frame` without its length prefix)
 * of a connection authenticated as `principal` (`TYPE:NAME` as `ksasl_server_conn_session`
 * gives it, or a bare user name), `token_authenticated` 1 when that connection logged in with a token
 * (`ksasl_server_conn_token_authenticated`; such connections get error 64). `*out` /
 * `*out_len` are the response frame, length prefix included (borrowed until the next call
 * on this handle); failed operations are Kafka error codes inside it. A request that cannot
 * be parsed is an error (close the connection, as Kafka does).
 */
ksasl_result ksasl_token_authority_handle_request(ksasl_token_authority *a,
                                                  const uint8_t *frame,
                                                  size_t frame_len,
                                                  const char *principal,
                                                  int token_authenticated,
                                                  int64_t now_ms,
                                                  const uint8_t **out,
                                                  size_t *out_len);

/**
 * Adds the PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 servers, with delegation-token logins
 * (`tokenauth=true`) answered by `authority` and user logins from `store`; with a NULL
 * store, user logins go to the registry's credential callback (set before or after this
 * call) or, without one, to the host (the pull form). The registry keeps the authority
 * alive.
 */
ksasl_result ksasl_registry_add_password_servers_with_tokens(ksasl_registry *r,
                                                             const ksasl_store *store,
                                                             const ksasl_token_authority *authority);

/**
 * Adds PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 clients that log in with the refresher's
 * current password credential, taken at the start of every (re-)authentication: a
 * delegation token installed with `ksasl_refresher_set_delegation_token` (SCRAM only).
 */
ksasl_result ksasl_registry_add_refreshing_password_clients(ksasl_registry *reg,
                                                            const ksasl_refresher *refresher);

/**
 * Installs a delegation token in the refresher: refreshed on Kafka's schedule before its
 * expiry, never past its maximum (answer each refresh with a renewed token,
 * `ksasl_delegation_token_renewed`, or a new one). `KSASL_INVALID_CREDENTIAL_EXPIRY` for a
 * token whose expiry is not after `now_ms` or whose issue time is after its expiry.
 */
ksasl_result ksasl_refresher_set_delegation_token(ksasl_refresher *r,
                                                  const ksasl_delegation_token *token,
                                                  int64_t now_ms);

/**
 * Adds the token APIs (38-41) to the listener's ApiVersions response, for a server that
 * serves them with `ksasl_token_authority_handle_request`: every version the codec speaks
 * (`kafka4` = 0), or what an Apache Kafka 4 broker advertises (`kafka4` = 1: minimum
 * version 1, KIP-896). Configure before creating connections.
 */
ksasl_result ksasl_server_config_add_token_api_versions(ksasl_server_config *c, int kafka4);

/**
 * Creates a codec.
 */
ksasl_result ksasl_token_codec_new(ksasl_token_codec **out);

/**
 * Frees a codec (NULL is a no-op).
 */
void ksasl_token_codec_free(ksasl_token_codec *c);

/**
 * The detail of the codec's last failure.
 */
const char *ksasl_token_codec_last_error(const ksasl_token_codec *c);

/**
 * The Kafka error code of the last response parsed (0: none; e.g. 64 for
 * DELEGATION_TOKEN_REQUEST_NOT_ALLOWED; also 0 for NULL), for the codes that share a ksasl
 * result code.
 */
int16_t ksasl_token_codec_kafka_error(const ksasl_token_codec *c);

/**
 * A CreateDelegationToken request frame (`version` 0-3): `owner` (`TYPE:NAME`, v3+; NULL:
 * the requester), the `n_renewers` renewers, `max_lifetime_ms` (-1: the broker's default),
 * `client_id` (may be NULL). Borrowed until the next call on this codec.
 */
ksasl_result ksasl_token_codec_create_request(ksasl_token_codec *c,
                                              int16_t version,
                                              int32_t correlation_id,
                                              const char *client_id,
                                              const char *owner,
                                              const char *const *renewers,
                                              size_t n_renewers,
                                              int64_t max_lifetime_ms,
                                              const uint8_t **out,
                                              size_t *out_len);

/**
 * A RenewDelegationToken request frame (`version` 0-2) for the token with this HMAC;
 * `renew_period_ms` <= 0 asks for the broker's default period.
 */
ksasl_result ksasl_token_codec_renew_request(ksasl_token_codec *c,
                                             int16_t version,
                                             int32_t correlation_id,
                                             const char *client_id,
                                             const uint8_t *hmac,
                                             size_t hmac_len,
                                             int64_t renew_period_ms,
                                             const uint8_t **out,
                                             size_t *out_len);

/**
 * An ExpireDelegationToken request frame (`version` 0-2) for the token with this HMAC; a
 * negative `expiry_period_ms` expires it at once.
 */
ksasl_result ksasl_token_codec_expire_request(ksasl_token_codec *c,
                                              int16_t version,
                                              int32_t correlation_id,
                                              const char *client_id,
                                              const uint8_t *hmac,
                                              size_t hmac_len,
                                              int64_t expiry_period_ms,
                                              const uint8_t **out,
                                              size_t *out_len);

/**
 * A DescribeDelegationToken request frame (`version` 0-3) for the tokens of the `n_owners`
 * owners; `owners` NULL (with `n_owners` 0) asks for every token the caller may see.
 */
ksasl_result ksasl_token_codec_describe_request(ksasl_token_codec *c,
                                                int16_t version,
                                                int32_t correlation_id,
                                                const char *client_id,
                                                const char *const *owners,
                                                size_t n_owners,
                                                const uint8_t **out,
                                                size_t *out_len);

/**
 * Reads a CreateDelegationToken response (`version` 0-3, `frame` without its length
 * prefix): `*token` is the new token (free it). A response carrying a Kafka error is that
 * error (`KSASL_DELEGATION_TOKEN_REQUEST_NOT_ALLOWED`, ...; `ksasl_token_codec_kafka_error`
 * has the Kafka code).
 */
ksasl_result ksasl_token_codec_parse_create_response(ksasl_token_codec *c,
                                                     int16_t version,
                                                     const uint8_t *frame,
                                                     size_t frame_len,
                                                     ksasl_delegation_token **token);

/**
 * Reads a RenewDelegationToken or ExpireDelegationToken response (`version` 0-2; the two
 * have the same schema): `*expiry_ms` is the token's new expiry. A Kafka error is returned
 * as its ksasl code (61-67 as `KSASL_DELEGATION_TOKEN_*` / `KSASL_INVALID_PRINCIPAL_TYPE`,
 * any other as `KSASL_KAFKA_ERROR`; `ksasl_token_codec_kafka_error` has the Kafka code).
 */
ksasl_result ksasl_token_codec_parse_expiry_response(ksasl_token_codec *c,
                                                     int16_t version,
                                                     const uint8_t *frame,
                                                     size_t frame_len,
                                                     int64_t *expiry_ms);

/**
 * Reads a DescribeDelegationToken response (`version` 0-3): `*list` is a new list (free
 * it). A Kafka error is returned as its ksasl code.
 */
ksasl_result ksasl_token_codec_parse_describe_response(ksasl_token_codec *c,
                                                       int16_t version,
                                                       const uint8_t *frame,
                                                       size_t frame_len,
                                                       ksasl_delegation_token_list **list);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* KSASL_H */
