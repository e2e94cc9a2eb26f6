package org.ksasl;

import java.util.Objects;
import java.util.OptionalLong;

/**
 * AWS credentials for {@code AWS_MSK_IAM} and MSK's OAUTHBEARER tokens: an access key id, its
 * secret access key, and for temporary credentials (STS) a session token and the time they
 * expire. The native object keeps the secret and the token (wiped when it is freed); this
 * object keeps neither, and {@link #toString()} shows only the access key id, whether there is a
 * session token, and the expiry. Immutable and safe to share between threads; registries, key
 * stores and refreshers given these credentials keep their own copy.
 */
public final class AwsCredentials extends NativeHandle {
    private final String accessKeyId;
    private final boolean hasSessionToken;
    private final OptionalLong expiresAtMs;

    /**
     * Long-term credentials (an access key pair).
     *
     * @param accessKeyId the access key id
     * @param secretAccessKey the secret access key
     * @throws KsaslArgumentException ({@code INVALID_ARGUMENT}) when the core refuses a value,
     *     such as an empty secret or an access key id that is not ASCII letters and digits
     */
    public AwsCredentials(String accessKeyId, String secretAccessKey) {
        this(accessKeyId, secretAccessKey, null, OptionalLong.empty());
    }

    /**
     * Credentials with an optional session token and expiry (temporary credentials carry both).
     *
     * @param accessKeyId the access key id
     * @param secretAccessKey the secret access key
     * @param sessionToken the session token, or {@code null} for none
     * @param expiresAtMs when the credentials expire, ms since the epoch (empty: never)
     * @throws KsaslArgumentException ({@code INVALID_ARGUMENT}) when the core refuses a value
     */
    public AwsCredentials(String accessKeyId, String secretAccessKey, String sessionToken, OptionalLong expiresAtMs) {
        super(create(accessKeyId, secretAccessKey, sessionToken, expiresAtMs), Native::awsCredentialsFree);
        Fields f = new Fields(with(Native::awsCredentialsInfo));
        this.accessKeyId = f.str();
        this.hasSessionToken = f.bool();
        this.expiresAtMs = f.time();
    }

    private static long create(String accessKeyId, String secretAccessKey, String sessionToken,
            OptionalLong expiresAtMs) {
        Objects.requireNonNull(accessKeyId, "accessKeyId");
        Objects.requireNonNull(secretAccessKey, "secretAccessKey");
        Objects.requireNonNull(expiresAtMs, "expiresAtMs");
        Native.init();
        return Native.awsCredentialsNew(accessKeyId, secretAccessKey, sessionToken, Time.raw(expiresAtMs));
    }

    /** The access key id (sent in clear in every signed request). */
    public String accessKeyId() {
        return accessKeyId;
    }

    /** Whether these are temporary credentials with a session token. */
    public boolean hasSessionToken() {
        return hasSessionToken;
    }

    /** When the credentials expire, ms since the epoch (empty: never). */
    public OptionalLong expiresAtMs() {
        return expiresAtMs;
    }

    /**
     * MSK's presigned OAUTHBEARER token for a cluster in {@code region} at {@code nowMs}, signed
     * with these credentials, as {@code aws-msk-iam-sasl-signer} makes them: for a host with an
     * OAUTHBEARER client of its own (librdkafka's token refresh callback, for instance). The
     * token's principal is the access key id; it expires 15 minutes after {@code nowMs}, or
     * when these credentials do, if that is sooner.
     *
     * @param region the cluster's region, such as {@code us-east-1}
     * @param userAgent the user agent the token reports; {@code null}: ksasl's
     * @param nowMs the signing time, ms since the epoch
     * @return the token
     * @throws KsaslException when the credentials have expired ({@code NO_VALID_CREDENTIAL})
     */
    public OAuthBearerToken mskToken(String region, String userAgent, long nowMs) throws KsaslException {
        Objects.requireNonNull(region, "region");
        return OAuthBearerToken.of(with(c -> Native.mskToken(region, c, 0, userAgent, nowMs)));
    }

    /** The access key id, whether there is a session token and the expiry; never the secret or the token. */
    @Override
    public String toString() {
        return "AwsCredentials[accessKeyId=" + accessKeyId + ", secretAccessKey=<redacted>, sessionToken="
                + (hasSessionToken ? "<redacted>" : "none") + ", expiresAtMs="
                + (expiresAtMs.isPresent() ? Long.toString(expiresAtMs.getAsLong()) : "none") + "]";
    }
}
