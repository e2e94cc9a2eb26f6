package org.ksasl.examples;

import java.util.Properties;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.serialization.StringSerializer;

/** Kafka Java client configurations for the example server. */
final class Clients {
    private Clients() {}

    /** The JAAS line of Kafka's login module for {@code mechanism}, logging in as {@code user}. */
    static String jaas(String mechanism, String user, String password) {
        switch (mechanism) {
            case "PLAIN":
                return "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"" + user
                        + "\" password=\"" + password + "\";";
            case "SCRAM-SHA-256":
            case "SCRAM-SHA-512":
                return "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"" + user
                        + "\" password=\"" + password + "\";";
            case "OAUTHBEARER":
                // Kafka's unsecured tokens (alg "none"), valid for an hour: the session
                // lifetime is then connections.max.reauth.ms.
                return "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required"
                        + " unsecuredLoginStringClaim_sub=\"" + user + "\";";
            default:
                throw new IllegalArgumentException(mechanism);
        }
    }

    /**
     * The JAAS line of Kafka's SCRAM login module for a delegation token: the token id as the
     * user name, the base64 of its HMAC as the password, and {@code tokenauth="true"}.
     */
    static String tokenJaas(String tokenId, String hmacBase64) {
        return "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"" + tokenId
                + "\" password=\"" + hmacBase64 + "\" tokenauth=\"true\";";
    }

    /** An Admin configuration over SASL_PLAINTEXT. */
    static Properties admin(KsaslKafkaServer server, String clientId, String mechanism, String jaas) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, server.bootstrapServers());
        p.put(AdminClientConfig.CLIENT_ID_CONFIG, clientId);
        p.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_PLAINTEXT");
        p.put(SaslConfigs.SASL_MECHANISM, mechanism);
        p.put(SaslConfigs.SASL_JAAS_CONFIG, jaas);
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5000);
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 10_000);
        return p;
    }

    /** A producer configuration (idempotent, the default) over SASL_PLAINTEXT. */
    static Properties producer(KsaslKafkaServer server, String clientId, String mechanism, String jaas) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, server.bootstrapServers());
        p.put(ProducerConfig.CLIENT_ID_CONFIG, clientId);
        p.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_PLAINTEXT");
        p.put(SaslConfigs.SASL_MECHANISM, mechanism);
        p.put(SaslConfigs.SASL_JAAS_CONFIG, jaas);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, 0);
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 5000);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 10_000);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 10_000);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        return p;
    }
}
