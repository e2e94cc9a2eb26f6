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

/* Result codes (src/tables/error_codes.in): 1xx misuse, 2xx protocol, 3xx authentication, 4xx credential, 5xx internal. */
#define KSASL_OK 0
/** An argument is out of range or malformed. */
#define KSASL_INVALID_ARGUMENT 100
/** `step` was called after the exchange completed. */
#define KSASL_STEP_AFTER_DONE 101
/** `step` was called after the exchange failed. */
#define KSASL_STEP_AFTER_FAILURE 102
/** A call that does not fit the current state (for example supplying a credential  nobody asked for, or stepping while a credential is awaited). */
#define KSASL_WRONG_STATE 103
/** No mechanism of that name is registered. */
#define KSASL_UNKNOWN_MECHANISM 104
/** A configuration value is invalid. */
#define KSASL_INVALID_CONFIG 105
/** A required pointer argument was NULL (C ABI). */
#define KSASL_NULL_ARGUMENT 106
/** The message does not follow the mechanism's grammar (empty, truncated, attributes  missing or out of order). */
#define KSASL_MALFORMED_MESSAGE 200
/** A field that must be base64 is not valid standard base64. */
#define KSASL_INVALID_BASE64 201
/** The message is not valid UTF-8, or not ASCII where the protocol requires ASCII. */
#define KSASL_INVALID_ENCODING 202
/** The client asked for channel binding (gs2 flag `y` or `p=`), which Kafka does not use. */
#define KSASL_UNSUPPORTED_CHANNEL_BINDING 203
/** A SCRAM nonce does not continue or repeat the agreed nonce. */
#define KSASL_NONCE_MISMATCH 204
/** The server asked for fewer than the minimum number of PBKDF2 iterations. */
#define KSASL_ITERATIONS_TOO_LOW 205
/** The server asked for more PBKDF2 iterations than the client's cap allows. */
#define KSASL_ITERATIONS_TOO_HIGH 206
/** A message is larger than the configured maximum. */
#define KSASL_MESSAGE_TOO_LARGE 207
/** A username is empty, not ASCII, or wrongly escaped. */
#define KSASL_INVALID_USERNAME 208
/** A PLAIN message does not have exactly three NUL-separated fields. */
#define KSASL_INVALID_PLAIN_MESSAGE 209
/** A challenge arrived where the mechanism expects none (or an empty one). */
#define KSASL_UNEXPECTED_CHALLENGE 210
/** The SCRAM server ended the exchange with an `e=` error attribute. */
#define KSASL_SERVER_REPORTED_ERROR 211
/** A nonce is empty or holds characters outside printable ASCII. */
#define KSASL_INVALID_NONCE 212
/** A SASL extension name or value is invalid. */
#define KSASL_INVALID_EXTENSION 213
/** The mechanism is not enabled (Kafka error 33, UNSUPPORTED_SASL_MECHANISM). */
#define KSASL_UNSUPPORTED_SASL_MECHANISM 214
/** A request arrived in a state that does not allow it (Kafka error 34, ILLEGAL_SASL_STATE). */
#define KSASL_ILLEGAL_SASL_STATE 215
/** The peer used an API version the other side does not support (Kafka error 35). */
#define KSASL_UNSUPPORTED_VERSION 216
/** A Kafka request or response is malformed: truncated, garbage after the body, bad  lengths (Kafka error 42, INVALID_REQUEST, on the server side). */
#define KSASL_INVALID_REQUEST 217
/** A frame length is negative. */
#define KSASL_INVALID_FRAME_SIZE 218
/** A response does not answer the request it should (correlation id or API mismatch). */
#define KSASL_CORRELATION_MISMATCH 219
/** The peer closed the connection during (re-)authentication. */
#define KSASL_CONNECTION_CLOSED 220
/** The broker answered with a Kafka error code ksasl has no more specific code for. */
#define KSASL_KAFKA_ERROR 221
/** A SCRAM client-first or server-first message carries the reserved `m=` attribute,  which RFC 5802 (section 5.1) requires the receiver to refuse. */
#define KSASL_SCRAM_RESERVED_ATTRIBUTE 222
/** The password or proof is wrong. */
#define KSASL_INVALID_CREDENTIALS 300
/** The user is not known to the server. */
#define KSASL_UNKNOWN_USER 301
/** The client asked to act as an identity other than the one it authenticated as. */
#define KSASL_AUTHZID_MISMATCH 302
/** The server's SCRAM signature does not verify: the server does not know the password  (or is an impostor). */
#define KSASL_INVALID_SERVER_SIGNATURE 303
/** The client sent an empty username. */
#define KSASL_USERNAME_NOT_SPECIFIED 304
/** The client sent an empty password. */
#define KSASL_PASSWORD_NOT_SPECIFIED 305
/** A delegation token id (`tokenauth=true`) is not known. */
#define KSASL_UNKNOWN_TOKEN 306
/** The server reported that authentication failed (client side; the server's text and,  for OAUTHBEARER, its `status`, `scope` and `openid-configuration` are in the details). */
#define KSASL_SERVER_REJECTED_AUTHENTICATION 307
/** The token's `exp` has passed (allowing for clock skew). */
#define KSASL_TOKEN_EXPIRED 308
/** The token is not valid yet (`nbf`, or for unsecured tokens `iat`, in the future). */
#define KSASL_TOKEN_NOT_YET_VALID 309
/** The token's issuer is not the expected one. */
#define KSASL_TOKEN_INVALID_ISSUER 310
/** The token's audience holds none of the expected audiences. */
#define KSASL_TOKEN_INVALID_AUDIENCE 311
/** A required claim (subject, `exp`, `iat`) is missing or blank. */
#define KSASL_TOKEN_MISSING_CLAIM 312
/** A claim has the wrong type or an impossible value. */
#define KSASL_TOKEN_INVALID_CLAIM 313
/** No key of the JWKS matches the token's `kid`: the host should refetch the JWKS. */
#define KSASL_TOKEN_UNKNOWN_KEY 314
/** The token's signature does not verify. */
#define KSASL_TOKEN_BAD_SIGNATURE 315
/** The token's algorithm is not allowed (`none` on the signed path, HMAC without a  configured secret, an algorithm the key cannot serve). */
#define KSASL_TOKEN_ALGORITHM_REFUSED 316
/** The token is not a well-formed JWT (parts, base64, JSON, header without `alg`). */
#define KSASL_TOKEN_MALFORMED 317
/** The token is larger than the validator accepts. */
#define KSASL_TOKEN_TOO_LARGE 318
/** The token lacks a required scope. */
#define KSASL_INSUFFICIENT_SCOPE 319
/** The server's extension validator refused some SASL extensions. */
#define KSASL_INVALID_EXTENSIONS 320
/** A host-supplied validator rejected the token. */
#define KSASL_TOKEN_REJECTED 321
/** The session expired: the broker closes the connection on its next request. */
#define KSASL_SESSION_EXPIRED 322
/** Re-authentication tried to change the principal (KIP-368 forbids it). */
#define KSASL_PRINCIPAL_CHANGED 323
/** Re-authentication tried to change the mechanism (KIP-368 forbids it). */
#define KSASL_MECHANISM_CHANGED 324
/** A mechanism written by the host (in C, Python or Java) failed: it raised, or answered  in a way the protocol does not allow. The message is the host's. */
#define KSASL_HOST_MECHANISM_FAILED 325
/** The Kerberos ticket presented (or the client's own ticket-granting ticket) has expired. */
#define KSASL_KERBEROS_TICKET_EXPIRED 326
/** A Kerberos authenticator was presented twice (the acceptor's replay cache caught it). */
#define KSASL_KERBEROS_REPLAY 327
/** The Kerberos ticket is for another service or host than this server, or the client  asked for a service the KDC does not know. */
#define KSASL_KERBEROS_WRONG_SERVICE 328
/** The ticket could not be decrypted with the key in the keytab: the keytab is out of  date (a key version or a key the KDC no longer uses) or belongs to another principal. */
#define KSASL_KERBEROS_KEY_MISMATCH 329
/** Any other GSS-API or Kerberos failure; the message carries the library's own text. */
#define KSASL_GSS_FAILED 330
/** The GSSAPI security-layer negotiation failed: the peer offered or chose a layer other  than "no security layer", which is the only one Kafka uses. */
#define KSASL_SECURITY_LAYER_REFUSED 331
/** A credential string or record cannot be parsed. */
#define KSASL_INVALID_CREDENTIAL_FORMAT 400
/** A stored SCRAM credential has fewer than the minimum number of iterations. */
#define KSASL_CREDENTIAL_ITERATIONS_TOO_LOW 401
/** The credential store failed to answer a lookup. */
#define KSASL_CREDENTIAL_LOOKUP_FAILED 402
/** The supplied credential cannot serve this mechanism. */
#define KSASL_CREDENTIAL_MECHANISM_MISMATCH 403
/** No valid credential is available (none yet, or the last one expired). */
#define KSASL_NO_VALID_CREDENTIAL 404
/** A credential's expiry is in the past, looks relative or in seconds, or is absurdly far  in the future. */
#define KSASL_INVALID_CREDENTIAL_EXPIRY 405
/** A refresh answer reached a refresher that no longer exists. */
#define KSASL_REFRESHER_GONE 406
/** No delegation token has this id or HMAC (Kafka's DELEGATION_TOKEN_NOT_FOUND, 62). */
#define KSASL_DELEGATION_TOKEN_NOT_FOUND 407
/** Only the token's owner or a renewer may do this (DELEGATION_TOKEN_OWNER_MISMATCH, 63). */
#define KSASL_DELEGATION_TOKEN_OWNER_MISMATCH 408
/** The delegation token has expired (DELEGATION_TOKEN_EXPIRED, 66). */
#define KSASL_DELEGATION_TOKEN_EXPIRED 409
/** A renewer or owner is not a `User` principal (INVALID_PRINCIPAL_TYPE, 67). */
#define KSASL_INVALID_PRINCIPAL_TYPE 410
/** Delegation-token requests are not allowed on this connection, e.g. one that itself  authenticated with a token (DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, 64). */
#define KSASL_DELEGATION_TOKEN_REQUEST_NOT_ALLOWED 411
/** No `sasl.kerberos.principal.to.local.rules` rule maps this Kerberos principal to a short  name, or the rule that applied left a `/` or `@` in it (Kafka's `NoMatchingRule`). */
#define KSASL_KERBEROS_NAME_UNMAPPED 412
/** The system's GSS-API library (MIT Kerberos, `libgssapi_krb5.so.2`) cannot be loaded,  so GSSAPI cannot be used; nothing else is affected. */
#define KSASL_GSSAPI_UNAVAILABLE 413
/** Logging in to Kerberos failed: no ticket-granting ticket could be obtained from the  keytab or found in the credential cache. */
#define KSASL_KERBEROS_LOGIN_FAILED 414
/** The identity provider answered a token request with an error that retrying will not  change (an HTTP 4xx such as `invalid_client`); its `error_description` is in the message. */
#define KSASL_OIDC_REQUEST_REFUSED 415
/** The identity provider could not be reached or kept failing (connection refused, a  timeout, an HTTP 5xx) until the retry budget ran out. */
#define KSASL_OIDC_PROVIDER_UNAVAILABLE 416
/** The identity provider answered, but not with a usable token or key set (not JSON, no  `access_token`, a token without `exp` or subject, an oversized body). */
#define KSASL_OIDC_BAD_RESPONSE 417
/** The identity provider's TLS certificate was refused (unknown CA, wrong host name,  expired): nothing was sent. */
#define KSASL_TLS_CERTIFICATE_REFUSED 418
/** An invariant of the library failed. */
#define KSASL_INTERNAL 500
/** A panic was caught at an API boundary. */
#define KSASL_PANIC 501
/** The operating system's random source failed. */
#define KSASL_RANDOM_SOURCE_FAILED 502

/* The numbered enums (src/tables/wire_enums.in). */
/* How a host answers a credential request. (type ksasl_credential_answer_kind) */
/** The user's clear-text password. */
#define KSASL_CREDENTIAL_ANSWER_PASSWORD 1
/** A SCRAM credential in Kafka's text form (`salt=...,stored_key=...,...`). */
#define KSASL_CREDENTIAL_ANSWER_SCRAM 2
/** No such user (or delegation token). */
#define KSASL_CREDENTIAL_ANSWER_UNKNOWN 3
/** The store could not answer; the value is the reason, kept from the client. */
#define KSASL_CREDENTIAL_ANSWER_UNAVAILABLE 4
/** (Lookups only) the answer comes later, through the pull form. */
#define KSASL_CREDENTIAL_ANSWER_LATER 5

/* What one step of a single server exchange produced. (type ksasl_server_step_kind) */
/** Send the output as a challenge and wait for the client. */
#define KSASL_SERVER_STEP_CHALLENGE 1
/** A credential is needed: answer the pending request. */
#define KSASL_SERVER_STEP_NEED_CREDENTIAL 2
/** The client is authenticated; send the output (if any) as the last message. */
#define KSASL_SERVER_STEP_DONE 3
/** A host mechanism answers later: finish its pending work, then resume. */
#define KSASL_SERVER_STEP_PENDING 4

/* What a frame handed to a client connection meant. (type ksasl_client_event) */
/** A SASL response was consumed; write what the connection transmits. */
#define KSASL_CLIENT_EVENT_CONTINUE 0
/** A response to an application request: process the frame as it is. */
#define KSASL_CLIENT_EVENT_APPLICATION 1
/** Authenticated for the first time. */
#define KSASL_CLIENT_EVENT_AUTHENTICATED 2
/** Re-authenticated; held requests may be sent again. */
#define KSASL_CLIENT_EVENT_REAUTHENTICATED 3
/** A re-authentication failed; the old session holds until it expires (retry policy). */
#define KSASL_CLIENT_EVENT_REAUTH_FAILED 4
/** A host mechanism answers later: finish its pending work, then resume. */
#define KSASL_CLIENT_EVENT_PENDING 5
/** Authentication failed: close the connection. */
#define KSASL_CLIENT_EVENT_FAILED 6

/* What the host does after a server connection handled a frame. (type ksasl_server_action) */
/** Write the output; keep reading authentication frames. */
#define KSASL_SERVER_ACTION_CONTINUE 0
/** Look up the pending credential request and answer it. */
#define KSASL_SERVER_ACTION_NEED_CREDENTIAL 1
/** Write the output; the connection is authenticated. */
#define KSASL_SERVER_ACTION_AUTHENTICATED 2
/** Write the output; the connection re-authenticated. */
#define KSASL_SERVER_ACTION_REAUTHENTICATED 3
/** Write the output; the re-authentication failed but the session holds. */
#define KSASL_SERVER_ACTION_REAUTH_FAILED 4
/** At the deadline write the output, then close (KIP-306's delay). */
#define KSASL_SERVER_ACTION_FAIL_AT 5
/** Close now, writing nothing. */
#define KSASL_SERVER_ACTION_CLOSE_NOW 6
/** A host mechanism answers later: finish its pending work, then resume. */
#define KSASL_SERVER_ACTION_PENDING 7

/* The per-request gate's verdict on a request a server connection received. Only  `Process` lets a request reach the host's handlers, and only under a live session. (type ksasl_gate) */
/** A live session: hand the request to the normal request path. */
#define KSASL_GATE_PROCESS 0
/** A SaslHandshake that starts a re-authentication: pass the frame to the connection. */
#define KSASL_GATE_BEGIN_REAUTHENTICATION 1
/** The session has expired: close the connection now, without a response. */
#define KSASL_GATE_CLOSE_EXPIRED 2
/** No session to serve the request under: the first authentication has not finished,  or a re-authentication is in progress. Pass the frame to the connection, which  answers what belongs to the exchange and refuses anything else as Kafka does  (ILLEGAL_SASL_STATE, then close). */
#define KSASL_GATE_NOT_AUTHENTICATED 3
/** The connection failed (its authentication or a re-authentication) or was refused:  close it now, without a response. */
#define KSASL_GATE_CLOSE 4

/* When, within a session, a client re-authenticates. (type ksasl_reauth_timing) */
/** Apache Kafka's Java client: a uniformly random 85-95 % of the lifetime. */
#define KSASL_REAUTH_KAFKA 0
/** librdkafka: exactly 90 %. */
#define KSASL_REAUTH_LIBRDKAFKA 1
/** franz-go: a random 95-98 %, leaving at least one second. */
#define KSASL_REAUTH_FRANZ_GO 2
/** Never re-authenticate (the broker then closes the connection at expiry). */
#define KSASL_REAUTH_DISABLED 3


/**
 * AWS credentials (an access key, its secret, a session token and an expiry for temporary
 * ones). The secret and the token are wiped when the handle is freed.
 */
typedef struct ksasl_aws_credentials ksasl_aws_credentials;

/**
 * The access keys an `AWS_MSK_IAM` verifying server accepts; shared by registries (thread-safe,
 * changeable while connections run).
 */
typedef struct ksasl_aws_key_store ksasl_aws_key_store;

/**
 * A built client configuration: immutable, shared by its connections and threads.
 */
typedef struct ksasl_client_config ksasl_client_config;

/**
 * The values of a client configuration; unset values keep Kafka's defaults.
 */
typedef struct ksasl_client_config_builder ksasl_client_config_builder;

/**
 * A client connection's SASL state.
 */
typedef struct ksasl_client_connection ksasl_client_connection;

/**
 * A client exchange for one mechanism.
 */
typedef struct ksasl_client_exchange ksasl_client_exchange;

/**
 * A client built from its properties (`ksasl_client_setup_new`): its configuration, its
 * refresher, and what the host still has to do. Its strings are owned by the handle and
 * valid until `ksasl_client_setup_free`. Read-only functions may be called from any thread;
 * `ksasl_client_setup_with_registry` is not called concurrently with the others.
 */
typedef struct ksasl_client_setup ksasl_client_setup;

/**
 * What `ksasl_config_check` found, as text (`ksasl_config_report_text`).
 */
typedef struct ksasl_config_report ksasl_config_report;

/**
 * Where a credential callback writes its answer.
 */
typedef struct ksasl_credential_answer ksasl_credential_answer;

/**
 * A credential request, as a credential callback sees it.
 */
typedef struct ksasl_credential_request ksasl_credential_request;

/**
 * An in-memory credential store (users and delegation tokens). Thread-safe.
 */
typedef struct ksasl_credential_store ksasl_credential_store;

/**
 * A delegation token: id, HMAC (the secret its SCRAM password is made of), owner, requester,
 * renewers and times. Immutable; tokens borrowed from a list belong to the list.
 */
typedef struct ksasl_delegation_token ksasl_delegation_token;

/**
 * Builds delegation-token request frames (with their length prefix) and reads responses
 * (without it, as `ksasl_client_connection_handle_frame` returns them).
 */
typedef struct ksasl_delegation_token_codec ksasl_delegation_token_codec;

/**
 * Tokens from `ksasl_token_authority_describe` or a DescribeDelegationToken response.
 */
typedef struct ksasl_delegation_token_list ksasl_delegation_token_list;

/**
 * Where a host mechanism's callback writes its answer; valid during the callback only.
 *
 * A client callback sets a message (`ksasl_host_output_set_message`) and/or says the client
 * side is complete (`ksasl_host_output_set_done`); a server callback sets a challenge, or
 * authenticates the client (`ksasl_host_output_set_authenticated`, after an optional last
 * message). A failure is `ksasl_host_output_set_error` and a non-zero return. Nothing may be
 * set after completing or failing. Instead, a callback may say the answer comes later
 * (`ksasl_host_output_set_pending`); the host then writes it into an output of its own
 * (`ksasl_host_output_new`) and hands that to the connection's or exchange's `resume`.
 */
typedef struct ksasl_host_output ksasl_host_output;

/**
 * A JWKS endpoint feeding a `ksasl_jwks_validator`. Thread-safe.
 */
typedef struct ksasl_jwks_endpoint ksasl_jwks_endpoint;

/**
 * A signed-JWT validator whose JWKS the host fetches. Thread-safe.
 */
typedef struct ksasl_jwks_validator ksasl_jwks_validator;

/**
 * A Kerberos login (ticket-granting ticket from a keytab, or read from a credential cache)
 * that registries' GSSAPI clients use and `ksasl_kerberos_login_poll` renews. Thread-safe.
 */
typedef struct ksasl_kerberos_login ksasl_kerberos_login;

/**
 * A set of client and server mechanisms by name, with the credentials they use.
 */
typedef struct ksasl_mechanism_registry ksasl_mechanism_registry;

/**
 * An OAUTHBEARER token.
 */
typedef struct ksasl_oauth_token ksasl_oauth_token;

/**
 * Where a validator callback writes its verdict.
 */
typedef struct ksasl_oauth_verdict ksasl_oauth_verdict;

/**
 * A token login at an identity provider. Thread-safe.
 */
typedef struct ksasl_oidc_login ksasl_oidc_login;

/**
 * Settings of a token login or a JWKS endpoint, by Kafka's property names.
 */
typedef struct ksasl_oidc_settings ksasl_oidc_settings;

/**
 * Refreshes expiring credentials (OAuth tokens, delegation tokens). Thread-safe.
 */
typedef struct ksasl_refresher ksasl_refresher;

/**
 * A built refresher configuration (`sasl.login.refresh.*` and the retry backoff).
 */
typedef struct ksasl_refresher_config ksasl_refresher_config;

/**
 * The values of a refresher's configuration; unset values keep Kafka's defaults.
 */
typedef struct ksasl_refresher_config_builder ksasl_refresher_config_builder;

/**
 * A built listener configuration: immutable, shared by its connections and threads.
 */
typedef struct ksasl_server_config ksasl_server_config;

/**
 * The values of a listener's configuration; unset values keep Kafka's defaults.
 */
typedef struct ksasl_server_config_builder ksasl_server_config_builder;

/**
 * A server connection's SASL state.
 */
typedef struct ksasl_server_connection ksasl_server_connection;

/**
 * A server exchange for one mechanism.
 */
typedef struct ksasl_server_exchange ksasl_server_exchange;

/**
 * A broker listener built from `server.properties` (`ksasl_server_setup_new`): its
 * configuration, the JWKS endpoints that configuration validates tokens with, its delegation
 * token authority, its name and address. Its strings are owned by the handle and valid until
 * `ksasl_server_setup_free`. Read-only: it may be used from any thread.
 */
typedef struct ksasl_server_setup ksasl_server_setup;

/**
 * A handle on a token authority. The authority is shared (reference counted) and
 * thread-safe; each handle has its own outputs and last error, so threads using one
 * authority at the same time each take a handle from `ksasl_token_authority_share`.
 */
typedef struct ksasl_token_authority ksasl_token_authority;

/**
 * Tracks connections against a refresher's credentials. Thread-safe.
 */
typedef struct ksasl_tracker ksasl_tracker;

/**
 * A result code: 0 (`KSASL_OK`) is success, anything else an error (`ksasl_result_name`).
 */
typedef uint32_t ksasl_result;

/**
 * When a client re-authenticates (`KSASL_REAUTH_*`).
 */
typedef uint32_t ksasl_reauth_timing;

/**
 * What a received frame meant (`KSASL_CLIENT_EVENT_*`).
 */
typedef uint32_t ksasl_client_event;

/**
 * What the host still has to do for a client setup (`KSASL_CLIENT_LOGIN_*`; 0 for NULL).
 */
typedef uint32_t ksasl_client_login;

/**
 * How a host answers a credential request (`KSASL_CREDENTIAL_ANSWER_*`).
 */
typedef uint32_t ksasl_credential_answer_kind;

/**
 * Makes one exchange's state from the mechanism's userdata (NULL fails the exchange).
 */
typedef void *(*ksasl_mechanism_new_fn)(void *userdata);

/**
 * A client's first message: answers through `out`, returns 0 (non-zero fails).
 */
typedef int (*ksasl_mechanism_start_fn)(void *exchange, int64_t now_ms, ksasl_host_output *out);

/**
 * Answers the peer's message (borrowed for the call) through `out`; returns 0 (non-zero fails).
 */
typedef int (*ksasl_mechanism_step_fn)(void *exchange,
                                       const uint8_t *message,
                                       size_t message_len,
                                       int64_t now_ms,
                                       ksasl_host_output *out);

/**
 * Frees one exchange's state.
 */
typedef void (*ksasl_mechanism_dispose_fn)(void *exchange);

/**
 * A client mechanism written by the host (the table is copied at registration): `start`
 * produces the first message (Kafka's clients speak first; it may be empty), `step` answers
 * server challenges, `dispose` (may be NULL) frees an exchange's state once, when the
 * exchange is freed. A failing callback sets `ksasl_host_output_set_error` and returns
 * non-zero. Callbacks run on the threads using the registry's connections and exchanges
 * (`new_exchange` maybe on several at once, an exchange on one at a time), never on a thread
 * of the library's own, and must not call into the connection or exchange calling them.
 */
typedef struct {
  /**
   * Required.
   */
  ksasl_mechanism_new_fn new_exchange;
  /**
   * Required.
   */
  ksasl_mechanism_start_fn start;
  /**
   * Required.
   */
  ksasl_mechanism_step_fn step;
  /**
   * Optional.
   */
  ksasl_mechanism_dispose_fn dispose;
} ksasl_client_mechanism_vtable;

/**
 * Frees a userdata pointer handed to the library with a callback.
 */
typedef void (*ksasl_free_fn)(void *userdata);

/**
 * A token validator: judge `token` at `now_ms` and answer with `ksasl_oauth_verdict_accept`
 * or `_reject`; return 0 (non-zero rejects the token).
 */
typedef int (*ksasl_oauth_validator_cb)(void *userdata,
                                        const char *token,
                                        int64_t now_ms,
                                        ksasl_oauth_verdict *verdict);

/**
 * A server mechanism written by the host (the table is copied at registration): `step`
 * evaluates a client message and sets a challenge or authenticates the client; the rest as
 * for `ksasl_client_mechanism_vtable`. The host looks credentials up itself.
 */
typedef struct {
  /**
   * Required.
   */
  ksasl_mechanism_new_fn new_exchange;
  /**
   * Required.
   */
  ksasl_mechanism_step_fn step;
  /**
   * Optional.
   */
  ksasl_mechanism_dispose_fn dispose;
} ksasl_server_mechanism_vtable;

/**
 * A credential callback: look `request` up and answer with `ksasl_credential_answer_set`;
 * return 0, or non-zero when the lookup failed (the login then fails as "credentials could
 * not be verified"). It may be called from any thread that steps a server.
 */
typedef int (*ksasl_credential_cb)(void *userdata,
                                   const ksasl_credential_request *request,
                                   ksasl_credential_answer *answer);

/**
 * The refresh callback: fetch a credential and answer with `ksasl_refresher_set_token`,
 * `ksasl_refresher_set_delegation_token` or `ksasl_refresher_set_token_failure` (now, or
 * later from any thread).
 */
typedef void (*ksasl_refresh_cb)(void *userdata, ksasl_refresher *refresher, int64_t now_ms);

/**
 * The per-request gate's verdict (`KSASL_GATE_*`).
 */
typedef uint32_t ksasl_gate;

/**
 * What the host does after a server frame (`KSASL_SERVER_ACTION_*`).
 */
typedef uint32_t ksasl_server_action;

/**
 * What a server step produced (`KSASL_SERVER_STEP_*`).
 */
typedef uint32_t ksasl_server_step_kind;

/**
 * Nothing: the credential is in the configuration (PLAIN, SCRAM; unsecured OAUTHBEARER
 * tokens, made by the refresher's own callback when the host runs `ksasl_refresher_run_due`).
 */
#define KSASL_CLIENT_LOGIN_READY 1

/**
 * OAUTHBEARER tokens from an identity provider (`sasl.oauthbearer.token.endpoint.url`): the
 * refresher's callback logs in at the provider (blocking the thread that runs
 * `ksasl_refresher_run_due`).
 */
#define KSASL_CLIENT_LOGIN_OIDC 2

/**
 * OAUTHBEARER tokens the host supplies (`ksasl_refresher_set_token`), as librdkafka's refresh
 * callback does.
 */
#define KSASL_CLIENT_LOGIN_HOST_TOKEN 3

/**
 * GSSAPI: the host registers a GSSAPI client for `ksasl_client_setup_kerberos_service_name`
 * (`ksasl_mechanism_registry_add_gssapi_client`) and calls `ksasl_client_setup_with_registry`.
 */
#define KSASL_CLIENT_LOGIN_KERBEROS 4

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

/**
 * Frees AWS credentials (their secret and token wiped) (NULL is a no-op).
 */
void ksasl_aws_credentials_free(ksasl_aws_credentials *p);

/**
 * Creates credentials: `session_token` NULL for long-term keys, `expires_at_ms` negative for
 * none. `INVALID_ARGUMENT` for an empty or non-alphanumeric access key id, or an empty secret
 * or token.
 */
ksasl_result ksasl_aws_credentials_new(const char *access_key_id,
                                       const char *secret_access_key,
                                       const char *session_token,
                                       int64_t expires_at_ms,
                                       ksasl_aws_credentials **out);

/**
 * Adds (or replaces) `credentials`, which authenticate as `User:<principal>`.
 */
ksasl_result ksasl_aws_key_store_add(ksasl_aws_key_store *store,
                                     const ksasl_aws_credentials *credentials,
                                     const char *principal);

/**
 * Frees a key store; registries using it keep it alive (NULL is a no-op).
 */
void ksasl_aws_key_store_free(ksasl_aws_key_store *p);

/**
 * The detail of the handle's last failure ("" for NULL).
 */
const char *ksasl_aws_key_store_last_error(const ksasl_aws_key_store *p);

/**
 * Creates an empty key store.
 */
ksasl_result ksasl_aws_key_store_new(ksasl_aws_key_store **out);

/**
 * Removes an access key; `*removed` (may be NULL) says whether it was there.
 */
ksasl_result ksasl_aws_key_store_remove(ksasl_aws_key_store *store,
                                        const char *access_key_id,
                                        int32_t *removed);

/**
 * Panics inside the library on purpose and returns what the boundary made of it
 * (`KSASL_PANIC`): proof that no panic unwinds into C.
 */
ksasl_result ksasl_check_panic_boundary(void);

/**
 * Checks every value and makes the configuration (`KSASL_UNKNOWN_MECHANISM` for a
 * mechanism the registry lacks, `KSASL_INVALID_CONFIG` otherwise); the builder stays usable.
 */
ksasl_result ksasl_client_config_builder_build(const ksasl_client_config_builder *b,
                                               ksasl_client_config **config);

/**
 * Frees a client configuration builder (NULL is a no-op).
 */
void ksasl_client_config_builder_free(ksasl_client_config_builder *p);

/**
 * The detail of the handle's last failure ("" for NULL).
 */
const char *ksasl_client_config_builder_last_error(const ksasl_client_config_builder *p);

/**
 * Starts a configuration for `mechanism` from the registry's client mechanisms (checked by
 * `ksasl_client_config_builder_build`).
 */
ksasl_result ksasl_client_config_builder_new(const ksasl_mechanism_registry *registry,
                                             const char *mechanism,
                                             ksasl_client_config_builder **out);

/**
 * The ApiVersions version sent first (0, Kafka's client, to 5; librdkafka sends 3).
 */
ksasl_result ksasl_client_config_builder_set_api_versions_version(ksasl_client_config_builder *b,
                                                                  int64_t version);

/**
 * `client.id` (NULL: none, the default).
 */
ksasl_result ksasl_client_config_builder_set_client_id(ksasl_client_config_builder *b,
                                                       const char *client_id);

/**
 * Skips ApiVersions with the broker's known SaslHandshake version (0-1) and
 * SaslAuthenticate version (0-2; < 0: legacy framing, which SaslHandshake 0 needs).
 */
ksasl_result ksasl_client_config_builder_set_known_versions(ksasl_client_config_builder *b,
                                                            int64_t handshake,
                                                            int64_t authenticate);

/**
 * The largest SASL response accepted (512 KiB).
 */
ksasl_result ksasl_client_config_builder_set_max_receive_size(ksasl_client_config_builder *b,
                                                              int64_t bytes);

/**
 * The smallest delay between an authentication and the next re-authentication (1000 ms).
 */
ksasl_result ksasl_client_config_builder_set_reauth_min_delay_ms(ksasl_client_config_builder *b,
                                                                 int64_t ms);

/**
 * After a failed re-authentication: 0 (Kafka) fails the connection; a positive delay keeps
 * the old session and retries after it, then twice it, then four times it.
 */
ksasl_result ksasl_client_config_builder_set_reauth_retry_ms(ksasl_client_config_builder *b,
                                                             int64_t ms);

/**
 * When connections re-authenticate (`KSASL_REAUTH_*`; default Kafka's client).
 */
ksasl_result ksasl_client_config_builder_set_reauth_timing(ksasl_client_config_builder *b,
                                                           ksasl_reauth_timing timing);

/**
 * The software name and version sent in ApiVersions v3+ (default `ksasl` and its version).
 */
ksasl_result ksasl_client_config_builder_set_software(ksasl_client_config_builder *b,
                                                      const char *name,
                                                      const char *version);

/**
 * Frees a client configuration; its connections keep what they need (NULL is a no-op).
 */
void ksasl_client_config_free(ksasl_client_config *p);

/**
 * A metric over every connection of the configuration, by Kafka's name
 * (`"successful-reauthentication-total"`, `"reauthentication-latency-avg"`, ...).
 */
ksasl_result ksasl_client_config_metric(const ksasl_client_config *c,
                                        const char *name,
                                        int64_t now_ms,
                                        double *value);

/**
 * Call before sending an application request: `*send_now` 1 sends it, 0 holds it until the
 * re-authentication completes (a due one starts here).
 */
ksasl_result ksasl_client_connection_before_request(ksasl_client_connection *c,
                                                    int64_t now_ms,
                                                    int *send_now);

/**
 * Reports that the broker closed the connection; returns the error to report.
 */
ksasl_result ksasl_client_connection_closed(ksasl_client_connection *c, int64_t now_ms);

/**
 * Frees a client connection (NULL is a no-op).
 */
void ksasl_client_connection_free(ksasl_client_connection *p);

/**
 * Handles one received frame (without its length prefix): `*event` says what it was; for
 * `KSASL_CLIENT_EVENT_APPLICATION`, `*app_frame`/`*app_len` are `frame`/`frame_len` (never
 * copied or kept). A failed authentication is returned as its error code (close).
 */
ksasl_result ksasl_client_connection_handle_frame(ksasl_client_connection *c,
                                                  const uint8_t *frame,
                                                  size_t frame_len,
                                                  int64_t now_ms,
                                                  ksasl_client_event *event,
                                                  const uint8_t **app_frame,
                                                  size_t *app_len);

/**
 * Starts a re-authentication if one is due; `*started` (may be NULL) tells whether it did.
 */
ksasl_result ksasl_client_connection_handle_timeout(ksasl_client_connection *c,
                                                    int64_t now_ms,
                                                    int *started);

/**
 * 1 while a re-authentication is in progress.
 */
int ksasl_client_connection_is_reauthenticating(const ksasl_client_connection *c);

/**
 * The detail of the handle's last failure ("" for NULL).
 */
const char *ksasl_client_connection_last_error(const ksasl_client_connection *p);

/**
 * Creates a client connection from a configuration.
 */
ksasl_result ksasl_client_connection_new(const ksasl_client_config *config,
                                         ksasl_client_connection **out);

/**
 * When to call `ksasl_client_connection_handle_timeout` next (-1: never).
 */
int64_t ksasl_client_connection_next_deadline(const ksasl_client_connection *c);

/**
 * After `KSASL_CLIENT_EVENT_PENDING`: the work pointer the mechanism gave (NULL when none).
 */
void *ksasl_client_connection_pending_work(const ksasl_client_connection *c);

/**
 * 1 if a re-authentication is due at `now_ms` (for synchronous clients).
 */
int ksasl_client_connection_reauth_pending(const ksasl_client_connection *c, int64_t now_ms);

/**
 * Continues after `KSASL_CLIENT_EVENT_PENDING` with the mechanism's late answer (`answer`
 * from `ksasl_host_output_new(0, ...)`, its content taken; `rc` as the callback would
 * return); outputs and errors as `ksasl_client_connection_handle_frame`, then write
 * `ksasl_client_connection_transmit`. Without pending work (`KSASL_WRONG_STATE`) or with a
 * NULL or server answer, nothing changes.
 */
ksasl_result ksasl_client_connection_resume(ksasl_client_connection *c,
                                            ksasl_host_output *answer,
                                            int rc,
                                            int64_t now_ms,
                                            ksasl_client_event *event_kind,
                                            const uint8_t **app_frame,
                                            size_t *app_len);

/**
 * The session: the lifetime the broker granted (0: none), and when this client
 * re-authenticates and the broker stops accepting it (-1: never). Each may be NULL;
 * `KSASL_WRONG_STATE` before authentication.
 */
ksasl_result ksasl_client_connection_session(const ksasl_client_connection *c,
                                             int64_t *lifetime_ms,
                                             int64_t *reauth_at_ms,
                                             int64_t *expiry_ms);

/**
 * Starts the initial authentication.
 */
ksasl_result ksasl_client_connection_start(ksasl_client_connection *c, int64_t now_ms);

/**
 * Starts a re-authentication now (authenticated, idle connections only). Within a second
 * of the previous one, `*started` (may be NULL) is 0 and it is scheduled 1.1 s after that
 * one's start instead (`ksasl_client_connection_next_deadline`).
 */
ksasl_result ksasl_client_connection_start_reauthentication(ksasl_client_connection *c,
                                                            int64_t now_ms,
                                                            int *started);

/**
 * The bytes to write to the socket (length-prefixed frames, borrowed; `*len` 0 when none).
 */
ksasl_result ksasl_client_connection_transmit(ksasl_client_connection *c,
                                              const uint8_t **out,
                                              size_t *len);

/**
 * Frees a client exchange (NULL is a no-op).
 */
void ksasl_client_exchange_free(ksasl_client_exchange *p);

/**
 * The detail of the handle's last failure ("" for NULL).
 */
const char *ksasl_client_exchange_last_error(const ksasl_client_exchange *p);

/**
 * Creates a client exchange for `mechanism` from the registry's client mechanisms.
 */
ksasl_result ksasl_client_exchange_new(const ksasl_mechanism_registry *registry,
                                       const char *mechanism,
                                       ksasl_client_exchange **out);

/**
 * The work pointer of a host mechanism whose answer is pending (NULL when none).
 */
void *ksasl_client_exchange_pending_work(const ksasl_client_exchange *c);

/**
 * Continues a pending start or step with the mechanism's late answer (`answer` from
 * `ksasl_host_output_new(0, ...)`, its content taken; `rc` as the callback would return);
 * outputs as `ksasl_client_exchange_start`. Without pending work (`KSASL_WRONG_STATE`) or
 * with a NULL or server answer, the exchange does not change.
 */
ksasl_result ksasl_client_exchange_resume(ksasl_client_exchange *c,
                                          ksasl_host_output *answer,
                                          int rc,
                                          const uint8_t **out,
                                          size_t *out_len,
                                          int *done);

/**
 * Reports that the server failed the exchange (with its message, or NULL); returns the
 * resulting error code (detail in `ksasl_client_exchange_last_error`).
 */
ksasl_result ksasl_client_exchange_server_failed(ksasl_client_exchange *c,
                                                 const char *server_message);

/**
 * Produces the first message: `*out`/`*out_len` the bytes to send (borrowed until the next
 * call; NULL when none), `*done` 1 when the client side is complete (the server's verdict
 * is still to come). No message and `*done` 0: a host mechanism answers later.
 */
ksasl_result ksasl_client_exchange_start(ksasl_client_exchange *c,
                                         int64_t now_ms,
                                         const uint8_t **out,
                                         size_t *out_len,
                                         int *done);

/**
 * Evaluates a server challenge; outputs as `ksasl_client_exchange_start`.
 */
ksasl_result ksasl_client_exchange_step(ksasl_client_exchange *c,
                                        const uint8_t *challenge,
                                        size_t challenge_len,
                                        int64_t now_ms,
                                        const uint8_t **out,
                                        size_t *out_len,
                                        int *done);

/**
 * The connection configuration (`sasl.mechanism` chosen) as a new reference, freed by the
 * caller with `ksasl_client_config_free`; `*out` is NULL when there is none (GSSAPI until
 * `ksasl_client_setup_with_registry`).
 */
ksasl_result ksasl_client_setup_config(const ksasl_client_setup *s, ksasl_client_config **out);

/**
 * Frees a client setup; the configurations and refreshers it handed out stay (NULL is a no-op).
 */
void ksasl_client_setup_free(ksasl_client_setup *p);

/**
 * For `KSASL_CLIENT_LOGIN_KERBEROS`: the keytab (JAAS `keyTab`, librdkafka's
 * `sasl.kerberos.keytab`); borrowed; NULL when not configured, otherwise and for NULL.
 */
const char *ksasl_client_setup_kerberos_keytab(const ksasl_client_setup *s);

/**
 * For `KSASL_CLIENT_LOGIN_KERBEROS`: the client principal (JAAS `principal`, librdkafka's
 * `sasl.kerberos.principal`); borrowed; NULL when not configured, otherwise and for NULL.
 */
const char *ksasl_client_setup_kerberos_principal(const ksasl_client_setup *s);

/**
 * For `KSASL_CLIENT_LOGIN_KERBEROS`: the broker's service name (`sasl.kerberos.service.name`,
 * JAAS `serviceName`); borrowed; NULL otherwise and for NULL.
 */
const char *ksasl_client_setup_kerberos_service_name(const ksasl_client_setup *s);

/**
 * The detail of the handle's last failure ("" for NULL).
 */
const char *ksasl_client_setup_last_error(const ksasl_client_setup *p);

/**
 * What the host still has to do (`KSASL_CLIENT_LOGIN_*`); 0 for NULL.
 */
ksasl_client_login ksasl_client_setup_login(const ksasl_client_setup *s);

/**
 * The mechanism (`sasl.mechanism`, librdkafka's `sasl.mechanisms`), e.g. `"SCRAM-SHA-256"`;
 * borrowed from the handle; NULL for NULL.
 */
const char *ksasl_client_setup_mechanism(const ksasl_client_setup *s);

/**
 * Reads a client's `.properties` (`text`, `len` bytes: UTF-8, or ISO-8859-1 for bytes that
 * are not) by Kafka's or librdkafka's names and builds the client they describe. An invalid
 * configuration (or one without SASL: `security.protocol` must be `SASL_PLAINTEXT` or
 * `SASL_SSL`) is `KSASL_INVALID_CONFIG`, its detail (naming the key, the expected form and
 * Kafka's default, never a secret) in `ksasl_last_constructor_error`; as for every
 * constructor, `*out` is written only on success (initialise it to NULL).
 */
ksasl_result ksasl_client_setup_new(const char *text, size_t len, ksasl_client_setup **out);

/**
 * `ksasl_client_setup_new` from `n` property names and values (the arrays may be NULL when
 * `n` is 0; a repeated name keeps its last value).
 */
ksasl_result ksasl_client_setup_new_from_pairs(const char *const *keys,
                                               const char *const *values,
                                               size_t n,
                                               ksasl_client_setup **out);

/**
 * For OAUTHBEARER: a new reference to the refresher whose token the configuration's client
 * presents (the same refresher, scheduled by `sasl.login.refresh.*`), freed by the caller
 * with `ksasl_refresher_free`; `*out` is NULL when there is none. The host runs it
 * (`ksasl_refresher_run_due` at `ksasl_refresher_next_deadline`) or, for
 * `KSASL_CLIENT_LOGIN_HOST_TOKEN`, answers it with `ksasl_refresher_set_token`. Freeing this
 * handle keeps the refresher's own callback (unsecured tokens, OIDC logins) unless a callback
 * was set through it.
 */
ksasl_result ksasl_client_setup_refresher(const ksasl_client_setup *s, ksasl_refresher **out);

/**
 * `security.protocol` (`"SASL_PLAINTEXT"` or `"SASL_SSL"`); borrowed; NULL for NULL.
 */
const char *ksasl_client_setup_security_protocol(const ksasl_client_setup *s);

/**
 * The `i`th unknown name (`ksasl_client_setup_unknown_count`); borrowed; NULL when `i` is
 * out of range and for NULL.
 */
const char *ksasl_client_setup_unknown(const ksasl_client_setup *s, size_t i);

/**
 * How many `sasl.*` and `ksasl.*` names the library does not know were given (for the host
 * to log); 0 for NULL.
 */
size_t ksasl_client_setup_unknown_count(const ksasl_client_setup *s);

/**
 * The `i`th warning, a sentence naming the setting (`ksasl_client_setup_warning_count`);
 * borrowed; NULL when `i` is out of range and for NULL.
 */
const char *ksasl_client_setup_warning(const ksasl_client_setup *s, size_t i);

/**
 * How many settings have no effect as configured (for the host to log); 0 for NULL.
 */
size_t ksasl_client_setup_warning_count(const ksasl_client_setup *s);

/**
 * Builds the configuration again for the setup's mechanism from `registry`'s client
 * mechanisms (copied as it is now): for GSSAPI, once the host has added a GSSAPI client for
 * the broker. Configurations handed out before stay as they were. On failure
 * (`KSASL_UNKNOWN_MECHANISM` when the registry lacks the mechanism) nothing changes.
 */
ksasl_result ksasl_client_setup_with_registry(ksasl_client_setup *s,
                                              const ksasl_mechanism_registry *registry);

/**
 * Reads `.properties` text (`text`, `len` bytes: UTF-8, or ISO-8859-1 for bytes that are
 * not) as a client configuration by Kafka's or librdkafka's names, or, when it looks like a
 * broker's `server.properties`, each SASL listener of `listeners`; with `listener` (not
 * NULL), that listener of a broker configuration. On success `*out` is a report whose text
 * holds, per client or listener, a `[client]` or `[listener NAME]` line, `name=value` lines
 * for the effective settings (secrets as `[hidden]`), `unknown NAME` lines for `sasl.*` and
 * `ksasl.*` names the library does not know, and `warning TEXT` lines for settings without
 * effect. An invalid configuration is `KSASL_INVALID_CONFIG`, its detail (naming the key,
 * the expected form and Kafka's default, never a secret) in `ksasl_last_constructor_error`.
 */
ksasl_result ksasl_config_check(const uint8_t *text,
                                size_t len,
                                const char *listener,
                                ksasl_config_report **out);

/**
 * Frees a configuration report (NULL is a no-op).
 */
void ksasl_config_report_free(ksasl_config_report *p);

/**
 * The report's text, owned by the report (valid until `ksasl_config_report_free`).
 */
const char *ksasl_config_report_text(const ksasl_config_report *r);

/**
 * Answers a credential request from inside the callback (the last answer counts): `kind` is
 * a `KSASL_CREDENTIAL_ANSWER_*`; `value` the password, Kafka's SCRAM text or the reason;
 * `expiry_ms` < 0 means none; `token_owner` (NULL for users) marks a delegation token.
 */
ksasl_result ksasl_credential_answer_set(ksasl_credential_answer *a,
                                         ksasl_credential_answer_kind kind,
                                         const char *value,
                                         int64_t expiry_ms,
                                         const char *token_owner);

/**
 * The mechanism asking (`"SCRAM-SHA-256"`, ...); NULL for NULL.
 */
const char *ksasl_credential_request_mechanism(const ksasl_credential_request *r);

/**
 * 1 for a delegation-token login (`tokenauth=true`), 0 otherwise and for NULL.
 */
int ksasl_credential_request_token_authenticated(const ksasl_credential_request *r);

/**
 * The username (the token id for delegation-token logins); NULL for NULL.
 */
const char *ksasl_credential_request_username(const ksasl_credential_request *r);

/**
 * Adds or replaces a user for PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 (SCRAM credentials
 * derived with random salts and `iterations`, at least 4096).
 */
ksasl_result ksasl_credential_store_add_user(ksasl_credential_store *store,
                                             const char *username,
                                             const char *password,
                                             uint32_t iterations);

/**
 * Frees a store; registries using it keep it alive (NULL is a no-op).
 */
void ksasl_credential_store_free(ksasl_credential_store *p);

/**
 * Serves one KIP-554 request, DescribeUserScramCredentials (api key 50) or
 * AlterUserScramCredentials (51), `frame` without its length prefix, from a connection the
 * host has authenticated and authorized (Kafka requires DESCRIBE or ALTER on the cluster).
 * `*out`/`*out_len` are the response frame with its length prefix, borrowed until the next
 * call of this function on the same thread; refusals are Kafka error codes inside it, with
 * Kafka's texts. A changed credential is what the next login or re-authentication of that
 * user is checked against. A request that cannot be parsed is an error (`KSASL_INVALID_REQUEST`,
 * or `KSASL_UNSUPPORTED_VERSION`; close the connection, as Kafka does) and changes nothing.
 */
ksasl_result ksasl_credential_store_handle_scram_request(ksasl_credential_store *store,
                                                         const uint8_t *frame,
                                                         size_t frame_len,
                                                         const uint8_t **out,
                                                         size_t *out_len);

/**
 * The detail of the handle's last failure ("" for NULL).
 */
const char *ksasl_credential_store_last_error(const ksasl_credential_store *p);

/**
 * Creates an empty store.
 */
ksasl_result ksasl_credential_store_new(ksasl_credential_store **out);

/**
 * Removes a user; `*existed` (may be NULL) tells whether it was there.
 */
ksasl_result ksasl_credential_store_remove_user(ksasl_credential_store *store,
                                                const char *username,
                                                int *existed);

/**
 * Sets a user's SCRAM credential for `mechanism` from Kafka's text form
 * (`salt=...,stored_key=...,server_key=...,iterations=...`).
 */
ksasl_result ksasl_credential_store_set_scram(ksasl_credential_store *store,
                                              const char *username,
                                              const char *mechanism,
                                              const char *credential);

/**
 * Adds a delegation token's SCRAM credential (Kafka's text form) for `mechanism`, owned by
 * `owner`, expiring at `expiry_ms` (< 0: never).
 */
ksasl_result ksasl_credential_store_set_token(ksasl_credential_store *store,
                                              const char *token_id,
                                              const char *mechanism,
                                              const char *credential,
                                              const char *owner,
                                              int64_t expiry_ms);

/**
 * Sets (`expiry_ms` >= 0) or clears (< 0) the absolute expiry of a user's credentials.
 */
ksasl_result ksasl_credential_store_set_user_expiry(ksasl_credential_store *store,
                                                    const char *username,
                                                    int64_t expiry_ms);

/**
 * A CreateDelegationToken request frame (`version` 0-3): `owner` (v3+; NULL: the
 * requester), the `n_renewers` renewers, `max_lifetime_ms` (-1: the broker's default) and
 * `client_id` (may be NULL).
 */
ksasl_result ksasl_delegation_token_codec_create_request(ksasl_delegation_token_codec *c,
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
 * A DescribeDelegationToken request frame (`version` 0-3) for the tokens of the `n_owners`
 * owners; `owners` NULL (with `n_owners` 0) asks for every token the caller may see.
 */
ksasl_result ksasl_delegation_token_codec_describe_request(ksasl_delegation_token_codec *c,
                                                           int16_t version,
                                                           int32_t correlation_id,
                                                           const char *client_id,
                                                           const char *const *owners,
                                                           size_t n_owners,
                                                           const uint8_t **out,
                                                           size_t *out_len);

/**
 * An ExpireDelegationToken request frame (`version` 0-2) for the token with this HMAC; a
 * negative `expiry_period_ms` expires it at once.
 */
ksasl_result ksasl_delegation_token_codec_expire_request(ksasl_delegation_token_codec *c,
                                                         int16_t version,
                                                         int32_t correlation_id,
                                                         const char *client_id,
                                                         const uint8_t *hmac,
                                                         size_t hmac_len,
                                                         int64_t expiry_period_ms,
                                                         const uint8_t **out,
                                                         size_t *out_len);

/**
 * Frees a delegation-token codec (NULL is a no-op).
 */
void ksasl_delegation_token_codec_free(ksasl_delegation_token_codec *p);

/**
 * The Kafka error code of the last response read (0: none, and for NULL), for the codes
 * that share a ksasl code (e.g. 64, DELEGATION_TOKEN_REQUEST_NOT_ALLOWED).
 */
int16_t ksasl_delegation_token_codec_kafka_error(const ksasl_delegation_token_codec *c);

/**
 * The detail of the handle's last failure ("" for NULL).
 */
const char *ksasl_delegation_token_codec_last_error(const ksasl_delegation_token_codec *p);

/**
 * Creates a codec.
 */
ksasl_result ksasl_delegation_token_codec_new(ksasl_delegation_token_codec **out);

/**
 * Reads a CreateDelegationToken response (`version` 0-3, `frame` without its length prefix):
 * `*token` is the new token (free it). A response with a Kafka error is that error
 * (`ksasl_delegation_token_codec_kafka_error` has Kafka's code).
 */
ksasl_result ksasl_delegation_token_codec_parse_create_response(ksasl_delegation_token_codec *c,
                                                                int16_t version,
                                                                const uint8_t *frame,
                                                                size_t frame_len,
                                                                ksasl_delegation_token **token);

/**
 * Reads a DescribeDelegationToken response (`version` 0-3): `*list` is a new list (free it).
 * A Kafka error is returned as its ksasl code.
 */
ksasl_result ksasl_delegation_token_codec_parse_describe_response(ksasl_delegation_token_codec *c,
                                                                  int16_t version,
                                                                  const uint8_t *frame,
                                                                  size_t frame_len,
                                                                  ksasl_delegation_token_list **list);

/**
 * Reads a RenewDelegationToken or ExpireDelegationToken response (`version` 0-2): the
 * token's new `*expiry_ms`. A Kafka error is returned as its ksasl code (61-67 as
 * `KSASL_DELEGATION_TOKEN_*` / `KSASL_INVALID_PRINCIPAL_TYPE`, others `KSASL_KAFKA_ERROR`).
 */
ksasl_result ksasl_delegation_token_codec_parse_expiry_response(ksasl_delegation_token_codec *c,
                                                                int16_t version,
                                                                const uint8_t *frame,
                                                                size_t frame_len,
                                                                int64_t *expiry_ms);

/**
 * A RenewDelegationToken request frame (`version` 0-2) for the token with this HMAC;
 * `renew_period_ms` <= 0 asks for the broker's default period.
 */
ksasl_result ksasl_delegation_token_codec_renew_request(ksasl_delegation_token_codec *c,
                                                        int16_t version,
                                                        int32_t correlation_id,
                                                        const char *client_id,
                                                        const uint8_t *hmac,
                                                        size_t hmac_len,
                                                        int64_t renew_period_ms,
                                                        const uint8_t **out,
                                                        size_t *out_len);

/**
 * When the token expires unless renewed (-1 for NULL).
 */
int64_t ksasl_delegation_token_expiry_ms(const ksasl_delegation_token *t);

/**
 * Frees a delegation token (never one borrowed from a list) (NULL is a no-op).
 */
void ksasl_delegation_token_free(ksasl_delegation_token *p);

/**
 * The HMAC (64 bytes from an authority; a secret), borrowed from the token.
 */
ksasl_result ksasl_delegation_token_hmac(const ksasl_delegation_token *t,
                                         const uint8_t **hmac,
                                         size_t *hmac_len);

/**
 * The token's SCRAM password: standard base64 of the HMAC, padded (a secret); NULL for
 * NULL.
 */
const char *ksasl_delegation_token_hmac_base64(const ksasl_delegation_token *t);

/**
 * The token id (the SCRAM username of a `tokenauth` login); NULL for NULL.
 */
const char *ksasl_delegation_token_id(const ksasl_delegation_token *t);

/**
 * When the token was issued (ms since the epoch; -1 for NULL).
 */
int64_t ksasl_delegation_token_issue_ms(const ksasl_delegation_token *t);

/**
 * The number of tokens in the list (0 for NULL).
 */
size_t ksasl_delegation_token_list_count(const ksasl_delegation_token_list *l);

/**
 * Frees a token list and the tokens borrowed from it (NULL is a no-op).
 */
void ksasl_delegation_token_list_free(ksasl_delegation_token_list *p);

/**
 * Token `index`, borrowed from the list until it is freed; NULL for NULL or out of range.
 */
const ksasl_delegation_token *ksasl_delegation_token_list_get(const ksasl_delegation_token_list *l,
                                                              size_t index);

/**
 * The latest expiry any renewal can reach (-1 for NULL).
 */
int64_t ksasl_delegation_token_max_ms(const ksasl_delegation_token *t);

/**
 * Makes a token from its parts (for example one a client persisted): id, owner, requester
 * (NULL: the owner), HMAC bytes and times. Renewers are not needed to log in: none.
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
 * The owner (`"User:alice"`), whom a login with the token authenticates as; NULL for NULL.
 */
const char *ksasl_delegation_token_owner(const ksasl_delegation_token *t);

/**
 * The same token with a new expiry (after a renewal), as a new token.
 */
ksasl_result ksasl_delegation_token_renewed(const ksasl_delegation_token *t,
                                            int64_t expiry_ms,
                                            ksasl_delegation_token **out);

/**
 * Renewer `index` (`"User:bob"`); NULL for NULL or an index out of range.
 */
const char *ksasl_delegation_token_renewer(const ksasl_delegation_token *t, size_t index);

/**
 * How many renewers the token has (0 for NULL, and for a token from a
 * CreateDelegationToken response, which does not carry them).
 */
size_t ksasl_delegation_token_renewer_count(const ksasl_delegation_token *t);

/**
 * Who asked for the token (the owner unless made on someone's behalf); NULL for NULL.
 */
const char *ksasl_delegation_token_requester(const ksasl_delegation_token *t);

/**
 * 1 when the system's GSS-API library (MIT Kerberos, `libgssapi_krb5.so.2`) loads, 0
 * otherwise (GSSAPI functions then fail with `KSASL_GSSAPI_UNAVAILABLE`).
 */
int ksasl_gssapi_available(void);

/**
 * Frees an output made by ksasl_host_output_new (never the one a callback got) (NULL is a no-op).
 */
void ksasl_host_output_free(ksasl_host_output *p);

/**
 * Creates an output for a late answer (`for_server` 1 for a server mechanism's, 0 for a
 * client's), written with the `ksasl_host_output_set_*` functions (any thread) and handed
 * to a `*_resume` function, which takes its content and leaves it empty for reuse.
 */
ksasl_result ksasl_host_output_new(int for_server, ksasl_host_output **out);

/**
 * Server mechanisms only: the client is authenticated as `authorization_id` (UTF-8, not
 * empty; the principal is `User:<authorization_id>`); `credential_expiry_ms` is the absolute
 * expiry of the credential used, bounding the KIP-368 session (< 0: none).
 */
ksasl_result ksasl_host_output_set_authenticated(ksasl_host_output *out,
                                                 const char *authorization_id,
                                                 int64_t credential_expiry_ms);

/**
 * Client mechanisms only: the client side is complete (after the message, if any).
 */
ksasl_result ksasl_host_output_set_done(ksasl_host_output *out);

/**
 * Fails the step with `message` (kept in the error the library reports; the client is sent
 * only Kafka's generic sentence), reported as `code`, one of the library's codes (say
 * `KSASL_UNKNOWN_USER`), or 0 for `KSASL_HOST_MECHANISM_FAILED`. The first failure is kept.
 */
ksasl_result ksasl_host_output_set_error(ksasl_host_output *out,
                                         ksasl_result code,
                                         const char *message);

/**
 * Sets the message to send: the client's next message, or the server's challenge (or last
 * message before `ksasl_host_output_set_authenticated`). NULL is allowed when `len` is 0.
 */
ksasl_result ksasl_host_output_set_message(ksasl_host_output *out,
                                           const uint8_t *message,
                                           size_t len);

/**
 * The answer comes later: `work` (may be NULL) is the host's, never dereferenced or freed
 * by the library, and given back by the `*_pending_work` functions after the driver
 * reported `KSASL_CLIENT_EVENT_PENDING`, `KSASL_SERVER_ACTION_PENDING` or
 * `KSASL_SERVER_STEP_PENDING` (a client exchange: no message, not done). Nothing else may
 * be set in the same answer.
 */
ksasl_result ksasl_host_output_set_pending(ksasl_host_output *out, void *work);

/**
 * Fetches the JWKS now (blocking); `*keys` (may be NULL) gets the number of usable keys. On
 * failure the validator keeps its keys and its next fetch waits for the retry backoff.
 */
ksasl_result ksasl_jwks_endpoint_fetch(ksasl_jwks_endpoint *e, int64_t now_ms, size_t *keys);

/**
 * Frees a JWKS endpoint; registries using it keep it alive (NULL is a no-op).
 */
void ksasl_jwks_endpoint_free(ksasl_jwks_endpoint *p);

/**
 * The detail of the handle's last failure ("" for NULL).
 */
const char *ksasl_jwks_endpoint_last_error(const ksasl_jwks_endpoint *p);

/**
 * Creates a JWKS endpoint (`sasl.oauthbearer.jwks.endpoint.url`) feeding `v`, with the HTTPS
 * values of `settings` (may be NULL: Mozilla's roots, ksasl's default timeouts).
 */
ksasl_result ksasl_jwks_endpoint_new(const char *url,
                                     const ksasl_jwks_validator *v,
                                     const ksasl_oidc_settings *settings,
                                     ksasl_jwks_endpoint **out);

/**
 * Fetches if a fetch is due at `now_ms` (blocking then); returns when to call again (ms since
 * the epoch), -1 for NULL. Call it from the host's refresh thread.
 */
int64_t ksasl_jwks_endpoint_poll(const ksasl_jwks_endpoint *e, int64_t now_ms);

/**
 * Frees a JWKS validator; registries using it keep it alive (NULL is a no-op).
 */
void ksasl_jwks_validator_free(ksasl_jwks_validator *p);

/**
 * The detail of the handle's last failure ("" for NULL).
 */
const char *ksasl_jwks_validator_last_error(const ksasl_jwks_validator *p);

/**
 * Creates a validator with Kafka's defaults; `expected_issuer` and `expected_audience` may
 * be NULL.
 */
ksasl_result ksasl_jwks_validator_new(const char *expected_issuer,
                                      const char *expected_audience,
                                      ksasl_jwks_validator **out);

/**
 * When to fetch the JWKS next (ms; 0 means now, as when none is loaded; -1 for NULL).
 */
int64_t ksasl_jwks_validator_next_refresh_ms(const ksasl_jwks_validator *v);

/**
 * Replaces the key set with a JWKS document fetched at `now_ms`.
 */
ksasl_result ksasl_jwks_validator_set_jwks(ksasl_jwks_validator *v,
                                           const char *jwks_json,
                                           int64_t now_ms);

/**
 * The number of successful logins (0 for NULL).
 */
uint64_t ksasl_kerberos_login_count(const ksasl_kerberos_login *l);

/**
 * Frees a Kerberos login; registries using it keep it alive (NULL is a no-op).
 */
void ksasl_kerberos_login_free(ksasl_kerberos_login *p);

/**
 * The detail of the handle's last failure ("" for NULL).
 */
const char *ksasl_kerberos_login_last_error(const ksasl_kerberos_login *p);

/**
 * Logs in now (reads the keytab or cache, asks the KDC): on failure the previous ticket,
 * if any, stays in use and a retry is planned.
 */
ksasl_result ksasl_kerberos_login_login(ksasl_kerberos_login *l, int64_t now_ms);

/**
 * Creates a login: with `keytab`, a new ticket-granting ticket for `principal` (required)
 * from it at each login, no `kinit`; without, the ticket in `ccache` (NULL: the default
 * cache) for `principal` (NULL: the cache's), renewed in the cache at the KDC at each
 * later login as `kinit -R` would. The schedule's `window_factor`, `jitter`
 * and `min_time_before_relogin_ms` are `sasl.kerberos.ticket.renew.window.factor`
 * (0.80), `.ticket.renew.jitter` (0.05) and `.min.time.before.relogin` (60,000); a
 * negative value keeps Kafka's default. Nothing is read until `ksasl_kerberos_login_login`.
 */
ksasl_result ksasl_kerberos_login_new(const char *principal,
                                      const char *keytab,
                                      const char *ccache,
                                      double window_factor,
                                      double jitter,
                                      int64_t min_time_before_relogin_ms,
                                      ksasl_kerberos_login **out);

/**
 * When the next login is due (ms since the epoch), -1 for NULL.
 */
int64_t ksasl_kerberos_login_next_login_ms(const ksasl_kerberos_login *l);

/**
 * Logs in if the schedule says so at `now_ms`; `*logged_in` (may be NULL) is 1 then.
 */
ksasl_result ksasl_kerberos_login_poll(ksasl_kerberos_login *l, int64_t now_ms, int *logged_in);

/**
 * When the current ticket-granting ticket ends (ms since the epoch), -1 without one.
 */
int64_t ksasl_kerberos_login_ticket_end_ms(const ksasl_kerberos_login *l);

/**
 * The detail of the last failure on this thread of a function without a handle of its
 * own: constructors (`ksasl_*_new`) and the functions of built configurations.
 */
const char *ksasl_last_constructor_error(void);

/**
 * Adds an `AWS_MSK_IAM` client signing for the broker `host` in `region` with `credentials`
 * or with what `refresher` holds at each (re-)authentication (exactly one of the two).
 * `user_agent` NULL: ksasl's; `key_order` NULL: `"java"` (aws-msk-iam-auth's), or
 * `"kafka-python"`.
 */
ksasl_result ksasl_mechanism_registry_add_aws_msk_iam_client(ksasl_mechanism_registry *r,
                                                             const char *host,
                                                             const char *region,
                                                             const ksasl_aws_credentials *credentials,
                                                             const ksasl_refresher *refresher,
                                                             const char *user_agent,
                                                             const char *key_order);

/**
 * Adds an `AWS_MSK_IAM` verifying server: payloads signed for `region` with a key of `keys`,
 * for one of the `n_hosts` host names (0: any).
 */
ksasl_result ksasl_mechanism_registry_add_aws_msk_iam_server(ksasl_mechanism_registry *r,
                                                             const ksasl_aws_key_store *keys,
                                                             const char *region,
                                                             const char *const *hosts,
                                                             size_t n_hosts);

/**
 * Registers (or replaces) a client mechanism written by the host under `name` (1 to 20 of
 * `A-Z 0-9 - _`); `vtable` is copied. `userdata` is taken in every case: `free_userdata` is
 * called once every registry, configuration, connection and exchange using the mechanism is
 * gone, or at once if this call fails.
 */
ksasl_result ksasl_mechanism_registry_add_client_mechanism(ksasl_mechanism_registry *r,
                                                           const char *name,
                                                           const ksasl_client_mechanism_vtable *vtable,
                                                           void *userdata,
                                                           ksasl_free_fn free_userdata);

/**
 * Adds a GSSAPI client for the service `service_name@host` (`sasl.kerberos.service.name`
 * and the broker's host name as its principal spells it) using `login`'s current ticket
 * at each (re-)authentication; `mutual` 1 also asks the broker to prove itself (an extra
 * round trip Kafka's client does not make).
 */
ksasl_result ksasl_mechanism_registry_add_gssapi_client(ksasl_mechanism_registry *r,
                                                        const ksasl_kerberos_login *login,
                                                        const char *service_name,
                                                        const char *host,
                                                        int mutual);

/**
 * Adds a GSSAPI server with the broker's `keytab` (NULL: the default keytab) and
 * `principal` (`kafka/broker1@REALM`; NULL: any key in the keytab), `service_name`
 * (NULL: the principal's first part), `sasl.kerberos.principal.to.local.rules` as Kafka's
 * list value (NULL: `DEFAULT`), and `cap_session_at_ticket` 1 (recommended) to end each
 * session with the client's service ticket. The keytab is read now.
 */
ksasl_result ksasl_mechanism_registry_add_gssapi_server(ksasl_mechanism_registry *r,
                                                        const char *keytab,
                                                        const char *principal,
                                                        const char *service_name,
                                                        const char *rules,
                                                        int cap_session_at_ticket);

/**
 * Adds an OAUTHBEARER client presenting MSK's presigned tokens for `region`, signed at each
 * (re-)authentication with `credentials` or `refresher`'s current ones (exactly one).
 */
ksasl_result ksasl_mechanism_registry_add_msk_oauthbearer_client(ksasl_mechanism_registry *r,
                                                                 const char *region,
                                                                 const ksasl_aws_credentials *credentials,
                                                                 const ksasl_refresher *refresher,
                                                                 const char *user_agent);

/**
 * Adds an OAUTHBEARER server accepting MSK's presigned tokens for `region` signed with a key
 * of `keys` (checked every time: a removed key's tokens are refused at once).
 */
ksasl_result ksasl_mechanism_registry_add_msk_oauthbearer_server(ksasl_mechanism_registry *r,
                                                                 const ksasl_aws_key_store *keys,
                                                                 const char *region);

/**
 * Adds an OAUTHBEARER server whose tokens `cb` validates (every time); `userdata` is taken
 * as by `ksasl_mechanism_registry_set_credential_callback`.
 */
ksasl_result ksasl_mechanism_registry_add_oauthbearer_callback_server(ksasl_mechanism_registry *r,
                                                                      ksasl_oauth_validator_cb cb,
                                                                      void *userdata,
                                                                      ksasl_free_fn free_userdata);

/**
 * Adds an OAUTHBEARER client presenting the refresher's current token.
 */
ksasl_result ksasl_mechanism_registry_add_oauthbearer_client(ksasl_mechanism_registry *r,
                                                             const ksasl_refresher *refresher);

/**
 * Adds an OAUTHBEARER server validating with `e` (verdicts cached): a token signed by a key
 * the validator does not know yet is held for one JWKS fetch instead of refused.
 */
ksasl_result ksasl_mechanism_registry_add_oauthbearer_jwks_endpoint_server(ksasl_mechanism_registry *r,
                                                                           const ksasl_jwks_endpoint *e);

/**
 * Adds an OAUTHBEARER server validating signed JWTs with `v` (verdicts cached).
 */
ksasl_result ksasl_mechanism_registry_add_oauthbearer_jwks_server(ksasl_mechanism_registry *r,
                                                                  const ksasl_jwks_validator *v);

/**
 * Adds an OAUTHBEARER server with Kafka's unsecured validator: `required_scope`
 * space-separated (NULL: none), `clock_skew_ms` >= 0. Verdicts are cached.
 */
ksasl_result ksasl_mechanism_registry_add_oauthbearer_unsecured_server(ksasl_mechanism_registry *r,
                                                                       const char *required_scope,
                                                                       int64_t clock_skew_ms);

/**
 * Adds PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 clients for a username and password.
 */
ksasl_result ksasl_mechanism_registry_add_password_clients(ksasl_mechanism_registry *r,
                                                           const char *username,
                                                           const char *password);

/**
 * Adds the PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 servers. User logins are looked up in
 * `store`, or with NULL in the credential callback if one is set, otherwise by the host (the
 * pull form); delegation-token logins in the token authority, if one is set.
 */
ksasl_result ksasl_mechanism_registry_add_password_servers(ksasl_mechanism_registry *r,
                                                           const ksasl_credential_store *store);

/**
 * Adds PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 clients using the refresher's newest password
 * credential (`ksasl_refresher_set_delegation_token`) at each (re-)authentication.
 */
ksasl_result ksasl_mechanism_registry_add_refreshing_password_clients(ksasl_mechanism_registry *r,
                                                                      const ksasl_refresher *refresher);

/**
 * Registers (or replaces) a server mechanism written by the host under `name`, offered by
 * server configurations built afterwards; `vtable` and `userdata` as for client mechanisms.
 */
ksasl_result ksasl_mechanism_registry_add_server_mechanism(ksasl_mechanism_registry *r,
                                                           const char *name,
                                                           const ksasl_server_mechanism_vtable *vtable,
                                                           void *userdata,
                                                           ksasl_free_fn free_userdata);

/**
 * Adds SCRAM-SHA-256 and SCRAM-SHA-512 clients logging in with a delegation token (its id
 * and base64 HMAC; `tokenauth=true`).
 */
ksasl_result ksasl_mechanism_registry_add_token_clients(ksasl_mechanism_registry *r,
                                                        const char *token_id,
                                                        const char *token_hmac);

/**
 * Frees a registry; configurations built from it keep what they need (NULL is a no-op).
 */
void ksasl_mechanism_registry_free(ksasl_mechanism_registry *p);

/**
 * The detail of the handle's last failure ("" for NULL).
 */
const char *ksasl_mechanism_registry_last_error(const ksasl_mechanism_registry *p);

/**
 * The number of client (`server` 0) or server (otherwise) mechanisms; 0 for NULL.
 */
size_t ksasl_mechanism_registry_mechanism_count(const ksasl_mechanism_registry *r, int server);

/**
 * Creates an empty registry.
 */
ksasl_result ksasl_mechanism_registry_new(ksasl_mechanism_registry **out);

/**
 * Looks user logins up with `cb` (replacing a store). The library takes `userdata` in every
 * case: `free_userdata` (may be NULL) is called when it is no longer needed, or at once if
 * this call fails.
 */
ksasl_result ksasl_mechanism_registry_set_credential_callback(ksasl_mechanism_registry *r,
                                                              ksasl_credential_cb cb,
                                                              void *userdata,
                                                              ksasl_free_fn free_userdata);

/**
 * Answers delegation-token logins (`tokenauth=true`) from `authority` (NULL: as user logins).
 */
ksasl_result ksasl_mechanism_registry_set_token_authority(ksasl_mechanism_registry *r,
                                                          const ksasl_token_authority *authority);

/**
 * MSK's presigned OAUTHBEARER token for `region` at `now_ms`, signed with `credentials` or
 * `refresher`'s current ones (exactly one), for a host with its own OAUTHBEARER client
 * (librdkafka's token refresh callback: `ksasl_oauth_token_value`, `_expiry_ms`, the access
 * key id as `_principal`). It expires 15 minutes after `now_ms`, or with the credentials
 * if they expire sooner. `user_agent` NULL: ksasl's.
 */
ksasl_result ksasl_msk_token_new(const char *region,
                                 const ksasl_aws_credentials *credentials,
                                 const ksasl_refresher *refresher,
                                 const char *user_agent,
                                 int64_t now_ms,
                                 ksasl_oauth_token **out);

/**
 * The token's absolute expiry in ms (-1 for NULL).
 */
int64_t ksasl_oauth_token_expiry_ms(const ksasl_oauth_token *t);

/**
 * Frees an OAuth token (NULL is a no-op).
 */
void ksasl_oauth_token_free(ksasl_oauth_token *p);

/**
 * Builds an unsecured (`alg: none`) token as Kafka's development login does: `principal` in
 * `sub`, `lifetime_seconds`, an optional space-separated `scope` (NULL: none).
 */
ksasl_result ksasl_oauth_token_new_unsecured(const char *principal,
                                             int64_t lifetime_seconds,
                                             const char *scope,
                                             int64_t now_ms,
                                             ksasl_oauth_token **out);

/**
 * The token text (a secret: do not log it), borrowed from the token; NULL for NULL.
 */
const char *ksasl_oauth_token_value(const ksasl_oauth_token *t);

/**
 * Accepts the token: its principal and absolute expiry (ms). An empty principal rejects it.
 */
ksasl_result ksasl_oauth_verdict_accept(ksasl_oauth_verdict *v,
                                        const char *principal,
                                        int64_t expiry_ms);

/**
 * Rejects the token; `reason` (may be NULL) stays on the server side, the client gets
 * `{"status":"invalid_token"}`.
 */
ksasl_result ksasl_oauth_verdict_reject(ksasl_oauth_verdict *v, const char *reason);

/**
 * Gets a token now (blocking, retried on `sasl.login.retry.backoff.*`) into `*out` (free it
 * with `ksasl_oauth_token_free`). A refused request is `KSASL_OIDC_REQUEST_REFUSED` (the
 * provider's `error_description` is in `ksasl_oidc_login_last_error`), an unreachable
 * provider `KSASL_OIDC_PROVIDER_UNAVAILABLE`, an unknown CA `KSASL_TLS_CERTIFICATE_REFUSED`.
 */
ksasl_result ksasl_oidc_login_fetch(ksasl_oidc_login *l, int64_t now_ms, ksasl_oauth_token **out);

/**
 * Frees an OIDC login (NULL is a no-op).
 */
void ksasl_oidc_login_free(ksasl_oidc_login *p);

/**
 * The detail of the handle's last failure ("" for NULL).
 */
const char *ksasl_oidc_login_last_error(const ksasl_oidc_login *p);

/**
 * Creates a login from `settings` (checked now: URL, client id and secret or key, CA file).
 */
ksasl_result ksasl_oidc_login_new(const ksasl_oidc_settings *settings, ksasl_oidc_login **out);

/**
 * Answers a due refresh of `r` (after `ksasl_refresher_poll` said so) from the provider:
 * installs a fresh token, or records the failure with `ksasl_refresher_set_token_failure`'s
 * meaning (the current token stays in use while valid) and returns its code. Blocks.
 */
ksasl_result ksasl_oidc_login_refresh(ksasl_oidc_login *l, ksasl_refresher *r, int64_t now_ms);

/**
 * Frees OIDC settings (NULL is a no-op).
 */
void ksasl_oidc_settings_free(ksasl_oidc_settings *p);

/**
 * The detail of the handle's last failure ("" for NULL).
 */
const char *ksasl_oidc_settings_last_error(const ksasl_oidc_settings *p);

/**
 * Creates empty settings (Kafka's defaults for everything not set).
 */
ksasl_result ksasl_oidc_settings_new(ksasl_oidc_settings **out);

/**
 * Sets one value by its Kafka property name (`sasl.oauthbearer.token.endpoint.url`,
 * `sasl.oauthbearer.client.credentials.client.id` or `clientId`, `...client.secret` or
 * `clientSecret`, `sasl.oauthbearer.scope`, `sasl.oauthbearer.assertion.*`,
 * `sasl.login.retry.backoff.ms`, `sasl.login.connect.timeout.ms`, `sasl.login.read.timeout.ms`,
 * `ssl.truststore.location` (a PEM file), `ssl.truststore.certificates` (PEM text)), or
 * ksasl's own (`ksasl.oauthbearer.client.auth`, `ksasl.oauthbearer.grant.type`,
 * `ksasl.oauthbearer.assertion.private.key.pem`, `ksasl.oauthbearer.assertion.kid`). An
 * unknown name or a malformed value is `KSASL_INVALID_CONFIG` and changes nothing.
 */
ksasl_result ksasl_oidc_settings_set(ksasl_oidc_settings *s, const char *name, const char *value);

/**
 * Checks every value with Kafka's ranges and messages (`KSASL_INVALID_CONFIG`) and makes
 * the configuration; the builder stays usable.
 */
ksasl_result ksasl_refresher_config_builder_build(const ksasl_refresher_config_builder *b,
                                                  ksasl_refresher_config **config);

/**
 * Frees a refresher configuration builder (NULL is a no-op).
 */
void ksasl_refresher_config_builder_free(ksasl_refresher_config_builder *p);

/**
 * The detail of the handle's last failure ("" for NULL).
 */
const char *ksasl_refresher_config_builder_last_error(const ksasl_refresher_config_builder *p);

/**
 * Starts a refresher configuration with Kafka's defaults.
 */
ksasl_result ksasl_refresher_config_builder_new(ksasl_refresher_config_builder **out);

/**
 * `sasl.login.refresh.buffer.seconds` (300, in [0, 3600]).
 */
ksasl_result ksasl_refresher_config_builder_set_buffer_seconds(ksasl_refresher_config_builder *b,
                                                               int64_t v);

/**
 * `sasl.login.refresh.min.period.seconds` (60, in [0, 900]).
 */
ksasl_result ksasl_refresher_config_builder_set_min_period_seconds(ksasl_refresher_config_builder *b,
                                                                   int64_t v);

/**
 * `sasl.login.retry.backoff.max.ms` (10 000): the wait doubles per failure up to it.
 */
ksasl_result ksasl_refresher_config_builder_set_retry_backoff_max_ms(ksasl_refresher_config_builder *b,
                                                                     int64_t v);

/**
 * `sasl.login.retry.backoff.ms` (10 000): the wait after a failed refresh.
 */
ksasl_result ksasl_refresher_config_builder_set_retry_backoff_ms(ksasl_refresher_config_builder *b,
                                                                 int64_t v);

/**
 * `sasl.login.refresh.window.factor` (0.8, in [0.5, 1.0]).
 */
ksasl_result ksasl_refresher_config_builder_set_window_factor(ksasl_refresher_config_builder *b,
                                                              double v);

/**
 * `sasl.login.refresh.window.jitter` (0.05, in [0.0, 0.25]).
 */
ksasl_result ksasl_refresher_config_builder_set_window_jitter(ksasl_refresher_config_builder *b,
                                                              double v);

/**
 * Frees a refresher configuration (NULL is a no-op).
 */
void ksasl_refresher_config_free(ksasl_refresher_config *p);

/**
 * Frees a refresher; connections and trackers using it keep it alive (NULL is a no-op).
 */
void ksasl_refresher_free(ksasl_refresher *p);

/**
 * The generation of the current credential (0: none yet).
 */
uint64_t ksasl_refresher_generation(const ksasl_refresher *r);

/**
 * Runs the refresh callback for a request already claimed by `ksasl_refresher_poll` or
 * reported by `ksasl_tracker_poll`; without a callback the request fails. (No borrow of
 * the handle is held while the callback runs: it calls back into it.)
 */
ksasl_result ksasl_refresher_invoke_callback(ksasl_refresher *r, int64_t now_ms);

/**
 * The detail of the handle's last failure ("" for NULL).
 */
const char *ksasl_refresher_last_error(const ksasl_refresher *p);

/**
 * Creates a refresher with `config` (NULL: Kafka's defaults); it holds nothing yet, so a
 * refresh is due at once.
 */
ksasl_result ksasl_refresher_new(const ksasl_refresher_config *config, ksasl_refresher **out);

/**
 * When a refresh is next due (ms; 0 means now, as for a refresher that holds nothing yet),
 * or -1 if none is scheduled (stopped, or a request is outstanding).
 */
int64_t ksasl_refresher_next_deadline(const ksasl_refresher *r);

/**
 * The pull form: 1 when the host must fetch a credential now (the request is then claimed).
 */
int ksasl_refresher_poll(const ksasl_refresher *r, int64_t now_ms);

/**
 * Runs the callback if a refresh is due; `*ran` (may be NULL) tells whether it did.
 */
ksasl_result ksasl_refresher_run_due(ksasl_refresher *r, int64_t now_ms, int *ran);

/**
 * Installs AWS credentials (which must carry their expiry) in a refresher, as
 * `ksasl_refresher_set_token` installs a token; `*generation` (may be NULL) gets the new
 * generation.
 */
ksasl_result ksasl_refresher_set_aws_credentials(ksasl_refresher *refresher,
                                                 const ksasl_aws_credentials *credentials,
                                                 const char *principal,
                                                 int64_t now_ms,
                                                 uint64_t *generation);

/**
 * Installs a delegation token: refreshed on Kafka's schedule before its expiry, never past
 * its maximum (answer each refresh with a renewed token, `ksasl_delegation_token_renewed`).
 * `KSASL_INVALID_CREDENTIAL_EXPIRY` for a token whose expiry is not after `now_ms`.
 */
ksasl_result ksasl_refresher_set_delegation_token(ksasl_refresher *r,
                                                  const ksasl_delegation_token *token,
                                                  int64_t now_ms);

/**
 * Sets the callback run by `ksasl_refresher_run_due`. The library takes `userdata` in every
 * case: `free_userdata` (may be NULL) is called when the callback is replaced or the
 * refresher freed, or at once if this call fails.
 */
ksasl_result ksasl_refresher_set_refresh_callback(ksasl_refresher *r,
                                                  ksasl_refresh_cb cb,
                                                  void *userdata,
                                                  ksasl_free_fn free_userdata);

/**
 * Installs an OAuth token: text, absolute expiry (ms), principal, and `n_extensions` SASL
 * extension names and values (the arrays may be NULL when `n_extensions` is 0).
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
 * Reports a failed refresh: the old credential stays while valid and the next attempt is
 * due after the retry backoff.
 */
ksasl_result ksasl_refresher_set_token_failure(ksasl_refresher *r,
                                               const char *reason,
                                               int64_t now_ms);

/**
 * The kind of a result code: `"misuse"`, `"protocol"`, `"authentication"`, `"credential"`,
 * `"internal"`, or `"ok"` / `"unknown"`.
 */
const char *ksasl_result_kind(ksasl_result result);

/**
 * The stable name of a result code (`"OK"`, `"INVALID_CREDENTIALS"`, ...; `"UNKNOWN"` for
 * numbers that are not codes).
 */
const char *ksasl_result_name(ksasl_result result);

/**
 * Adds the SCRAM credential APIs of KIP-554 (DescribeUserScramCredentials 50 and
 * AlterUserScramCredentials 51, version 0 as Kafka 4 advertises them) served by
 * `ksasl_credential_store_handle_scram_request`.
 */
ksasl_result ksasl_server_config_builder_add_scram_credential_api_versions(ksasl_server_config_builder *b);

/**
 * Adds the delegation-token APIs (38-41) served by `ksasl_token_authority_handle_request`:
 * every version the codec speaks (`kafka4` 0), or what Apache Kafka 4 advertises (1).
 */
ksasl_result ksasl_server_config_builder_add_token_api_versions(ksasl_server_config_builder *b,
                                                                int kafka4);

/**
 * Checks every value and makes the configuration (`KSASL_INVALID_CONFIG`, naming the
 * value); the builder stays usable.
 */
ksasl_result ksasl_server_config_builder_build(const ksasl_server_config_builder *b,
                                               ksasl_server_config **config);

/**
 * Frees a server configuration builder (NULL is a no-op).
 */
void ksasl_server_config_builder_free(ksasl_server_config_builder *p);

/**
 * The detail of the handle's last failure ("" for NULL).
 */
const char *ksasl_server_config_builder_last_error(const ksasl_server_config_builder *p);

/**
 * Starts a listener configuration enabling every server mechanism of the registry (as it
 * is now: later changes to the registry do not apply).
 */
ksasl_result ksasl_server_config_builder_new(const ksasl_mechanism_registry *registry,
                                             ksasl_server_config_builder **out);

/**
 * Adds (or replaces) an API of the ApiVersions response (a broker lists all of its APIs).
 */
ksasl_result ksasl_server_config_builder_set_api_version(ksasl_server_config_builder *b,
                                                         int64_t api_key,
                                                         int64_t min_version,
                                                         int64_t max_version);

/**
 * `sasl.enabled.mechanisms`: the `n` mechanisms offered, in this order (default: every
 * server mechanism of the registry).
 */
ksasl_result ksasl_server_config_builder_set_enabled_mechanisms(ksasl_server_config_builder *b,
                                                                const char *const *mechanisms,
                                                                size_t n);

/**
 * `connection.failed.authentication.delay.ms` (100).
 */
ksasl_result ksasl_server_config_builder_set_failed_authentication_delay_ms(ksasl_server_config_builder *b,
                                                                            int64_t ms);

/**
 * 1 accepts pre-0.10 clients whose first packet is a raw GSSAPI token (KIP-43) when
 * GSSAPI is enabled; 0 (the default, as Kafka 4.x) refuses them.
 */
ksasl_result ksasl_server_config_builder_set_legacy_gssapi(ksasl_server_config_builder *b, int on);

/**
 * `connections.max.reauth.ms` for every mechanism (`mechanism` NULL) or for one (default 0:
 * sessions are bounded by credentials only).
 */
ksasl_result ksasl_server_config_builder_set_max_reauth_ms(ksasl_server_config_builder *b,
                                                           const char *mechanism,
                                                           int64_t ms);

/**
 * `sasl.server.max.receive.size` (512 KiB): the largest authentication frame accepted.
 */
ksasl_result ksasl_server_config_builder_set_max_receive_size(ksasl_server_config_builder *b,
                                                              int64_t bytes);

/**
 * `socket.request.max.bytes` (104,857,600): the largest request frame of an
 * authenticated connection (`ksasl_server_connection_check_frame_size`).
 */
ksasl_result ksasl_server_config_builder_set_max_request_size(ksasl_server_config_builder *b,
                                                              int64_t bytes);

/**
 * After a failed re-authentication: 0 (Kafka) closes; a positive delay keeps the session.
 */
ksasl_result ksasl_server_config_builder_set_reauth_retry_ms(ksasl_server_config_builder *b,
                                                             int64_t ms);

/**
 * Enumeration resistance (off by default, as in Kafka): a PLAIN or SCRAM login for an
 * unknown user gets a stand-in credential (for SCRAM a salt derived from the name under
 * `secret`, at least 16 bytes, the same on every broker and across restarts; and
 * `iterations`, 4096 to 16384, those of the real credentials) and fails at the final
 * message exactly as a wrong password does. The host sees `unknown_user` in the detail.
 * Checked by `ksasl_server_config_builder_build`.
 */
ksasl_result ksasl_server_config_builder_set_unknown_user_mask(ksasl_server_config_builder *b,
                                                               const uint8_t *secret,
                                                               size_t secret_len,
                                                               int64_t iterations);

/**
 * Frees a server configuration; its connections keep what they need (NULL is a no-op).
 */
void ksasl_server_config_free(ksasl_server_config *p);

/**
 * A metric over every connection of the configuration, by Kafka's name, as of `now_ms`.
 */
ksasl_result ksasl_server_config_metric(const ksasl_server_config *c,
                                        const char *name,
                                        int64_t now_ms,
                                        double *value);

/**
 * Checks a frame's declared length (its 4-byte prefix, decoded) before reading the body:
 * at most `sasl.server.max.receive.size` until a session is live, then at most
 * `socket.request.max.bytes`. `*body_len` is the size to read; on an error close the
 * connection without reading the body (the gate then says `KSASL_GATE_CLOSE`).
 */
ksasl_result ksasl_server_connection_check_frame_size(ksasl_server_connection *c,
                                                      int32_t declared,
                                                      int64_t now_ms,
                                                      size_t *body_len);

/**
 * The pending credential request (after `KSASL_SERVER_ACTION_NEED_CREDENTIAL`):
 * mechanism, username (borrowed) and whether it is a delegation-token login.
 */
ksasl_result ksasl_server_connection_credential_request(const ksasl_server_connection *c,
                                                        const char **mechanism,
                                                        const char **username,
                                                        int *token_authenticated);

/**
 * Why the last action ends or fails something (`KSASL_SERVER_ACTION_FAIL_AT`, `_CLOSE_NOW`,
 * `_REAUTH_FAILED`): returns its code (`KSASL_OK` when it had none) and writes its message and
 * the text Kafka sent the client ("" when none), borrowed until the next call on the
 * connection. Both out-parameters may be NULL.
 */
ksasl_result ksasl_server_connection_error(const ksasl_server_connection *c,
                                           const char **message,
                                           const char **client_text);

/**
 * One structured detail of the last action's error (see `ksasl_server_connection_error`),
 * for example `unknown_user` ("true" when enumeration resistance answered an unknown user),
 * or `api_key` of a request refused during the exchange: borrowed until the next call on the
 * connection; NULL when the error has no such detail, when there is no error, and for NULL
 * arguments.
 */
const char *ksasl_server_connection_error_detail(const ksasl_server_connection *c, const char *key);

/**
 * Frees a server connection (NULL is a no-op).
 */
void ksasl_server_connection_free(ksasl_server_connection *p);

/**
 * The per-request gate (`KSASL_GATE_*`): only `KSASL_GATE_PROCESS` lets a request reach
 * the host's handlers; `KSASL_GATE_CLOSE` for NULL. Allocation-free.
 */
ksasl_gate ksasl_server_connection_gate(const ksasl_server_connection *c,
                                        int16_t api_key,
                                        int64_t now_ms);

/**
 * Handles one authentication frame (without its length prefix): `*action` says what to do,
 * `*out`/`*out_len` are the frames to write (borrowed), `*deadline_ms` (may be NULL) the
 * instant of `KSASL_SERVER_ACTION_FAIL_AT` (-1 otherwise). Why a connection fails:
 * `ksasl_server_connection_error`.
 */
ksasl_result ksasl_server_connection_handle_frame(ksasl_server_connection *c,
                                                  const uint8_t *frame,
                                                  size_t frame_len,
                                                  int64_t now_ms,
                                                  ksasl_server_action *action,
                                                  const uint8_t **out,
                                                  size_t *out_len,
                                                  int64_t *deadline_ms);

/**
 * 1 when authenticated and no exchange is in progress (requests go through the gate).
 */
int ksasl_server_connection_is_ready(const ksasl_server_connection *c);

/**
 * The detail of the handle's last failure ("" for NULL).
 */
const char *ksasl_server_connection_last_error(const ksasl_server_connection *p);

/**
 * Creates a server connection for a listener configuration.
 */
ksasl_result ksasl_server_connection_new(const ksasl_server_config *config,
                                         ksasl_server_connection **out);

/**
 * After `KSASL_SERVER_ACTION_PENDING`: the work pointer the mechanism gave (NULL when none).
 */
void *ksasl_server_connection_pending_work(const ksasl_server_connection *c);

/**
 * Answers the pending credential request and continues; outputs as
 * `ksasl_server_connection_handle_frame`. A refused answer leaves the request pending.
 */
ksasl_result ksasl_server_connection_provide_credential(ksasl_server_connection *c,
                                                        ksasl_credential_answer_kind kind,
                                                        const char *value,
                                                        int64_t expiry_ms,
                                                        const char *token_owner,
                                                        int64_t now_ms,
                                                        ksasl_server_action *action,
                                                        const uint8_t **out,
                                                        size_t *out_len,
                                                        int64_t *deadline_ms);

/**
 * After a `KSASL_SERVER_ACTION_FAIL_AT` without frames: 1 if a request other than
 * SaslAuthenticate interrupted the exchange and ksasl does not have its API's schema, so
 * the host writes that API's error response (Kafka's, with `*error_code`,
 * ILLEGAL_SASL_STATE) at the deadline, or closes without answering if it cannot read the
 * request either. Writes the request's API key, version and correlation id and the error
 * code to the out-parameters that are not NULL; the text is the message of
 * `ksasl_server_connection_error`. 0 when there is none (and for NULL).
 */
int ksasl_server_connection_refused_request(const ksasl_server_connection *c,
                                            int16_t *api_key,
                                            int16_t *api_version,
                                            int32_t *correlation_id,
                                            int16_t *error_code);

/**
 * Continues after `KSASL_SERVER_ACTION_PENDING` with the mechanism's late answer (`answer`
 * from `ksasl_host_output_new(1, ...)`, its content taken; `rc` as the callback would
 * return); outputs as `ksasl_server_connection_handle_frame` (a failed answer fails the
 * exchange with Kafka's response). Without pending work (`KSASL_WRONG_STATE`) or with a NULL
 * or client answer, an error is returned and nothing changes.
 */
ksasl_result ksasl_server_connection_resume(ksasl_server_connection *c,
                                            ksasl_host_output *answer,
                                            int rc,
                                            int64_t now_ms,
                                            ksasl_server_action *action,
                                            const uint8_t **out,
                                            size_t *out_len,
                                            int64_t *deadline_ms);

/**
 * The authenticated session: principal (`"User:alice"`) and mechanism (borrowed), 1 when it
 * logged in with a delegation token (`tokenauth`), the lifetime sent to the client and the
 * session's expiry (-1: never). Each may be NULL; `KSASL_WRONG_STATE` before authentication.
 */
ksasl_result ksasl_server_connection_session(const ksasl_server_connection *c,
                                             const char **principal,
                                             const char **mechanism,
                                             int *token_authenticated,
                                             int64_t *lifetime_ms,
                                             int64_t *expiry_ms);

/**
 * After a failed step: the text a Kafka broker sends the client ("" before a failure).
 */
const char *ksasl_server_exchange_client_message(const ksasl_server_exchange *s);

/**
 * The pending credential request (after `KSASL_SERVER_STEP_NEED_CREDENTIAL`): mechanism,
 * username (borrowed) and whether it is a delegation-token login.
 */
ksasl_result ksasl_server_exchange_credential_request(const ksasl_server_exchange *s,
                                                      const char **mechanism,
                                                      const char **username,
                                                      int *token_authenticated);

/**
 * Frees a server exchange (NULL is a no-op).
 */
void ksasl_server_exchange_free(ksasl_server_exchange *p);

/**
 * The detail of the handle's last failure ("" for NULL).
 */
const char *ksasl_server_exchange_last_error(const ksasl_server_exchange *p);

/**
 * Creates a server exchange for `mechanism` from the registry's server mechanisms (with
 * its store, credential callback or token authority).
 */
ksasl_result ksasl_server_exchange_new(const ksasl_mechanism_registry *registry,
                                       const char *mechanism,
                                       ksasl_server_exchange **out);

/**
 * After `KSASL_SERVER_STEP_DONE`: the principal (`"User:alice"`), its name and the mechanism
 * (borrowed), the credential's expiry (-1: none), whether a delegation token was used, and
 * the KIP-368 session Kafka grants: its lifetime (0: none; from the credential's expiry and
 * `ksasl_server_exchange_set_max_reauth_ms`) and expiry (-1: never). Each may be NULL.
 */
ksasl_result ksasl_server_exchange_outcome(const ksasl_server_exchange *s,
                                           const char **principal,
                                           const char **principal_name,
                                           const char **mechanism,
                                           int64_t *credential_expiry_ms,
                                           int *token_authenticated,
                                           int64_t *session_lifetime_ms,
                                           int64_t *session_expiry_ms);

/**
 * After `KSASL_SERVER_STEP_PENDING`: the work pointer the mechanism gave (NULL when none).
 */
void *ksasl_server_exchange_pending_work(const ksasl_server_exchange *s);

/**
 * Answers the pending credential request (`kind`: a `KSASL_CREDENTIAL_ANSWER_*` other than
 * `_LATER`; see `ksasl_credential_answer_set`) and continues; outputs as
 * `ksasl_server_exchange_step`. A refused answer leaves the request pending.
 */
ksasl_result ksasl_server_exchange_provide_credential(ksasl_server_exchange *s,
                                                      ksasl_credential_answer_kind kind,
                                                      const char *value,
                                                      int64_t expiry_ms,
                                                      const char *token_owner,
                                                      int64_t now_ms,
                                                      ksasl_server_step_kind *step_kind,
                                                      const uint8_t **out,
                                                      size_t *out_len);

/**
 * Continues after `KSASL_SERVER_STEP_PENDING` with the mechanism's late answer (`answer` from
 * `ksasl_host_output_new(1, ...)`, its content taken; `rc` as the callback would return);
 * outputs as `ksasl_server_exchange_step`. Without pending work (`KSASL_WRONG_STATE`) or with
 * a NULL or client answer, the exchange does not change.
 */
ksasl_result ksasl_server_exchange_resume(ksasl_server_exchange *s,
                                          ksasl_host_output *answer,
                                          int rc,
                                          int64_t now_ms,
                                          ksasl_server_step_kind *kind,
                                          const uint8_t **out,
                                          size_t *out_len);

/**
 * Sets `connections.max.reauth.ms` for the session the exchange grants (default 0: bounded
 * by the credential's expiry only); see `ksasl_server_exchange_outcome`.
 */
ksasl_result ksasl_server_exchange_set_max_reauth_ms(ksasl_server_exchange *s, int64_t ms);

/**
 * Evaluates one client message: `*kind` is a `KSASL_SERVER_STEP_*`, `*out`/`*out_len` the
 * bytes to send (borrowed until the next call; NULL when none).
 */
ksasl_result ksasl_server_exchange_step(ksasl_server_exchange *s,
                                        const uint8_t *response,
                                        size_t response_len,
                                        int64_t now_ms,
                                        ksasl_server_step_kind *kind,
                                        const uint8_t **out,
                                        size_t *out_len);

/**
 * The listener's configuration (never NULL) as a new reference, freed by the caller with
 * `ksasl_server_config_free` (connections made from it keep what they need).
 */
ksasl_result ksasl_server_setup_config(const ksasl_server_setup *s, ksasl_server_config **out);

/**
 * Frees a server setup; the configurations, endpoints and authorities it handed out stay (NULL is a no-op).
 */
void ksasl_server_setup_free(ksasl_server_setup *p);

/**
 * The host of the listener's `listeners` entry (`NAME://host:port`), as written: `""` for
 * every interface, an IPv6 address without its brackets; borrowed; NULL when the file has no
 * entry for the listener and for NULL.
 */
const char *ksasl_server_setup_host(const ksasl_server_setup *s);

/**
 * How many JWKS endpoints the configuration validates OAUTHBEARER tokens with (one per
 * `sasl.oauthbearer.jwks.endpoint.url` of the listener's OAUTHBEARER; 0 without JWKS
 * validation and for NULL).
 */
size_t ksasl_server_setup_jwks_count(const ksasl_server_setup *s);

/**
 * A new handle on the `i`th JWKS endpoint (the same endpoint the configuration validates
 * with), freed by the caller with `ksasl_jwks_endpoint_free`. It holds no key until the host
 * fetches it (`ksasl_jwks_endpoint_fetch`, then `ksasl_jwks_endpoint_poll` from its refresh
 * thread); until then a token is held for one fetch. `KSASL_INVALID_ARGUMENT` when `i` is
 * out of range.
 */
ksasl_result ksasl_server_setup_jwks_endpoint(const ksasl_server_setup *s,
                                              size_t i,
                                              ksasl_jwks_endpoint **out);

/**
 * The URL of the `i`th JWKS endpoint (`ksasl_server_setup_jwks_count`); borrowed; NULL when
 * `i` is out of range and for NULL.
 */
const char *ksasl_server_setup_jwks_url(const ksasl_server_setup *s, size_t i);

/**
 * The detail of the handle's last failure ("" for NULL).
 */
const char *ksasl_server_setup_last_error(const ksasl_server_setup *p);

/**
 * The listener's name (as requested, or the file's only SASL listener as written in
 * `listeners`); borrowed; NULL for NULL.
 */
const char *ksasl_server_setup_listener(const ksasl_server_setup *s);

/**
 * Reads a broker's `server.properties` (`text`, `len` bytes: UTF-8, or ISO-8859-1 for bytes
 * that are not) and builds the listener `listener` (Kafka's names ignore case; NULL: the
 * file's only SASL listener), as `ksasl::config::choose_listener` chooses it: a name that is
 * not one of the SASL listeners of `listeners`, or NULL when the file has none or several,
 * is `KSASL_INVALID_CONFIG` naming the listeners to choose from. The listener gets PLAIN
 * users from its JAAS entry's `user_` options, SCRAM users from `scram_store` (may be NULL:
 * no SCRAM user exists; the store stays live: users added later can log in), OAUTHBEARER
 * with Kafka's unsecured validator or JWKS validation (`ksasl_server_setup_jwks_endpoint`),
 * GSSAPI from its keytab (read now: a missing keytab or key fails here, naming the listener),
 * session lifetimes and limits as configured, and with `delegation.token.secret.key` a token
 * authority (`ksasl_server_setup_tokens`). `apis` holds `n_apis` (api key, min version, max
 * version) triples, flat (may be NULL when `n_apis` is 0): the host's own APIs, listed in the
 * listener's ApiVersions answer beside the SASL ones (and the token APIs 38-41 with a token
 * authority). An invalid configuration is `KSASL_INVALID_CONFIG`, its detail (naming the key,
 * the expected form and Kafka's default, never a secret) in `ksasl_last_constructor_error`;
 * as for every constructor, `*out` is written only on success (initialise it to NULL).
 */
ksasl_result ksasl_server_setup_new(const uint8_t *text,
                                    size_t len,
                                    const char *listener,
                                    const ksasl_credential_store *scram_store,
                                    const int64_t *apis,
                                    size_t n_apis,
                                    ksasl_server_setup **out);

/**
 * The port of the listener's `listeners` entry (0-65535); -1 when the file has no entry for
 * the listener and for NULL.
 */
int32_t ksasl_server_setup_port(const ksasl_server_setup *s);

/**
 * With `delegation.token.secret.key`: a new handle on the listener's token authority (the
 * one SCRAM `tokenauth` logins are checked against, with `delegation.token.max.lifetime.ms`
 * and `delegation.token.expiry.time.ms`), freed by the caller with
 * `ksasl_token_authority_free`; `*out` is NULL without a key. The host serves the token APIs
 * (`ksasl_token_authority_handle_request`) and sweeps expired tokens.
 */
ksasl_result ksasl_server_setup_tokens(const ksasl_server_setup *s, ksasl_token_authority **out);

/**
 * Creates a token for `owner` (only `User` principals may own or renew tokens:
 * `KSASL_INVALID_PRINCIPAL_TYPE`), requested by `requester` (NULL: the owner), renewable by
 * the `n_renewers` principals of `renewers`. `max_lifetime_ms` > 0 shortens the maximum
 * lifetime; 0 or less takes the authority's. `*token` is a new token (free it).
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
 * The tokens owned by one of the `n_owners` principals of `owners` (NULL with 0: every
 * token), with their HMACs, in token-id order: `*list` is a new list (free it). Who may see
 * what is the host's decision.
 */
ksasl_result ksasl_token_authority_describe(ksasl_token_authority *a,
                                            const char *const *owners,
                                            size_t n_owners,
                                            ksasl_delegation_token_list **list);

/**
 * Expires the token whose HMAC is `hmac` for `caller`: a negative `period_ms` removes it
 * now (`*expiry_ms` = `now_ms`); otherwise its expiry becomes `now + period_ms` capped by
 * its maximum. Errors as `ksasl_token_authority_renew`.
 */
ksasl_result ksasl_token_authority_expire(ksasl_token_authority *a,
                                          const uint8_t *hmac,
                                          size_t hmac_len,
                                          const char *caller,
                                          int64_t period_ms,
                                          int64_t now_ms,
                                          int64_t *expiry_ms);

/**
 * Every token as a JSON array of records for the host to persist (no secret inside: HMACs
 * are recomputed from the secret key), borrowed until the next call on this handle.
 */
ksasl_result ksasl_token_authority_export_records(ksasl_token_authority *a, const char **json);

/**
 * Frees an authority handle; registries and other handles keep the authority (NULL is a no-op).
 */
void ksasl_token_authority_free(ksasl_token_authority *p);

/**
 * Serves one delegation-token request (api key 38-41; `frame` without its length prefix) of
 * a connection authenticated as `principal` (`TYPE:NAME`, as `ksasl_server_connection_session`
 * gives it, or a bare user name), with a delegation token or not (`token_authenticated`; such
 * connections get error 64). `*out`/`*out_len` are the response frame with its length prefix
 * (borrowed until the next call on this handle); failed operations are Kafka error codes
 * inside it. A request that cannot be parsed is an error (close, as Kafka does).
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
 * The HMAC of `token_id` under the authority's secret key (HMAC-SHA512; a secret), borrowed
 * until the next call on this handle.
 */
ksasl_result ksasl_token_authority_hmac(ksasl_token_authority *a,
                                        const char *token_id,
                                        const uint8_t **hmac,
                                        size_t *hmac_len);

/**
 * Loads records written by `ksasl_token_authority_export_records` (replacing tokens with
 * the same id); `*loaded` (may be NULL) is how many. Nothing is loaded if a record is
 * malformed (`KSASL_INVALID_CREDENTIAL_FORMAT`).
 */
ksasl_result ksasl_token_authority_import_records(ksasl_token_authority *a,
                                                  const char *json,
                                                  size_t *loaded);

/**
 * The detail of the handle's last failure ("" for NULL).
 */
const char *ksasl_token_authority_last_error(const ksasl_token_authority *p);

/**
 * Creates an authority: `secret_key` is `delegation.token.secret.key` (the same on every
 * broker; not empty), then `delegation.token.max.lifetime.ms`, `.expiry.time.ms` and
 * `.expiry.check.interval.ms` (each at least 1; a negative value takes Kafka's default: 7
 * days, 1 day, 1 hour). `KSASL_INVALID_CONFIG` otherwise.
 */
ksasl_result ksasl_token_authority_new(const char *secret_key,
                                       int64_t max_lifetime_ms,
                                       int64_t expiry_time_ms,
                                       int64_t expiry_check_interval_ms,
                                       ksasl_token_authority **out);

/**
 * When the next sweep is due (ms; 0 means now, as before the first sweep; -1 for NULL).
 */
int64_t ksasl_token_authority_next_sweep_ms(const ksasl_token_authority *a);

/**
 * Renews the token whose HMAC is `hmac` for `caller` (its owner or a renewer): the new
 * expiry (`*expiry_ms`) is `now + period` capped by the token's maximum, the period being
 * `delegation.token.expiry.time.ms` or the smaller `period_ms` when positive. Fails with
 * `KSASL_DELEGATION_TOKEN_NOT_FOUND`, `_OWNER_MISMATCH` or `_EXPIRED`.
 */
ksasl_result ksasl_token_authority_renew(ksasl_token_authority *a,
                                         const uint8_t *hmac,
                                         size_t hmac_len,
                                         const char *caller,
                                         int64_t period_ms,
                                         int64_t now_ms,
                                         int64_t *expiry_ms);

/**
 * Another handle on the same authority (the same tokens), with its own outputs and last
 * error. The authority lives while any handle or registry uses it.
 */
ksasl_result ksasl_token_authority_share(const ksasl_token_authority *a,
                                         ksasl_token_authority **out);

/**
 * Removes every token expired at `now_ms`: `*n_removed` is how many and `*ids` (may be NULL)
 * their ids, borrowed until the next call on this handle. Call at
 * `ksasl_token_authority_next_sweep_ms`.
 */
ksasl_result ksasl_token_authority_sweep(ksasl_token_authority *a,
                                         int64_t now_ms,
                                         const char *const **ids,
                                         size_t *n_removed);

/**
 * Records that connection `id` (re-)authenticated with credential `generation`;
 * `lifetime_ms`, `reauth_at_ms` and `expiry_ms` as `ksasl_client_connection_session` gives
 * them (-1: none).
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
 * Frees a tracker (NULL is a no-op).
 */
void ksasl_tracker_free(ksasl_tracker *p);

/**
 * The detail of the handle's last failure ("" for NULL).
 */
const char *ksasl_tracker_last_error(const ksasl_tracker *p);

/**
 * Creates a tracker for `refresher`: after a refresh, connections on the old credential are
 * asked to re-authenticate spread over `spread_window_ms`.
 */
ksasl_result ksasl_tracker_new(const ksasl_refresher *refresher,
                               int64_t spread_window_ms,
                               ksasl_tracker **out);

/**
 * When to call `ksasl_tracker_poll` next (-1: never; 0: now).
 */
int64_t ksasl_tracker_next_deadline(const ksasl_tracker *t);

/**
 * What is due at `now_ms`: `*refresh` 1 when a credential must be fetched (answer the
 * refresher); `*ids`/`*n` the connections to re-authenticate (borrowed until the next call).
 */
ksasl_result ksasl_tracker_poll(ksasl_tracker *t,
                                int64_t now_ms,
                                int *refresh,
                                const uint64_t **ids,
                                size_t *n);

/**
 * The library version, e.g. `"0.1.0"`.
 */
const char *ksasl_version(void);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* KSASL_H */
