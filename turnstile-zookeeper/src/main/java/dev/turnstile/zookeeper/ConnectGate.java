package dev.turnstile.zookeeper;

import dev.turnstile.StoreUnavailableException;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.jspecify.annotations.Nullable;

/**
 * Lets a store call through only with a connection: it waits for one at most the client's
 * connection timeout, once. Curator would otherwise spend that timeout on every step of a call (and
 * its retries), so an unreachable ensemble is reported after the connection timeout, not several;
 * and after a failed wait, calls fail at once for {@link #RETRY_PAUSE_NANOS} instead of each
 * waiting again.
 */
final class ConnectGate {
    /** After a failed wait for a connection, calls fail at once for this long. */
    private static final long RETRY_PAUSE_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final CuratorFramework client;
    private final SessionGuard session;
    private final String description;
    private volatile long failedAt;
    private volatile boolean failed;
    /** Why the last connect failed, in words (see {@link Unreachable}); null before one has. */
    private volatile @Nullable String failure;

    ConnectGate(CuratorFramework client, SessionGuard session, String description) {
        this.client = client;
        this.session = session;
        this.description = description;
    }

    /**
     * Returns once connected.
     *
     * @throws StoreUnavailableException if no connection came within the connection timeout (or
     *     one did not, less than a second ago), or the wait was interrupted (the flag is kept)
     */
    void awaitConnection() {
        if (client.getZookeeperClient().isConnected()) {
            session.connected();
            failed = false;
            return;
        }
        if (failed && System.nanoTime() - failedAt < RETRY_PAUSE_NANOS) {
            throw unreachable();
        }
        boolean connected;
        try {
            connected = client.blockUntilConnected(client.getZookeeperClient().getConnectionTimeoutMs(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StoreUnavailableException("interrupted while connecting to " + description, e);
        }
        if (!connected) {
            failedAt = System.nanoTime();
            failed = true;
            failure = Unreachable.diagnose(client.getZookeeperClient().getCurrentConnectionString());
            throw unreachable();
        }
        session.connected();
        failed = false;
    }

    private StoreUnavailableException unreachable() {
        String why = failure;
        return new StoreUnavailableException("cannot connect to " + description + " within "
                + client.getZookeeperClient().getConnectionTimeoutMs() + " ms (turnstile.connectTimeout)"
                + (why != null ? ": " + why : ""), null);
    }
}
