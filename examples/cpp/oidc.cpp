// OIDC through the C++ wrapper: settings by Kafka's property names (ksasl::oidc_settings), a
// token login (ksasl::oidc_login) and a JWKS endpoint (ksasl::jwks_endpoint) given to a
// registry as an OAUTHBEARER server.
//
// No identity provider is needed: the example shows what a misconfiguration or an unreachable
// provider looks like to the application (stable codes, the setting named, secrets never
// quoted, a refresher keeping its state). Runs against Keycloak are in tests/oidc.rs,
// tests/c and tests/broker, through the same C functions.
//
// Exits 0 when everything happens as expected, 1 otherwise.

#include "check.hpp"
#include "ksasl.hpp"

#include <cstdint>
#include <string>

namespace {

using check::contains;
using check::error_of;
using check::expect;
using check::is_error;

constexpr std::int64_t T0 = 1800000000000;

void settings() {
    std::printf("Settings by Kafka's names\n");
    ksasl::oidc_settings s;
    s.set("sasl.oauthbearer.token.endpoint.url", "https://127.0.0.1:1/realms/r/protocol/openid-connect/token")
        .set("clientId", "kafka")
        .set("clientSecret", "s3cret-never-quoted")
        .set("sasl.login.retry.backoff.ms", "10")
        .set("sasl.login.retry.backoff.max.ms", "40")
        .set("sasl.login.connect.timeout.ms", "500");
    auto e = error_of([&] { s.set("sasl.oauthbearer.clientid", "x"); });
    expect(is_error(e, KSASL_INVALID_CONFIG, "sasl.oauthbearer.clientid"), "an unknown name is INVALID_CONFIG, named");
    e = error_of([&] { s.set("sasl.login.read.timeout.ms", "soon"); });
    expect(is_error(e, KSASL_INVALID_CONFIG, "sasl.login.read.timeout.ms"), "a malformed value names its key");
    e = error_of([&] { s.set("ssl.truststore.type", "JKS"); });
    expect(is_error(e, KSASL_INVALID_CONFIG, "PEM"), "only PEM trust stores");

    std::printf("A login at a provider that does not answer\n");
    ksasl::oidc_login login(s);
    e = error_of([&] { login.fetch(T0); });
    expect(is_error(e, KSASL_OIDC_PROVIDER_UNAVAILABLE, "attempts"), "retried on the plan, then PROVIDER_UNAVAILABLE");
    expect(e && !contains(e->what(), "s3cret"), "the secret is never in the error");
    expect(contains(login.last_error(), "attempts"), "last_error() keeps the detail");

    ksasl::refresher refresher;
    expect(refresher.poll(T0), "a new refresher wants a token");
    e = error_of([&] { login.refresh(refresher, T0); });
    expect(is_error(e, KSASL_OIDC_PROVIDER_UNAVAILABLE), "a failed refresh throws");
    expect(refresher.generation() == 0, "the refresher has no token yet");
    auto retry = refresher.next_deadline();
    expect(retry.has_value() && *retry > T0, "and planned a retry after the backoff");

    std::printf("Logins refused before any request\n");
    ksasl::oidc_settings bad;
    bad.set("sasl.oauthbearer.token.endpoint.url", "file:///etc/passwd").set("clientId", "kafka").set("clientSecret", "x");
    e = error_of([&] { ksasl::oidc_login l(bad); });
    expect(is_error(e, KSASL_INVALID_CONFIG, "sasl.oauthbearer.token.endpoint.url"), "only http(s) token endpoints");
    ksasl::oidc_settings no_client;
    no_client.set("sasl.oauthbearer.token.endpoint.url", "https://idp.example/token");
    e = error_of([&] { ksasl::oidc_login l(no_client); });
    expect(e && e->code() == KSASL_INVALID_CONFIG, "a login needs a client id");
}

void jwks() {
    std::printf("A JWKS endpoint as an OAUTHBEARER server\n");
    ksasl::jwks_validator validator("https://idp.example/realms/r", "kafka-broker");
    auto e = error_of([&] { ksasl::jwks_endpoint bad("ftp://idp.example/certs", validator); });
    expect(is_error(e, KSASL_INVALID_CONFIG, "sasl.oauthbearer.jwks.endpoint.url"), "only http(s) JWKS URLs");

    ksasl::oidc_settings https;
    https.set("sasl.login.connect.timeout.ms", "500");
    ksasl::jwks_endpoint endpoint("https://127.0.0.1:1/realms/r/protocol/openid-connect/certs", validator, &https);
    e = error_of([&] { endpoint.fetch(T0); });
    expect(is_error(e, KSASL_OIDC_PROVIDER_UNAVAILABLE), "an unreachable endpoint is PROVIDER_UNAVAILABLE");
    std::int64_t next = endpoint.poll(T0 + 1);
    expect(next > T0 + 1 && next <= T0 + 1 + 10000, "after a failure it is polled again on a backoff (<= 10 s)");

    ksasl::mechanism_registry registry;
    registry.add_oauthbearer_jwks_endpoint_server(endpoint);
    expect(true, "the registry takes the endpoint (and keeps it alive)");
}

} // namespace

int main() {
    return check::run("OIDC token logins and JWKS endpoints", [] {
        settings();
        jwks();
    });
}
