package dev.turnstile.chaos;

import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.bson.Document;
import io.netty.channel.Channel;
import java.nio.file.Path;
import org.h2.mvstore.MVStore;

/**
 * The chaos runs' MongoDB-wire server: mongo-java-server over an H2 (MVStore) file, in a JVM of its
 * own so the harness can SIGKILL, SIGSTOP and restart it. Every command's changes are committed to
 * the file before the answer goes out, so what a client was told survives a SIGKILL of this process,
 * as a journaled MongoDB's acknowledged writes do (MVStore's own background commit would lose the
 * last second).
 *
 * <p>Usage: {@code MongoServerMain PORT FILE}.
 */
public final class MongoServerMain {
    private MongoServerMain() {}

    /**
     * Serves until killed.
     *
     * @param args the loopback port and the data file
     * @throws InterruptedException never, in practice
     */
    public static void main(String[] args) throws InterruptedException {
        int port = Integer.parseInt(args[0]);
        MVStore store = new MVStore.Builder().fileName(Path.of(args[1]).toString()).autoCommitDisabled().open();
        MongoServer server = new MongoServer(new CommitEachCommand(store));
        server.bind("127.0.0.1", port);
        System.out.println("mongo-java-server listening on 127.0.0.1:" + port + ", data in " + args[1]);
        System.out.flush();
        Thread.currentThread().join();
    }

    /** The H2 backend, committing after every command. */
    private static final class CommitEachCommand extends H2Backend {
        CommitEachCommand(MVStore store) {
            super(store);
        }

        @Override
        public synchronized Document handleCommand(Channel channel, String database, String command, Document query) {
            try {
                return super.handleCommand(channel, database, command, query);
            } finally {
                commit();
            }
        }
    }
}
