package org.ksasl;

/** When a client re-authenticates within the session lifetime the broker granted. */
public enum ReauthTiming {
    /** Apache Kafka's Java client: at a random point in 85-95 % of the lifetime. */
    KAFKA,
    /** librdkafka: at 90 % of the lifetime. */
    LIBRDKAFKA,
    /** franz-go: at a random point in 95-98 % of the lifetime (with its floors). */
    FRANZ_GO,
    /** Never; the broker closes the connection when the session ends. */
    DISABLED;

    private static final WireEnum<ReauthTiming> WIRE = WireEnum.of(ReauthTiming.class, "ReauthTiming");

    int number() {
        return WIRE.number(this);
    }
}
