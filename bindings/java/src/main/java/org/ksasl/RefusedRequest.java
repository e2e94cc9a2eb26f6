package org.ksasl;

/**
 * A request that interrupted a SASL exchange and whose error response the host builds, because
 * ksasl has no schema for its API ({@link ServerConnection#refusedRequest()}). Kafka answers
 * such a request with the API's generic error response carrying {@code errorCode}
 * (ILLEGAL_SASL_STATE) when it can read it, and closes without answering when it cannot.
 *
 * @param apiKey the request's API key
 * @param apiVersion the request's API version
 * @param correlationId the correlation id the response must carry
 * @param errorCode the Kafka error code of the response: ILLEGAL_SASL_STATE (34)
 * @param errorMessage Kafka's exception text, for the responses that carry an error message,
 *     e.g. {@code Unexpected Kafka request of type PRODUCE during SASL authentication.}
 */
public record RefusedRequest(short apiKey, short apiVersion, int correlationId, short errorCode,
        String errorMessage) {
    /** From the native record (API key, version, correlation id, error code, message), or null. */
    static RefusedRequest of(byte[] record) {
        if (record == null) {
            return null;
        }
        Fields f = new Fields(record);
        return new RefusedRequest((short) f.i32(), (short) f.i32(), f.i32(), (short) f.i32(), f.str());
    }
}
