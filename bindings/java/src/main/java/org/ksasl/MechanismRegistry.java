package org.ksasl;

import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Client and server mechanisms by name, with their credentials. A registry is configured
 * first and then used to create exchanges and connection configurations, which take a
 * snapshot of it; it is safe to share between threads.
 */
public final class MechanismRegistry extends NativeHandle {
    public MechanismRegistry() {
        // Striped: every new exchange of every connection's thread calls the registry.
        super(create(), Native::registryFree, false, true);
    }

    private static long create() {
        Native.init();
        return Native.registryNew();
    }

    /** Adds PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 servers whose credentials come from {@code store}. */
    public MechanismRegistry addPasswordServers(CredentialStore store) {
        Objects.requireNonNull(store, "store");
        run(h -> store.run(s -> Native.registryAddPasswordServers(h, s, null, 0)));
        return this;
    }

    /** Adds PLAIN and SCRAM servers whose credentials come from {@code lookup}, called synchronously. */
    public MechanismRegistry addPasswordServers(CredentialLookup lookup) {
        Objects.requireNonNull(lookup, "lookup");
        run(h -> Native.registryAddPasswordServers(h, 0, lookup, 0));
        return this;
    }

    /**
     * Adds PLAIN and SCRAM servers without a credential source: each exchange asks the host
     * ({@code NEED_CREDENTIAL}) and the host answers with {@code provideCredential}.
     */
    public MechanismRegistry addPasswordServers() {
        run(h -> Native.registryAddPasswordServers(h, 0, null, 0));
        return this;
    }

    /**
     * Adds PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 servers: {@code tokenauth} logins (SCRAM with a
     * delegation token) are answered by {@code tokens}, every other login by {@code store}. The
     * session of a token login is capped by the token's expiry.
     */
    public MechanismRegistry addPasswordServers(CredentialStore store, TokenAuthority tokens) {
        Objects.requireNonNull(store, "store");
        Objects.requireNonNull(tokens, "tokens");
        run(h -> tokens.run(t -> store.run(s -> Native.registryAddPasswordServers(h, s, null, t))));
        return this;
    }

    /**
     * Adds PLAIN and SCRAM servers: {@code tokenauth} logins are answered by {@code tokens}, every
     * other login by {@code lookup}, called synchronously.
     */
    public MechanismRegistry addPasswordServers(CredentialLookup lookup, TokenAuthority tokens) {
        Objects.requireNonNull(lookup, "lookup");
        Objects.requireNonNull(tokens, "tokens");
        run(h -> tokens.run(t -> Native.registryAddPasswordServers(h, 0, lookup, t)));
        return this;
    }

    /**
     * Adds PLAIN and SCRAM servers: {@code tokenauth} logins are answered by {@code tokens}; for
     * every other login the exchange asks the host ({@code NEED_CREDENTIAL}, the pull form).
     */
    public MechanismRegistry addPasswordServers(TokenAuthority tokens) {
        Objects.requireNonNull(tokens, "tokens");
        run(h -> tokens.run(t -> Native.registryAddPasswordServers(h, 0, null, t)));
        return this;
    }

    /**
     * Adds PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 clients that log in with the refresher's
     * newest password credential at the start of every (re-)authentication: a delegation token
     * installed with {@link Refresher#setDelegationToken} (then with {@code tokenauth=true}),
     * renewed as the refresher asks.
     */
    public MechanismRegistry addRefreshingPasswordClients(Refresher refresher) {
        Objects.requireNonNull(refresher, "refresher");
        run(h -> refresher.run(r -> Native.registryAddRefreshingPasswordClients(h, r)));
        return this;
    }

    /** Adds PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 clients for a user name and password. */
    public MechanismRegistry addPasswordClients(String username, String password) throws KsaslException {
        Objects.requireNonNull(username, "username");
        Objects.requireNonNull(password, "password");
        run(h -> Native.registryAddPasswordClients(h, username, password, false));
        return this;
    }

    /** Adds SCRAM clients that log in with a delegation token ({@code tokenauth=true}). */
    public MechanismRegistry addTokenClients(String tokenId, String tokenHmac) throws KsaslException {
        Objects.requireNonNull(tokenId, "tokenId");
        Objects.requireNonNull(tokenHmac, "tokenHmac");
        run(h -> Native.registryAddPasswordClients(h, tokenId, tokenHmac, true));
        return this;
    }

    /**
     * Adds an OAUTHBEARER server with Kafka's unsecured validator and its defaults (no scope
     * required, no clock skew). Verdicts are cached (the core's cache).
     */
    public MechanismRegistry addOAuthBearerServer() throws KsaslException {
        run(h -> Native.registryAddOAuthUnsecured(h, null, 0, false));
        return this;
    }

    /** Adds an OAUTHBEARER server with Kafka's unsecured validator, a required scope and a clock skew. */
    public MechanismRegistry addOAuthBearerServer(List<String> requiredScope, long clockSkewMs) throws KsaslException {
        String[] scope = requiredScope.toArray(new String[0]);
        run(h -> Native.registryAddOAuthUnsecured(h, scope, clockSkewMs, true));
        return this;
    }

    /** Adds an OAUTHBEARER server validating signed JWTs with {@code validator}. */
    public MechanismRegistry addOAuthBearerServer(JwksValidator validator) {
        Objects.requireNonNull(validator, "validator");
        run(h -> validator.run(v -> Native.registryAddOAuthJwks(h, v)));
        return this;
    }

    /**
     * Adds an OAUTHBEARER server validating signed JWTs against the keys of {@code endpoint}; a
     * token signed by a key it does not know yet is held for one JWKS fetch instead of refused.
     */
    public MechanismRegistry addOAuthBearerServer(JwksEndpoint endpoint) {
        Objects.requireNonNull(endpoint, "endpoint");
        run(h -> endpoint.run(e -> Native.registryAddOAuthJwksEndpoint(h, e)));
        return this;
    }

    /** Adds an OAUTHBEARER server validating tokens in host code. */
    public MechanismRegistry addOAuthBearerServer(TokenValidator validator) {
        Objects.requireNonNull(validator, "validator");
        run(h -> Native.registryAddOAuthValidator(h, validator));
        return this;
    }

    /** Adds an OAUTHBEARER client presenting the refresher's current token. */
    public MechanismRegistry addOAuthBearerClient(Refresher refresher) {
        Objects.requireNonNull(refresher, "refresher");
        run(h -> refresher.run(r -> Native.registryAddOAuthClient(h, r)));
        return this;
    }

    /**
     * Adds an {@code AWS_MSK_IAM} client (Amazon MSK's IAM authentication) that signs, at every
     * (re-)authentication, a {@code kafka-cluster:Connect} request for the broker {@code host}
     * in {@code region} with {@code credentials}.
     *
     * @param host the broker's host name, as the client connects to it
     * @param region the cluster's region, such as {@code us-east-1}
     * @param credentials the credentials to sign with
     * @param userAgent the user agent the payload reports; {@code null}: ksasl's
     * @param keyOrder the order of the payload's JSON keys, {@code "java"} (aws-msk-iam-auth's)
     *     or {@code "kafka-python"}; {@code null}: {@code "java"}
     * @return this registry
     * @throws KsaslArgumentException ({@code INVALID_ARGUMENT}) for an unknown key order
     */
    public MechanismRegistry addAwsMskIamClient(String host, String region, AwsCredentials credentials,
            String userAgent, String keyOrder) {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(region, "region");
        Objects.requireNonNull(credentials, "credentials");
        run(h -> credentials.run(c -> Native.registryAddAwsMskIamClient(h, host, region, c, 0, userAgent, keyOrder)));
        return this;
    }

    /**
     * Adds an {@code AWS_MSK_IAM} client as {@link #addAwsMskIamClient(String, String,
     * AwsCredentials, String, String)}, signing with the AWS credentials {@code refresher} holds
     * at each (re-)authentication ({@link Refresher#setAwsCredentials}).
     *
     * @param host the broker's host name, as the client connects to it
     * @param region the cluster's region
     * @param refresher the refresher holding the current credentials
     * @param userAgent the user agent the payload reports; {@code null}: ksasl's
     * @param keyOrder {@code "java"} or {@code "kafka-python"}; {@code null}: {@code "java"}
     * @return this registry
     * @throws KsaslArgumentException ({@code INVALID_ARGUMENT}) for an unknown key order
     */
    public MechanismRegistry addAwsMskIamClient(String host, String region, Refresher refresher, String userAgent,
            String keyOrder) {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(region, "region");
        Objects.requireNonNull(refresher, "refresher");
        run(h -> refresher.run(r -> Native.registryAddAwsMskIamClient(h, host, region, 0, r, userAgent, keyOrder)));
        return this;
    }

    /**
     * Adds an {@code AWS_MSK_IAM} verifying server, for development and tests: a login is
     * accepted when it is signed for {@code region} and one of {@code hosts} with a key of
     * {@code keys}, within AWS's clock skew; it authenticates as the key's principal, and its
     * session ends no later than the key expires. A refused client is told only
     * {@code [<request id>]: Access denied}, as MSK does.
     *
     * @param keys the accepted keys (shared: later changes apply to later logins)
     * @param region the region logins must be signed for
     * @param hosts the host names logins may be signed for; empty: any
     * @return this registry
     */
    public MechanismRegistry addAwsMskIamServer(AwsKeyStore keys, String region, List<String> hosts) {
        Objects.requireNonNull(keys, "keys");
        Objects.requireNonNull(region, "region");
        String[] names = hosts.toArray(new String[0]);
        run(h -> keys.run(k -> Native.registryAddAwsMskIamServer(h, k, region, names)));
        return this;
    }

    /**
     * Adds an OAUTHBEARER client presenting MSK's presigned tokens (as
     * {@code aws-msk-iam-sasl-signer} makes them) for {@code region}, signed at each
     * (re-)authentication with {@code credentials}.
     *
     * @param region the cluster's region
     * @param credentials the credentials to sign with
     * @param userAgent the user agent the token reports; {@code null}: ksasl's
     * @return this registry
     */
    public MechanismRegistry addMskOAuthBearerClient(String region, AwsCredentials credentials, String userAgent) {
        Objects.requireNonNull(region, "region");
        Objects.requireNonNull(credentials, "credentials");
        run(h -> credentials.run(c -> Native.registryAddMskOAuthClient(h, region, c, 0, userAgent)));
        return this;
    }

    /**
     * Adds an OAUTHBEARER client presenting MSK's presigned tokens for {@code region}, signed
     * with the AWS credentials {@code refresher} holds at each (re-)authentication.
     *
     * @param region the cluster's region
     * @param refresher the refresher holding the current credentials
     * @param userAgent the user agent the token reports; {@code null}: ksasl's
     * @return this registry
     */
    public MechanismRegistry addMskOAuthBearerClient(String region, Refresher refresher, String userAgent) {
        Objects.requireNonNull(region, "region");
        Objects.requireNonNull(refresher, "refresher");
        run(h -> refresher.run(r -> Native.registryAddMskOAuthClient(h, region, 0, r, userAgent)));
        return this;
    }

    /**
     * Adds an OAUTHBEARER server accepting MSK's presigned tokens for {@code region} signed with
     * a key of {@code keys} (verdicts cached), for development and tests.
     *
     * @param keys the accepted keys
     * @param region the region tokens must be signed for
     * @return this registry
     */
    public MechanismRegistry addMskOAuthBearerServer(AwsKeyStore keys, String region) {
        Objects.requireNonNull(keys, "keys");
        Objects.requireNonNull(region, "region");
        run(h -> keys.run(k -> Native.registryAddMskOAuthServer(h, k, region)));
        return this;
    }

    /**
     * Adds a GSSAPI (Kerberos) client for the service {@code serviceName/host}
     * ({@code sasl.kerberos.service.name} and the broker's host name as its principal spells
     * it), on {@code login}'s current ticket at every (re-)authentication. {@code mutual} also
     * asks the broker to authenticate itself (an extra round trip Kafka's client does not make).
     */
    public MechanismRegistry addGssapiClient(KerberosLogin login, String serviceName, String host, boolean mutual)
            throws KsaslException {
        Objects.requireNonNull(login, "login");
        Objects.requireNonNull(serviceName, "serviceName");
        Objects.requireNonNull(host, "host");
        run(h -> login.run(l -> Native.registryAddGssapiClient(h, l, serviceName, host, mutual)));
        return this;
    }

    /**
     * Adds a GSSAPI (Kerberos) server with the broker's {@code keytab} (null: the default
     * keytab, {@code KRB5_KTNAME}) and {@code principal} ({@code kafka/broker1@REALM}; null: any
     * key of the keytab), {@code serviceName} ({@code sasl.kerberos.service.name}; null: the
     * principal's first part), {@code rules} ({@code sasl.kerberos.principal.to.local.rules} as
     * Kafka's list value, {@code RULE:...,DEFAULT}; null: {@code DEFAULT}), and
     * {@code capSessionAtTicket} (recommended) to end each session with the client's service
     * ticket. The keytab is read now, so a missing keytab or key fails here.
     */
    public MechanismRegistry addGssapiServer(String keytab, String principal, String serviceName, String rules,
            boolean capSessionAtTicket) throws KsaslException {
        run(h -> Native.registryAddGssapiServer(h, keytab, principal, serviceName, rules, capSessionAtTicket));
        return this;
    }

    /**
     * Adds (or replaces) a client mechanism written in Java (KIP-43): {@code factory} makes one
     * {@link HostClientMechanism} per exchange, when it begins (a {@link ClientExchange}
     * is created, or a {@link ClientConnection} reads the {@code SaslHandshake} response). An
     * exception thrown by the factory, or a {@code null} from it, fails that exchange
     * like an exception of the mechanism (see {@link HostClientMechanism}): a
     * {@link KsaslError} keeps its code, anything else is {@code HOST_MECHANISM_FAILED}; the
     * message is the core's ("the NAME mechanism's factory failed: ..."). The registry keeps a reference to the factory until it is closed and
     * every configuration made from it is closed.
     *
     * @throws KsaslArgumentException if {@code name} is not a valid SASL mechanism name
     */
    public MechanismRegistry addClientMechanism(String name, Supplier<? extends HostClientMechanism> factory) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(factory, "factory");
        run(h -> Native.registryAddHostClient(h, name, factory, false));
        return this;
    }

    /**
     * Adds (or replaces) a client mechanism written in Java whose answers come later: as
     * {@link #addClientMechanism}, with {@code factory} making one
     * {@link AsyncHostClientMechanism} per exchange. Each of its calls leaves the exchange
     * pending until the host resumes it with the stage's result (see
     * {@link ClientConnection#handleFrameAsync}, {@link ClientConnection#resume},
     * {@link ClientExchange#resume}). A factory that throws or returns {@code null} fails
     * the exchange as for {@link #addClientMechanism}.
     *
     * @param name the SASL mechanism name
     * @param factory makes the mechanism of each exchange
     * @return this registry
     * @throws KsaslArgumentException if {@code name} is not a valid SASL mechanism name
     */
    public MechanismRegistry addAsyncClientMechanism(String name,
            Supplier<? extends AsyncHostClientMechanism> factory) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(factory, "factory");
        run(h -> Native.registryAddHostClient(h, name, factory, true));
        return this;
    }

    /**
     * Adds (or replaces) a server mechanism written in Java (KIP-43): {@code factory} makes one
     * {@link HostServerMechanism} per exchange. Server configurations built from this registry
     * offer it in {@code SaslHandshake} next to the built-ins; a {@link ServerConnection} calls
     * the factory when it handles the handshake. An exception thrown by the factory, or a
     * {@code null} from it, fails the exchange (see {@link HostServerMechanism}): a connection
     * answers {@code FAIL_AT} without a response, as Kafka's broker closes a connection whose
     * {@code SaslServer} cannot be created. A step may answer later with
     * {@link HostServerStep#later}.
     *
     * @throws KsaslArgumentException if {@code name} is not a valid SASL mechanism name
     */
    public MechanismRegistry addServerMechanism(String name, Supplier<? extends HostServerMechanism> factory) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(factory, "factory");
        run(h -> Native.registryAddHostServer(h, name, factory));
        return this;
    }

    /** The client mechanism names. */
    public List<String> clientMechanisms() {
        return new Fields(with(Native::registryClientMechanisms)).strs();
    }

    /** The server mechanism names. */
    public List<String> serverMechanisms() {
        return new Fields(with(Native::registryServerMechanisms)).strs();
    }
}
