package org.ksasl;

import java.util.OptionalLong;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.function.Supplier;

/**
 * The native entry points (implemented in bindings/java/native) and the Java helpers the
 * native code calls. Nothing here is public API.
 *
 * <p>Conventions:
 * <ul>
 *   <li>a {@code long h} (or a parameter named after an object) is a handle: an opaque pointer
 *       owned by a {@link NativeHandle} subclass, live for the duration of the call;
 *   <li>{@link #NONE} is "no value" for a time (an expiry, a deadline) passed as a long;
 *   <li>an enum crosses as its stable number from the core's wire table ({@link WireEnum}),
 *       never as an ordinal;
 *   <li>a credential answer crosses as the parameters {@code kind} (the kind's stable number),
 *       {@code value}, {@code expiryMs} ({@link #NONE}: none) and {@code owner} (the token
 *       owner, or null), see {@link CredentialAnswer};
 *   <li>a result with several fields comes back as one {@code byte[]} record that
 *       {@link Fields} reads (the record classes' {@code of(byte[])} name the fields);
 *   <li>a failure is thrown as the exception {@link Errors#create} makes for the core's error;
 *       an exception thrown by a Java callback is rethrown unchanged.
 * </ul>
 */
final class Native {
    private Native() {}

    static final long NONE = Long.MIN_VALUE;

    static {
        NativeLoader.load();
    }

    /** Makes sure the library is loaded (the static initializer does the work). */
    static void init() {}

    // --- the library ------------------------------------------------------------------------

    /** The native library's version (Cargo's), which must equal the Java classes'. */
    static native String version();

    /**
     * The core's wire enum {@code enumName} (e.g. {@code "Gate"}): a record of the count, then
     * each entry's stable number and name (e.g. 2, {@code "close_expired"}), in table order.
     */
    static native byte[] wireTable(String enumName);

    /** The exception (not thrown) for ksasl code {@code code} with a host's message. */
    static native Throwable errorNew(int code, String message);

    // --- CredentialStore --------------------------------------------------------------------

    /** A new empty store. */
    static native long storeNew();

    /** Frees a store (the registries using it keep their reference). */
    static native void storeFree(long h);

    /** Adds or replaces a user: PLAIN password and SCRAM credentials derived at {@code iterations} (unset: the core's minimum). */
    static native void storeAddUser(long h, String user, String password, int iterations, boolean iterationsSet)
            throws KsaslException;

    /** Sets a user's SCRAM credential for {@code mechanism} from Kafka's string form. */
    static native void storeSetScram(long h, String user, String mechanism, String credential) throws KsaslException;

    /** Sets a user's absolute credential expiry, or clears it with {@link #NONE}. */
    static native void storeSetUserExpiry(long h, String user, long expiryMs) throws KsaslException;

    /** Removes a user; whether it existed. */
    static native boolean storeRemoveUser(long h, String user) throws KsaslException;

    /** Adds a delegation token's SCRAM credential with its owner and expiry (or {@link #NONE}). */
    static native void storeSetToken(long h, String tokenId, String mechanism, String credential, String owner,
            long expiryMs) throws KsaslException;

    /**
     * Serves one DescribeUserScramCredentials or AlterUserScramCredentials request frame
     * (without its length prefix); the response frame, length-prefixed.
     */
    static native byte[] storeHandleScramRequest(long h, byte[] frame) throws KsaslException;

    /** The SCRAM credential APIs' (KIP-554) version ranges as {apiKey, min, max} triples. */
    static native short[] storeScramApiVersions();

    // --- MechanismRegistry ------------------------------------------------------------------

    /** A new empty registry. */
    static native long registryNew();

    /** Frees a registry (configurations made from it keep their copy). */
    static native void registryFree(long h);

    /**
     * Adds the PLAIN and SCRAM servers; users are looked up in {@code store} (a handle), else
     * by {@code lookup}, else asked of the host (both 0 and null); {@code tokens} (a
     * TokenAuthority handle, or 0) answers {@code tokenauth} logins.
     */
    static native void registryAddPasswordServers(long h, long store, CredentialLookup lookup, long tokens);

    /** Called by {@link #callLookup}: the Java lookup's answer for the lookup running at {@code slot}. */
    static native void lookupAnswer(long slot, int kind, String value, long expiryMs, String owner);

    /** Adds PLAIN and SCRAM clients for a user and password, or (token) SCRAM clients for a delegation token. */
    static native void registryAddPasswordClients(long h, String user, String password, boolean token)
            throws KsaslException;

    /** Adds the refresher's delegation-token (or password) clients for PLAIN and SCRAM. */
    static native void registryAddRefreshingPasswordClients(long h, long refresher);

    /** Adds an OAUTHBEARER server with Kafka's unsecured validator; null scope and unset skew keep the core's defaults. */
    static native void registryAddOAuthUnsecured(long h, String[] requiredScope, long clockSkewMs, boolean skewSet)
            throws KsaslException;

    /** Adds an OAUTHBEARER server validating with a JwksValidator handle. */
    static native void registryAddOAuthJwks(long h, long jwks);

    /** Adds an OAUTHBEARER server validating with Java code (see {@link #callValidate}). */
    static native void registryAddOAuthValidator(long h, TokenValidator validator);

    /** Called by {@link #callValidate}: the principal and expiry of an accepted token. */
    static native void validatorAnswer(long slot, String principal, long expiryMs);

    /** Adds an OAUTHBEARER client presenting the refresher's current token. */
    static native void registryAddOAuthClient(long h, long refresher);

    /** Adds a client mechanism written in Java: {@code factory} supplies HostClientMechanisms, or AsyncHostClientMechanisms when {@code asynchronous}. */
    static native void registryAddHostClient(long h, String name, Supplier<?> factory, boolean asynchronous);

    /** Adds a server mechanism written in Java: {@code factory} supplies HostServerMechanisms. */
    static native void registryAddHostServer(long h, String name, Supplier<?> factory);

    /** The client mechanism names, sorted: a record of strings. */
    static native byte[] registryClientMechanisms(long h);

    /** The server mechanism names, sorted: a record of strings. */
    static native byte[] registryServerMechanisms(long h);

    /**
     * Adds a GSSAPI client for the service {@code serviceName}@{@code host} on the login's
     * current ticket; {@code mutual} also asks the server to authenticate itself.
     */
    static native void registryAddGssapiClient(long h, long login, String serviceName, String host, boolean mutual)
            throws KsaslException;

    /**
     * Adds a GSSAPI server; each of {@code keytab}, {@code principal}, {@code serviceName} and
     * {@code rules} (Kafka's list value) may be null; {@code cap} ends sessions with the
     * client's service ticket. The keytab is read now.
     */
    static native void registryAddGssapiServer(long h, String keytab, String principal, String serviceName,
            String rules, boolean cap) throws KsaslException;

    // --- KerberosLogin ----------------------------------------------------------------------

    /** Whether the system's GSS-API library (MIT Kerberos) loads. */
    static native boolean gssapiAvailable();

    /**
     * A Kerberos login (a handle) from {@code keytab} as {@code principal}, or from the ticket
     * cache {@code ccache}; each schedule setting counts only when its flag is set.
     */
    static native long kerberosLoginNew(String principal, String keytab, String ccache, double windowFactor,
            boolean factorSet, double jitter, boolean jitterSet, long minTimeBeforeReloginMs, boolean minSet)
            throws KsaslException;

    /** Frees a login (registries and renewal threads using it keep their reference). */
    static native void kerberosLoginFree(long h);

    /** Logs in now and plans the next login. */
    static native void kerberosLoginLogin(long h, long nowMs) throws KsaslException;

    /** Logs in if one is due at {@code nowMs}; whether it did. */
    static native boolean kerberosLoginPoll(long h, long nowMs) throws KsaslException;

    /** When the next login is due, or {@link #NONE}. */
    static native long kerberosLoginNextLogin(long h);

    /** When the current ticket-granting ticket ends, or {@link #NONE}. */
    static native long kerberosLoginTicketEnd(long h);

    /** Successful logins so far. */
    static native long kerberosLoginLogins(long h);

    /** Failed logins so far. */
    static native long kerberosLoginFailures(long h);

    /** Starts the core's thread that logs in again on the login's schedule (a handle). */
    static native long kerberosRenewalStart(long h) throws KsaslException;

    /** Stops a renewal thread, waits for it to end, and frees its handle. */
    static native void kerberosRenewalStop(long h);

    // --- OidcLogin, JwksEndpoint --------------------------------------------------------------

    /** A token login (a handle) from settings given as name/value pairs by Kafka's property names. */
    static native long oidcLoginNew(String[] settings) throws KsaslException;

    /** Frees a login (refresh threads using it keep their reference). */
    static native void oidcLoginFree(long h);

    /** Gets a token now, blocking (an {@link OAuthBearerToken} record). */
    static native byte[] oidcLoginFetch(long h, long nowMs) throws KsaslException;

    /**
     * Installs a first token in the refresher now, then starts the core's thread refreshing it
     * from the login (a handle); {@code extensions} are name/value pairs.
     */
    static native long oidcLoginStart(long h, long refresher, String[] extensions) throws KsaslException;

    /** Stops a refresh thread, waits for it to end, and frees its handle. */
    static native void oidcRefreshStop(long h);

    /** A JWKS endpoint (a handle) feeding the validator, with HTTPS settings as name/value pairs. */
    static native long jwksEndpointNew(String url, long validator, String[] settings) throws KsaslException;

    /** Frees an endpoint (registries and fetch threads using it keep their reference). */
    static native void jwksEndpointFree(long h);

    /** Fetches the JWKS now, blocking; the number of usable keys. */
    static native long jwksEndpointFetch(long h, long nowMs) throws KsaslException;

    /** Fetches if one is due; when to poll next (ms since the epoch). */
    static native long jwksEndpointPoll(long h, long nowMs);

    /** Starts the core's thread keeping the JWKS fresh (a handle). */
    static native long jwksEndpointStart(long h) throws KsaslException;

    /** Stops a fetch thread, waits for it to end, and frees its handle. */
    static native void jwksFetchingStop(long h);

    /** Adds an OAUTHBEARER server validating with the endpoint (holding unknown keys for one fetch). */
    static native void registryAddOAuthJwksEndpoint(long h, long endpoint);

    // --- ClientExchange ---------------------------------------------------------------------

    /** A new client exchange of {@code mechanism} (its name in UTF-8) from the registry's client mechanisms. */
    static native long clientExchangeNew(long registry, byte[] mechanism) throws KsaslException;

    /** Frees a client exchange. */
    static native void clientExchangeFree(long h);

    /** The first message, as a {@link ClientStep} record. */
    static native byte[] clientExchangeStart(long h, long nowMs) throws KsaslException;

    /** The answer to a server challenge, as a {@link ClientStep} record. */
    static native byte[] clientExchangeStep(long h, byte[] challenge, long nowMs) throws KsaslException;

    /** The stage of the mechanism's pending work, or null. */
    static native Object clientExchangePendingWork(long h);

    /** Continues with the stage's message ({@code error} null) or its exception: a {@link ClientStep} record. */
    static native byte[] clientExchangeResume(long h, byte[] message, Throwable error) throws KsaslException;

    /** Records the server's failure (with its text, or null) and throws the resulting exception. */
    static native void clientExchangeServerFailed(long h, String serverMessage) throws KsaslException;

    /** The mechanism name. */
    static native String clientExchangeMechanism(long h);

    /** Whether the client side is complete. */
    static native boolean clientExchangeComplete(long h);

    // --- ServerExchange ---------------------------------------------------------------------

    /** A new server exchange of {@code mechanism} (its name in UTF-8) from the registry's server mechanisms. */
    static native long serverExchangeNew(long registry, byte[] mechanism) throws KsaslException;

    /** Frees a server exchange. */
    static native void serverExchangeFree(long h);

    /** Sets {@code connections.max.reauth.ms} for the exchange's session. */
    static native void serverExchangeSetMaxReauthMs(long h, long ms);

    /**
     * Evaluates one client message: a {@link ServerStep} record, then whether the exchange has
     * a session and, if so, its {@link ServerSession} record (the same for provide and resume).
     */
    static native byte[] serverExchangeStep(long h, byte[] response, long nowMs) throws KsaslException;

    /** Answers the pending credential request ({@code kind} number, {@code value}, {@code expiryMs}, {@code owner}): a {@link ServerStep} record. */
    static native byte[] serverExchangeProvide(long h, int kind, String value, long expiryMs, String owner,
            long nowMs) throws KsaslException;

    /** The pending credential request (a {@link CredentialRequest} record), or null. */
    static native byte[] serverExchangePendingRequest(long h);

    /** The stage of the mechanism's pending work, or null. */
    static native Object serverExchangePendingWork(long h);

    /** Continues with the stage's step ({@code error} null) or its exception: a {@link ServerStep} record. */
    static native byte[] serverExchangeResume(long h, HostServerStep step, Throwable error, long nowMs)
            throws KsaslException;


    /** After a failure: the text a Kafka broker sends the client; null before. */
    static native String serverExchangeClientMessage(long h);

    // --- Config -----------------------------------------------------------------------------

    /**
     * The reports of the {@code .properties} {@code text} (a client configuration, or the
     * broker listener {@code listener}, or with null every SASL listener of a broker's): a record
     * of the count, then each report's scope, effective settings (alternating names and
     * values), unknown names and warnings.
     */
    static native byte[] configCheck(String text, String listener) throws KsaslException;

    /** The SASL listeners of the broker configuration {@code text}, in order: a record of strings. */
    static native byte[] configSaslListeners(String text) throws KsaslException;

    /** The listener to serve from the broker configuration {@code text}: a record of one string. */
    static native byte[] configChooseListener(String text, String listener) throws KsaslException;

    /**
     * Where {@code listener} of the broker configuration {@code text} listens: a record of an
     * i32 (1 found, 0 not), then the host and the port (i32) when found.
     */
    static native byte[] configListenerAddress(String text, String listener) throws KsaslException;

    /**
     * Builds the broker listener {@code listener} of {@code text} (the core's
     * {@code ServerSettings::build}), with SCRAM against the store {@code store} (0: none): a
     * record of the new configuration's handle (0: none, the listener enables GSSAPI, and nothing
     * follows), then the count of JWKS endpoints and each one's URL and new endpoint handle (the
     * fetcher the configuration validates tokens with), then the new token authority handle
     * ({@code delegation.token.secret.key}; 0: none). The caller owns every handle.
     */
    static native byte[] serverSetupBuild(String text, String listener, long store, long[] apis)
            throws KsaslException;

    /**
     * Builds the client of the {@code .properties} {@code text} (the core's
     * {@code ClientSettings::build}): a record of the new configuration handle (0: none, GSSAPI),
     * the new refresher handle (0: none), the login (a byte: 0 ready, 1 OIDC, 2 host token, 3
     * Kerberos), Kerberos' service name, principal and keytab (null otherwise), the mechanism,
     * the security protocol, the unknown names, the warnings, the effective settings (alternating
     * names and values) and the new setup handle. The caller owns every handle.
     */
    static native byte[] clientSetupFromText(String text) throws KsaslException;

    /** {@link #clientSetupFromText} from properties given as alternating names and values. */
    static native byte[] clientSetupFromPairs(String[] pairs) throws KsaslException;

    /**
     * Rebuilds the setup's configuration for {@code mechanism} with the registry {@code r}'s
     * clients (the core's {@code ClientSetup::with_registry}): the new configuration handle.
     */
    static native long clientSetupWithRegistry(long h, long r, String mechanism) throws KsaslException;

    /** Frees a client setup (the configurations and refresher handed out keep their reference). */
    static native void clientSetupFree(long h);

    // --- ClientConfig -----------------------------------------------------------------------

    /** A configuration builder for {@code mechanism} with the registry's client mechanisms. */
    static native long clientConfigBuilderNew(long registry, String mechanism);

    /** Frees a builder. */
    static native void clientConfigBuilderFree(long b);

    /** {@code client.id} (null: none). */
    static native void clientConfigBuilderSetClientId(long b, String clientId);

    /** The ApiVersions version sent first. */
    static native void clientConfigBuilderSetApiVersionsVersion(long b, long version);

    /** The broker's known SaslHandshake and SaslAuthenticate versions ({@code legacy}: no SaslAuthenticate). */
    static native void clientConfigBuilderSetKnownVersions(long b, long handshake, long authenticate, boolean legacy);

    /** The software name and version of ApiVersions v3+. */
    static native void clientConfigBuilderSetSoftware(long b, String name, String version);

    /** The re-authentication timing, by its ReauthTiming number. */
    static native void clientConfigBuilderSetReauthTiming(long b, int timing);

    /** The smallest delay before a re-authentication. */
    static native void clientConfigBuilderSetReauthMinDelayMs(long b, long ms);

    /** The first retry delay after a failed re-authentication (0: fail the connection). */
    static native void clientConfigBuilderSetReauthRetryMs(long b, long ms);

    /** The largest SASL response accepted. */
    static native void clientConfigBuilderSetMaxReceiveSize(long b, long bytes);

    /** The configuration (a handle), if every value is valid. */
    static native long clientConfigBuilderBuild(long b) throws KsaslException;

    /** Frees a configuration (its connections keep their reference). */
    static native void clientConfigFree(long h);

    /** Kafka's client metrics: a record of the names, then the values. */
    static native byte[] clientConfigMetrics(long h, long nowMs);

    // --- ClientConnection -------------------------------------------------------------------

    /** A new client connection with {@code config}. */
    static native long clientConnNew(long config);

    /** Frees a client connection. */
    static native void clientConnFree(long h);

    /** Starts the initial authentication. */
    static native void clientConnStart(long h, long nowMs) throws KsaslException;

    /** The bytes to write (empty when none). */
    static native byte[] clientConnTransmit(long h);

    /** The number of the event a received frame means (the frame is not read once ready); a failure is thrown. */
    static native int clientConnHandleFrame(long h, byte[] frame, long nowMs) throws KsaslException;

    /** The REAUTH_FAILED event of the last call (its error and retry time), once. */
    static native ClientEvent clientConnReauthFailure(long h);

    /** The stage of the mechanism's pending work, or null. */
    static native Object clientConnPendingWork(long h);

    /** As {@link #clientConnHandleFrame}, for the stage's {@code message} ({@code error} null) or its exception. */
    static native int clientConnResume(long h, byte[] message, Throwable error, long nowMs)
            throws KsaslException;

    /** The broker closed the connection: the exception that explains it (not thrown). */
    static native Throwable clientConnClosed(long h, long nowMs);

    /** When to call clientConnHandleTimeout, or NONE. */
    static native long clientConnNextDeadline(long h);

    /** Starts a due re-authentication; whether it started. */
    static native boolean clientConnHandleTimeout(long h, long nowMs) throws KsaslException;

    /** Whether a re-authentication is due. */
    static native boolean clientConnReauthPending(long h, long nowMs);

    /** Before an application request: whether to send it now. */
    static native boolean clientConnBeforeRequest(long h, long nowMs) throws KsaslException;

    /** Starts a re-authentication now (false: deferred). */
    static native boolean clientConnStartReauth(long h, long nowMs) throws KsaslException;

    /** The session (a {@link ClientSession} record), or null before authentication. */
    static native byte[] clientConnSession(long h);

    /** Whether a re-authentication is in progress. */
    static native boolean clientConnReauthenticating(long h);

    /** Whether authenticated with no exchange in progress. */
    static native boolean clientConnReady(long h);

    // --- ServerConfig -----------------------------------------------------------------------

    /** A configuration builder with the registry's server mechanisms. */
    static native long serverConfigBuilderNew(long registry);

    /** Frees a builder. */
    static native void serverConfigBuilderFree(long b);

    /** {@code sasl.enabled.mechanisms}, in handshake order. */
    static native void serverConfigBuilderSetEnabledMechanisms(long b, String[] mechanisms);

    /** {@code connections.max.reauth.ms}. */
    static native void serverConfigBuilderSetMaxReauthMs(long b, long ms);

    /** {@code connections.max.reauth.ms} for one mechanism. */
    static native void serverConfigBuilderSetMaxReauthMsFor(long b, String mechanism, long ms);

    /** {@code sasl.server.max.receive.size}. */
    static native void serverConfigBuilderSetMaxReceiveSize(long b, long bytes);

    /** {@code socket.request.max.bytes}. */
    static native void serverConfigBuilderSetMaxRequestSize(long b, long bytes);

    /** Enumeration resistance: stand-in credentials for unknown users under a server secret. */
    static native void serverConfigBuilderSetUnknownUserMask(long b, byte[] secret, long iterations);

    /** {@code connection.failed.authentication.delay.ms}. */
    static native void serverConfigBuilderSetFailedAuthenticationDelayMs(long b, long ms);

    /** The first retry delay after a failed re-authentication (0: close). */
    static native void serverConfigBuilderSetReauthRetryMs(long b, long ms);

    /** Adds or replaces an API in the ApiVersions answer. */
    static native void serverConfigBuilderSetApiVersion(long b, long apiKey, long minVersion, long maxVersion);

    /** Accepts pre-0.10 GSSAPI clients that send a raw token first (KIP-43). */
    static native void serverConfigBuilderSetLegacyGssapi(long b, boolean on);

    /** The configuration (a handle), if every value is valid. */
    static native long serverConfigBuilderBuild(long b) throws KsaslException;

    /** Frees a configuration (its connections keep their reference). */
    static native void serverConfigFree(long h);

    /** Kafka's broker metrics: a record of the names, then the values. */
    static native byte[] serverConfigMetrics(long h, long nowMs);

    /** The answer to an ApiVersions request frame, length-prefixed. */
    static native byte[] serverConfigApiVersionsResponse(long h, byte[] frame) throws KsaslException;

    // --- ServerConnection -------------------------------------------------------------------

    /** A new server connection with {@code config}. */
    static native long serverConnNew(long config);

    /** Frees a server connection. */
    static native void serverConnFree(long h);

    /**
     * Handles one frame: the action with the frames queued for it. With {@code hold} the action
     * is kept (replacing any held one), the frames stay queued and null is returned; an action
     * that refuses the call (a misuse) is thrown either way.
     */
    static native ServerOutput serverConnHandleFrame(long h, byte[] frame, long nowMs, boolean hold);

    /** Answers the pending credential request; {@code hold} as for handleFrame. */
    static native ServerOutput serverConnProvide(long h, int kind, String value, long expiryMs, String owner,
            long nowMs, boolean hold) throws KsaslException;

    /** Continues pending work with its step ({@code error} null) or exception; {@code hold} as for provide. */
    static native ServerOutput serverConnResume(long h, HostServerStep step, Throwable error, long nowMs,
            boolean hold);

    /** What the connection waits for: a {@link CredentialRequest} record, the stage of pending work, or null. */
    static native Object serverConnHostTask(long h);

    /** The held action (forgotten) with every frame queued since the last output. */
    static native ServerOutput serverConnTakeHeld(long h);

    /** The pending credential request (a {@link CredentialRequest} record), or null. */
    static native byte[] serverConnPendingRequest(long h);

    /** The stage of the mechanism's pending work, or null. */
    static native Object serverConnPendingWork(long h);

    /** A frame's declared length checked before its body is read: the body's size. */
    static native long serverConnCheckFrameSize(long h, int declared, long nowMs) throws KsaslException;

    /**
     * The request that interrupted the exchange when the core has no schema for its API (a
     * {@link RefusedRequest} record), or null.
     */
    static native byte[] serverConnRefusedRequest(long h);

    /** The gate's verdict on a request, by its Gate number. */
    static native int serverConnGate(long h, short apiKey, long nowMs);

    /** Kafka's ILLEGAL_SASL_STATE answer to a SASL request frame, or null for other APIs. */
    static native byte[] serverConnIllegalState(byte[] frame);

    /** Whether authenticated with no exchange in progress. */
    static native boolean serverConnReady(long h);

    /** When the session expires, or NONE. */
    static native long serverConnNextDeadline(long h);

    /** The session (a {@link ServerSession} record), or null before authentication. */
    static native byte[] serverConnSession(long h);

    // --- OAUTHBEARER ------------------------------------------------------------------------

    /** A JWT validator configuration with the core's defaults. */
    static native long jwtConfigNew();

    /** Frees a configuration. */
    static native void jwtConfigFree(long c);

    /** {@code sasl.oauthbearer.expected.issuer}. */
    static native void jwtConfigSetIssuer(long c, String issuer);

    /** {@code sasl.oauthbearer.expected.audience}. */
    static native void jwtConfigSetAudiences(long c, String[] audiences);

    /** The clock skew for {@code exp}, {@code nbf} and {@code iat}. */
    static native void jwtConfigSetClockSkewMs(long c, long ms);

    /** {@code sasl.oauthbearer.sub.claim.name}. */
    static native void jwtConfigSetSubjectClaimName(long c, String name);

    /** {@code sasl.oauthbearer.scope.claim.name}. */
    static native void jwtConfigSetScopeClaimName(long c, String name);

    /** Whether to refuse an {@code iat} in the future. */
    static native void jwtConfigSetValidateIat(long c, boolean validate);

    /** The accepted JWS algorithms by name (an unknown one is refused: INVALID_CONFIG, unchecked). */
    static native void jwtConfigSetAlgorithms(long c, String[] names);

    /** The shared secret of the HMAC algorithms. */
    static native void jwtConfigSetHmacSecret(long c, byte[] secret);

    /** The largest token accepted. */
    static native void jwtConfigSetMaxTokenSize(long c, long bytes);

    /** How often the JWKS should be refreshed. */
    static native void jwtConfigSetRefreshPeriodMs(long c, long ms);

    /** The smallest interval between refreshes asked for by one unknown {@code kid}. */
    static native void jwtConfigSetUnknownKidIntervalMs(long c, long ms);

    /** A JWKS validator (a handle) with configuration {@code c}, if valid. */
    static native long jwksNew(long c) throws KsaslException;

    /** Frees a validator. */
    static native void jwksFree(long h);

    /** Replaces the key set; the number of usable keys. */
    static native int jwksSet(long h, String json, long nowMs) throws KsaslException;

    /** When to fetch the JWKS again. */
    static native long jwksNextRefresh(long h);

    /** Validates a token: a {@link ValidatedToken} record (a rejection is thrown with its {@code status} detail). */
    static native byte[] jwksValidate(long h, String token, long nowMs) throws KsaslException;

    /** An unsecured token for {@code principal} with a lifetime and an optional scope: an {@link OAuthBearerToken} record. */
    static native byte[] unsecuredToken(String principal, long lifetimeSeconds, String[] scope, long nowMs)
            throws KsaslException;

    // --- Refresher and Tracker --------------------------------------------------------------

    /** A refresher configuration builder with Kafka's defaults. */
    static native long refreshConfigNew();

    /** Frees a builder. */
    static native void refreshConfigFree(long c);

    /** {@code sasl.login.refresh.window.factor}. */
    static native void refreshConfigSetWindowFactor(long c, double v);

    /** {@code sasl.login.refresh.window.jitter}. */
    static native void refreshConfigSetWindowJitter(long c, double v);

    /** {@code sasl.login.refresh.min.period.seconds}. */
    static native void refreshConfigSetMinPeriodSeconds(long c, long v);

    /** {@code sasl.login.refresh.buffer.seconds}. */
    static native void refreshConfigSetBufferSeconds(long c, long v);

    /** Whether to keep trying after the credential expired. */
    static native void refreshConfigSetReloginAllowedBeforeLogout(long c, boolean v);

    /** {@code sasl.login.retry.backoff.ms}. */
    static native void refreshConfigSetRetryBackoffMs(long c, long v);

    /** {@code sasl.login.retry.backoff.max.ms}. */
    static native void refreshConfigSetRetryBackoffMaxMs(long c, long v);

    /** A refresher (a handle) with configuration {@code c}, if valid. */
    static native long refresherNew(long c) throws KsaslException;

    /** Frees a refresher (registries and trackers using it keep their reference). */
    static native void refresherFree(long h);

    /** Whether a new credential must be fetched now. */
    static native boolean refresherPoll(long h, long nowMs);

    /** Runs the refresher's own callback if a refresh is due (the core's {@code run_due}): whether it ran. */
    static native boolean refresherRunDue(long h, long nowMs);

    /** Installs a token; its generation. {@code extensions} alternates names and values. */
    static native long refresherSetToken(long h, String token, long expiryMs, String principal, String[] extensions,
            long nowMs) throws KsaslException;

    /** Reports a failed refresh. */
    static native void refresherSetTokenFailure(long h, String reason, long nowMs) throws KsaslException;

    /** When a refresh is due, or NONE while one is outstanding. */
    static native long refresherNextDeadline(long h);

    /** The current credential's generation (0: none). */
    static native long refresherGeneration(long h);

    /** The current token (an {@link OAuthBearerToken} record). */
    static native byte[] refresherCurrent(long h, long nowMs) throws KsaslException;

    /** Installs a delegation token (see tokenNew for the form); its generation. */
    static native long refresherSetDelegationToken(long h, String tokenId, byte[] hmac, String[] principals,
            long[] times, long nowMs) throws KsaslException;

    /** A tracker of the refresher's connections; an unset spread window keeps the core's default. */
    static native long trackerNew(long refresher, long spreadWindowMs, boolean spreadSet) throws KsaslException;

    /** Frees a tracker. */
    static native void trackerFree(long h);

    /** Records an authenticated connection and its session times (NONE: absent). */
    static native void trackerAuthenticated(long h, long id, long generation, long lifetimeMs, long reauthAtMs,
            long expiryMs) throws KsaslException;

    /** Forgets a connection. */
    static native void trackerForget(long h, long id);

    /** When to poll next, or NONE. */
    static native long trackerNextDeadline(long h);

    /** Element 0 is 1 when a refresh is needed; the rest are connection ids to re-authenticate. */
    static native long[] trackerPoll(long h, long nowMs);

    // --- Delegation tokens ------------------------------------------------------------------
    // A token goes in as (tokenId, hmac, String[] {owner, requester, renewers...},
    // long[] {issue, expiry, max}) and comes back as a record. An API version outside
    // 0..32767 is refused by the core as an unsupported version.

    /** The core's defaults: {max lifetime, expiry time, expiry check interval}. */
    static native long[] tokenAuthorityDefaults();

    /** An authority with {@code secretKey} and {max lifetime, expiry time, check interval} (null: the defaults). */
    static native long tokenAuthorityNew(String secretKey, long[] settings) throws KsaslException;

    /** Frees an authority (registries using it keep their reference). */
    static native void tokenAuthorityFree(long h);

    /** Creates a token ({@code requester} null: the owner): a {@link DelegationToken} record. */
    static native byte[] tokenAuthorityCreate(long h, String owner, String requester, String[] renewers,
            long maxLifetimeMs, long nowMs) throws KsaslException;

    /** Renews the token with this HMAC; the new expiry. */
    static native long tokenAuthorityRenew(long h, byte[] hmac, String caller, long periodMs, long nowMs)
            throws KsaslException;

    /** Expires the token with this HMAC; the new expiry. */
    static native long tokenAuthorityExpire(long h, byte[] hmac, String caller, long periodMs, long nowMs)
            throws KsaslException;

    /** The tokens of {@code owners} (null: every token): a record of their count and the tokens. */
    static native byte[] tokenAuthorityDescribe(long h, String[] owners) throws KsaslException;

    /** Removes expired tokens; their ids, as a record of strings. */
    static native byte[] tokenAuthoritySweep(long h, long nowMs) throws KsaslException;

    /** When the next sweep is due. */
    static native long tokenAuthorityNextSweep(long h);

    /** The HMAC of a token id. */
    static native byte[] tokenAuthorityHmac(long h, String tokenId);

    /** Every token as JSON records. */
    static native String tokenAuthorityExport(long h) throws KsaslException;

    /** Loads JSON records; how many. */
    static native int tokenAuthorityImport(long h, String records) throws KsaslException;

    /** Serves one token API request frame of a connection authenticated as {@code principal}. */
    static native byte[] tokenAuthorityHandleRequest(long h, byte[] frame, String principal,
            boolean tokenAuthenticated, long nowMs) throws KsaslException;

    /** A token from its parts (checked by the core): a {@link DelegationToken} record. */
    static native byte[] tokenNew(String tokenId, byte[] hmac, String[] principals, long[] times)
            throws KsaslException;

    /** A CreateDelegationToken request, length-prefixed. */
    static native byte[] tokenCreateRequest(int version, int correlationId, String[] renewers, long maxLifetimeMs,
            String owner, String clientId) throws KsaslException;

    /** A RenewDelegationToken or ({@code expire}) ExpireDelegationToken request, length-prefixed. */
    static native byte[] tokenRenewOrExpireRequest(int version, int correlationId, byte[] hmac, long periodMs,
            boolean expire, String clientId) throws KsaslException;

    /** A DescribeDelegationToken request (null owners: every token), length-prefixed. */
    static native byte[] tokenDescribeRequest(int version, int correlationId, String[] owners, String clientId)
            throws KsaslException;

    /** The token of a CreateDelegationToken response frame: a {@link DelegationToken} record. */
    static native byte[] tokenParseCreateResponse(int version, byte[] frame) throws KsaslException;

    /** The expiry of a Renew/ExpireDelegationToken response frame. */
    static native long tokenParseExpiryResponse(int version, byte[] frame) throws KsaslException;

    /** The tokens of a DescribeDelegationToken response frame: a record of their count and the tokens. */
    static native byte[] tokenParseDescribeResponse(int version, byte[] frame) throws KsaslException;

    /** Whether {@code apiKey} is one of the four delegation-token APIs. */
    static native boolean tokenIsTokenApi(short apiKey);

    /** The token APIs' version ranges as {apiKey, min, max} triples (what Kafka 4 advertises, or all). */
    static native short[] tokenApiVersions(boolean kafka4);

    // --- AWS_MSK_IAM: AwsCredentials, AwsKeyStore, AWS clients and servers ---------------------
    //
    // A client's credential source is two handles, {@code credentials} and {@code refresher}:
    // exactly one of them is not 0.

    /**
     * New AWS credentials; {@code sessionToken} null for long-term keys, {@code expiresAtMs}
     * {@link #NONE} for none.
     */
    static native long awsCredentialsNew(String accessKeyId, String secretAccessKey, String sessionToken,
            long expiresAtMs);

    /** Frees AWS credentials (the registries, stores and refreshers using them keep a copy). */
    static native void awsCredentialsFree(long h);

    /** What may be shown of the credentials: a record of the access key id, whether there is a session token, the expiry or NONE. */
    static native byte[] awsCredentialsInfo(long h);

    /** A new empty AWS key store. */
    static native long awsKeyStoreNew();

    /** Frees a key store (the registries using it keep their reference). */
    static native void awsKeyStoreFree(long h);

    /** Adds or replaces the key of {@code credentials} (a handle), authenticating as {@code principal}. */
    static native void awsKeyStoreAdd(long h, long credentials, String principal);

    /** Removes an access key; whether it was there. */
    static native boolean awsKeyStoreRemove(long h, String accessKeyId);

    /**
     * Adds an AWS_MSK_IAM client signing for {@code host} in {@code region}; {@code userAgent}
     * and {@code keyOrder} null: the core's defaults.
     */
    static native void registryAddAwsMskIamClient(long h, String host, String region, long credentials,
            long refresher, String userAgent, String keyOrder);

    /** Adds an AWS_MSK_IAM verifying server over the key store {@code keys}; {@code hosts} empty: any host. */
    static native void registryAddAwsMskIamServer(long h, long keys, String region, String[] hosts);

    /** Adds an OAUTHBEARER client presenting MSK tokens for {@code region}; {@code userAgent} null: the core's. */
    static native void registryAddMskOAuthClient(long h, String region, long credentials, long refresher,
            String userAgent);

    /** Adds an OAUTHBEARER server accepting MSK tokens for {@code region} signed with a key of {@code keys}. */
    static native void registryAddMskOAuthServer(long h, long keys, String region);

    /** Installs AWS {@code credentials} (a handle) in a refresher; the new generation. */
    static native long refresherSetAwsCredentials(long h, long credentials, String principal, long nowMs)
            throws KsaslException;

    /**
     * MSK's presigned token for {@code region} at {@code nowMs}: an {@link OAuthBearerToken}
     * record; {@code userAgent} null: the core's.
     */
    static native byte[] mskToken(String region, long credentials, long refresher, String userAgent, long nowMs)
            throws KsaslException;

    // --- host mechanisms: the core's HostOutput, filled by the helpers below ----------------

    /** The message to send (a client's next message, a server's challenge or last message). */
    static native void hostSetMessage(long out, byte[] message);

    /** A client mechanism is complete. */
    static native void hostSetDone(long out);

    /** A server mechanism authenticated {@code authorizationId} (expiry NONE: none). */
    static native void hostSetAuthenticated(long out, String authorizationId, long credentialExpiryMs);

    /** The answer comes later: {@code stage}; {@code mechanism} is an asynchronous client's. */
    static native void hostSetPending(long out, Object stage, Object mechanism);

    /** The host's code failed: a ksasl {@code code} (0: none), its text, and the exception. */
    static native void hostSetError(long out, int code, String text, Throwable cause);

    /** The host answered something the binding cannot pass on ({@code what} it did). */
    static native void hostRefuse(long out, String what);

    // --- Java helpers called by native code --------------------------------------------------
    // Each runs host code and reports through native setters; none throws. They return an
    // Object (null) so that native code calls them all the same way.

    /** A credential lookup's answer to a request record, reported through {@link #lookupAnswer}; null is "unknown". */
    static Object callLookup(CredentialLookup lookup, byte[] request, long slot) throws Exception {
        CredentialAnswer a = lookup.lookup(CredentialRequest.of(request));
        if (a == null) {
            a = CredentialAnswer.unknown();
        }
        lookupAnswer(slot, a.kind().number(), a.value(), a.expiryMs(), a.tokenOwner());
        return null;
    }

    /** A token validator's verdict: accepted tokens are reported through {@link #validatorAnswer}. */
    static Object callValidate(TokenValidator validator, String token, long nowMs, long slot) throws Exception {
        ValidatedToken v = validator.validate(token, nowMs);
        if (v != null) {
            validatorAnswer(slot, v.principal(), v.expiryMs());
        }
        return null;
    }

    /** A mechanism object from a factory; null (with the failure in {@code out}) if it fails. */
    static Object hostCreate(Supplier<?> factory, long out) {
        try {
            Object m = factory.get();
            if (m == null) {
                hostRefuse(out, "returned null");
            }
            return m;
        } catch (Throwable t) {
            return hostFail(t, out);
        }
    }

    private static void clientAnswer(byte[] message, boolean complete, long out) {
        if (message != null) {
            hostSetMessage(out, message);
        }
        if (complete) {
            hostSetDone(out);
        }
    }

    /** A HostClientMechanism's start ({@code challenge} null) or step. */
    static Object hostClientCall(HostClientMechanism m, byte[] challenge, long nowMs, long out) {
        try {
            byte[] message = challenge == null ? m.start(nowMs) : m.step(challenge, nowMs);
            clientAnswer(message, m.isComplete(), out);
            return null;
        } catch (Throwable t) {
            return hostFail(t, out);
        }
    }

    /** An AsyncHostClientMechanism's start ({@code challenge} null) or step: its stage. */
    static Object hostAsyncClientCall(AsyncHostClientMechanism m, byte[] challenge, long nowMs, long out) {
        try {
            CompletionStage<byte[]> stage = challenge == null ? m.start(nowMs) : m.step(challenge, nowMs);
            if (stage == null) {
                hostRefuse(out, "returned null");
            } else {
                hostSetPending(out, stage, m);
            }
            return null;
        } catch (Throwable t) {
            return hostFail(t, out);
        }
    }

    /** The message an asynchronous client's stage completed with. */
    static Object hostAsyncClientAnswer(AsyncHostClientMechanism m, byte[] message, long out) {
        try {
            clientAnswer(message, m.isComplete(), out);
            return null;
        } catch (Throwable t) {
            return hostFail(t, out);
        }
    }

    /** A HostServerMechanism's step. */
    static Object hostServerCall(HostServerMechanism m, byte[] response, long nowMs, long out) {
        HostServerStep s;
        try {
            s = m.step(response, nowMs);
        } catch (Throwable t) {
            return hostFail(t, out);
        }
        return hostServerAnswer(s, out);
    }

    /** A server step, from a mechanism's step() or from the stage of a later() step. */
    static Object hostServerAnswer(HostServerStep s, long out) {
        if (s == null) {
            hostRefuse(out, "returned null");
        } else if (s.isLater()) {
            hostSetPending(out, s.work(), null);
        } else if (!s.isDone()) {
            hostSetMessage(out, s.challenge());
        } else {
            byte[] last = s.message();
            if (last != null) {
                hostSetMessage(out, last);
            }
            OptionalLong expiry = s.credentialExpiryMs();
            hostSetAuthenticated(out, s.authorizationId(), expiry.isPresent() ? expiry.getAsLong() : NONE);
        }
        return null;
    }

    /**
     * The host's exception as the failure of its call: a {@link KsaslError} keeps its code and
     * message, anything else is reported by its {@code toString()}; the wrappers of
     * CompletableFuture and Future.get() are removed first.
     */
    static Object hostFail(Throwable t, long out) {
        t = unwrap(t);
        if (t instanceof KsaslError) {
            hostSetError(out, ((KsaslError) t).code(), t.getMessage(), t);
        } else {
            hostSetError(out, 0, t.toString(), t);
        }
        return null;
    }

    /** The exception behind the wrappers of CompletableFuture and Future.get(). */
    static Throwable unwrap(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }
}
