// Configuration users already have, read through the C++ wrapper (ksasl::config_check): a
// Java client's client.properties, a librdkafka configuration, a broker's server.properties
// with listener-prefixed JAAS entries, and the mistakes people make, each answered with the
// key to fix and never with the password.
//
// Exits 0 when everything happens as expected, 1 otherwise.

#include "check.hpp"
#include "ksasl.hpp"

#include <string>

namespace {

using check::contains;
using check::error_of;
using check::expect;
using check::is_error;

const char *const PASSWORD = "alice-secret-never-shown";

void client() {
    std::printf("A Java client's client.properties\n");
    const std::string props = std::string("bootstrap.servers=127.0.0.1:9092\n"
                                          "security.protocol=SASL_SSL\n"
                                          "sasl.mechanism=SCRAM-SHA-512\n"
                                          "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n"
                                          "    username=\"alice\" \\\n"
                                          "    password=\"") + PASSWORD + "\";\n"
                                          "sasl.login.refresh.buffer.secs=30\n";
    std::string report = ksasl::config_check(props);
    std::printf("%s", report.c_str());
    expect(contains(report, "sasl.mechanism=SCRAM-SHA-512\n"), "the mechanism is read");
    expect(contains(report, "username=alice\n") && contains(report, "password=[hidden]\n"), "the password is hidden");
    expect(contains(report, "unknown sasl.login.refresh.buffer.secs\n"), "a misspelt name is reported, not ignored");
    expect(!contains(report, PASSWORD), "the password appears nowhere");

    std::printf("\nThe same user with librdkafka's names\n");
    report = ksasl::config_check(std::string("security.protocol=sasl_ssl\nsasl.mechanisms=SCRAM-SHA-512\n"
                                             "sasl.username=alice\nsasl.password=") + PASSWORD + "\n");
    std::printf("%s", report.c_str());
    expect(contains(report, "sasl.mechanism=SCRAM-SHA-512\n") && contains(report, "username=alice\n"),
           "librdkafka's names give the same settings");
}

void server() {
    std::printf("\nA broker's server.properties, one report per SASL listener\n");
    const std::string props =
        std::string("listeners=INTERNAL://127.0.0.1:9092,EXTERNAL://127.0.0.1:9093\n"
                    "listener.security.protocol.map=INTERNAL:SASL_PLAINTEXT,EXTERNAL:SASL_SSL\n"
                    "sasl.enabled.mechanisms=PLAIN\n"
                    "listener.name.external.sasl.enabled.mechanisms=SCRAM-SHA-256\n"
                    "connections.max.reauth.ms=3600000\n"
                    "listener.name.internal.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule "
                    "required user_alice=\"") + PASSWORD + "\";\n"
        "listener.name.external.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule "
        "required;\n";
    std::string report = ksasl::config_check(props);
    std::printf("%s", report.c_str());
    expect(contains(report, "[listener INTERNAL]\n") && contains(report, "[listener EXTERNAL]\n"), "both listeners");
    expect(contains(report, "PLAIN.users=alice\n"), "PLAIN users from the listener's JAAS entry");
    expect(contains(report, "SCRAM-SHA-256.connections.max.reauth.ms=3600000\n"), "the session lifetime");
    expect(!contains(report, PASSWORD), "the password appears nowhere");
    report = ksasl::config_check(props, "EXTERNAL");
    expect(!contains(report, "INTERNAL"), "one listener when named");
}

void mistakes() {
    std::printf("\nMistakes\n");
    auto e = error_of([] { ksasl::config_check("security.protocol=SASL_SSL\nsasl.mechanism=PLAIN,SCRAM-SHA-256\n"); });
    expect(is_error(e, KSASL_INVALID_CONFIG, "sasl.mechanism"), "a client uses one mechanism");
    e = error_of([] {
        ksasl::config_check(std::string("security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\n"
                                        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule "
                                        "required username=alice password=\"") + PASSWORD + "\"\n");
    });
    expect(is_error(e, KSASL_INVALID_CONFIG, "not terminated by semi-colon"), "Kafka's JAAS error text");
    expect(e && !contains(e->message(), PASSWORD), "the error does not quote the password");
    e = error_of([] {
        ksasl::config_check("security.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER\n"
                            "sasl.login.refresh.window.factor=0.3\n");
    });
    expect(is_error(e, KSASL_INVALID_CONFIG, "(default: 0.8)"), "a value out of range names Kafka's default");
}

} // namespace

int main() {
    return check::run("configuration by the names users already have", [] {
        client();
        server();
        mistakes();
    });
}
