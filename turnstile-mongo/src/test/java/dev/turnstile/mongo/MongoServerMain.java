package dev.turnstile.mongo;

import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;

/**
 * mongo-java-server in a JVM of its own, for tests that need the server's clock to differ from the
 * client's (libfaketime preloaded into this JVM only). Prints {@code port N} once listening.
 */
public final class MongoServerMain {
    private MongoServerMain() {}

    /**
     * Runs until killed.
     *
     * @param args none
     * @throws InterruptedException never, in practice
     */
    public static void main(String[] args) throws InterruptedException {
        MongoServer server = new MongoServer(new MemoryBackend());
        server.bind("127.0.0.1", 0);
        System.out.println("port " + server.getLocalAddress().getPort());
        System.out.flush();
        Thread.currentThread().join();
    }
}
