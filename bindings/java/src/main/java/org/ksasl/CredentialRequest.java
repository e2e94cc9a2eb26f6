package org.ksasl;

/**
 * What a server mechanism needs a credential for.
 *
 * @param mechanism the mechanism asking, e.g. {@code SCRAM-SHA-256}
 * @param username the user name, or the delegation token id when {@code tokenAuthenticated}
 * @param tokenAuthenticated whether the client logs in with a delegation token ({@code tokenauth=true})
 */
public record CredentialRequest(String mechanism, String username, boolean tokenAuthenticated) {
    /** From the native record (mechanism, username, token flag), or null. */
    static CredentialRequest of(byte[] record) {
        if (record == null) {
            return null;
        }
        Fields f = new Fields(record);
        return new CredentialRequest(f.str(), f.str(), f.bool());
    }
}
