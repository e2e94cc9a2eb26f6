package org.ksasl.examples;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.regex.Pattern;
import org.ksasl.RefusedRequest;
import org.ksasl.ServerConnection;

/**
 * The application side of the example: the Kafka requests a client may send once ksasl has
 * authenticated its connection. One broker (node 0) at the listener's address; topics live in
 * memory (records are counted, not stored). Implemented, and advertised in ApiVersions:
 *
 * <ul>
 *   <li>ApiVersions, answered by ksasl from the listener's configuration before and after
 *       authentication (the Java client asks again once authenticated);
 *   <li>Metadata v0-v13 (any topic asked for is created with one partition when the request
 *       allows it);
 *   <li>Produce v3-v12 (v13 names topics by id only);
 *   <li>InitProducerId v0-v5, so that an idempotent producer (the default) can start.
 * </ul>
 *
 * SaslHandshake and SaslAuthenticate that reach this class (not eligible for re-authentication)
 * get Kafka's ILLEGAL_SASL_STATE answer from {@link ServerConnection#illegalStateResponse}.
 * Anything else makes {@link #handle} return {@code null}, and the server closes the connection,
 * as a Kafka broker does for an API or version it does not know.
 *
 * <p>A Produce or InitProducerId request sent in the middle of a SASL exchange is refused by
 * ksasl, which has no schema for them ({@link ServerConnection#refusedRequest}): {@link #refusal}
 * builds Kafka 4.4's answer, the API's error response with ILLEGAL_SASL_STATE.
 */
final class Broker {
    static final short PRODUCE = 0;
    static final short METADATA = 3;
    static final short SASL_HANDSHAKE = 17;
    static final short API_VERSIONS = 18;
    static final short INIT_PRODUCER_ID = 22;
    static final short SASL_AUTHENTICATE = 36;

    static final int NODE_ID = 0;
    static final String CLUSTER_ID = "ksasl-example-cluster";

    static final short NONE = 0;
    static final short UNKNOWN_TOPIC_OR_PARTITION = 3;
    static final short INVALID_TOPIC_EXCEPTION = 17;
    static final short UNKNOWN_TOPIC_ID = 100;

    /** "No authorized operations were asked for" in Metadata v8+. */
    static final int AUTHORIZED_OPERATIONS_OMITTED = Integer.MIN_VALUE;

    /** One entry of an ApiVersions answer. */
    record ApiRange(short apiKey, short minVersion, short maxVersion) {
        ApiRange(int apiKey, int minVersion, int maxVersion) {
            this((short) apiKey, (short) minVersion, (short) maxVersion);
        }

        boolean supports(short version) {
            return version >= minVersion && version <= maxVersion;
        }
    }

    /** The APIs this class implements; the server passes them to {@code ServerConfig.Builder.apiVersion}. */
    static final List<ApiRange> APPLICATION_APIS = List.of(
            new ApiRange(PRODUCE, 3, 12),
            new ApiRange(METADATA, 0, 13),
            new ApiRange(INIT_PRODUCER_ID, 0, 5));

    /** Everything this class answers, by API key. */
    static final List<ApiRange> ALL_APIS = APPLICATION_APIS.stream()
            .sorted(Comparator.comparingInt(ApiRange::apiKey)).toList();

    /** Whether {@code apiKey} at {@code version} uses the flexible encoding (request header v2, response header v1). */
    static boolean flexible(short apiKey, short version) {
        switch (apiKey) {
            case PRODUCE: return version >= 9;
            case METADATA: return version >= 9;
            case API_VERSIONS: return version >= 3;
            case INIT_PRODUCER_ID: return version >= 2;
            case SASL_AUTHENTICATE: return version >= 2;
            default: return false;
        }
    }

    /** A parsed request header. */
    record RequestHeader(short apiKey, short apiVersion, int correlationId, String clientId) {}

    /** One topic: a random id and a next offset per partition. */
    record Topic(String name, UUID id, AtomicLongArray nextOffsets) {
        int partitions() {
            return nextOffsets.length();
        }
    }

    private static final Pattern LEGAL_TOPIC = Pattern.compile("[a-zA-Z0-9._-]{1,249}");
    // ApiVersions v3+: the client's software name and version.

    private final String host;
    private volatile int port;
    private final Map<String, Topic> topics = new ConcurrentHashMap<>();
    private final AtomicLong nextProducerId = new AtomicLong(1000);
    private final System.Logger log;

    Broker(String host, System.Logger log) {
        this.host = host;
        this.log = log;
    }

    void port(int port) {
        this.port = port;
    }

    /** Creates a topic (no-op if it exists); returns whether it was created. */
    boolean createTopic(String name, int partitions) {
        if (!LEGAL_TOPIC.matcher(name).matches() || partitions < 1) {
            throw new IllegalArgumentException("bad topic " + name + " with " + partitions + " partitions");
        }
        return topics.putIfAbsent(name, new Topic(name, UUID.randomUUID(), new AtomicLongArray(partitions))) == null;
    }

    /** Topic name to partition count. */
    Map<String, Integer> topics() {
        Map<String, Integer> m = new TreeMap<>();
        topics.values().forEach(t -> m.put(t.name(), t.partitions()));
        return m;
    }

    /** Records appended so far to a topic. */
    long records(String topic) {
        Topic t = topics.get(topic);
        long n = 0;
        for (int i = 0; t != null && i < t.partitions(); i++) {
            n += t.nextOffsets().get(i);
        }
        return n;
    }

    /**
     * Answers one request of an authenticated connection: the response frame (with its length
     * prefix), an empty array when the request expects no response (Produce with acks=0), or
     * {@code null} when the connection must be closed.
     *
     * @throws RequestReader.MalformedRequestException for a request that does not parse
     */
    byte[] handle(byte[] frame, ConnectionStats stats, long nowMs) {
        RequestReader r = new RequestReader(frame);
        // The client id keeps the classic int16 length even in request header v2.
        RequestHeader h = new RequestHeader(r.int16(), r.int16(), r.int32(), r.string(false));
        stats.request(h.apiKey(), h.clientId(), nowMs);
        log.log(System.Logger.Level.TRACE, () -> "connection " + stats.id() + ": API " + h.apiKey() + " v"
                + h.apiVersion() + " from " + h.clientId());
        if (h.apiKey() == SASL_HANDSHAKE || h.apiKey() == SASL_AUTHENTICATE) {
            // Not a re-authentication the gate allowed (e.g. within a second of the last one).
            return ServerConnection.illegalStateResponse(frame);
        }
        ApiRange api = ALL_APIS.stream().filter(a -> a.apiKey() == h.apiKey()).findFirst().orElse(null);
        boolean supported = api != null && api.supports(h.apiVersion());
        if (!supported) {
            log.log(System.Logger.Level.WARNING, () -> "connection " + stats.id() + ": unsupported request: API "
                    + h.apiKey() + " v" + h.apiVersion());
            return null;
        }
        // Request header v2 (flexible versions) ends with tagged fields. The header of a version
        // this server does not know is not read further.
        boolean flex = supported && flexible(h.apiKey(), h.apiVersion());
        r.tags(flex);
        switch (h.apiKey()) {
            case METADATA: return metadata(h.apiVersion(), r).frame(h.correlationId(), flex);
            case PRODUCE: {
                ResponseWriter w = produce(h.apiVersion(), r, stats);
                return w == null ? new byte[0] : w.frame(h.correlationId(), flex);
            }
            case INIT_PRODUCER_ID: return initProducerId(h.apiVersion(), r).frame(h.correlationId(), flex);
            default: return null;
        }
    }

    // --- Requests refused during a SASL exchange -------------------------------------------

    /**
     * Kafka 4.4's answer to a request that interrupted a SASL exchange and that ksasl left to
     * the host ({@link ServerConnection#refusedRequest}): the response frame (with its length
     * prefix) Kafka's {@code getErrorResponse} builds, carrying the refusal's error code, or
     * {@code null} where Kafka closes without answering: a request Kafka cannot read, Produce
     * with acks=0 or a null record set (Kafka has no response then), and, since this class only
     * speaks them, any API or version other than the Produce and InitProducerId versions it
     * implements (a Kafka broker would answer Produce v13, which this one does not read).
     */
    byte[] refusal(RefusedRequest refused, byte[] frame) {
        short key = refused.apiKey();
        short v = refused.apiVersion();
        ApiRange api = ALL_APIS.stream().filter(a -> a.apiKey() == key).findFirst().orElse(null);
        if (api == null || !api.supports(v)) {
            return null;
        }
        boolean flex = flexible(key, v);
        try {
            RequestReader r = new RequestReader(frame);
            r.int16(); // api key
            r.int16(); // version
            r.int32(); // correlation id
            r.kafkaString(false, true); // client id: classic even in request header v2
            r.kafkaTags(flex);
            ResponseWriter w;
            switch (key) {
                case PRODUCE: w = produceRefusal(v, r, refused); break;
                case INIT_PRODUCER_ID: w = initProducerIdRefusal(v, r, refused); break;
                default: w = null; // ksasl answers Metadata itself
            }
            return w == null ? null : w.frame(refused.correlationId(), flex);
        } catch (RequestReader.MalformedRequestException e) {
            return null;
        }
    }

    /**
     * A partition as Kafka 4.4's {@code ProduceRequest.partitionSizes()} keys it: a
     * {@code TopicIdPartition} (topic id zero before Produce v13), whose hash code this one has.
     * Kafka answers a refused Produce in that map's order; a {@link HashMap} with the same hash
     * codes and the same insertions (by {@code compute}) iterates in the same order.
     */
    private record KafkaPartition(String topic, int partition) {
        @Override
        public int hashCode() {
            // 31 * (31 + Uuid.ZERO_UUID.hashCode()) + TopicPartition.hashCode()
            return 31 * 31 + 31 * (31 + partition) + topic.hashCode();
        }
    }

    /** Kafka's {@code ProduceRequest.getErrorResponse}: one entry per distinct partition. */
    private static ResponseWriter produceRefusal(short v, RequestReader r, RefusedRequest refused) {
        boolean flex = v >= 9;
        r.kafkaString(flex, true); // transactional_id
        short acks = r.int16();
        r.int32(); // timeout_ms
        Map<KafkaPartition, Boolean> partitions = new HashMap<>();
        boolean nullRecords = false;
        int topicCount = r.kafkaArrayLength(flex);
        for (int i = 0; i < topicCount; i++) {
            String name = r.kafkaString(flex, false);
            int partitionCount = r.kafkaArrayLength(flex);
            for (int j = 0; j < partitionCount; j++) {
                int index = r.int32();
                nullRecords |= r.kafkaSkipNullableBytes(flex);
                r.kafkaTags(flex);
                // With compute(), as Kafka: a new key goes to the head of its bin, not the tail.
                partitions.compute(new KafkaPartition(name, index), (p, seen) -> Boolean.TRUE);
            }
            r.kafkaTags(flex);
        }
        r.kafkaTags(flex);
        // acks=0: Kafka's error response is null; null records: Kafka's size count fails. Kafka
        // then closes without answering.
        if (acks == 0 || nullRecords) {
            return null;
        }
        Map<String, List<Integer>> byTopic = new LinkedHashMap<>();
        partitions.keySet().forEach(p -> byTopic.computeIfAbsent(p.topic(), t -> new ArrayList<>()).add(p.partition()));
        ResponseWriter w = new ResponseWriter(flex).arrayLength(byTopic.size());
        byTopic.forEach((name, indexes) -> {
            w.string(name).arrayLength(indexes.size());
            for (int index : indexes) {
                w.int32(index).int16(refused.errorCode()).int64(-1).int64(-1); // base_offset, log_append_time_ms
                if (v >= 5) {
                    w.int64(-1); // log_start_offset
                }
                if (v >= 8) {
                    w.arrayLength(0).string(refused.errorMessage()); // record_errors, error_message
                }
                w.tags();
            }
            w.tags();
        });
        return w.int32(0).tags(); // throttle_time_ms
    }

    /** Kafka's {@code InitProducerIdRequest.getErrorResponse}. */
    private static ResponseWriter initProducerIdRefusal(short v, RequestReader r, RefusedRequest refused) {
        boolean flex = v >= 2;
        r.kafkaString(flex, true); // transactional_id
        r.int32(); // transaction_timeout_ms
        if (v >= 3) {
            r.int64(); // producer_id
            r.int16(); // producer_epoch
        }
        r.kafkaTags(flex);
        // throttle_time_ms, error_code, producer_id, producer_epoch
        return new ResponseWriter(flex).int32(0).int16(refused.errorCode()).int64(-1).int16(-1).tags();
    }

    // --- Metadata (key 3) -----------------------------------------------------------------

    private ResponseWriter metadata(short v, RequestReader r) {
        boolean flex = v >= 9;
        // The request: which topics (null or, in v0, empty: all of them), and whether asking
        // for a topic may create it.
        int n = r.arrayLength(flex);
        List<UUID> ids = new ArrayList<>();
        List<String> names = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ids.add(v >= 10 ? r.uuid() : null);
            names.add(r.string(flex));
            r.tags(flex);
        }
        boolean allTopics = n < 0 || (v == 0 && n == 0);
        boolean autoCreate = v < 4 || r.bool();
        if (v >= 8 && v <= 10) {
            r.bool(); // include_cluster_authorized_operations
        }
        if (v >= 8) {
            r.bool(); // include_topic_authorized_operations
        }
        r.tags(flex);

        ResponseWriter w = new ResponseWriter(flex);
        if (v >= 3) {
            w.int32(0); // throttle_time_ms
        }
        w.arrayLength(1).int32(NODE_ID).string(host).int32(port);
        if (v >= 1) {
            w.string(null); // rack
        }
        w.tags();
        if (v >= 2) {
            w.string(CLUSTER_ID);
        }
        if (v >= 1) {
            w.int32(NODE_ID); // controller_id
        }
        if (allTopics) {
            List<Topic> all = new ArrayList<>(topics.values());
            all.sort(Comparator.comparing(Topic::name));
            w.arrayLength(all.size());
            for (Topic t : all) {
                topicMetadata(w, v, NONE, t.name(), t);
            }
        } else {
            w.arrayLength(n);
            for (int i = 0; i < n; i++) {
                String name = names.get(i);
                Topic t;
                if (name == null) {
                    // v10+: a topic asked for by id alone.
                    UUID id = ids.get(i);
                    t = topics.values().stream().filter(x -> x.id().equals(id)).findFirst().orElse(null);
                    // Before v12 the name may not be null: an unknown id gets an empty name.
                    topicMetadata(w, v, t == null ? UNKNOWN_TOPIC_ID : NONE,
                            t != null ? t.name() : v >= 12 ? null : "", t);
                    continue;
                }
                if (!LEGAL_TOPIC.matcher(name).matches()) {
                    topicMetadata(w, v, INVALID_TOPIC_EXCEPTION, name, null);
                    continue;
                }
                if (autoCreate) {
                    createTopic(name, 1);
                }
                t = topics.get(name);
                topicMetadata(w, v, t == null ? UNKNOWN_TOPIC_OR_PARTITION : NONE, name, t);
            }
        }
        if (v >= 8 && v <= 10) {
            w.int32(AUTHORIZED_OPERATIONS_OMITTED); // cluster_authorized_operations
        }
        if (v >= 13) {
            w.int16(NONE); // top-level error_code
        }
        return w.tags();
    }

    /** One topic of a Metadata answer ({@code t == null}: the error, no partitions). */
    private static void topicMetadata(ResponseWriter w, short v, short error, String name, Topic t) {
        w.int16(error).string(name);
        if (v >= 10) {
            w.uuid(t == null ? new UUID(0, 0) : t.id());
        }
        if (v >= 1) {
            w.bool(false); // is_internal
        }
        int partitions = t == null ? 0 : t.partitions();
        w.arrayLength(partitions);
        for (int p = 0; p < partitions; p++) {
            w.int16(NONE).int32(p).int32(NODE_ID); // error_code, partition_index, leader_id
            if (v >= 7) {
                w.int32(0); // leader_epoch
            }
            w.int32Array(NODE_ID).int32Array(NODE_ID); // replica_nodes, isr_nodes
            if (v >= 5) {
                w.int32Array(); // offline_replicas
            }
            w.tags();
        }
        if (v >= 8) {
            w.int32(AUTHORIZED_OPERATIONS_OMITTED); // topic_authorized_operations
        }
        w.tags();
    }

    // --- Produce (key 0) ------------------------------------------------------------------

    /** The answer, or {@code null} for acks=0 (no response). */
    private ResponseWriter produce(short v, RequestReader r, ConnectionStats stats) {
        boolean flex = v >= 9;
        r.string(flex); // transactional_id
        short acks = r.int16();
        r.int32(); // timeout_ms
        ResponseWriter w = new ResponseWriter(flex);
        int topicCount = r.arrayLength(flex);
        w.arrayLength(Math.max(topicCount, 0));
        for (int i = 0; i < topicCount; i++) {
            String name = r.string(flex);
            Topic t = name == null ? null : topics.get(name);
            w.string(name);
            int partitionCount = r.arrayLength(flex);
            w.arrayLength(Math.max(partitionCount, 0));
            for (int j = 0; j < partitionCount; j++) {
                int index = r.int32();
                byte[] records = r.bytes(flex);
                r.tags(flex);
                short error = NONE;
                long baseOffset = -1;
                if (t == null || index < 0 || index >= t.partitions()) {
                    error = UNKNOWN_TOPIC_OR_PARTITION;
                } else {
                    int count = countRecords(records);
                    stats.records(count);
                    baseOffset = t.nextOffsets().getAndAdd(index, count);
                }
                w.int32(index).int16(error).int64(baseOffset).int64(-1); // log_append_time_ms: none
                if (v >= 5) {
                    w.int64(error == NONE ? 0 : -1); // log_start_offset
                }
                if (v >= 8) {
                    w.arrayLength(0).string(null); // record_errors, error_message
                }
                w.tags();
            }
            r.tags(flex);
            w.tags();
        }
        r.tags(flex);
        w.int32(0).tags(); // throttle_time_ms
        return acks == 0 ? null : w;
    }

    /**
     * The records in a partition's record set: a v2 batch carries its count at byte 57; an
     * older message set counts one per (possibly compressed) message. Each entry starts with an
     * 8-byte offset and a 4-byte size of the rest; the magic byte is at offset 16.
     */
    static int countRecords(byte[] records) {
        int n = 0;
        int pos = 0;
        while (records != null && pos + 17 <= records.length) {
            int size = readInt(records, pos + 8);
            if (records[pos + 16] >= 2 && pos + 61 <= records.length) {
                n += readInt(records, pos + 57);
            } else {
                n++;
            }
            if (size < 0) {
                break;
            }
            pos += 12 + size;
        }
        return n;
    }

    private static int readInt(byte[] b, int at) {
        return ((b[at] & 0xff) << 24) | ((b[at + 1] & 0xff) << 16) | ((b[at + 2] & 0xff) << 8) | (b[at + 3] & 0xff);
    }

    // --- InitProducerId (key 22) ----------------------------------------------------------

    private ResponseWriter initProducerId(short v, RequestReader r) {
        boolean flex = v >= 2;
        r.string(flex); // transactional_id: transactions need FindCoordinator, not offered here
        r.int32(); // transaction_timeout_ms
        long producerId = -1;
        short epoch = -1;
        if (v >= 3) {
            producerId = r.int64();
            epoch = r.int16();
        }
        r.tags(flex);
        if (producerId >= 0) {
            epoch++; // a producer re-initialising keeps its id and bumps its epoch
        } else {
            producerId = nextProducerId.getAndIncrement();
            epoch = 0;
        }
        return new ResponseWriter(flex).int32(0).int16(NONE).int64(producerId).int16(epoch).tags();
    }
}
