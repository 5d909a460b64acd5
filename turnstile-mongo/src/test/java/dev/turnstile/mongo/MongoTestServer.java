package dev.turnstile.mongo;

import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import java.net.InetSocketAddress;

/**
 * The tests' MongoDB-wire server: mongo-java-server (Maven Central) in this JVM, on a free port of
 * 127.0.0.1, started once and shared by every test class (each test uses its own lock names). Child
 * JVMs of the contract suite reach it over TCP like any MongoDB server.
 */
final class MongoTestServer {
    /** The tests' database. */
    static final String DATABASE = "turnstile_test";
    private static MongoServer server;
    private static String url;

    private MongoTestServer() {}

    /** The URL of the shared server, database {@code turnstile_test}. */
    static synchronized String url() {
        if (server == null) {
            server = new MongoServer(new MemoryBackend());
            server.bind("127.0.0.1", 0);
            InetSocketAddress at = server.getLocalAddress();
            url = "mongodb://127.0.0.1:" + at.getPort() + "/" + DATABASE;
            Runtime.getRuntime().addShutdownHook(new Thread(server::shutdownNow));
        }
        return url;
    }
}
