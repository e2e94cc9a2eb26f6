// Interop vectors for ksasl::kafka::tokens, produced by Apache Kafka's own generated message
// classes (kafka-clients 4.4.0): CreateDelegationToken (api key 38), RenewDelegationToken (39),
// ExpireDelegationToken (40) and DescribeDelegationToken (41), requests and responses, a fixed
// set of examples in every version kafka-clients 4.4.0 supports (v1-3 and v1-2: Kafka 4.0
// removed v0, which is byte-for-byte the same as v1).
//
// Regenerate from the repository root (Java 11+, single-file source launch):
//
//   mvn -q dependency:get -Dartifact=org.apache.kafka:kafka-clients:4.4.0   # if missing
//   java -cp ~/.m2/repository/org/apache/kafka/kafka-clients/4.4.0/kafka-clients-4.4.0.jar \
//        tests/vectors/gen_token_messages.java > tests/vectors/token_messages.json
//
// Output, one JSON object:
//   messages[]: { message, api_key, version, example, body, frame }
//     body  = hex of the message body alone (Message.write at that version, no header);
//     frame = hex of the whole wire frame: 4-byte length, then the request header
//             (RequestHeaderData at ApiKeys.requestHeaderVersion: v1, or v2 when flexible)
//             or the response header (ResponseHeaderData at responseHeaderVersion: v0 or v1),
//             then the body; correlation id and client id are the top-level fields.
//   rejected[]: { message, example, version, exception } for examples whose v3-only fields
//     make Kafka's write throw at an older version (UnsupportedVersionException).
// tests/kafka_tokens.rs builds the same examples with ksasl, checks that ksasl encodes them
// to exactly these bytes, parses these bytes back to the same values, and refuses the
// rejected cases too. Every body is also parsed back by the Java class and compared.

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Properties;
import java.util.function.BiFunction;
import java.util.function.Function;

import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.message.CreateDelegationTokenRequestData;
import org.apache.kafka.common.message.CreateDelegationTokenRequestData.CreatableRenewers;
import org.apache.kafka.common.message.CreateDelegationTokenResponseData;
import org.apache.kafka.common.message.DescribeDelegationTokenRequestData;
import org.apache.kafka.common.message.DescribeDelegationTokenRequestData.DescribeDelegationTokenOwner;
import org.apache.kafka.common.message.DescribeDelegationTokenResponseData;
import org.apache.kafka.common.message.DescribeDelegationTokenResponseData.DescribedDelegationToken;
import org.apache.kafka.common.message.DescribeDelegationTokenResponseData.DescribedDelegationTokenRenewer;
import org.apache.kafka.common.message.ExpireDelegationTokenRequestData;
import org.apache.kafka.common.message.ExpireDelegationTokenResponseData;
import org.apache.kafka.common.message.RenewDelegationTokenRequestData;
import org.apache.kafka.common.message.RenewDelegationTokenResponseData;
import org.apache.kafka.common.message.RequestHeaderData;
import org.apache.kafka.common.message.ResponseHeaderData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;

public class gen_token_messages {
    static final int CORRELATION_ID = 0x01020304;
    static final String CLIENT_ID = "ksasl-vectors";
    // HmacSHA512(key "secret", data "AAECAwQFBgcICQoLDA0ODw"), the reference's §7.2 example.
    static final byte[] HMAC = Base64.getDecoder().decode(
        "zDhguo/2PVSfITrhlis6BT+5v3s0Oy7l4jYnltLyE9BvFDBx8qbFztUm7I96FCKkHQ1oIyQ+o0kv3VCkXQdFWA==");
    static final String TOKEN_ID = "AAECAwQFBgcICQoLDA0ODw";
    static final String JOSE = "jos\u00e9"; // two bytes for the last character in UTF-8

    static final List<String> messages = new ArrayList<>();
    static final List<String> rejected = new ArrayList<>();

    static String hex(byte[] b) {
        StringBuilder s = new StringBuilder();
        for (byte x : b) s.append(String.format("%02x", x & 0xff));
        return s.toString();
    }

    static byte[] write(Message m, short version) {
        ObjectSerializationCache cache = new ObjectSerializationCache();
        int size = m.size(cache, version);
        ByteBuffer buf = ByteBuffer.allocate(size);
        m.write(new ByteBufferAccessor(buf), cache, version);
        if (buf.hasRemaining()) throw new IllegalStateException("size mismatch");
        return buf.array();
    }

    static byte[] frame(byte[] header, byte[] body) {
        ByteBuffer f = ByteBuffer.allocate(4 + header.length + body.length);
        f.putInt(header.length + body.length).put(header).put(body);
        return f.array();
    }

    /** Serializes an example, checks Java reads it back equal, and records it. */
    static void emit(String name, String example, ApiMessage m, short version, boolean request,
                     BiFunction<ByteBuffer, Short, ApiMessage> reader) {
        byte[] body = write(m, version);
        ApiMessage back = reader.apply(ByteBuffer.wrap(body), version);
        if (!back.equals(m)) throw new IllegalStateException(name + " v" + version + " does not read back");
        ApiKeys key = ApiKeys.forId(m.apiKey());
        byte[] header;
        if (request) {
            RequestHeaderData h = new RequestHeaderData()
                .setRequestApiKey(m.apiKey())
                .setRequestApiVersion(version)
                .setCorrelationId(CORRELATION_ID)
                .setClientId(CLIENT_ID);
            header = write(h, key.requestHeaderVersion(version));
        } else {
            header = write(new ResponseHeaderData().setCorrelationId(CORRELATION_ID),
                key.responseHeaderVersion(version));
        }
        messages.add(String.format(
            "    {\"message\": \"%s\", \"api_key\": %d, \"version\": %d, \"example\": \"%s\",%n" +
            "     \"body\": \"%s\",%n     \"frame\": \"%s\"}",
            name, m.apiKey(), version, example, hex(body), hex(frame(header, body))));
    }

    static void expectRejected(String name, String example, ApiMessage m, short version) {
        try {
            write(m, version);
        } catch (UnsupportedVersionException e) {
            rejected.add(String.format(
                "    {\"message\": \"%s\", \"example\": \"%s\", \"version\": %d, \"exception\": \"%s\"}",
                name, example, version, e.getClass().getSimpleName()));
            return;
        }
        throw new IllegalStateException(name + " " + example + " v" + version + " was not rejected");
    }

    // ---- examples ------------------------------------------------------------------------

    static CreatableRenewers renewer(String type, String name) {
        return new CreatableRenewers().setPrincipalType(type).setPrincipalName(name);
    }

    static CreateDelegationTokenRequestData createNoOwner(short v) {
        CreateDelegationTokenRequestData d = new CreateDelegationTokenRequestData()
            .setRenewers(List.of(renewer("User", "alice"), renewer("User", "bob")))
            .setMaxLifetimeMs(-1L);
        // From v3 the owner is nullable; null means "the requester". Before v3 the field does
        // not exist and must keep its default ("").
        if (v >= 3) d.setOwnerPrincipalType(null).setOwnerPrincipalName(null);
        return d;
    }

    static CreateDelegationTokenRequestData createWithOwner() {
        return new CreateDelegationTokenRequestData()
            .setOwnerPrincipalType("User").setOwnerPrincipalName("carol")
            .setRenewers(List.of(renewer("User", JOSE)))
            .setMaxLifetimeMs(3_600_000L);
    }

    static CreateDelegationTokenRequestData createJavaDefaultOwner() {
        // What KafkaAdminClient sends at v3 when no owner is given: the defaults, "" and "".
        return new CreateDelegationTokenRequestData().setMaxLifetimeMs(604_800_000L);
    }

    static CreateDelegationTokenResponseData createOk(short v) {
        CreateDelegationTokenResponseData d = new CreateDelegationTokenResponseData()
            .setErrorCode((short) 0)
            .setPrincipalType("User").setPrincipalName("alice")
            .setIssueTimestampMs(1_700_000_000_000L)
            .setExpiryTimestampMs(1_700_086_400_000L)
            .setMaxTimestampMs(1_700_604_800_000L)
            .setTokenId(TOKEN_ID)
            .setHmac(HMAC)
            .setThrottleTimeMs(5);
        if (v >= 3) d.setTokenRequesterPrincipalType("User").setTokenRequesterPrincipalName("admin");
        return d;
    }

    static CreateDelegationTokenResponseData createError(short v) {
        CreateDelegationTokenResponseData d = new CreateDelegationTokenResponseData()
            .setErrorCode((short) 64)
            .setPrincipalType("User").setPrincipalName("alice")
            .setIssueTimestampMs(-1L).setExpiryTimestampMs(-1L).setMaxTimestampMs(-1L)
            .setTokenId("").setHmac(new byte[0])
            .setThrottleTimeMs(0);
        if (v >= 3) d.setTokenRequesterPrincipalType("User").setTokenRequesterPrincipalName("alice");
        return d;
    }

    static DescribeDelegationTokenOwner owner(String type, String name) {
        return new DescribeDelegationTokenOwner().setPrincipalType(type).setPrincipalName(name);
    }

    static DescribeDelegationTokenResponseData describeTwo(short v) {
        DescribedDelegationToken t1 = new DescribedDelegationToken()
            .setPrincipalType("User").setPrincipalName("alice")
            .setIssueTimestamp(1_700_000_000_000L)
            .setExpiryTimestamp(1_700_086_400_000L)
            .setMaxTimestamp(1_700_604_800_000L)
            .setTokenId(TOKEN_ID)
            .setHmac(HMAC)
            .setRenewers(List.of(new DescribedDelegationTokenRenewer()
                .setPrincipalType("User").setPrincipalName("bob")));
        DescribedDelegationToken t2 = new DescribedDelegationToken()
            .setPrincipalType("User").setPrincipalName("bob")
            .setIssueTimestamp(1L).setExpiryTimestamp(2L).setMaxTimestamp(3L)
            .setTokenId("tok2")
            .setHmac(new byte[] {1, 2, 3});
        if (v >= 3) {
            t1.setTokenRequesterPrincipalType("User").setTokenRequesterPrincipalName("admin");
            t2.setTokenRequesterPrincipalType("User").setTokenRequesterPrincipalName("bob");
        }
        return new DescribeDelegationTokenResponseData()
            .setErrorCode((short) 0)
            .setTokens(List.of(t1, t2))
            .setThrottleTimeMs(7);
    }

    public static void main(String[] args) throws Exception {
        for (short v = 1; v <= 3; v++) {
            emit("CreateDelegationTokenRequest", "create_no_owner", createNoOwner(v), v, true,
                (b, ver) -> new CreateDelegationTokenRequestData(new ByteBufferAccessor(b), ver));
            emit("CreateDelegationTokenResponse", "create_ok", createOk(v), v, false,
                (b, ver) -> new CreateDelegationTokenResponseData(new ByteBufferAccessor(b), ver));
            emit("CreateDelegationTokenResponse", "create_error", createError(v), v, false,
                (b, ver) -> new CreateDelegationTokenResponseData(new ByteBufferAccessor(b), ver));
            emit("DescribeDelegationTokenRequest", "describe_all",
                new DescribeDelegationTokenRequestData().setOwners(null), v, true,
                (b, ver) -> new DescribeDelegationTokenRequestData(new ByteBufferAccessor(b), ver));
            emit("DescribeDelegationTokenRequest", "describe_owners",
                new DescribeDelegationTokenRequestData().setOwners(
                    List.of(owner("User", "alice"), owner("User", JOSE))), v, true,
                (b, ver) -> new DescribeDelegationTokenRequestData(new ByteBufferAccessor(b), ver));
            emit("DescribeDelegationTokenRequest", "describe_none",
                new DescribeDelegationTokenRequestData().setOwners(new ArrayList<>()), v, true,
                (b, ver) -> new DescribeDelegationTokenRequestData(new ByteBufferAccessor(b), ver));
            emit("DescribeDelegationTokenResponse", "describe_two", describeTwo(v), v, false,
                (b, ver) -> new DescribeDelegationTokenResponseData(new ByteBufferAccessor(b), ver));
            emit("DescribeDelegationTokenResponse", "describe_error",
                new DescribeDelegationTokenResponseData().setErrorCode((short) 65)
                    .setTokens(new ArrayList<>()).setThrottleTimeMs(0), v, false,
                (b, ver) -> new DescribeDelegationTokenResponseData(new ByteBufferAccessor(b), ver));
            if (v <= 2) {
                emit("RenewDelegationTokenRequest", "renew",
                    new RenewDelegationTokenRequestData().setHmac(HMAC).setRenewPeriodMs(86_400_000L),
                    v, true,
                    (b, ver) -> new RenewDelegationTokenRequestData(new ByteBufferAccessor(b), ver));
                emit("ExpireDelegationTokenRequest", "expire",
                    new ExpireDelegationTokenRequestData().setHmac(HMAC).setExpiryTimePeriodMs(-1L),
                    v, true,
                    (b, ver) -> new ExpireDelegationTokenRequestData(new ByteBufferAccessor(b), ver));
                emit("RenewDelegationTokenResponse", "expiry_ok",
                    new RenewDelegationTokenResponseData().setErrorCode((short) 0)
                        .setExpiryTimestampMs(1_700_172_800_000L).setThrottleTimeMs(0), v, false,
                    (b, ver) -> new RenewDelegationTokenResponseData(new ByteBufferAccessor(b), ver));
                emit("ExpireDelegationTokenResponse", "expiry_error",
                    new ExpireDelegationTokenResponseData().setErrorCode((short) 66)
                        .setExpiryTimestampMs(-1L).setThrottleTimeMs(100), v, false,
                    (b, ver) -> new ExpireDelegationTokenResponseData(new ByteBufferAccessor(b), ver));
            } else {
                emit("CreateDelegationTokenRequest", "create_with_owner", createWithOwner(), v, true,
                    (b, ver) -> new CreateDelegationTokenRequestData(new ByteBufferAccessor(b), ver));
                emit("CreateDelegationTokenRequest", "create_java_default_owner",
                    createJavaDefaultOwner(), v, true,
                    (b, ver) -> new CreateDelegationTokenRequestData(new ByteBufferAccessor(b), ver));
            }
        }
        // Fields that only exist from v3, set at v1 and v2.
        for (short v = 1; v <= 2; v++) {
            expectRejected("CreateDelegationTokenRequest", "create_with_owner", createWithOwner(), v);
            expectRejected("CreateDelegationTokenResponse", "create_ok", createOk((short) 3), v);
            expectRejected("DescribeDelegationTokenResponse", "describe_two", describeTwo((short) 3), v);
        }

        Properties p = new Properties();
        p.load(ApiKeys.class.getResourceAsStream("/kafka/kafka-version.properties"));
        StringBuilder out = new StringBuilder();
        out.append("{\n");
        out.append("  \"generator\": \"tests/vectors/gen_token_messages.java\",\n");
        out.append("  \"kafka_clients_version\": \"").append(p.getProperty("version")).append("\",\n");
        out.append("  \"correlation_id\": ").append(CORRELATION_ID).append(",\n");
        out.append("  \"client_id\": \"").append(CLIENT_ID).append("\",\n");
        out.append("  \"messages\": [\n").append(String.join(",\n", messages)).append("\n  ],\n");
        out.append("  \"rejected\": [\n").append(String.join(",\n", rejected)).append("\n  ]\n");
        out.append("}\n");
        System.out.write(out.toString().getBytes(StandardCharsets.UTF_8));
        System.out.flush();
    }
}
