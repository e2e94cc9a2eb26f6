package org.ksasl;

/**
 * What a server mechanism needs a credential for.
 *
 * @param mechanism the mechanism asking, e.g. {@code SCRAM-SHA-256}
 * @param username the user name, or the delegation token id when {@code tokenAuthenticated}
 * @param tokenAuthenticated whether the client logs in with a delegation token ({@code tokenauth=true})
 */
public record CredentialRequest(String mechanism, String username, boolean tokenAuthenticated) {
    /** Called by native code. */
    static CredentialRequest of(String mechanism, String username, boolean tokenAuthenticated) {
        return new CredentialRequest(mechanism, username, tokenAuthenticated);
    }
}
