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

    /**
     * The URL of the server under test: {@code -Dturnstile.test.zookeeper=host:port} points the
     * tests at an outside server (Debian's ZooKeeper 3.8, say), else the in-JVM one.
     */
    static String url() {
        String outside = System.getProperty("turnstile.test.zookeeper");
        return "zookeeper://" + (outside != null && !outside.isBlank() ? outside : shared().getConnectString()) + "/turnstile-test";
    }
}
