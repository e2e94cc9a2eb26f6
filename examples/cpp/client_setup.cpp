// A client straight from the properties users already have (ksasl::client_setup): a Java
// client's client.properties (PLAIN), a librdkafka configuration (SCRAM-SHA-256) and an
// unsecured OAUTHBEARER login whose refresher the host runs, each authenticating in memory
// against a ksasl broker connection; GSSAPI left to the host; mistakes answered with the key
// to fix and never with the password.
//
// Exits 0 when everything happens as expected, 1 otherwise.

#include "check.hpp"
#include "ksasl.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace {

using check::contains;
using check::error_of;
using check::expect;
using check::is_error;

const std::int64_t T0 = 1700000000000;
const char *const PASSWORD = "alice-secret";

// Authenticates a connection of `config` against one of `broker` in memory; returns the
// principal the broker saw ("" when authentication did not complete).
std::string authenticate(const ksasl::client_config &config, const ksasl::server_config &broker_config,
                         std::int64_t now) {
    return check::authenticate(config, broker_config, now).principal;
}

// Nothing the setup hands out holds the password.
bool no_password(const ksasl::client_setup &s) {
    bool clean = !contains(s.mechanism(), PASSWORD) && !contains(s.security_protocol(), PASSWORD) &&
                 !contains(s.last_error(), PASSWORD);
    for (const std::string &u : s.unknown()) {
        clean = clean && !contains(u, PASSWORD);
    }
    for (const std::string &w : s.warnings()) {
        clean = clean && !contains(w, PASSWORD);
    }
    return clean;
}

void password_logins(const ksasl::server_config &broker) {
    std::printf("A Java client's client.properties (PLAIN)\n");
    ksasl::client_setup s = ksasl::client_setup::from_properties(
        std::string("bootstrap.servers=127.0.0.1:9092\n"
                    "security.protocol=SASL_PLAINTEXT\n"
                    "sasl.mechanism=PLAIN\n"
                    "sasl.login.refresh.buffer.secs=30\n"
                    "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \\\n"
                    "    username=\"alice\" password=\"") +
        PASSWORD + "\";\n");
    expect(s.login() == ksasl::client_login::ready, "nothing left to do");
    expect(s.mechanism() == "PLAIN" && s.security_protocol() == "SASL_PLAINTEXT", "mechanism and protocol");
    expect(s.unknown() == std::vector<std::string>{"sasl.login.refresh.buffer.secs"}, "a misspelt name is reported");
    expect(!s.refresher() && !s.kerberos_service_name(), "no refresher, no Kerberos");
    expect(no_password(s), "the password appears nowhere");
    std::optional<ksasl::client_config> config = s.config();
    expect(config.has_value(), "a configuration");
    if (config) {
        expect(authenticate(*config, broker, T0) == "User:alice", "authenticates as User:alice");
    }

    std::printf("\nThe same user with librdkafka's names (SCRAM-SHA-256)\n");
    s = ksasl::client_setup::from_pairs({{"security.protocol", "sasl_ssl"},
                                         {"sasl.mechanisms", "SCRAM-SHA-256"},
                                         {"sasl.username", "alice"},
                                         {"sasl.password", PASSWORD}});
    expect(s.mechanism() == "SCRAM-SHA-256" && s.security_protocol() == "SASL_SSL", "librdkafka's names");
    expect(s.unknown().empty() && s.warnings().empty(), "nothing unknown, nothing without effect");
    config = s.config();
    expect(config && authenticate(*config, broker, T0) == "User:alice", "authenticates as User:alice");
}

void oauthbearer(const ksasl::server_config &broker) {
    std::printf("\nUnsecured OAUTHBEARER tokens, refreshed half-way through their 60 s\n");
    std::optional<ksasl::refresher> refresher;
    std::optional<ksasl::client_config> config;
    {
        const ksasl::client_setup s = ksasl::client_setup::from_properties(
            "security.protocol=SASL_SSL\n"
            "sasl.mechanism=OAUTHBEARER\n"
            "sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
            "unsecuredLoginStringClaim_sub=\"alice\" unsecuredLoginLifetimeSeconds=\"60\";\n"
            "sasl.login.refresh.window.factor=0.5\n"
            "sasl.login.refresh.window.jitter=0\n"
            "sasl.login.refresh.min.period.seconds=0\n"
            "sasl.login.refresh.buffer.seconds=0\n");
        expect(s.login() == ksasl::client_login::ready, "the refresher makes the tokens itself");
        refresher = s.refresher();
        config = s.config();
    }
    expect(refresher && config, "a refresher and a configuration, kept after the setup is gone");
    if (!refresher || !config) {
        return;
    }
    expect(refresher->run_due(T0), "the first token is made at T0");
    expect(refresher->next_deadline() == T0 + 30000, "the next refresh is due at T0 + 30 s");
    expect(authenticate(*config, broker, T0 + 1000) == "User:alice", "the configuration presents its token");
    expect(!refresher->run_due(T0 + 29999) && refresher->run_due(T0 + 30000) && refresher->generation() == 2,
           "refreshed when due");
}

void kerberos() {
    std::printf("\nGSSAPI: left to the host\n");
    ksasl::client_setup s = ksasl::client_setup::from_properties(
        "security.protocol=SASL_PLAINTEXT\n"
        "sasl.mechanism=GSSAPI\n"
        "sasl.kerberos.service.name=kafka\n"
        "sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required "
        "useKeyTab=true keyTab=\"/etc/kafka/client.keytab\" principal=\"app@EXAMPLE.COM\";\n");
    expect(s.login() == ksasl::client_login::kerberos, "a Kerberos login");
    expect(s.kerberos_service_name() == std::optional<std::string>("kafka") &&
               s.kerberos_principal() == std::optional<std::string>("app@EXAMPLE.COM") &&
               s.kerberos_keytab() == std::optional<std::string>("/etc/kafka/client.keytab"),
           "service name, principal and keytab");
    expect(!s.config() && !s.refresher(), "no configuration until the host adds a GSSAPI client");
    ksasl::mechanism_registry without_gssapi;
    without_gssapi.add_password_clients("alice", PASSWORD);
    auto e = error_of([&] { s.with_registry(without_gssapi); });
    expect(is_error(e, KSASL_UNKNOWN_MECHANISM, "GSSAPI"), "a registry without GSSAPI is refused");
    expect(!s.config(), "and nothing changed");
}

void mistakes() {
    std::printf("\nMistakes\n");
    auto e = error_of([] {
        ksasl::client_setup::from_properties("security.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER\n"
                                             "sasl.login.refresh.window.factor=2\n");
    });
    expect(is_error(e, KSASL_INVALID_CONFIG, "sasl.login.refresh.window.factor"), "the key is named");
    e = error_of([] {
        ksasl::client_setup::from_properties(
            std::string("security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\n"
                        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule "
                        "required username=alice password=\"") +
            PASSWORD + "\"\n");
    });
    expect(is_error(e, KSASL_INVALID_CONFIG, "sasl.jaas.config") && !contains(e->what(), PASSWORD),
           "a broken JAAS text, not quoted");
    e = error_of([] { ksasl::client_setup::from_pairs({{"security.protocol", "PLAINTEXT"}}); });
    expect(is_error(e, KSASL_INVALID_CONFIG), "no SASL, no client");
    ksasl::client_setup s = ksasl::client_setup::from_pairs(
        {{"security.protocol", "SASL_SSL"}, {"sasl.username", "alice"}, {"sasl.password", PASSWORD}});
    expect(s.mechanism() == "GSSAPI" && s.warnings().size() == 1 && no_password(s),
           "librdkafka's GSSAPI default: the unused password is a warning that does not show it");
    ksasl::client_setup moved = std::move(s);
    e = error_of([&] { (void)s.login(); });
    expect(is_error(e, KSASL_NULL_ARGUMENT), "a moved-from setup throws");
}

} // namespace

int main() {
    return check::run("clients from Kafka's and librdkafka's properties", [] {
        ksasl::credential_store store;
        store.add_user("alice", PASSWORD);
        ksasl::mechanism_registry broker_side;
        broker_side.add_password_servers(store);
        broker_side.add_oauthbearer_unsecured_server(std::nullopt, 0);
        const ksasl::server_config broker = ksasl::server_config_builder(broker_side).build();
        password_logins(broker);
        oauthbearer(broker);
        kerberos();
        mistakes();
    });
}
