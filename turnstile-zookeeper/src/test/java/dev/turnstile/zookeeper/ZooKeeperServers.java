package dev.turnstile.zookeeper;

import org.apache.curator.test.TestingServer;

/** One in-JVM ZooKeeper server (Curator's TestingServer) for the whole test run, on a free port. */
final class ZooKeeperServers {
    private static TestingServer server;

    private ZooKeeperServers() {}

    static synchronized TestingServer shared() {
        if (server == null) {
            try {
                server = new TestingServer(true);
            } catch (Exception e) {
                throw new IllegalStateException("cannot start the in-JVM ZooKeeper test server", e);
            }
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    server.close();
                } catch (Exception ignored) {
                    // the JVM is going
                }
            }));
        }
        return server;
    }

    static String url() {
        return "zookeeper://" + shared().getConnectString() + "/turnstile-test";
    }
}
