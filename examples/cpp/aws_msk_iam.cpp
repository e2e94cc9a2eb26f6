// AWS_MSK_IAM through the C++ wrapper.
//
// A broker-side ksasl::aws_key_store knows two access keys; clients sign their
// kafka-cluster:Connect payloads with fixed credentials and with credentials held by a
// ksasl::refresher, and log in through Kafka-framed connections wired in memory (temporary
// credentials cap the session). A rotation installs new credentials in the refresher and
// retires the old key on the broker. A wrong secret and a host the broker does not serve are
// refused. MSK's presigned OAUTHBEARER tokens (ksasl::msk_token) log in through the
// OAUTHBEARER client and server. Bad arguments throw ksasl::error with their codes.
//
// Exits 0 when everything happens as expected, 1 otherwise.

#include "check.hpp"
#include "ksasl.hpp"

#include <cstdint>
#include <cstdio>
#include <string>

namespace {

constexpr std::int64_t T0 = 1796301296000; // 2026-12-03T12:34:56Z
constexpr const char *BROKER = "b-1.demo.kafka.us-east-1.amazonaws.com";

check::login_result login(const ksasl::mechanism_registry &clients, const char *mechanism,
                          const ksasl::mechanism_registry &brokers, std::int64_t now) {
    ksasl::server_config_builder b(brokers);
    b.set_max_reauth_ms(3600000);
    return check::authenticate(ksasl::client_config_builder(clients, mechanism).build(), b.build(), now);
}

void body() {
    using check::expect;
    ksasl::aws_credentials alice("AKIAALICE", "alice-secret");
    ksasl::aws_credentials temp("ASIATEMP", "temp-secret", "temp-session-token", T0 + 1800000);
    ksasl::aws_key_store keys;
    keys.add(alice, "arn:aws:iam::123456789012:user/alice");
    keys.add(temp, "temp");
    ksasl::mechanism_registry brokers;
    brokers.add_aws_msk_iam_server(keys, "us-east-1", {BROKER});
    brokers.add_msk_oauthbearer_server(keys, "us-east-1");

    std::printf("fixed credentials:\n");
    ksasl::mechanism_registry fixed;
    fixed.add_aws_msk_iam_client(BROKER, "us-east-1", alice);
    check::login_result r = login(fixed, "AWS_MSK_IAM", brokers, T0);
    expect(r.principal == "User:arn:aws:iam::123456789012:user/alice", "alice logs in as her key's principal");
    expect(r.lifetime_ms == 3600000, "a long-term key's session lasts connections.max.reauth.ms");

    ksasl::mechanism_registry short_lived;
    short_lived.add_aws_msk_iam_client(BROKER, "us-east-1", temp, "cpp-example", "kafka-python");
    r = login(short_lived, "AWS_MSK_IAM", brokers, T0);
    expect(r.principal == "User:temp" && r.lifetime_ms == 1800000,
           "temporary credentials end the session when they expire");

    std::printf("refused:\n");
    ksasl::aws_credentials wrong("AKIAALICE", "not-the-secret");
    ksasl::mechanism_registry wrong_secret;
    wrong_secret.add_aws_msk_iam_client(BROKER, "us-east-1", wrong);
    expect(login(wrong_secret, "AWS_MSK_IAM", brokers, T0).principal.empty(), "a wrong secret is refused");
    ksasl::mechanism_registry other_host;
    other_host.add_aws_msk_iam_client("b-9.elsewhere", "us-east-1", alice);
    expect(login(other_host, "AWS_MSK_IAM", brokers, T0).principal.empty(), "a payload for another host is refused");

    std::printf("credentials in a refresher, rotated:\n");
    ksasl::refresher refresher(ksasl::refresher_config_builder().build());
    ksasl::aws_credentials one("ASIAONE", "one", "t1", T0 + 3600000);
    ksasl::aws_credentials two("ASIATWO", "two", "t2", T0 + 7200000);
    keys.add(one, "rotating");
    expect(refresher.set_aws_credentials(one, "rotating", T0) == 1, "the first credentials are generation 1");
    ksasl::mechanism_registry rotating;
    rotating.add_aws_msk_iam_client(BROKER, "us-east-1", refresher);
    expect(login(rotating, "AWS_MSK_IAM", brokers, T0).principal == "User:rotating", "signed with the first key");
    keys.add(two, "rotating");
    expect(refresher.set_aws_credentials(two, "rotating", T0 + 1000) == 2, "the refresh is generation 2");
    expect(keys.remove("ASIAONE"), "the broker retires the old key");
    r = login(rotating, "AWS_MSK_IAM", brokers, T0 + 2000);
    expect(r.principal == "User:rotating" && r.lifetime_ms == 3600000, "the next login signs with the new key");

    std::printf("MSK's OAUTHBEARER tokens:\n");
    const ksasl::oauth_token token = ksasl::msk_token("us-east-1", alice, T0);
    expect(token.expiry_ms() == T0 + 900000, "a token is valid 15 minutes");
    ksasl::mechanism_registry oauth;
    oauth.add_msk_oauthbearer_client("us-east-1", alice);
    r = login(oauth, "OAUTHBEARER", brokers, T0);
    expect(r.principal == "User:arn:aws:iam::123456789012:user/alice" && r.lifetime_ms == 900000,
           "an OAUTHBEARER login with MSK's token lasts as long as the token");

    std::printf("bad arguments:\n");
    expect(check::is_error(check::error_of([] { ksasl::aws_credentials("AK/ID", "s"); }), KSASL_INVALID_ARGUMENT),
           "an access key id with '/' is refused");
    expect(check::is_error(check::error_of([&] { fixed.add_aws_msk_iam_client(BROKER, "us-east-1", alice, std::nullopt, "yaml"); }),
                           KSASL_INVALID_ARGUMENT, "java or kafka-python"),
           "an unknown key order is refused");
    expect(check::is_error(check::error_of([&] { keys.add(alice, ""); }), KSASL_INVALID_ARGUMENT),
           "an empty principal is refused");
    ksasl::refresher empty(ksasl::refresher_config_builder().build());
    expect(check::is_error(check::error_of([&] { (void)ksasl::msk_token("us-east-1", empty, T0); }),
                           KSASL_NO_VALID_CREDENTIAL),
           "an empty refresher signs nothing");
}

} // namespace

int main() { return check::run("AWS_MSK_IAM", body); }
