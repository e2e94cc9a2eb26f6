import java.util.TreeSet;

import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.server.config.AbstractKafkaConfig;

/**
 * Prints every configuration name Kafka defines, one per line, sorted: the consumer's,
 * producer's and admin client's (kafka-clients), and the broker's (kafka-server), read from
 * their ConfigDefs. test_config_names.py compares ksasl's names with them.
 */
public class ConfigNames {
    public static void main(String[] args) {
        TreeSet<String> names = new TreeSet<>();
        for (ConfigDef d : new ConfigDef[] {ConsumerConfig.configDef(), ProducerConfig.configDef(),
                AdminClientConfig.configDef(), AbstractKafkaConfig.CONFIG_DEF}) {
            names.addAll(d.names());
        }
        names.forEach(System.out::println);
    }
}
