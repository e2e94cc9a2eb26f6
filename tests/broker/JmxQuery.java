// Dependency-free JMX reader for the test broker.
//
// Usage (Java 11+ runs single-file sources directly):
//   java tests/broker/JmxQuery.java 127.0.0.1:<jmx-port> '<objectname-pattern>' [more patterns...] [--attrs a,b,c]
//
// Prints one JSON array on stdout:
//   [{"name": "<canonical object name>", "domain": "...", "properties": {"k": "v", ...},
//     "attributes": {"attr": value, ...}}, ...]
// Numbers are printed as JSON numbers; NaN and infinities become null. Values that are
// neither numbers, booleans nor strings are printed with toString(). Attributes that fail
// to read are skipped. Exit status: 0 on success, 2 on usage error, 1 on connection error
// (message on stderr).
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import javax.management.Attribute;
import javax.management.AttributeList;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

public class JmxQuery {
    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: java JmxQuery.java HOST:PORT PATTERN [PATTERN...] [--attrs a,b,c]");
            System.exit(2);
        }
        String hostPort = args[0];
        List<String> patterns = new ArrayList<>();
        Set<String> wanted = null;
        for (int i = 1; i < args.length; i++) {
            if (args[i].equals("--attrs") && i + 1 < args.length) {
                wanted = new HashSet<>(Arrays.asList(args[++i].split(",")));
            } else {
                patterns.add(args[i]);
            }
        }
        JMXServiceURL url = new JMXServiceURL("service:jmx:rmi:///jndi/rmi://" + hostPort + "/jmxrmi");
        JMXConnector connector;
        try {
            connector = JMXConnectorFactory.connect(url);
        } catch (Exception e) {
            System.err.println("cannot connect to " + url + ": " + e);
            System.exit(1);
            return;
        }
        StringBuilder out = new StringBuilder("[");
        try {
            MBeanServerConnection mbs = connector.getMBeanServerConnection();
            Set<ObjectName> names = new TreeSet<>();
            for (String p : patterns) {
                names.addAll(mbs.queryNames(new ObjectName(p), null));
            }
            boolean first = true;
            for (ObjectName name : names) {
                List<String> attrNames = new ArrayList<>();
                for (MBeanAttributeInfo info : mbs.getMBeanInfo(name).getAttributes()) {
                    if (info.isReadable() && (wanted == null || wanted.contains(info.getName()))) {
                        attrNames.add(info.getName());
                    }
                }
                Map<String, Object> values = new TreeMap<>();
                if (!attrNames.isEmpty()) {
                    AttributeList list = mbs.getAttributes(name, attrNames.toArray(new String[0]));
                    for (Attribute a : list.asList()) {
                        values.put(a.getName(), a.getValue());
                    }
                }
                if (!first) out.append(',');
                first = false;
                out.append("\n{\"name\":").append(str(name.getCanonicalName()));
                out.append(",\"domain\":").append(str(name.getDomain()));
                out.append(",\"properties\":{");
                boolean firstProp = true;
                for (Map.Entry<String, String> e : new TreeMap<>(name.getKeyPropertyList()).entrySet()) {
                    if (!firstProp) out.append(',');
                    firstProp = false;
                    out.append(str(e.getKey())).append(':').append(str(ObjectName.unquote(maybeQuoted(e.getValue()))));
                }
                out.append("},\"attributes\":{");
                boolean firstAttr = true;
                for (Map.Entry<String, Object> e : values.entrySet()) {
                    if (!firstAttr) out.append(',');
                    firstAttr = false;
                    out.append(str(e.getKey())).append(':').append(value(e.getValue()));
                }
                out.append("}}");
            }
        } finally {
            connector.close();
        }
        out.append("\n]");
        System.out.println(out);
    }

    // ObjectName.unquote only accepts quoted strings; leave plain values alone.
    private static String maybeQuoted(String v) {
        return v.length() >= 2 && v.startsWith("\"") && v.endsWith("\"") ? v : ObjectName.quote(v);
    }

    private static String value(Object v) {
        if (v == null) return "null";
        if (v instanceof Double || v instanceof Float) {
            double d = ((Number) v).doubleValue();
            return Double.isNaN(d) || Double.isInfinite(d) ? "null" : Double.toString(d);
        }
        if (v instanceof Number || v instanceof Boolean) return v.toString();
        return str(v.toString());
    }

    private static String str(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': b.append("\\\""); break;
                case '\\': b.append("\\\\"); break;
                case '\n': b.append("\\n"); break;
                case '\r': b.append("\\r"); break;
                case '\t': b.append("\\t"); break;
                default:
                    if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                    else b.append(c);
            }
        }
        return b.append('"').toString();
    }
}
