package org.ksasl;

import java.util.Objects;

/**
 * The AWS access keys an {@code AWS_MSK_IAM} verifying server (or an OAUTHBEARER server taking
 * MSK's tokens) accepts, each with the principal it authenticates as. For development and
 * tests: the server checks each signature with the key's secret, as AWS would. Safe to share
 * between threads, and changeable while connections run: a key rotation adds the new key, then
 * removes the old one.
 */
public final class AwsKeyStore extends NativeHandle {
    /** An empty store. */
    public AwsKeyStore() {
        super(create(), Native::awsKeyStoreFree);
    }

    private static long create() {
        Native.init();
        return Native.awsKeyStoreNew();
    }

    /**
     * Adds (or replaces) the key of {@code credentials}: logins signed with it authenticate as
     * {@code User:<principal>}; temporary credentials must be presented with their session
     * token, and sessions end no later than they expire.
     *
     * @param credentials the key (the store keeps its own copy)
     * @param principal the principal's name, an IAM ARN for instance
     * @throws KsaslArgumentException ({@code INVALID_ARGUMENT}) when the core refuses the principal
     */
    public void add(AwsCredentials credentials, String principal) {
        Objects.requireNonNull(credentials, "credentials");
        Objects.requireNonNull(principal, "principal");
        run(h -> credentials.run(c -> Native.awsKeyStoreAdd(h, c, principal)));
    }

    /**
     * Removes an access key: later logins with it are refused.
     *
     * @param accessKeyId the access key id
     * @return whether the key was in the store
     */
    public boolean remove(String accessKeyId) {
        Objects.requireNonNull(accessKeyId, "accessKeyId");
        return with(h -> Native.awsKeyStoreRemove(h, accessKeyId));
    }
}
