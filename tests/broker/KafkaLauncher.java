// Starts a JMX connector bound to 127.0.0.1 only, then runs kafka.Kafka.main(args).
//
// Why not the JDK's -Dcom.sun.management.jmxremote.port=... agent? Whenever that agent is
// enabled, the JDK also starts its "local" connector on a random port bound to the
// wildcard address (it refuses non-local peers, but it still listens on every interface).
// Doing it here keeps every listening socket of the broker on 127.0.0.1.
//
//   java -Dksasl.jmx.port=<port> -Djava.rmi.server.hostname=127.0.0.1 \
//        -cp 'target/broker-lib/*:target/launcher-classes' KafkaLauncher server.properties
// (or run the source directly: java -cp 'target/broker-lib/*' KafkaLauncher.java server.properties)
//
// The RMI registry and the connector share one port; connect with
// service:jmx:rmi:///jndi/rmi://127.0.0.1:<port>/jmxrmi (what JmxQuery.java does).
// No authentication or TLS: it is reachable from this host only.
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.reflect.InvocationTargetException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.rmi.registry.LocateRegistry;
import java.rmi.server.RMIServerSocketFactory;
import java.util.HashMap;
import java.util.Map;
import javax.management.remote.JMXConnectorServer;
import javax.management.remote.JMXConnectorServerFactory;
import javax.management.remote.JMXServiceURL;
import javax.management.remote.rmi.RMIConnectorServer;

public class KafkaLauncher {
    /** Binds every RMI server socket to 127.0.0.1; one shared instance so RMI can reuse the port. */
    static final class LoopbackSocketFactory implements RMIServerSocketFactory {
        @Override
        public ServerSocket createServerSocket(int port) throws IOException {
            return new ServerSocket(port, 50, InetAddress.getByName("127.0.0.1"));
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof LoopbackSocketFactory;
        }

        @Override
        public int hashCode() {
            return LoopbackSocketFactory.class.hashCode();
        }
    }

    public static void main(String[] args) throws Throwable {
        String portProp = System.getProperty("ksasl.jmx.port");
        if (portProp != null && !portProp.isEmpty()) {
            int port = Integer.parseInt(portProp);
            if (System.getProperty("java.rmi.server.hostname") == null) {
                System.setProperty("java.rmi.server.hostname", "127.0.0.1");
            }
            RMIServerSocketFactory ssf = new LoopbackSocketFactory();
            LocateRegistry.createRegistry(port, null, ssf);
            Map<String, Object> env = new HashMap<>();
            env.put(RMIConnectorServer.RMI_SERVER_SOCKET_FACTORY_ATTRIBUTE, ssf);
            JMXServiceURL url = new JMXServiceURL(
                "service:jmx:rmi://127.0.0.1:" + port + "/jndi/rmi://127.0.0.1:" + port + "/jmxrmi");
            JMXConnectorServer server =
                JMXConnectorServerFactory.newJMXConnectorServer(url, env, ManagementFactory.getPlatformMBeanServer());
            server.start();
        }
        try {
            Class.forName("kafka.Kafka").getMethod("main", String[].class).invoke(null, (Object) args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
        System.exit(0);
    }
}
