package org.ksasl;

/**
 * Looks credentials up synchronously, on the thread that steps the exchange. An exception it
 * throws reaches the caller of that step unchanged (the exchange is then failed as
 * "unavailable"). Returning {@code null} means "unknown user". For lookups that must not
 * block, register no lookup and answer {@link ServerConnection#provideCredential} later, or use
 * {@link ServerConnection#handleFrameAsync}.
 */
@FunctionalInterface
public interface CredentialLookup {
    CredentialAnswer lookup(CredentialRequest request) throws Exception;
}
