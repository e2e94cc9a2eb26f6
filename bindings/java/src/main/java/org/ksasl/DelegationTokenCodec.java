package org.ksasl;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The Kafka codec of the delegation-token APIs for clients: CreateDelegationToken (38),
 * RenewDelegationToken (39), ExpireDelegationToken (40) and DescribeDelegationToken (41), at
 * every version Kafka defines. Requests come back length-prefixed, ready to write; responses
 * are parsed from a frame without its length prefix. A response with an error code is thrown
 * as that error: a {@link KsaslCredentialException} ({@code DELEGATION_TOKEN_NOT_FOUND},
 * {@code DELEGATION_TOKEN_OWNER_MISMATCH}, {@code DELEGATION_TOKEN_REQUEST_NOT_ALLOWED},
 * {@code DELEGATION_TOKEN_EXPIRED}, {@code INVALID_PRINCIPAL_TYPE}) or a
 * {@link KsaslProtocolException} ({@code KAFKA_ERROR}), with the broker's code in the
 * {@code kafka_error_code} detail. Principals are {@code TYPE:NAME}; a bare name means
 * {@code User:<name>}.
 */
public final class DelegationTokenCodec {
    private DelegationTokenCodec() {}

    public static final short CREATE_DELEGATION_TOKEN = 38;
    public static final short RENEW_DELEGATION_TOKEN = 39;
    public static final short EXPIRE_DELEGATION_TOKEN = 40;
    public static final short DESCRIBE_DELEGATION_TOKEN = 41;

    /** One API's version range, for an ApiVersions answer ({@link ServerConfig.Builder#setApiVersion}). */
    public record ApiRange(short apiKey, short minVersion, short maxVersion) {}

    /** Whether {@code apiKey} is one of the four delegation-token APIs. */
    public static boolean isTokenApi(short apiKey) {
        Native.init();
        return Native.tokenIsTokenApi(apiKey);
    }

    /**
     * The versions to advertise for the token APIs: with {@code likeKafka4}, what an Apache
     * Kafka 4 broker advertises (version 0 removed by KIP-896); otherwise every version the
     * codec speaks.
     */
    public static List<ApiRange> apiVersions(boolean likeKafka4) {
        Native.init();
        short[] t = Native.tokenApiVersions(likeKafka4);
        List<ApiRange> out = new ArrayList<>();
        for (int i = 0; i + 2 < t.length; i += 3) {
            out.add(new ApiRange(t[i], t[i + 1], t[i + 2]));
        }
        return List.copyOf(out);
    }

    /**
     * A CreateDelegationToken request.
     *
     * @param renewers who else may renew the token ({@code null}: nobody)
     * @param maxLifetimeMs a positive value asks for a shorter maximum lifetime; -1: the broker's
     * @param owner the owner when created on someone's behalf (version 3+), or {@code null}
     * @param clientId the client id of the request header, or {@code null}
     */
    public static byte[] createRequest(int version, int correlationId, List<String> renewers, long maxLifetimeMs,
            String owner, String clientId) throws KsaslException {
        String[] r = renewers == null ? new String[0] : renewers.toArray(new String[0]);
        Native.init();
        return Native.tokenCreateRequest(version, correlationId, r, maxLifetimeMs, owner, clientId);
    }

    /** A RenewDelegationToken request for the token with this HMAC ({@code periodMs} -1: the broker's period). */
    public static byte[] renewRequest(int version, int correlationId, byte[] hmac, long periodMs, String clientId)
            throws KsaslException {
        Objects.requireNonNull(hmac, "hmac");
        Native.init();
        return Native.tokenRenewOrExpireRequest(version, correlationId, hmac, periodMs, false, clientId);
    }

    /** An ExpireDelegationToken request for the token with this HMAC ({@code periodMs} -1: now). */
    public static byte[] expireRequest(int version, int correlationId, byte[] hmac, long periodMs, String clientId)
            throws KsaslException {
        Objects.requireNonNull(hmac, "hmac");
        Native.init();
        return Native.tokenRenewOrExpireRequest(version, correlationId, hmac, periodMs, true, clientId);
    }

    /** A DescribeDelegationToken request for the tokens of {@code owners} ({@code null}: every token). */
    public static byte[] describeRequest(int version, int correlationId, List<String> owners, String clientId)
            throws KsaslException {
        String[] o = owners == null ? null : owners.toArray(new String[0]);
        Native.init();
        return Native.tokenDescribeRequest(version, correlationId, o, clientId);
    }

    /** The token of a CreateDelegationToken response (frame without its length prefix). */
    public static DelegationToken parseCreateResponse(int version, byte[] frame) throws KsaslException {
        Objects.requireNonNull(frame, "frame");
        Native.init();
        return DelegationToken.of(Native.tokenParseCreateResponse(version, frame));
    }

    /** The new expiry of a RenewDelegationToken or ExpireDelegationToken response (frame without its length). */
    public static long parseExpiryResponse(int version, byte[] frame) throws KsaslException {
        Objects.requireNonNull(frame, "frame");
        Native.init();
        return Native.tokenParseExpiryResponse(version, frame);
    }

    /** The tokens of a DescribeDelegationToken response (frame without its length prefix). */
    public static List<DelegationToken> parseDescribeResponse(int version, byte[] frame) throws KsaslException {
        Objects.requireNonNull(frame, "frame");
        Native.init();
        return DelegationToken.all(Native.tokenParseDescribeResponse(version, frame));
    }
}
