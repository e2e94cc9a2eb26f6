package org.ksasl.examples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.CreateDelegationTokenRequestData;
import org.apache.kafka.common.message.CreateDelegationTokenResponseData;
import org.apache.kafka.common.message.DescribeDelegationTokenRequestData;
import org.apache.kafka.common.message.DescribeDelegationTokenResponseData;
import org.apache.kafka.common.message.ExpireDelegationTokenRequestData;
import org.apache.kafka.common.message.ExpireDelegationTokenResponseData;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.message.RequestHeaderData;
import org.apache.kafka.common.message.RenewDelegationTokenRequestData;
import org.apache.kafka.common.message.RenewDelegationTokenResponseData;
import org.apache.kafka.common.message.ResponseHeaderData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.message.SaslHandshakeResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.protocol.types.RawTaggedField;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.ksasl.DelegationTokenCodec;
import org.ksasl.TokenAuthority;

/**
 * The {@link Broker}'s encodings at every version it advertises, checked against Kafka's own
 * generated message classes: requests are written by kafka-clients, answers read back by it,
 * and every byte of an answer must be consumed.
 */
class ProtocolTest {
    static final int PORT = 9092;
    static final int CORRELATION_ID = 42;

    Broker broker;
    ConnectionStats stats;

    @BeforeEach
    void setUp() {
        broker = new Broker(KsaslKafkaServer.HOST, System.getLogger("ProtocolTest"));
        broker.port(PORT);
        broker.createTopic("orders", 3);
        stats = new ConnectionStats(1, "test", 0);
    }

    static IntStream metadataVersions() {
        return IntStream.rangeClosed(0, 13);
    }

    static IntStream produceVersions() {
        return IntStream.rangeClosed(3, 12);
    }

    static IntStream initProducerIdVersions() {
        return IntStream.rangeClosed(0, 5);
    }

    static IntStream apiVersionsVersions() {
        return IntStream.rangeClosed(0, 5);
    }

    /** CreateDelegationToken and DescribeDelegationToken; Renew and Expire go to 2. */
    static IntStream delegationTokenVersions() {
        return IntStream.rangeClosed(1, 3);
    }

    /** A request frame (without the length prefix) as kafka-clients writes it. */
    static byte[] request(ApiKeys api, short version, ApiMessage body) {
        RequestHeaderData h = new RequestHeaderData()
                .setRequestApiKey(api.id)
                .setRequestApiVersion(version)
                .setCorrelationId(CORRELATION_ID)
                .setClientId("protocol-test");
        short headerVersion = api.requestHeaderVersion(version);
        if (headerVersion >= 2) {
            // A tag the server does not know: it must be skipped.
            h.unknownTaggedFields().add(new RawTaggedField(7, new byte[] {1, 2, 3}));
        }
        ObjectSerializationCache cache = new ObjectSerializationCache();
        ByteBuffer b = ByteBuffer.allocate(h.size(cache, headerVersion) + body.size(cache, version));
        ByteBufferAccessor a = new ByteBufferAccessor(b);
        h.write(a, cache, headerVersion);
        body.write(a, cache, version);
        return b.array();
    }

    /** Checks a response frame's length prefix and header; returns a reader of its body. */
    static ByteBufferAccessor response(byte[] frame, ApiKeys api, short version) {
        ByteBuffer b = ByteBuffer.wrap(frame);
        assertEquals(frame.length - 4, b.getInt());
        ByteBufferAccessor a = new ByteBufferAccessor(b);
        ResponseHeaderData h = new ResponseHeaderData(a, api.responseHeaderVersion(version));
        assertEquals(CORRELATION_ID, h.correlationId());
        return a;
    }

    static void assertConsumed(ByteBufferAccessor a) {
        assertEquals(0, a.remaining(), "trailing bytes");
    }

    MetadataResponseData metadata(short v, MetadataRequestData request) {
        byte[] frame = broker.handle(request(ApiKeys.METADATA, v, request), stats, 0);
        ByteBufferAccessor a = response(frame, ApiKeys.METADATA, v);
        MetadataResponseData r = new MetadataResponseData(a, v);
        assertConsumed(a);
        return r;
    }

    static List<String> names(MetadataResponseData r) {
        return r.topics().stream().map(MetadataResponseData.MetadataResponseTopic::name).collect(Collectors.toList());
    }

    @ParameterizedTest
    @MethodSource("metadataVersions")
    void metadata(int version) {
        short v = (short) version;
        // Named topics: a known one, and a new one that the request may create.
        MetadataRequestData named = new MetadataRequestData().setTopics(List.of(
                new MetadataRequestData.MetadataRequestTopic().setName("orders"),
                new MetadataRequestData.MetadataRequestTopic().setName("created")));
        MetadataResponseData r = metadata(v, named);
        assertEquals(1, r.brokers().size());
        MetadataResponseData.MetadataResponseBroker b = r.brokers().iterator().next();
        assertEquals(Broker.NODE_ID, b.nodeId());
        assertEquals(KsaslKafkaServer.HOST, b.host());
        assertEquals(PORT, b.port());
        if (v >= 1) {
            assertEquals(Broker.NODE_ID, r.controllerId());
        }
        if (v >= 2) {
            assertEquals(Broker.CLUSTER_ID, r.clusterId());
        }
        assertEquals(List.of("orders", "created"), names(r));
        for (MetadataResponseData.MetadataResponseTopic t : r.topics()) {
            assertEquals(0, t.errorCode());
            assertEquals(t.name().equals("orders") ? 3 : 1, t.partitions().size());
            for (MetadataResponseData.MetadataResponsePartition p : t.partitions()) {
                assertEquals(Broker.NODE_ID, p.leaderId());
                assertEquals(List.of(Broker.NODE_ID), p.replicaNodes());
                assertEquals(List.of(Broker.NODE_ID), p.isrNodes());
            }
            if (v >= 10) {
                assertNotEquals(Uuid.ZERO_UUID, t.topicId());
            }
        }
        assertEquals(Map.of("orders", 3, "created", 1), broker.topics());

        // All topics: v0 says so with an empty list, later versions with a null one.
        MetadataResponseData all = metadata(v, new MetadataRequestData().setTopics(v == 0 ? List.of() : null));
        assertEquals(List.of("created", "orders"), names(all));

        if (v >= 4) {
            // A request that may not create topics.
            MetadataResponseData unknown = metadata(v, new MetadataRequestData().setAllowAutoTopicCreation(false)
                    .setTopics(List.of(new MetadataRequestData.MetadataRequestTopic().setName("absent"))));
            assertEquals(Errors.UNKNOWN_TOPIC_OR_PARTITION.code(), unknown.topics().iterator().next().errorCode());
            assertEquals(Map.of("orders", 3, "created", 1), broker.topics());
        }
        if (v >= 10) {
            // A topic asked for by id alone.
            Uuid id = all.topics().find("orders").topicId();
            MetadataResponseData byId = metadata(v, new MetadataRequestData().setTopics(List.of(
                    new MetadataRequestData.MetadataRequestTopic().setTopicId(id).setName(null))));
            assertEquals("orders", byId.topics().iterator().next().name());
            assertEquals(id, byId.topics().iterator().next().topicId());
        }
    }

    /** ApiVersions is answered by ksasl from the listener's configuration, as the server does. */
    static byte[] answerApiVersions(byte[] request) throws Exception {
        try (org.ksasl.MechanismRegistry registry = new org.ksasl.MechanismRegistry().addPasswordServers()) {
            org.ksasl.ServerConfig.Builder b = org.ksasl.ServerConfig.builder(registry);
            for (Broker.ApiRange api : Broker.APPLICATION_APIS) {
                b.setApiVersion(api.apiKey(), api.minVersion(), api.maxVersion());
            }
            try (org.ksasl.ServerConfig config = b.build()) {
                return config.apiVersionsResponse(request);
            }
        }
    }

    @ParameterizedTest
    @MethodSource("apiVersionsVersions")
    void apiVersions(int version) throws Exception {
        short v = (short) version;
        ApiVersionsRequestData request = new ApiVersionsRequestData();
        if (v >= 3) {
            request.setClientSoftwareName("apache-kafka-java").setClientSoftwareVersion("4.4.0");
        }
        if (v >= 5) {
            request.setClusterId("ksasl-example").setNodeId(0); // the broker the client means
        }
        byte[] frame = answerApiVersions(request(ApiKeys.API_VERSIONS, v, request));
        ByteBufferAccessor a = response(frame, ApiKeys.API_VERSIONS, v);
        ApiVersionsResponseData r = new ApiVersionsResponseData(a, v);
        assertConsumed(a);
        assertEquals(0, r.errorCode());
        Map<Short, List<Short>> advertised = new TreeMap<>();
        r.apiKeys().forEach(k -> advertised.put(k.apiKey(), List.of(k.minVersion(), k.maxVersion())));
        Map<Short, List<Short>> expected = new TreeMap<>();
        expected.put(ApiKeys.PRODUCE.id, List.of((short) 3, (short) 12));
        expected.put(ApiKeys.METADATA.id, List.of((short) 0, (short) 13));
        expected.put(ApiKeys.SASL_HANDSHAKE.id, List.of((short) 0, (short) 1));
        expected.put(ApiKeys.API_VERSIONS.id, List.of((short) 0, (short) 5));
        expected.put(ApiKeys.INIT_PRODUCER_ID.id, List.of((short) 0, (short) 5));
        expected.put(ApiKeys.SASL_AUTHENTICATE.id, List.of((short) 0, (short) 2));
        assertEquals(expected, advertised);
        // Every advertised range is one kafka-clients 4.4 knows.
        r.apiKeys().forEach(k -> {
            ApiKeys api = ApiKeys.forId(k.apiKey());
            assertTrue(api.oldestVersion() <= k.minVersion() && k.maxVersion() <= api.latestVersion(), api.name);
        });
    }

    @Test
    void apiVersionsV5WantsClusterAndNodeTogether() throws Exception {
        short v = 5;
        // kafka-clients' own check says what the server must refuse.
        ApiVersionsRequestData half = new ApiVersionsRequestData().setClientSoftwareName("apache-kafka-java")
                .setClientSoftwareVersion("4.4.0").setClusterId("ksasl-example").setNodeId(-1);
        assertFalse(new org.apache.kafka.common.requests.ApiVersionsRequest(half, v).isValid());
        byte[] frame = answerApiVersions(request(ApiKeys.API_VERSIONS, v, half));
        ByteBufferAccessor a = response(frame, ApiKeys.API_VERSIONS, v);
        ApiVersionsResponseData r = new ApiVersionsResponseData(a, v);
        assertConsumed(a);
        assertEquals(Errors.INVALID_REQUEST.code(), r.errorCode());
    }

    @Test
    void apiVersionsRefusesAnInvalidSoftwareName() throws Exception {
        short v = 3;
        byte[] frame = answerApiVersions(request(ApiKeys.API_VERSIONS, v, new ApiVersionsRequestData()
                .setClientSoftwareName("not valid!").setClientSoftwareVersion("1.0")));
        ByteBufferAccessor a = response(frame, ApiKeys.API_VERSIONS, v);
        ApiVersionsResponseData r = new ApiVersionsResponseData(a, v);
        assertConsumed(a);
        assertEquals(Errors.INVALID_REQUEST.code(), r.errorCode());
    }

    @ParameterizedTest
    @MethodSource("produceVersions")
    void produce(int version) {
        short v = (short) version;
        MemoryRecords plain = MemoryRecords.withRecords(Compression.NONE,
                new SimpleRecord("a".getBytes()), new SimpleRecord("b".getBytes()), new SimpleRecord("c".getBytes()));
        MemoryRecords gzip = MemoryRecords.withRecords(Compression.gzip().build(),
                new SimpleRecord("d".getBytes()), new SimpleRecord("e".getBytes()));
        List<ProduceRequestData.TopicProduceData> topics = new ArrayList<>();
        topics.add(new ProduceRequestData.TopicProduceData().setName("orders").setPartitionData(List.of(
                new ProduceRequestData.PartitionProduceData().setIndex(1).setRecords(plain),
                new ProduceRequestData.PartitionProduceData().setIndex(2).setRecords(gzip))));
        topics.add(new ProduceRequestData.TopicProduceData().setName("nope").setPartitionData(List.of(
                new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(plain))));
        ProduceRequestData request = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(1000)
                .setTopicData(new ProduceRequestData.TopicProduceDataCollection(topics.iterator()));

        for (int round = 0; round < 2; round++) {
            byte[] frame = broker.handle(request(ApiKeys.PRODUCE, v, request), stats, 0);
            ByteBufferAccessor a = response(frame, ApiKeys.PRODUCE, v);
            ProduceResponseData r = new ProduceResponseData(a, v);
            assertConsumed(a);
            Map<String, List<String>> got = new TreeMap<>();
            for (ProduceResponseData.TopicProduceResponse t : r.responses()) {
                for (ProduceResponseData.PartitionProduceResponse p : t.partitionResponses()) {
                    got.computeIfAbsent(t.name(), k -> new ArrayList<>())
                            .add(p.index() + ":" + p.errorCode() + "@" + p.baseOffset());
                }
            }
            assertEquals(Map.of(
                    "orders", List.of("1:0@" + 3 * round, "2:0@" + 2 * round),
                    "nope", List.of("0:" + Errors.UNKNOWN_TOPIC_OR_PARTITION.code() + "@-1")), got);
        }
        assertEquals(10, broker.records("orders"));
        assertEquals(10, stats.records());

        // acks=0: no answer at all.
        request.setAcks((short) 0);
        assertArrayEquals(new byte[0], broker.handle(request(ApiKeys.PRODUCE, v, request), stats, 0));
        assertEquals(15, broker.records("orders"));
    }

    @ParameterizedTest
    @MethodSource("initProducerIdVersions")
    void initProducerId(int version) {
        short v = (short) version;
        byte[] frame = broker.handle(request(ApiKeys.INIT_PRODUCER_ID, v,
                new InitProducerIdRequestData().setTransactionalId(null).setTransactionTimeoutMs(60_000)), stats, 0);
        ByteBufferAccessor a = response(frame, ApiKeys.INIT_PRODUCER_ID, v);
        InitProducerIdResponseData r = new InitProducerIdResponseData(a, v);
        assertConsumed(a);
        assertEquals(0, r.errorCode());
        assertTrue(r.producerId() >= 0);
        assertEquals(0, r.producerEpoch());
        if (v >= 3) {
            // A producer that already has an id keeps it with the next epoch.
            byte[] again = broker.handle(request(ApiKeys.INIT_PRODUCER_ID, v, new InitProducerIdRequestData()
                    .setTransactionalId(null).setProducerId(r.producerId()).setProducerEpoch((short) 0)), stats, 0);
            ByteBufferAccessor b = response(again, ApiKeys.INIT_PRODUCER_ID, v);
            InitProducerIdResponseData r2 = new InitProducerIdResponseData(b, v);
            assertEquals(r.producerId(), r2.producerId());
            assertEquals(1, r2.producerEpoch());
        }
    }

    /**
     * The token APIs as the server serves them ({@link TokenAuthority#handleRequest}), at every
     * version it advertises: the Kafka 4 ranges, all of which kafka-clients 4.4 knows.
     */
    @ParameterizedTest
    @MethodSource("delegationTokenVersions")
    void delegationTokens(int version) throws Exception {
        short v = (short) version;
        short ev = (short) Math.min(version, 2);
        for (DelegationTokenCodec.ApiRange api : DelegationTokenCodec.apiVersions(true)) {
            ApiKeys k = ApiKeys.forId(api.apiKey());
            assertEquals(k.oldestVersion(), api.minVersion(), k.name);
            assertEquals(k.latestVersion(), api.maxVersion(), k.name);
        }
        long now = 1_000_000;
        try (TokenAuthority authority = new TokenAuthority("protocol-test")) {
            CreateDelegationTokenRequestData create = new CreateDelegationTokenRequestData().setMaxLifetimeMs(-1)
                    .setRenewers(List.of(new CreateDelegationTokenRequestData.CreatableRenewers()
                            .setPrincipalType("User").setPrincipalName("bob")));
            byte[] frame = authority.handleRequest(request(ApiKeys.CREATE_DELEGATION_TOKEN, v, create), "User:alice",
                    false, now);
            ByteBufferAccessor a = response(frame, ApiKeys.CREATE_DELEGATION_TOKEN, v);
            CreateDelegationTokenResponseData created = new CreateDelegationTokenResponseData(a, v);
            assertConsumed(a);
            assertEquals(Errors.NONE.code(), created.errorCode());
            assertEquals("User", created.principalType());
            assertEquals("alice", created.principalName());
            assertEquals(v >= 3 ? "alice" : "", created.tokenRequesterPrincipalName());
            assertEquals(now, created.issueTimestampMs());
            assertEquals(now + TokenAuthority.DEFAULT_EXPIRY_TIME_MS, created.expiryTimestampMs());
            assertEquals(now + TokenAuthority.DEFAULT_MAX_LIFETIME_MS, created.maxTimestampMs());
            assertArrayEquals(authority.hmac(created.tokenId()), created.hmac());

            DescribeDelegationTokenRequestData describe = new DescribeDelegationTokenRequestData().setOwners(List.of(
                    new DescribeDelegationTokenRequestData.DescribeDelegationTokenOwner()
                            .setPrincipalType("User").setPrincipalName("alice")));
            a = response(authority.handleRequest(request(ApiKeys.DESCRIBE_DELEGATION_TOKEN, v, describe), "User:bob",
                    false, now), ApiKeys.DESCRIBE_DELEGATION_TOKEN, v);
            DescribeDelegationTokenResponseData described = new DescribeDelegationTokenResponseData(a, v);
            assertConsumed(a);
            assertEquals(Errors.NONE.code(), described.errorCode());
            assertEquals(1, described.tokens().size());
            DescribeDelegationTokenResponseData.DescribedDelegationToken t = described.tokens().get(0);
            assertEquals(created.tokenId(), t.tokenId());
            assertArrayEquals(created.hmac(), t.hmac());
            assertEquals("bob", t.renewers().get(0).principalName());

            a = response(authority.handleRequest(request(ApiKeys.RENEW_DELEGATION_TOKEN, ev,
                    new RenewDelegationTokenRequestData().setHmac(created.hmac()).setRenewPeriodMs(1000)), "User:bob",
                    false, now + 1), ApiKeys.RENEW_DELEGATION_TOKEN, ev);
            RenewDelegationTokenResponseData renewed = new RenewDelegationTokenResponseData(a, ev);
            assertConsumed(a);
            assertEquals(Errors.NONE.code(), renewed.errorCode());
            assertEquals(now + 1 + 1000, renewed.expiryTimestampMs());

            // A connection that logged in with a token may not ask.
            a = response(authority.handleRequest(request(ApiKeys.RENEW_DELEGATION_TOKEN, ev,
                    new RenewDelegationTokenRequestData().setHmac(created.hmac()).setRenewPeriodMs(1000)), "User:alice",
                    true, now + 2), ApiKeys.RENEW_DELEGATION_TOKEN, ev);
            assertEquals(Errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED.code(),
                    new RenewDelegationTokenResponseData(a, ev).errorCode());

            for (int round = 0; round < 2; round++) {
                a = response(authority.handleRequest(request(ApiKeys.EXPIRE_DELEGATION_TOKEN, ev,
                        new ExpireDelegationTokenRequestData().setHmac(created.hmac()).setExpiryTimePeriodMs(-1)),
                        "User:alice", false, now + 3), ApiKeys.EXPIRE_DELEGATION_TOKEN, ev);
                ExpireDelegationTokenResponseData expired = new ExpireDelegationTokenResponseData(a, ev);
                assertConsumed(a);
                // Expired now; a second time the token is gone.
                assertEquals(round == 0 ? Errors.NONE.code() : Errors.DELEGATION_TOKEN_NOT_FOUND.code(),
                        expired.errorCode());
            }
        }
    }

    @Test
    void aSaslHandshakeThatReachesTheBrokerGetsIllegalSaslState() {
        short v = 1;
        byte[] frame = broker.handle(request(ApiKeys.SASL_HANDSHAKE, v,
                new SaslHandshakeRequestData().setMechanism("PLAIN")), stats, 0);
        ByteBufferAccessor a = response(frame, ApiKeys.SASL_HANDSHAKE, v);
        SaslHandshakeResponseData r = new SaslHandshakeResponseData(a, v);
        assertConsumed(a);
        assertEquals(Errors.ILLEGAL_SASL_STATE.code(), r.errorCode());
    }

    @Test
    void unsupportedRequestsCloseTheConnection() {
        // Metadata v14 does not exist (yet); Fetch (1) is not implemented.
        assertNull(broker.handle(header(ApiKeys.METADATA.id, 14), stats, 0));
        assertNull(broker.handle(header(ApiKeys.FETCH.id, 12), stats, 0));
        assertNull(broker.handle(header(ApiKeys.PRODUCE.id, 13), stats, 0));
    }

    @Test
    void aTruncatedRequestIsMalformed() {
        byte[] full = request(ApiKeys.METADATA, (short) 12, new MetadataRequestData().setTopics(List.of(
                new MetadataRequestData.MetadataRequestTopic().setName("orders"))));
        byte[] cut = Arrays.copyOf(full, full.length - 3);
        assertThrows(RequestReader.MalformedRequestException.class, () -> broker.handle(cut, stats, 0));
    }

    /** A classic request header with an empty body. */
    private static byte[] header(short apiKey, int version) {
        return ByteBuffer.allocate(10).putShort(apiKey).putShort((short) version).putInt(CORRELATION_ID)
                .putShort((short) -1).array();
    }
}
