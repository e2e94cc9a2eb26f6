// Delegation-token helper for the test broker, built on kafka-clients' Admin API.
//
// Needs the broker classpath (kafka-clients and its dependencies), e.g.:
//   java -cp 'tests/broker/target/broker-lib/*' tests/broker/TokenTool.java \
//        127.0.0.1:<port> SCRAM-SHA-512 alice alice-secret create [max-lifetime-ms]
//
// Sub-commands (after BOOTSTRAP MECHANISM USER PASSWORD):
//   create [maxLifetimeMs [renewer,renewer...]]   (waits until the broker lists the token) -> {"tokenId":..,"hmac":..,"owner":..,"issueTimestamp":..,"expiryTimestamp":..,"maxTimestamp":..,"renewers":[..]}
//   renew  <hmac-base64> <periodMs>               -> {"expiryTimestamp": ..}
//   expire <hmac-base64> <periodMs>               -> {"expiryTimestamp": ..}   (negative period = expire now)
//   describe                                      -> [{token}, ...]
// MECHANISM is PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512; add "tokenauth" as the
// mechanism suffix (e.g. SCRAM-SHA-256:tokenauth) to authenticate with a delegation token
// (USER = token id, PASSWORD = hmac), which the broker must refuse for token requests.
// Output: one JSON value on stdout. Errors: "ERROR <ExceptionClass>: <message>" on stderr, exit 1.
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.CreateDelegationTokenOptions;
import org.apache.kafka.clients.admin.ExpireDelegationTokenOptions;
import org.apache.kafka.clients.admin.RenewDelegationTokenOptions;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.token.delegation.DelegationToken;
import org.apache.kafka.common.security.token.delegation.TokenInformation;

public class TokenTool {
    public static void main(String[] args) throws Exception {
        if (args.length < 5) {
            System.err.println("usage: TokenTool BOOTSTRAP MECHANISM USER PASSWORD create|renew|expire|describe [...]");
            System.exit(2);
        }
        String bootstrap = args[0];
        String mechanism = args[1];
        boolean tokenAuthenticated = false;
        if (mechanism.endsWith(":tokenauth")) {
            tokenAuthenticated = true;
            mechanism = mechanism.substring(0, mechanism.length() - ":tokenauth".length());
        }
        String user = args[2];
        String password = args[3];
        String cmd = args[4];

        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("security.protocol", "SASL_PLAINTEXT");
        p.put("sasl.mechanism", mechanism);
        String module = mechanism.equals("PLAIN")
            ? "org.apache.kafka.common.security.plain.PlainLoginModule"
            : "org.apache.kafka.common.security.scram.ScramLoginModule";
        p.put("sasl.jaas.config", module + " required username=\"" + esc(user) + "\" password=\"" + esc(password) + "\""
            + (tokenAuthenticated ? " tokenauth=\"true\"" : "") + ";");
        p.put("client.id", "ksasl-token-tool");
        p.put("request.timeout.ms", "10000");
        p.put("default.api.timeout.ms", "20000");

        try (Admin admin = Admin.create(p)) {
            switch (cmd) {
                case "create": {
                    CreateDelegationTokenOptions o = new CreateDelegationTokenOptions();
                    if (args.length > 5) o.maxLifetimeMs(Long.parseLong(args[5]));
                    if (args.length > 6 && !args[6].isEmpty()) {
                        List<KafkaPrincipal> renewers = new ArrayList<>();
                        for (String r : args[6].split(",")) renewers.add(new KafkaPrincipal(KafkaPrincipal.USER_TYPE, r));
                        o.renewers(renewers);
                    }
                    DelegationToken t = admin.createDelegationToken(o).delegationToken().get();
                    // The reply comes from the controller; the broker learns about the token
                    // (and derives its SCRAM credentials) when it applies the metadata record.
                    // Wait until the broker lists it, so the token is usable on return.
                    long deadline = System.currentTimeMillis() + 15000;
                    while (System.currentTimeMillis() < deadline) {
                        boolean seen = false;
                        for (DelegationToken d : admin.describeDelegationToken().delegationTokens().get()) {
                            seen |= d.tokenInfo().tokenId().equals(t.tokenInfo().tokenId());
                        }
                        if (seen) break;
                        Thread.sleep(50);
                    }
                    System.out.println(json(t));
                    break;
                }
                case "renew": {
                    byte[] hmac = Base64.getDecoder().decode(args[5]);
                    long ts = admin.renewDelegationToken(hmac,
                        new RenewDelegationTokenOptions().renewTimePeriodMs(Long.parseLong(args[6]))).expiryTimestamp().get();
                    System.out.println("{\"expiryTimestamp\":" + ts + "}");
                    break;
                }
                case "expire": {
                    byte[] hmac = Base64.getDecoder().decode(args[5]);
                    long ts = admin.expireDelegationToken(hmac,
                        new ExpireDelegationTokenOptions().expiryTimePeriodMs(Long.parseLong(args[6]))).expiryTimestamp().get();
                    System.out.println("{\"expiryTimestamp\":" + ts + "}");
                    break;
                }
                case "describe": {
                    List<DelegationToken> tokens = admin.describeDelegationToken().delegationTokens().get();
                    StringBuilder b = new StringBuilder("[");
                    for (int i = 0; i < tokens.size(); i++) {
                        if (i > 0) b.append(',');
                        b.append(json(tokens.get(i)));
                    }
                    System.out.println(b.append(']'));
                    break;
                }
                default:
                    System.err.println("unknown command " + cmd);
                    System.exit(2);
            }
        } catch (ExecutionException e) {
            Throwable c = e.getCause() != null ? e.getCause() : e;
            System.err.println("ERROR " + c.getClass().getSimpleName() + ": " + c.getMessage());
            System.exit(1);
        }
    }

    private static String json(DelegationToken t) {
        TokenInformation i = t.tokenInfo();
        StringBuilder renewers = new StringBuilder("[");
        boolean first = true;
        for (KafkaPrincipal r : i.renewers()) {
            if (!first) renewers.append(',');
            first = false;
            renewers.append(str(r.toString()));
        }
        renewers.append(']');
        return "{\"tokenId\":" + str(i.tokenId())
            + ",\"hmac\":" + str(t.hmacAsBase64String())
            + ",\"owner\":" + str(i.owner().toString())
            + ",\"issueTimestamp\":" + i.issueTimestamp()
            + ",\"expiryTimestamp\":" + i.expiryTimestamp()
            + ",\"maxTimestamp\":" + i.maxTimestamp()
            + ",\"renewers\":" + renewers + "}";
    }

    private static String esc(String s) {
        return s.replace("\\", "\\\\").replace("\"", "\\\"");
    }

    private static String str(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }
}
