// A broker listener straight from the server.properties a Kafka operator already has
// (ksasl::server_setup): an INTERNAL listener with PLAIN users from its JAAS entry and an
// EXTERNAL one with SCRAM users from the host's store and unsecured OAUTHBEARER, each
// authenticating a ksasl client in memory with the session lifetime the file says; the
// listener's delegation tokens and the host's own APIs in its ApiVersions answer; a JWKS
// listener's endpoint for the host to fetch; mistakes answered with the key to fix and never
// with a password.
//
// Exits 0 when everything happens as expected, 1 otherwise.

#include "check.hpp"
#include "ksasl.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace {

using check::authenticate;
using check::contains;
using check::login_result;
using check::error_of;
using check::expect;
using check::is_error;

const std::int64_t T0 = 1700000000000;
const char *const PASSWORD = "alice-secret";

const std::string BROKER =
    std::string("listeners=INTERNAL://127.0.0.1:9092,EXTERNAL://[::1]:9093,CONTROLLER://:9094\n"
                "listener.security.protocol.map=INTERNAL:SASL_PLAINTEXT,EXTERNAL:SASL_SSL,CONTROLLER:PLAINTEXT\n"
                "listener.name.internal.sasl.enabled.mechanisms=PLAIN\n"
                "listener.name.internal.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule "
                "required user_alice=\"") +
    PASSWORD +
    "\";\n"
    "listener.name.internal.plain.connections.max.reauth.ms=5000\n"
    "listener.name.external.sasl.enabled.mechanisms=SCRAM-SHA-256,OAUTHBEARER\n"
    "listener.name.external.scram-sha-256.sasl.jaas.config="
    "org.apache.kafka.common.security.scram.ScramLoginModule required;\n"
    "listener.name.external.oauthbearer.sasl.jaas.config="
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;\n"
    "listener.name.external.connections.max.reauth.ms=7000\n";

login_result password_login(const ksasl::server_config &listener, const char *mechanism, const char *user,
                            const char *password) {
    ksasl::mechanism_registry clients;
    clients.add_password_clients(user, password);
    return authenticate(ksasl::client_config_builder(clients, mechanism).build(), listener, T0);
}

// The APIs (key -> (min, max)) of the listener's ApiVersions v0 answer.
std::map<int, std::pair<int, int>> api_versions(const ksasl::server_config &listener) {
    static const std::vector<std::uint8_t> request = {0, 18, 0, 0, 0, 0, 0, 7, 0xff, 0xff};
    ksasl::server_connection conn(listener);
    const std::vector<std::uint8_t> out = conn.handle_frame(request, T0).out.to_vector();
    std::map<int, std::pair<int, int>> apis;
    auto u16 = [&](std::size_t at) { return (out[at] << 8) | out[at + 1]; };
    if (out.size() < 14) {
        return apis;
    }
    const std::size_t n = (std::size_t{out[10]} << 24) | (std::size_t{out[11]} << 16) | (std::size_t{out[12]} << 8) |
                          std::size_t{out[13]};
    for (std::size_t i = 0; i < n && 14 + 6 * i + 6 <= out.size(); i++) {
        const std::size_t at = 14 + 6 * i;
        apis[u16(at)] = {u16(at + 2), u16(at + 4)};
    }
    return apis;
}

void internal_listener() {
    std::printf("INTERNAL: PLAIN users from the listener's JAAS entry\n");
    const ksasl::server_setup s = ksasl::server_setup::from_properties(BROKER, "internal");
    expect(s.listener() == "internal" && s.host() == std::optional<std::string>("127.0.0.1") &&
               s.port() == std::optional<std::uint16_t>(9092),
           "listener internal at 127.0.0.1:9092");
    expect(s.jwks().empty() && !s.tokens(), "no JWKS endpoint, no delegation tokens");
    const ksasl::server_config listener = s.config();
    const login_result r = password_login(listener, "PLAIN", "alice", PASSWORD);
    expect(r.principal == "User:alice" && r.lifetime_ms == 5000, "alice logs in for a 5 s session");
    expect(password_login(listener, "PLAIN", "alice", "wrong").principal.empty(), "a wrong password is refused");
    expect(password_login(listener, "SCRAM-SHA-256", "alice", PASSWORD).principal.empty(),
           "SCRAM is not enabled on this listener");
}

void external_listener() {
    std::printf("\nEXTERNAL: SCRAM users from the host's store, unsecured OAUTHBEARER\n");
    ksasl::credential_store store;
    std::optional<ksasl::server_config> listener;
    {
        const ksasl::server_setup s = ksasl::server_setup::from_properties(BROKER, "EXTERNAL", &store);
        expect(s.host() == std::optional<std::string>("::1") && s.port() == std::optional<std::uint16_t>(9093),
               "listener EXTERNAL at [::1]:9093");
        listener = s.config();
    }
    store.add_user("bob", "bob-secret"); // the store is live: added after the build
    login_result r = password_login(*listener, "SCRAM-SHA-256", "bob", "bob-secret");
    expect(r.principal == "User:bob" && r.lifetime_ms == 7000, "bob logs in with SCRAM-SHA-256 for 7 s");
    expect(password_login(*listener, "PLAIN", "alice", PASSWORD).principal.empty(), "PLAIN is INTERNAL's");

    const ksasl::client_setup client = ksasl::client_setup::from_properties(
        "security.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER\n"
        "sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
        "unsecuredLoginStringClaim_sub=\"carol\" unsecuredLoginLifetimeSeconds=\"60\";\n");
    std::optional<ksasl::refresher> refresher = client.refresher();
    std::optional<ksasl::client_config> config = client.config();
    expect(refresher && config && refresher->run_due(T0), "an unsecured token for carol");
    if (config) {
        r = authenticate(*config, *listener, T0);
        expect(r.principal == "User:carol" && r.lifetime_ms == 7000,
               "carol logs in with OAUTHBEARER; the session is capped at 7 s");
    }
}

void tokens_and_apis() {
    std::printf("\nDelegation tokens and the host's APIs\n");
    const std::string text = BROKER + "delegation.token.secret.key=token-key-" + PASSWORD +
                             "\ndelegation.token.expiry.time.ms=60000\n";
    // Metadata 0-12: the host serves it, so its listener lists it.
    const ksasl::server_setup s =
        ksasl::server_setup::from_properties(text, "EXTERNAL", nullptr, {{3, 0, 12}});
    std::optional<ksasl::token_authority> tokens = s.tokens();
    expect(tokens.has_value(), "a token authority");
    const ksasl::server_config listener = s.config();
    const auto apis = api_versions(listener);
    bool all = true;
    for (int key = 38; key <= 41; key++) {
        all = all && apis.count(key) == 1;
    }
    expect(all, "ApiVersions lists the token APIs 38-41");
    expect(apis.count(3) == 1 && apis.at(3) == std::make_pair(0, 12), "and the host's Metadata 0-12");
    if (tokens) {
        const ksasl::delegation_token t = tokens->create("User:dave", T0);
        ksasl::mechanism_registry clients;
        clients.add_token_clients(t.id(), t.hmac_base64());
        const login_result r =
            authenticate(ksasl::client_config_builder(clients, "SCRAM-SHA-256").build(), listener, T0);
        expect(r.principal == "User:dave", "dave logs in with a delegation token");
    }
    const ksasl::server_setup plain = ksasl::server_setup::from_properties(BROKER, "EXTERNAL");
    expect(!plain.tokens() && api_versions(plain.config()).count(38) == 0,
           "without the key: no authority, no token APIs");
}

void jwks() {
    std::printf("\nA listener validating tokens with a JWKS endpoint\n");
    const ksasl::server_setup s = ksasl::server_setup::from_properties(
        "listeners=X://:9095\n"
        "listener.security.protocol.map=X:SASL_SSL\n"
        "sasl.enabled.mechanisms=OAUTHBEARER\n"
        "listener.name.x.oauthbearer.sasl.jaas.config="
        "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;\n"
        "listener.name.x.oauthbearer.sasl.server.callback.handler.class="
        "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler\n"
        "listener.name.x.oauthbearer.sasl.oauthbearer.jwks.endpoint.url=http://127.0.0.1:1/jwks\n",
        std::nullopt);
    expect(s.listener() == "X" && s.host() == std::optional<std::string>("") &&
               s.port() == std::optional<std::uint16_t>(9095),
           "the file's only SASL listener, on every interface");
    const auto endpoints = s.jwks();
    expect(endpoints.size() == 1 && endpoints[0].first == "http://127.0.0.1:1/jwks" && endpoints[0].second,
           "one endpoint for the host to fetch (not fetched here)");
}

void mistakes() {
    std::printf("\nMistakes\n");
    auto e = error_of([] { ksasl::server_setup::from_properties(BROKER, std::nullopt); });
    expect(is_error(e, KSASL_INVALID_CONFIG, "INTERNAL, EXTERNAL"), "two SASL listeners: the choices are named");
    e = error_of([] { ksasl::server_setup::from_properties(BROKER, "CONTROLLER"); });
    expect(is_error(e, KSASL_INVALID_CONFIG, "CONTROLLER"), "not a SASL listener");
    e = error_of([] {
        ksasl::server_setup::from_properties(BROKER + "listener.name.internal.plain.connections.max.reauth.ms=soon\n",
                                             "INTERNAL");
    });
    expect(is_error(e, KSASL_INVALID_CONFIG, "listener.name.internal.plain.connections.max.reauth.ms"),
           "the key is named");
    e = error_of([] {
        ksasl::server_setup::from_properties(
            std::string("sasl.enabled.mechanisms=PLAIN\nlistener.name.l.plain.sasl.jaas.config="
                        "org.apache.kafka.common.security.plain.PlainLoginModule required user_alice=\"") +
                PASSWORD + "\"\n",
            "L");
    });
    expect(is_error(e, KSASL_INVALID_CONFIG, "listener.name.l.plain.sasl.jaas.config") &&
               !contains(e->what(), PASSWORD),
           "a broken JAAS text, not quoted");
    e = error_of([] {
        ksasl::server_setup::from_properties(
            "listeners=K://:9096\nlistener.security.protocol.map=K:SASL_PLAINTEXT\n"
            "sasl.enabled.mechanisms=GSSAPI\nsasl.kerberos.service.name=kafka\n"
            "listener.name.k.gssapi.sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required "
            "useKeyTab=true keyTab=\"/nonexistent/kafka.keytab\" principal=\"kafka/b.example.com@EXAMPLE.COM\";\n",
            std::nullopt);
    });
    expect(e && contains(e->what(), "listener K: GSSAPI:"), "a GSSAPI listener without its keytab");
    ksasl::server_setup s = ksasl::server_setup::from_properties(BROKER, "INTERNAL");
    ksasl::server_setup moved = std::move(s);
    e = error_of([&] { (void)s.config(); });
    expect(is_error(e, KSASL_NULL_ARGUMENT), "a moved-from setup throws");
}

} // namespace

int main() {
    return check::run("broker listeners from server.properties", [] {
        internal_listener();
        external_listener();
        tokens_and_apis();
        jwks();
        mistakes();
    });
}
