package org.ksasl;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Configuration text as ksasl reads it: Java {@code .properties} with Kafka's client and broker
 * property names or librdkafka's, {@code sasl.jaas.config} by Kafka's JAAS grammar, and a
 * broker listener's settings with Kafka's {@code listener.name.<listener>.} and mechanism
 * prefixes.
 */
public final class Config {
    private Config() {}

    /**
     * Checks a configuration: its effective settings, the names the library does not know and
     * the settings without effect. No file is read.
     *
     * @param text the {@code .properties} text
     * @param listener a listener of a broker configuration, or {@code null}: a client
     *     configuration, or every SASL listener of {@code listeners} when the text looks like a
     *     broker's {@code server.properties}
     * @return one report per scope: the client's, the listener's, or each SASL listener's
     * @throws KsaslArgumentException ({@code INVALID_CONFIG}) naming the setting to fix; no
     *     password appears in its message
     */
    public static List<ConfigReport> check(String text, String listener) throws KsaslException {
        Objects.requireNonNull(text, "text");
        Native.init();
        return ConfigReport.all(Native.configCheck(text, listener));
    }

    /**
     * The SASL listeners of a broker's {@code server.properties}: the names of
     * {@code listeners} whose security protocol ({@code listener.security.protocol.map}, or the
     * name itself without a map) is {@code SASL_PLAINTEXT} or {@code SASL_SSL}, in order, as
     * given. Empty without {@code listeners}.
     *
     * @throws KsaslArgumentException ({@code INVALID_CONFIG}) for a malformed list or a listener
     *     without a security protocol
     */
    public static List<String> saslListeners(String text) throws KsaslException {
        Objects.requireNonNull(text, "text");
        Native.init();
        return new Fields(Native.configSaslListeners(text)).strs();
    }

    /**
     * The listener a host serves from a broker's {@code server.properties}: {@code listener} when
     * given (names ignore case) and it is one of the file's SASL listeners, or any name when the
     * file lists none; without it (null), the file's only SASL listener.
     *
     * @throws KsaslArgumentException ({@code INVALID_CONFIG}) for an unknown name, or for none
     *     or several SASL listeners without a name, naming the listeners to choose from
     */
    public static String chooseListener(String text, String listener) throws KsaslException {
        Objects.requireNonNull(text, "text");
        Native.init();
        return new Fields(Native.configChooseListener(text, listener)).str();
    }

    /**
     * Where a listener of a broker configuration listens, from its entry in {@code listeners}
     * ({@code NAME://host:port}; names ignore case).
     *
     * @param host the host as written: empty for every interface, an IPv6 address without its
     *     brackets
     * @param port the port (0: any free port)
     */
    public record ListenerAddress(String host, int port) {
        public ListenerAddress {
            Objects.requireNonNull(host, "host");
        }
    }

    /**
     * The core's {@code listener_address}: where {@code listener} of {@code text} listens.
     *
     * @param text the content of a {@code server.properties} file
     * @param listener the listener's name
     * @return the address, or empty when the file has no {@code listeners} or no entry for it
     * @throws KsaslException INVALID_CONFIG for a malformed entry or port
     */
    public static Optional<ListenerAddress> listenerAddress(String text, String listener) throws KsaslException {
        Objects.requireNonNull(text, "text");
        Objects.requireNonNull(listener, "listener");
        Native.init();
        Fields f = new Fields(Native.configListenerAddress(text, listener));
        if (f.i32() == 0) {
            return Optional.empty();
        }
        return Optional.of(new ListenerAddress(f.str(), f.i32()));
    }
}
