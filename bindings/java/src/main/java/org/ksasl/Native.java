package org.ksasl;

import java.util.OptionalLong;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.function.Supplier;

/**
 * The native entry points (implemented in bindings/java/native). Handles are opaque pointers
 * owned by {@link NativeHandle} subclasses; nothing here is public API.
 *
 * <p>Conventions: "no value" for a {@code long} time is {@link #NONE}; out-arrays carry the
 * extra results of a call; a credential answer is passed as (kind, value, expiry, hasExpiry,
 * owner) with kind {@link CredentialAnswer.Kind#ordinal()}.
 */
final class Native {
    private Native() {}

    static final long NONE = Long.MIN_VALUE;

    static {
        NativeLoader.load();
    }

    /** Makes sure the library is loaded (the static initializer does the work). */
    static void init() {}

    static native String version();

    /** The exception for a ksasl code and a message (a KsaslException, or a misuse exception). */
    static native Throwable errorNew(int code, String message);

    // Credential store
    static native long storeNew();
    static native void storeFree(long h);
    static native void storeAddUser(long h, String user, String password, int iterations) throws KsaslException;
    static native void storeSetScram(long h, String user, String mechanism, String credential) throws KsaslException;
    static native void storeSetUserExpiry(long h, String user, long expiryMs) throws KsaslException;
    static native boolean storeRemoveUser(long h, String user) throws KsaslException;
    static native void storeSetToken(long h, String tokenId, String mechanism, String credential, String owner,
            long expiryMs) throws KsaslException;

    // Mechanism registry
    static native long registryNew();
    static native void registryFree(long h);
    static native void registryAddPasswordServersStore(long h, long store);
    static native void registryAddPasswordServersLookup(long h, CredentialLookup lookup);
    static native void registryAddPasswordClients(long h, String user, String password) throws KsaslException;
    static native void registryAddTokenClients(long h, String tokenId, String tokenHmac) throws KsaslException;
    static native void registryAddOAuthUnsecured(long h, String[] requiredScope, long clockSkewMs) throws KsaslException;
    static native void registryAddOAuthJwks(long h, long jwks);
    static native void registryAddOAuthValidator(long h, TokenValidator validator);
    static native void registryAddOAuthClient(long h, long refresher);
    /** {@code factory} supplies HostClientMechanisms, or AsyncHostClientMechanisms when {@code asynchronous}. */
    static native void registryAddHostClient(long h, String name, Supplier<?> factory, boolean asynchronous);
    static native void registryAddHostServer(long h, String name, Supplier<? extends HostServerMechanism> factory);
    static native String[] registryClientMechanisms(long h);
    static native String[] registryServerMechanisms(long h);

    // Mechanism-level client: returns the message (or null); flags = {done, pending}: whether it
    // was the last, whether the mechanism answers later. Resume: error null for a message.
    static native long clientAuthNew(long registry, String mechanism) throws KsaslException;
    static native void clientAuthFree(long h);
    static native byte[] clientAuthStart(long h, long nowMs, boolean[] flags) throws KsaslException;
    static native byte[] clientAuthStep(long h, byte[] challenge, long nowMs, boolean[] flags) throws KsaslException;
    static native Object clientAuthPendingWork(long h);
    static native byte[] clientAuthResume(long h, byte[] message, Throwable error, boolean[] flags)
            throws KsaslException;
    static native void clientAuthServerFailed(long h, String serverMessage) throws KsaslException;
    static native String clientAuthMechanism(long h);
    static native boolean clientAuthComplete(long h);

    // Mechanism-level server: kind[0] is a ServerStep.Kind ordinal.
    static native long serverAuthNew(long registry, String mechanism) throws KsaslException;
    static native void serverAuthFree(long h);
    static native byte[] serverAuthStep(long h, byte[] response, long nowMs, int[] kind) throws KsaslException;
    static native byte[] serverAuthProvide(long h, int answerKind, String value, long expiryMs, String owner,
            long nowMs, int[] kind) throws KsaslException;
    static native Object[] serverAuthRequest(long h);
    static native Object[] serverAuthOutcome(long h);
    static native String serverAuthClientMessage(long h);
    static native Object serverAuthPendingWork(long h);
    static native byte[] serverAuthResume(long h, HostServerStep step, Throwable error, long nowMs, int[] kind)
            throws KsaslException;

    // Client connection driver
    static native long clientConfigNew(long registry, String mechanism, String clientId, int timing,
            int apiVersionsVersion, long reauthRetryMs) throws KsaslException;
    static native void clientConfigFree(long h);
    static native Object[] clientConfigMetrics(long h, long nowMs);
    static native long clientConnNew(long config);
    static native void clientConnFree(long h);
    static native void clientConnStart(long h, long nowMs) throws KsaslException;
    static native byte[] clientConnTransmit(long h);
    /** event[0]: ClientEvent.Kind ordinal; times[0]: retry time after a failed re-authentication; err[0]: its error. */
    /** An application response is the frame passed in: nothing comes back but the event. */
    static native void clientConnHandleFrame(long h, byte[] frame, long nowMs, int[] event, long[] times,
            Object[] err) throws KsaslException;
    static native Throwable clientConnClosed(long h, long nowMs);
    static native long clientConnNextDeadline(long h);
    static native boolean clientConnHandleTimeout(long h, long nowMs) throws KsaslException;
    static native boolean clientConnReauthPending(long h, long nowMs);
    static native boolean clientConnBeforeRequest(long h, long nowMs) throws KsaslException;
    static native boolean clientConnStartReauth(long h, long nowMs) throws KsaslException;
    /** {lifetime, reauthAt, expiry, latency} with NONE for absent values; null before authentication. */
    static native long[] clientConnSession(long h);
    static native boolean clientConnReauthenticating(long h);
    static native boolean clientConnReady(long h);
    static native Object clientConnPendingWork(long h);
    /** As clientConnHandleFrame, with the stage's message, or its exception when error is not null. */
    static native void clientConnResume(long h, byte[] message, Throwable error, long nowMs, int[] event,
            long[] times, Object[] err) throws KsaslException;

    // Server connection driver
    static native long serverConfigNew(long registry, long maxReauthMs, String[] mechanisms, long[] maxReauthByMechanism,
            long failedAuthDelayMs, long reauthRetryMs, short[] apiVersions) throws KsaslException;
    static native void serverConfigFree(long h);
    static native Object[] serverConfigMetrics(long h, long nowMs);
    static native byte[] serverConfigApiVersionsResponse(long h, byte[] frame) throws KsaslException;
    static native long serverConnNew(long config);
    static native void serverConnFree(long h);
    /** out[0]: ServerOutput.Action ordinal, out[1]: deadline; err[0]: the error of a failure. */
    static native byte[] serverConnHandleFrame(long h, byte[] frame, long nowMs, long[] out, Object[] err);
    static native Object[] serverConnRequest(long h);
    static native byte[] serverConnProvide(long h, int answerKind, String value, long expiryMs, String owner,
            long nowMs, long[] out, Object[] err) throws KsaslException;
    static native int serverConnGate(long h, short apiKey, long nowMs);
    static native byte[] serverConnIllegalState(byte[] frame);
    static native boolean serverConnReady(long h);
    static native long serverConnNextDeadline(long h);
    /** {principal, principalName, mechanism, long[]{lifetime, expiry, credentialExpiry}, String[] extensions, Boolean token}. */
    static native Object[] serverConnSession(long h);
    static native Object serverConnPendingWork(long h);
    /** As serverConnHandleFrame, with the stage's step, or its exception when error is not null. */
    static native byte[] serverConnResume(long h, HostServerStep step, Throwable error, long nowMs, long[] out,
            Object[] err);

    // OAUTHBEARER
    static native long jwksNew(String issuer, String audience, long clockSkewMs) throws KsaslException;
    static native void jwksFree(long h);
    static native int jwksSet(long h, String json, long nowMs) throws KsaslException;
    static native long jwksNextRefresh(long h);
    /** {principal, Long expiry, String[] scope}. */
    static native Object[] jwksValidate(long h, String token, long nowMs) throws KsaslException;
    /** {token, Long expiry, principal}. */
    static native Object[] unsecuredToken(String principal, long lifetimeSeconds, String[] scope, long nowMs)
            throws KsaslException;

    // Refresher and tracker
    static native long refresherNew(double windowFactor, double windowJitter, long minPeriodSeconds,
            long bufferSeconds) throws KsaslException;
    static native void refresherFree(long h);
    static native boolean refresherPoll(long h, long nowMs);
    static native long refresherSetToken(long h, String token, long expiryMs, String principal, String[] extensions,
            long nowMs) throws KsaslException;
    static native void refresherSetTokenFailure(long h, String reason, long nowMs) throws KsaslException;
    static native long refresherNextDeadline(long h);
    static native long refresherGeneration(long h);
    /** {token, Long expiry, principal, String[] extensions, Long generation}. */
    static native Object[] refresherCurrent(long h, long nowMs) throws KsaslException;
    static native long trackerNew(long refresher, long spreadWindowMs) throws KsaslException;
    static native void trackerFree(long h);
    static native void trackerAuthenticated(long h, long id, long generation, long lifetimeMs, long reauthAtMs,
            long expiryMs) throws KsaslException;
    static native void trackerForget(long h, long id);
    static native long trackerNextDeadline(long h);
    /** Element 0 is 1 when a refresh is needed; the rest are connection ids to re-authenticate. */
    static native long[] trackerPoll(long h, long nowMs);

    // Delegation tokens. A token comes back as {tokenId, byte[] hmac, hmacBase64, owner, requester,
    // String[] renewers, long[] {issue, expiry, max}}; it goes in as (tokenId, hmac,
    // String[] {owner, requester, renewers...}, long[] {issue, expiry, max}).
    static native long tokenAuthorityNew(String secretKey, long maxLifetimeMs, long expiryTimeMs,
            long expiryCheckIntervalMs) throws KsaslException;
    static native void tokenAuthorityFree(long h);
    static native Object[] tokenAuthorityCreate(long h, String owner, String requester, String[] renewers,
            long maxLifetimeMs, long nowMs) throws KsaslException;
    static native long tokenAuthorityRenew(long h, byte[] hmac, String caller, long periodMs, long nowMs)
            throws KsaslException;
    static native long tokenAuthorityExpire(long h, byte[] hmac, String caller, long periodMs, long nowMs)
            throws KsaslException;
    /** An array of tokens; {@code owners} null: every token. */
    static native Object[] tokenAuthorityDescribe(long h, String[] owners) throws KsaslException;
    static native String[] tokenAuthoritySweep(long h, long nowMs) throws KsaslException;
    static native long tokenAuthorityNextSweep(long h);
    static native byte[] tokenAuthorityHmac(long h, String tokenId);
    static native String tokenAuthorityExport(long h) throws KsaslException;
    static native int tokenAuthorityImport(long h, String records) throws KsaslException;
    static native byte[] tokenAuthorityHandleRequest(long h, byte[] frame, String principal,
            boolean tokenAuthenticated, long nowMs) throws KsaslException;
    static native Object[] tokenNew(String tokenId, byte[] hmac, String[] principals, long[] times)
            throws KsaslException;
    static native long refresherSetDelegationToken(long h, String tokenId, byte[] hmac, String[] principals,
            long[] times, long nowMs) throws KsaslException;
    /** Users from {@code store} (a handle, or 0), else from {@code lookup} (or null: the pull form). */
    static native void registryAddPasswordServersTokens(long h, long store, CredentialLookup lookup, long tokens);
    static native void registryAddRefreshingPasswordClients(long h, long refresher);
    static native byte[] tokenCreateRequest(short version, int correlationId, String[] renewers, long maxLifetimeMs,
            String owner, String clientId) throws KsaslException;
    static native byte[] tokenRenewOrExpireRequest(short version, int correlationId, byte[] hmac, long periodMs,
            boolean expire, String clientId) throws KsaslException;
    static native byte[] tokenDescribeRequest(short version, int correlationId, String[] owners, String clientId)
            throws KsaslException;
    static native Object[] tokenParseCreateResponse(short version, byte[] frame) throws KsaslException;
    static native long tokenParseExpiryResponse(short version, byte[] frame) throws KsaslException;
    static native Object[] tokenParseDescribeResponse(short version, byte[] frame) throws KsaslException;
    /** {apiKey, min, max} triples. */
    static native short[] tokenApiVersions(boolean kafka4);

    // Called by native code: a credential callback's answer as {kind, value, expiry, owner} strings.
    static String[] callLookup(CredentialLookup lookup, String mechanism, String username, boolean tokenAuth)
            throws Exception {
        CredentialAnswer a = lookup.lookup(new CredentialRequest(mechanism, username, tokenAuth));
        if (a == null) {
            a = CredentialAnswer.unknown();
        }
        return a.encode();
    }

    // Called by native code: {principal, expiry} or null to reject.
    static Object[] callValidate(TokenValidator validator, String token, long nowMs) throws Exception {
        ValidatedToken v = validator.validate(token, nowMs);
        if (v == null) {
            return null;
        }
        return new Object[] {v.principal(), v.expiryMs()};
    }

    // --- Host mechanisms (HostClientMechanism, AsyncHostClientMechanism, HostServerMechanism) --
    // Called by native code. Each helper runs host code and reports what happened without
    // throwing: out = {status, code, expiryMs, hasExpiry} and the result is
    // {byte[] message, String text, String[] details, Object extra}, where status is
    // HOST_SEND (a client message or a server challenge), HOST_DONE (complete; text is the
    // authorization id on the server), HOST_THREW (code is the KsaslError code or 0, text its
    // message or the Throwable's toString(), extra the Throwable), HOST_NULL (null where an
    // object or a message is required) or HOST_LATER (extra is the CompletionStage of an answer
    // that comes later). hostCreate's extra is the object the factory made.

    static final int HOST_SEND = 0;
    static final int HOST_DONE = 1;
    static final int HOST_THREW = 2;
    static final int HOST_NULL = 3;
    static final int HOST_LATER = 4;

    private static Object[] hostReply(long[] out, int status, byte[] message, String text, Object extra) {
        out[0] = status;
        return new Object[] {message, text, new String[0], extra};
    }

    private static Object[] hostThrew(long[] out, Throwable t) {
        out[0] = HOST_THREW;
        if (t instanceof KsaslError) {
            KsaslError k = (KsaslError) t;
            out[1] = k.code();
            String[] details = new String[2 * k.details().size()];
            int i = 0;
            for (java.util.Map.Entry<String, String> e : k.details().entrySet()) {
                details[i++] = e.getKey();
                details[i++] = e.getValue();
            }
            return new Object[] {null, t.getMessage(), details, t};
        }
        out[1] = 0;
        return new Object[] {null, t.toString(), new String[0], t};
    }

    static Object[] hostCreate(Supplier<?> factory, long[] out) {
        try {
            Object m = factory.get();
            return hostReply(out, m == null ? HOST_NULL : HOST_SEND, null, null, m);
        } catch (Throwable t) {
            return hostThrew(out, t);
        }
    }

    private static Object[] hostClientAnswer(HostClientMechanism m, byte[] message, long[] out) {
        if (m.isComplete()) {
            return hostReply(out, HOST_DONE, message, null, null);
        }
        return hostReply(out, message == null ? HOST_NULL : HOST_SEND, message, null, null);
    }

    static Object[] hostClientStart(HostClientMechanism m, long nowMs, long[] out) {
        try {
            return hostClientAnswer(m, m.start(nowMs), out);
        } catch (Throwable t) {
            return hostThrew(out, t);
        }
    }

    static Object[] hostClientStep(HostClientMechanism m, byte[] challenge, long nowMs, long[] out) {
        try {
            return hostClientAnswer(m, m.step(challenge, nowMs), out);
        } catch (Throwable t) {
            return hostThrew(out, t);
        }
    }

    static Object[] hostServerStep(HostServerMechanism m, byte[] response, long nowMs, long[] out) {
        HostServerStep s;
        try {
            s = m.step(response, nowMs);
        } catch (Throwable t) {
            return hostThrew(out, t);
        }
        return hostServerAnswer(s, out);
    }

    /** A server step, from the mechanism's step() or from the stage of a later() step. */
    static Object[] hostServerAnswer(HostServerStep s, long[] out) {
        try {
            if (s == null) {
                return hostReply(out, HOST_NULL, null, null, null);
            }
            if (s.isLater()) {
                return hostReply(out, HOST_LATER, null, null, s.work());
            }
            if (!s.isDone()) {
                return hostReply(out, HOST_SEND, s.challenge(), null, null);
            }
            OptionalLong expiry = s.credentialExpiryMs();
            out[2] = expiry.orElse(0);
            out[3] = expiry.isPresent() ? 1 : 0;
            return hostReply(out, HOST_DONE, s.message(), s.authorizationId(), null);
        } catch (Throwable t) {
            return hostThrew(out, t);
        }
    }

    private static Object[] hostLater(long[] out, CompletionStage<byte[]> stage) {
        return hostReply(out, stage == null ? HOST_NULL : HOST_LATER, null, null, stage);
    }

    static Object[] hostAsyncClientStart(AsyncHostClientMechanism m, long nowMs, long[] out) {
        try {
            return hostLater(out, m.start(nowMs));
        } catch (Throwable t) {
            return hostThrew(out, t);
        }
    }

    static Object[] hostAsyncClientStep(AsyncHostClientMechanism m, byte[] challenge, long nowMs, long[] out) {
        try {
            return hostLater(out, m.step(challenge, nowMs));
        } catch (Throwable t) {
            return hostThrew(out, t);
        }
    }

    /** The message a client stage completed with, judged by isComplete() as for a synchronous mechanism. */
    static Object[] hostAsyncClientAnswer(AsyncHostClientMechanism m, byte[] message, long[] out) {
        try {
            if (m.isComplete()) {
                return hostReply(out, HOST_DONE, message, null, null);
            }
            return hostReply(out, message == null ? HOST_NULL : HOST_SEND, message, null, null);
        } catch (Throwable t) {
            return hostThrew(out, t);
        }
    }

    /** The exception a stage completed with, as if the mechanism had thrown it. */
    static Object[] hostResumeFailure(Throwable t, long[] out) {
        return hostThrew(out, unwrap(t));
    }

    /** The exception behind the wrappers of CompletableFuture and Future.get(). */
    static Throwable unwrap(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }
}
