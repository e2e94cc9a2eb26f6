package org.ksasl.bench;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import javax.security.sasl.SaslException;
import org.apache.kafka.common.security.scram.internals.ScramFormatter;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;
import org.apache.kafka.common.security.scram.internals.ScramMessages.ClientFinalMessage;
import org.apache.kafka.common.security.scram.internals.ScramMessages.ClientFirstMessage;
import org.apache.kafka.common.security.scram.internals.ScramMessages.ServerFinalMessage;
import org.apache.kafka.common.security.scram.internals.ScramMessages.ServerFirstMessage;

/**
 * A SCRAM client as cheap as ksasl's with cached keys: Kafka's message classes and nonce,
 * but ClientKey, StoredKey and ServerKey derived once (Kafka's ScramSaslClient runs PBKDF2 on
 * every login). Per login: a nonce, one HMAC for the proof, one HMAC to check the server.
 * One exchange at a time (not thread-safe).
 */
final class JavaScramClient {
    private static final byte[] GS2_HEADER = "n,,".getBytes(StandardCharsets.UTF_8);

    private final String saslName;
    private final byte[] salt;
    private final int iterations;
    private final byte[] clientKey;
    private final Mac storedKeyMac;
    private final Mac serverKeyMac;
    private final SecureRandom random = new SecureRandom();

    private ClientFirstMessage first;
    private byte[] authMessage;

    JavaScramClient(ScramMechanism mechanism, String username, byte[] salt, int iterations, byte[] clientKey,
            byte[] storedKey, byte[] serverKey) throws GeneralSecurityException {
        this.saslName = ScramFormatter.saslName(username);
        this.salt = salt.clone();
        this.iterations = iterations;
        this.clientKey = clientKey.clone();
        this.storedKeyMac = Mac.getInstance(mechanism.macAlgorithm());
        this.storedKeyMac.init(new SecretKeySpec(storedKey, mechanism.macAlgorithm()));
        this.serverKeyMac = Mac.getInstance(mechanism.macAlgorithm());
        this.serverKeyMac.init(new SecretKeySpec(serverKey, mechanism.macAlgorithm()));
    }

    /** A fresh client nonce, as Kafka's ScramSaslClient makes it. */
    String nonce() {
        return ScramFormatter.secureRandomString(random);
    }

    /** The client-first message with a fresh nonce. */
    byte[] first() {
        return first(nonce());
    }

    /** The client-first message with {@code nonce}. */
    byte[] first(String nonce) {
        first = new ClientFirstMessage(saslName, nonce, Map.of());
        return first.toBytes();
    }

    /** The client-final message for a server-first message: checks it and computes the proof. */
    byte[] finalMessage(byte[] serverFirstBytes) throws SaslException {
        ServerFirstMessage serverFirst = new ServerFirstMessage(serverFirstBytes);
        if (!serverFirst.nonce().startsWith(first.nonce())) {
            throw new SaslException("invalid server nonce");
        }
        if (serverFirst.iterations() != iterations || !Arrays.equals(serverFirst.salt(), salt)) {
            // ksasl's client would derive (and cache) new keys here; this one only has one set.
            throw new SaslException("salt or iterations changed");
        }
        ClientFinalMessage fin = new ClientFinalMessage(GS2_HEADER, serverFirst.nonce());
        authMessage = ScramFormatter.toBytes(ScramFormatter.authMessage(first.clientFirstMessageBare(),
                new String(serverFirstBytes, StandardCharsets.UTF_8), fin.clientFinalMessageWithoutProof()));
        byte[] clientSignature = storedKeyMac.doFinal(authMessage);
        fin.proof(ScramFormatter.xor(clientKey, clientSignature));
        return fin.toBytes();
    }

    /** Checks the server-final message (the server's signature). */
    void verify(byte[] serverFinalBytes) throws SaslException {
        ServerFinalMessage fin = new ServerFinalMessage(serverFinalBytes);
        if (fin.error() != null) {
            throw new SaslException("server error: " + fin.error());
        }
        if (!MessageDigest.isEqual(serverKeyMac.doFinal(authMessage), fin.serverSignature())) {
            throw new SaslException("invalid server signature");
        }
    }
}
