package dev.turnstile.zookeeper;

import dev.turnstile.spi.LeaseProof;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells a held lease at once when its node is deleted by someone else (a forced release, or a
 * client that found it expired), instead of at its next renewal: the holder can stop its work
 * within a round trip of the deletion. Stops when the lease's proof is no longer watched (the
 * lease ended), and a deletion seen after that is the holder's own release.
 */
final class LeaseNodeWatch implements Watcher {
    private static final Logger log = LoggerFactory.getLogger(LeaseNodeWatch.class);
    /** How long a lease lives before its node is watched (see {@link #armLater}). */
    static final long DELAY_MS = 200;
    private static final String DELETED = "its node was deleted (force-released, or expired and removed by another client)";

    private final CuratorFramework client;
    private final SessionGuard session;
    /** The store's sweep thread: never the heartbeat's. */
    private final ScheduledExecutorService thread;
    private final BooleanSupplier closed;
    private final String path;
    private final String token;
    private final LeaseProof proof;

    LeaseNodeWatch(CuratorFramework client, SessionGuard session, ScheduledExecutorService thread, BooleanSupplier closed,
            String path, String token, LeaseProof proof) {
        this.client = client;
        this.session = session;
        this.thread = thread;
        this.closed = closed;
        this.path = path;
        this.token = token;
        this.proof = proof;
    }

    private boolean watching() {
        return session.watching(token, proof) && !closed.getAsBoolean();
    }

    /**
     * Sets the watch once the lease has lived {@link #DELAY_MS}: most leases are released sooner,
     * and a watch each would add a request to every acquire. A forced release within that time is
     * found by the next renewal.
     */
    void armLater() {
        try {
            ScheduledFuture<?> unused = thread.schedule(this::arm, DELAY_MS, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException closing) {
            // the store is closing
        }
    }

    /**
     * Sets the watch, in the background (never holding up the session heartbeat); if the node is
     * already gone, the lease is lost now.
     */
    private void arm() {
        if (!watching()) {
            return;
        }
        try {
            client.checkExists().usingWatcher(this).inBackground((c, event) -> {
                int rc = event.getResultCode();
                if (rc == KeeperException.Code.NONODE.intValue() && watching()) {
                    proof.ended(DELETED);
                } else if (rc != KeeperException.Code.OK.intValue()) {
                    armLater(); // not set (the connection was lost): again, while the lease lives
                }
            }).forPath(path);
        } catch (Exception e) {
            // the session's own watch decides (a lost connection is judged there); the renewal
            // still checks the node
            log.debug("cannot watch the lease node {}: {}", path, e.toString());
        }
    }

    @Override
    public void process(WatchedEvent event) {
        if (event.getType() == Watcher.Event.EventType.None || !watching()) {
            return;
        }
        if (event.getType() == Watcher.Event.EventType.NodeDeleted) {
            proof.ended(DELETED);
        } else {
            arm(); // written (renewed): watch again
        }
    }
}
