package org.ksasl;

/** Run in a child JVM by {@link JarLoadIT}: loads the library and authenticates once. */
public final class LoadCheck {
    private LoadCheck() {}

    public static void main(String[] args) throws Exception {
        try (CredentialStore store = new CredentialStore();
                MechanismRegistry servers = new MechanismRegistry();
                MechanismRegistry clients = new MechanismRegistry().addPasswordClients("alice", "pw")) {
            store.addUser("alice", "pw");
            servers.addPasswordServers(store);
            try (ClientExchange c = new ClientExchange(clients, "SCRAM-SHA-256");
                    ServerExchange s = new ServerExchange(servers, "SCRAM-SHA-256")) {
                String principal = Wire.run(c, s, System.currentTimeMillis()).principal();
                System.out.println("loaded-from=" + Ksasl.nativeSource() + " version=" + Ksasl.nativeVersion()
                        + " principal=" + principal);
            }
        }
    }
}
