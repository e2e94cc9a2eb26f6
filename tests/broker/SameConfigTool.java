// Kafka's Java client (kafka-clients 4.4) configured by a client.properties file, for
// test_same_config.py: reads the file with java.util.Properties, adds bootstrap.servers, and
// prints one JSON object on stdout:
//   {"mechanism": <sasl.mechanism as Kafka's AdminClientConfig resolves it>,
//    "owner": <the principal the broker authenticated, as the owner of a delegation token the
//              broker created for this connection>}
// The OAUTHBEARER refresh schedule is in the log of
// org.apache.kafka.common.security.oauthbearer.internals.expiring (run with a log4j2
// configuration that writes it to a file).
//
//   java -cp 'tests/broker/target/broker-lib/*:<classes>' SameConfigTool BOOTSTRAP client.properties
// Errors: "ERROR <ExceptionClass>: <message>" on stderr, exit 1.
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.security.token.delegation.DelegationToken;

public class SameConfigTool {
    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: SameConfigTool BOOTSTRAP client.properties");
            System.exit(2);
        }
        Properties props = new Properties();
        try (Reader r = Files.newBufferedReader(Path.of(args[1]))) {
            props.load(r);
        }
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "20000");
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
        try {
            String mechanism = new AdminClientConfig(props).getString(SaslConfigs.SASL_MECHANISM);
            try (Admin admin = Admin.create(props)) {
                DelegationToken token = admin.createDelegationToken().delegationToken().get(60, TimeUnit.SECONDS);
                System.out.println("{\"mechanism\": \"" + mechanism + "\", \"owner\": \""
                        + token.tokenInfo().owner() + "\"}");
            }
        } catch (Exception e) {
            Throwable c = e.getCause() != null ? e.getCause() : e;
            System.err.println("ERROR " + c.getClass().getSimpleName() + ": " + c.getMessage());
            System.exit(1);
        }
    }
}
