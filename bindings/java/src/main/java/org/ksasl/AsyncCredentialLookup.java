package org.ksasl;

import java.util.concurrent.CompletionStage;

/** Looks credentials up asynchronously (a directory service, a database, a token service). */
@FunctionalInterface
public interface AsyncCredentialLookup {
    CompletionStage<CredentialAnswer> lookup(CredentialRequest request);
}
