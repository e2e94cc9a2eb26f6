// GSSAPI (Kerberos) from C++: a client logged in from its keytab (no kinit) and a broker-side
// server with its keytab authenticate in one process over the system's MIT GSS-API; the
// broker maps the Kerberos principal to the Kafka user with Kafka's DEFAULT rule and caps the
// session at the client's service ticket. The same first token sent again is refused as a
// replay.
//
//   gssapi                                    setup checks only (no KDC needed)
//   gssapi CLIENT_PRINCIPAL CLIENT_KEYTAB BROKER_PRINCIPAL BROKER_KEYTAB
//                                             a real exchange (KRB5_CONFIG names the KDC)
//
// Without MIT Kerberos installed, GSSAPI is reported unavailable and nothing else changes.
// Exits 0 when everything happens as expected, 1 otherwise.

#include "ksasl.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

// Kerberos checks tickets against the real clock, so the host passes the wall clock.
std::int64_t wall_ms() {
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

bool expect(bool ok, const char *what) {
    std::printf("  %s %s\n", ok ? "ok " : "BAD", what);
    return ok;
}

// The code name of the ksasl::error `f` throws, or "" when it does not throw.
template <typename F>
std::string error_of(F f) {
    try {
        f();
    } catch (const ksasl::error &e) {
        std::printf("    (%s)\n", e.what());
        return e.name();
    }
    return "";
}

bool setup_checks() {
    std::printf("== settings checked before any Kerberos traffic ==\n");
    bool ok = true;
    ksasl::mechanism_registry reg;
    if (!ksasl::gssapi_available()) {
        ok &= expect(error_of([&] { reg.add_gssapi_server(std::nullopt, "kafka/localhost@EXAMPLE.COM"); }) ==
                         "GSSAPI_UNAVAILABLE",
                     "without MIT Kerberos, GSSAPI says what is missing");
        return ok && expect(reg.mechanism_count(true) == 0, "and the registry is unchanged");
    }
    ok &= expect(error_of([&] { reg.add_gssapi_server("/nonexistent/kafka.keytab", "kafka/localhost@EXAMPLE.COM"); }) ==
                     "INVALID_CONFIG",
                 "a broker keytab that does not exist is a configuration error");
    ok &= expect(error_of([&] { reg.add_gssapi_server(std::nullopt, "kafka/localhost@EXAMPLE.COM", std::nullopt,
                                                      "RULE:[1:$1"); }) == "INVALID_CONFIG",
                 "a malformed principal-to-local rule is refused");
    ok &= expect(error_of([] { ksasl::kerberos_login(std::nullopt, "/tmp/alice.keytab"); }) == "INVALID_CONFIG",
                 "a keytab login needs its principal");
    ok &= expect(error_of([] { ksasl::kerberos_login("alice@EXAMPLE.COM", "/tmp/a.keytab", std::nullopt, 1.5); }) ==
                     "INVALID_CONFIG",
                 "a renew window factor above 1 is refused");
    return ok && expect(reg.mechanism_count(true) == 0, "nothing was added by the failed calls");
}

// One in-process exchange; returns the server's outcome. Failures throw ksasl::error.
ksasl::server_exchange::outcome_info authenticate(ksasl::client_exchange &client, ksasl::server_exchange &server,
                                                  std::vector<std::uint8_t> *first_token) {
    ksasl::client_exchange::step_result c = client.start(wall_ms());
    std::vector<std::uint8_t> msg = c.out.to_vector();
    if (first_token) {
        *first_token = msg;
    }
    for (int round = 0; round < 8; round++) {
        std::printf("  client -> server  %zu bytes\n", msg.size());
        ksasl::server_exchange::step_result s = server.step(msg, wall_ms());
        if (s.status == ksasl::server_step_kind::done) {
            return server.outcome();
        }
        if (s.status != ksasl::server_step_kind::challenge) {
            throw ksasl::error(KSASL_WRONG_STATE, "WRONG_STATE: unexpected server step");
        }
        std::printf("  server -> client  %zu bytes\n", s.out.size());
        c = client.step(s.out, wall_ms());
        msg = c.out.to_vector();
    }
    throw ksasl::error(KSASL_WRONG_STATE, "WRONG_STATE: the exchange did not finish");
}

bool exchange(const char *client_principal, const char *client_keytab, const char *broker_principal,
              const char *broker_keytab) {
    std::printf("\n== %s authenticates to %s ==\n", client_principal, broker_principal);
    bool ok = true;
    ksasl::kerberos_login login(client_principal, client_keytab);
    login.login(wall_ms());
    std::printf("  logged in from the keytab: ticket for %.0f s more, next login in %.0f s\n",
                static_cast<double>(login.ticket_end_ms().value_or(0) - wall_ms()) / 1000.0,
                static_cast<double>(login.next_login_ms().value_or(0) - wall_ms()) / 1000.0);

    ksasl::mechanism_registry broker;
    broker.add_gssapi_server(broker_keytab, broker_principal); // DEFAULT rule, session capped at the ticket
    // kafka/<host>@REALM: the client names the broker's host as its principal spells it.
    const std::string broker_name(broker_principal);
    const std::size_t slash = broker_name.find('/');
    const std::string host = broker_name.substr(slash + 1, broker_name.find('@') - slash - 1);
    ksasl::mechanism_registry client_reg;
    client_reg.add_gssapi_client(login, "kafka", host);

    std::vector<std::uint8_t> first;
    {
        ksasl::client_exchange client(client_reg, "GSSAPI");
        ksasl::server_exchange server(broker, "GSSAPI");
        const ksasl::server_exchange::outcome_info o = authenticate(client, server, &first);
        std::printf("  => %s, session ends with the service ticket in %.0f s\n", o.principal.c_str(),
                    static_cast<double>(o.credential_expiry_ms.value_or(0) - wall_ms()) / 1000.0);
        const std::string client_name(client_principal);
        const std::string user = client_name.substr(0, client_name.find('@'));
        ok &= expect(o.principal == "User:" + user, "the principal is the Kafka user of the DEFAULT rule");
        ok &= expect(o.mechanism == "GSSAPI" && o.credential_expiry_ms.has_value(),
                     "the session is bounded by the client's service ticket");
    }
    {
        std::printf("  the same first token again:\n");
        ksasl::server_exchange server(broker, "GSSAPI");
        ok &= expect(error_of([&] { server.step(first, wall_ms()); }) == "KERBEROS_REPLAY",
                     "a replayed token is refused with its own code");
        std::printf("  the client is told: \"%s\"\n", server.client_message().c_str());
    }
    return ok && expect(login.count() == 1, "one login so far");
}

} // namespace

int main(int argc, char **argv) {
    try {
        std::printf("ksasl %s (C++ wrapper): GSSAPI, MIT GSS-API %s\n\n", std::string(ksasl::version()).c_str(),
                    ksasl::gssapi_available() ? "loaded" : "not installed");
        bool ok = setup_checks();
        if (argc == 5) {
            ok &= exchange(argv[1], argv[2], argv[3], argv[4]);
        } else {
            std::printf("\n(pass CLIENT_PRINCIPAL CLIENT_KEYTAB BROKER_PRINCIPAL BROKER_KEYTAB to authenticate)\n");
        }
        return ok ? 0 : 1;
    } catch (const ksasl::error &e) {
        std::fprintf(stderr, "unexpected failure: %s\n", e.what());
        return 1;
    }
}
