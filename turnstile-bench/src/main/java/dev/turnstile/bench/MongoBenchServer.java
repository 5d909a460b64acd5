package dev.turnstile.bench;

import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;

/**
 * The Mongo benchmark's server: mongo-java-server (in-memory backend) in a JVM of its own, so the
 * contenders' JVM measures only the client side. Usage: {@code MongoBenchServer PORT}.
 */
public final class MongoBenchServer {
    private MongoBenchServer() {}

    /**
     * Serves on 127.0.0.1:PORT until killed.
     *
     * @param args the port
     * @throws InterruptedException never, in practice
     */
    public static void main(String[] args) throws InterruptedException {
        MongoServer server = new MongoServer(new MemoryBackend());
        server.bind("127.0.0.1", Integer.parseInt(args[0]));
        System.out.println("listening");
        System.out.flush();
        Thread.currentThread().join();
    }
}
