package org.ksasl.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.File;
import java.io.IOException;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import java.util.stream.IntStream;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.IllegalSaslStateException;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ResponseHeaderData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.protocol.types.RawTaggedField;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.ksasl.RefusedRequest;

/**
 * Issue 17, defect 5: a request other than SaslAuthenticate in the middle of a SASL exchange is
 * answered as Kafka 4.4 answers it (that API's error response with ILLEGAL_SASL_STATE, then a
 * close; a close alone when Kafka cannot read it). ksasl answers the APIs it has a schema for;
 * the server's {@link Broker} builds the answer for Produce and InitProducerId
 * ({@link Broker#refusal}).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RefusalTest {
    static final String CLOSED = "CLOSED";
    static final HexFormat HEX = HexFormat.of();
    static final String PRODUCE_TEXT = "Unexpected Kafka request of type PRODUCE during SASL authentication.";

    /**
     * Recorded cases the Java example cannot answer as Kafka did, with the reason. Empty: every
     * case matches.
     */
    static final Map<String, String> KNOWN_DIFFERENCES = Map.of();

    static JsonNode vectors() throws IOException {
        File dir = new File(System.getProperty("ksasl.vectors", "../../tests/vectors"));
        return new ObjectMapper().readTree(new File(dir, "kafka44_refusals.json"));
    }

    /**
     * The answers to {@code requests} (frames without their length prefix) on one connection:
     * each answer frame in hex (without its length prefix), or {@code CLOSED} (then no more).
     */
    static List<String> replay(int port, List<byte[]> requests) throws IOException {
        List<String> answers = new ArrayList<>();
        try (Socket s = new Socket(KsaslKafkaServer.HOST, port)) {
            s.setSoTimeout(10_000);
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            DataInputStream in = new DataInputStream(s.getInputStream());
            for (byte[] request : requests) {
                try {
                    out.writeInt(request.length);
                    out.write(request);
                    out.flush();
                    byte[] answer = new byte[in.readInt()];
                    in.readFully(answer);
                    answers.add(HEX.formatHex(answer));
                } catch (EOFException | java.net.SocketException e) {
                    // The end of the stream, or a reset when the request was written to a
                    // socket the server had closed.
                    answers.add(CLOSED);
                    break;
                }
            }
        }
        return answers;
    }

    /**
     * Every recorded case of {@code tests/vectors/kafka44_refusals.json} (a real Kafka 4.4
     * broker's answers) against the running example server over TCP. The first answer (to
     * SaslHandshake or ApiVersions) lists the server's own mechanisms or APIs: only whether it
     * came is compared; every later answer byte for byte.
     */
    @Test
    void everyRecordedRefusalIsAnsweredAsKafka44AnswersIt() throws Exception {
        JsonNode cases = vectors();
        assertTrue(cases.size() >= 60, "the recorded cases are all there: " + cases.size());
        Map<String, String> differences = new LinkedHashMap<>();
        try (KsaslKafkaServer server = KsaslKafkaServer.builder().user("alice", "alice-secret").maxReauthMs(3000)
                .failedAuthDelayMs(10).build()) {
            int port = server.start();
            for (Map.Entry<String, JsonNode> c : cases.properties()) {
                List<byte[]> requests = new ArrayList<>();
                c.getValue().get("requests").forEach(r -> requests.add(HEX.parseHex(r.asText())));
                List<String> kafka = new ArrayList<>();
                c.getValue().get("kafka_4_4").forEach(a -> kafka.add(a.asText()));
                List<String> ours = replay(port, requests);
                List<String> shape = new ArrayList<>(ours);
                if (!ours.isEmpty() && !kafka.isEmpty()
                        && ours.get(0).equals(CLOSED) == kafka.get(0).equals(CLOSED)) {
                    shape.set(0, kafka.get(0));
                }
                if (!shape.equals(kafka)) {
                    differences.put(c.getKey(), "kafka " + kafka + ", example " + ours);
                }
            }
        }
        Map<String, String> unexpected = new LinkedHashMap<>(differences);
        unexpected.keySet().removeAll(KNOWN_DIFFERENCES.keySet());
        assertEquals(Map.of(), unexpected);
        assertEquals(KNOWN_DIFFERENCES.keySet(), differences.keySet(), "a known difference is gone");
    }

    // --- Broker.refusal against kafka-clients' own getErrorResponse -----------------------

    /** A request frame (without the length prefix), as kafka-clients writes it. */
    static byte[] request(ApiKeys api, short version, int correlationId, ApiMessage body) {
        org.apache.kafka.common.message.RequestHeaderData h = new org.apache.kafka.common.message.RequestHeaderData()
                .setRequestApiKey(api.id).setRequestApiVersion(version).setCorrelationId(correlationId)
                .setClientId("refusal-test");
        short headerVersion = api.requestHeaderVersion(version);
        ObjectSerializationCache cache = new ObjectSerializationCache();
        ByteBuffer b = ByteBuffer.allocate(h.size(cache, headerVersion) + body.size(cache, version));
        ByteBufferAccessor a = new ByteBufferAccessor(b);
        h.write(a, cache, headerVersion);
        body.write(a, cache, version);
        return b.array();
    }

    /**
     * What a Kafka 4.4 broker sends for {@code frame} during a SASL exchange, by its own code
     * (SaslServerAuthenticator): the request parsed, its {@code getErrorResponse} for the
     * IllegalSaslStateException, sent with the request's response header; {@code null} where
     * Kafka closes instead (the request does not parse, there is no response, or building it
     * fails).
     */
    static byte[] kafkaAnswer(byte[] frame) {
        try {
            ByteBuffer buf = ByteBuffer.wrap(frame);
            RequestHeader header = RequestHeader.parse(buf);
            AbstractRequest request = AbstractRequest.parseRequest(header.apiKey(), header.apiVersion(),
                    new ByteBufferAccessor(buf)).request;
            AbstractResponse response = request.getErrorResponse(new IllegalSaslStateException(
                    "Unexpected Kafka request of type " + header.apiKey() + " during SASL authentication."));
            if (response == null) {
                return null;
            }
            short version = header.apiVersion();
            short headerVersion = header.apiKey().responseHeaderVersion(version);
            ResponseHeaderData h = new ResponseHeaderData().setCorrelationId(header.correlationId());
            ObjectSerializationCache cache = new ObjectSerializationCache();
            int size = h.size(cache, headerVersion) + response.data().size(cache, version);
            ByteBuffer b = ByteBuffer.allocate(4 + size).putInt(size);
            ByteBufferAccessor a = new ByteBufferAccessor(b);
            h.write(a, cache, headerVersion);
            response.data().write(a, cache, version);
            return b.array();
        } catch (RuntimeException e) {
            return null;
        }
    }

    /** The refusal ksasl reports for {@code frame} (as ServerConnection.refusedRequest() does). */
    static RefusedRequest refusedFor(byte[] frame) {
        ByteBuffer b = ByteBuffer.wrap(frame);
        short key = b.getShort();
        String type = key == ApiKeys.PRODUCE.id ? "PRODUCE" : "INIT_PRODUCER_ID";
        return new RefusedRequest(key, b.getShort(), b.getInt(), (short) 34,
                "Unexpected Kafka request of type " + type + " during SASL authentication.");
    }

    static String hexOrNull(byte[] b) {
        return b == null ? null : HEX.formatHex(b);
    }

    /** Checks the Broker's answer to {@code frame} against Kafka's; returns Kafka's. */
    static byte[] sameAsKafka(Broker broker, byte[] frame, String what) {
        byte[] kafka = kafkaAnswer(frame);
        assertEquals(hexOrNull(kafka), hexOrNull(broker.refusal(refusedFor(frame), frame)), what);
        return kafka;
    }

    static Broker broker() {
        Broker b = new Broker(KsaslKafkaServer.HOST, System.getLogger("RefusalTest"));
        b.port(9092);
        return b;
    }

    static IntStream produceVersions() {
        return IntStream.rangeClosed(3, 12);
    }

    static IntStream initProducerIdVersions() {
        return IntStream.rangeClosed(0, 5);
    }

    static ProduceRequestData.PartitionProduceData partition(int index, MemoryRecords records) {
        return new ProduceRequestData.PartitionProduceData().setIndex(index).setRecords(records);
    }

    static ProduceRequestData produce(short acks, String transactionalId, List<ProduceRequestData.TopicProduceData> topics) {
        return new ProduceRequestData().setAcks(acks).setTimeoutMs(1000).setTransactionalId(transactionalId)
                .setTopicData(new ProduceRequestData.TopicProduceDataCollection(topics.iterator()));
    }

    static ProduceRequestData.TopicProduceData topic(String name, ProduceRequestData.PartitionProduceData... ps) {
        return new ProduceRequestData.TopicProduceData().setName(name).setPartitionData(new ArrayList<>(List.of(ps)));
    }

    /**
     * Many partitions and topics (Kafka's map grows past its first sizes, and keys share bins),
     * a topic named twice, a partition named twice, a negative index.
     */
    static List<ProduceRequestData.TopicProduceData> manyTopics(MemoryRecords records) {
        List<ProduceRequestData.TopicProduceData> topics = new ArrayList<>();
        ProduceRequestData.TopicProduceData orders = topic("orders");
        for (int p : new int[] {17, 3, 40, 0, 9, 25, 3, 64, 1, 33, 12, 5, 48, 2, 30, 7}) {
            orders.partitionData().add(partition(p, records));
        }
        topics.add(orders);
        topics.add(topic("t", partition(0, MemoryRecords.EMPTY)));
        topics.add(topic("payments", partition(-1, records), partition(4, records)));
        topics.add(topic("orders", partition(99, records), partition(17, records)));
        for (int i = 0; i < 20; i++) {
            topics.add(topic("topic-" + i, partition(i % 3, records)));
        }
        return topics;
    }

    /**
     * Produce at every version the Broker implements: Kafka answers one entry per distinct
     * partition, in the order of its hash map, with the exception's text from v8; not at all
     * with acks=0, a null record set or a request it cannot read.
     */
    @ParameterizedTest
    @MethodSource("produceVersions")
    void aRefusedProduceGetsKafkasOwnErrorResponse(int version) {
        short v = (short) version;
        Broker broker = broker();
        MemoryRecords records = MemoryRecords.withRecords(Compression.NONE, new SimpleRecord("a".getBytes()));
        byte[] many = request(ApiKeys.PRODUCE, v, 11, produce((short) -1, null, manyTopics(records)));
        byte[] kafka = sameAsKafka(broker, many, "many partitions");
        assertNotNull(kafka);
        if (v >= 8) {
            assertTrue(new String(kafka, java.nio.charset.StandardCharsets.UTF_8).contains(PRODUCE_TEXT));
        }

        byte[] none = request(ApiKeys.PRODUCE, v, 12, produce((short) 1, "tx", List.of()));
        assertNotNull(sameAsKafka(broker, none, "no topics, a transactional id"));
        // Trailing bytes after a readable request are ignored.
        sameAsKafka(broker, Arrays.copyOf(none, none.length + 3), "trailing bytes");

        assertNull(sameAsKafka(broker, request(ApiKeys.PRODUCE, v, 13, produce((short) 0, null, manyTopics(records))), "acks=0"));
        assertNull(sameAsKafka(broker, request(ApiKeys.PRODUCE, v, 14, produce((short) 1, null,
                List.of(topic("t", partition(0, records), partition(1, null))))), "null records"));
        assertNull(sameAsKafka(broker, Arrays.copyOf(many, many.length - 5), "truncated"));

        if (v >= 9) {
            // Unknown tagged fields everywhere: skipped.
            ProduceRequestData tagged = produce((short) 1, null, List.of(topic("t", partition(0, records))));
            tagged.unknownTaggedFields().add(new RawTaggedField(5, new byte[] {1, 2}));
            tagged.topicData().iterator().next().unknownTaggedFields().add(new RawTaggedField(6, new byte[] {3}));
            tagged.topicData().iterator().next().partitionData().get(0).unknownTaggedFields()
                    .add(new RawTaggedField(7, new byte[0]));
            assertNotNull(sameAsKafka(broker, request(ApiKeys.PRODUCE, v, 15, tagged), "tagged fields"));
        }
    }

    /** Hand-made classic Produce v3 requests: lengths Kafka reads as null or cannot read. */
    @Test
    void aRefusedProduceIsReadWithKafkasLengthRules() {
        Broker broker = broker();
        // Produce v3, correlation id 2, client "test", transactional id null, acks 1, timeout
        // 1000, topic "t" partition 0 with an empty record set (the recorded case).
        String base = "0000000300000002000474657374" + "ffff" + "0001000003e8" + "00000001" + "000174"
                + "00000001" + "00000000" + "00000000";
        byte[] expected = HEX.parseHex("00000029" + "00000002" + "00000001" + "000174" + "00000001" + "00000000"
                + "0022" + "ffffffffffffffff" + "ffffffffffffffff" + "00000000");
        assertEquals(HEX.formatHex(expected), hexOrNull(sameAsKafka(broker, HEX.parseHex(base), "recorded")));
        Map<String, UnaryOperator<String>> mutations = new LinkedHashMap<>();
        mutations.put("transactional id length -2 (null)", s -> s.replace("74657374ffff", "74657374fffe"));
        mutations.put("client id length -1", s -> s.replace("00000002000474657374", "00000002ffff"));
        mutations.put("topics array -1", s -> s.replace("03e800000001", "03e8ffffffff"));
        mutations.put("topics array too long", s -> s.replace("03e800000001", "03e800000009"));
        mutations.put("record set length -1 (null)", s -> s.substring(0, s.length() - 8) + "ffffffff");
        mutations.put("record set longer than the frame", s -> s.substring(0, s.length() - 8) + "00000004");
        mutations.put("topic name null", s -> s.replace("00000001000174", "00000001ffff"));
        for (Map.Entry<String, UnaryOperator<String>> m : mutations.entrySet()) {
            String mutated = m.getValue().apply(base);
            assertTrue(!mutated.equals(base), m.getKey());
            sameAsKafka(broker, HEX.parseHex(mutated), m.getKey());
        }
    }

    @ParameterizedTest
    @MethodSource("initProducerIdVersions")
    void aRefusedInitProducerIdGetsKafkasOwnErrorResponse(int version) {
        short v = (short) version;
        Broker broker = broker();
        for (String tx : new String[] {null, "tx-1"}) {
            byte[] frame = request(ApiKeys.INIT_PRODUCER_ID, v, 21,
                    new InitProducerIdRequestData().setTransactionalId(tx).setTransactionTimeoutMs(60_000));
            assertNotNull(sameAsKafka(broker, frame, "transactional id " + tx));
            assertNull(sameAsKafka(broker, Arrays.copyOf(frame, frame.length - 1), "truncated"));
        }
    }

    /** Versions and APIs the Broker does not implement (or ksasl answers) are not answered here. */
    @Test
    void otherRefusedRequestsAreNotAnsweredByTheBroker() {
        Broker broker = broker();
        byte[] produce13 = HEX.parseHex("0000000d0000000200047465737400000001000003e80100");
        assertNull(broker.refusal(new RefusedRequest((short) 0, (short) 13, 2, (short) 34, PRODUCE_TEXT), produce13));
        byte[] unknown = HEX.parseHex("03e7000000000002000474657374");
        assertNull(broker.refusal(new RefusedRequest((short) 999, (short) 0, 2, (short) 34, "?"), unknown));
        byte[] metadata = request(ApiKeys.METADATA, (short) 4, 2, new MetadataRequestData().setTopics(null));
        assertNull(broker.refusal(new RefusedRequest((short) 3, (short) 4, 2, (short) 34, "?"), metadata));
    }
}
