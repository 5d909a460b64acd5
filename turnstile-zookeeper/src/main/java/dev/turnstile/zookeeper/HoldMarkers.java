package dev.turnstile.zookeeper;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ends the hold markers ({@code locks/<name>/hold}) that keep a released lock taken for its
 * {@code lockAtLeastFor}.
 *
 * <p>Hold markers are persistent (they must outlive the process that made them), so nothing of the
 * server's removes them: the store that made one removes it when its hold ends, and every store
 * sweeps the base path now and then for markers whose hold has ended, so that one left by a process
 * that is gone goes too. Both judge on the server's clock and delete with the version they read (a
 * marker rewritten meanwhile is someone's new hold and stays), and then remove the lock's parent if
 * it is empty (again versioned: an acquire writes the parent, so a parent in use stays; an acquire
 * that finds its parent gone makes it again).
 */
final class HoldMarkers {
    private static final Logger log = LoggerFactory.getLogger(HoldMarkers.class);

    /** How many lock names one periodic sweep looks at, so that a sweep's cost stays bounded. */
    static final int SWEEP_BATCH = 100;

    private final LockNodes nodes;
    private final SessionGuard session;
    private final BooleanSupplier closed;
    private final CuratorFramework client;
    private final String base;
    /** Its own thread, so that this I/O never delays the session heartbeat. */
    private final ScheduledExecutorService thread;
    private final long sweepIntervalMs;
    /** Where the next periodic sweep starts among the lock names (guarded by the sweep thread). */
    private int sweepCursor;

    HoldMarkers(LockNodes nodes, SessionGuard session, BooleanSupplier closed, CuratorFramework client,
            ScheduledExecutorService thread, long sweepIntervalMs) {
        this.nodes = nodes;
        this.session = session;
        this.closed = closed;
        this.client = client;
        this.base = nodes.base();
        this.thread = thread;
        this.sweepIntervalMs = sweepIntervalMs;
        // runs until the store shuts its thread down
        ScheduledFuture<?> unused = thread.scheduleWithFixedDelay(this::sweep, sweepIntervalMs, sweepIntervalMs, TimeUnit.MILLISECONDS);
    }

    /** Removes the marker of the lease with fence {@code fence} under {@code parent} once its hold has ended, in about {@code inMs}. */
    void endWhenOver(String parent, long fence, long inMs) {
        schedule(parent, fence, inMs, 0);
    }

    private void schedule(String parent, long fence, long inMs, int attempt) {
        try {
            ScheduledFuture<?> unused = thread.schedule(() -> end(parent, fence, attempt), Math.max(0, inMs) + 20, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException closing) {
            // the store is closing: another store's sweep removes the marker
        }
    }

    private void end(String parent, long fence, int attempt) {
        if (closed.getAsBoolean()) {
            return;
        }
        String hold = parent + "/" + LockNodes.HOLD;
        try {
            Stat stat = new Stat();
            NodeData data = NodeData.parse(client.getData().storingStatIn(stat).forPath(hold));
            if (data.fence() == null || data.fence() != fence || data.untilMs() == null) {
                return; // another lease's hold now: its own store (or the sweep) ends it
            }
            long left = data.untilMs() - nodes.serverNow();
            if (left > 0) {
                if (attempt < LockNodes.MAX_RACES) {
                    schedule(parent, fence, left, attempt + 1); // the clocks' rates differ a little
                }
                return;
            }
            if (deleteExpired(hold, stat)) {
                deleteIfEmpty(parent);
            }
        } catch (KeeperException.NoNodeException gone) {
            // removed already (a later acquire of the lock, a force-release, a sweep)
        } catch (Exception e) {
            log.debug("could not remove the ended hold marker {} yet (the periodic sweep will): {}", hold, e.toString());
        }
    }

    /** Deletes an ended marker with the version read: false if it was rewritten or removed meanwhile. */
    private boolean deleteExpired(String path, Stat read) throws Exception {
        try {
            client.delete().withVersion(read.getVersion()).forPath(path);
            return true;
        } catch (KeeperException.NoNodeException | KeeperException.BadVersionException raced) {
            return false;
        }
    }

    /** Deletes a lock's parent if it has no children and nobody wrote it since it was read. */
    private void deleteIfEmpty(String parent) throws Exception {
        Stat stat = client.checkExists().forPath(parent);
        if (stat == null || stat.getNumChildren() > 0) {
            return;
        }
        try {
            client.delete().withVersion(stat.getVersion()).forPath(parent);
        } catch (KeeperException.NoNodeException | KeeperException.NotEmptyException | KeeperException.BadVersionException inUse) {
            // gone already, or an acquire got there first: the parent is in use again
        }
    }

    /**
     * The periodic sweep: looks at up to {@link #SWEEP_BATCH} lock names (the next ones after the
     * last sweep's, in name order, so that every name is looked at in turn), and removes the hold
     * markers among them whose hold has ended by the server's clock, with the then empty parents.
     */
    void sweep() {
        if (closed.getAsBoolean() || !session.isConnected()) {
            return;
        }
        try {
            List<String> names = new ArrayList<>(client.getChildren().forPath(base + "/locks"));
            if (names.isEmpty()) {
                return;
            }
            names.sort(null);
            int from = sweepCursor % names.size();
            int count = Math.min(SWEEP_BATCH, names.size());
            sweepCursor = from + count;
            long now = Long.MIN_VALUE;
            for (int i = 0; i < count && !closed.getAsBoolean(); i++) {
                String parent = base + "/locks/" + names.get((from + i) % names.size());
                String hold = parent + "/" + LockNodes.HOLD;
                Stat stat = new Stat();
                NodeData data;
                try {
                    data = NodeData.parse(client.getData().storingStatIn(stat).forPath(hold));
                } catch (KeeperException.NoNodeException none) {
                    continue;
                }
                if (data.untilMs() == null) {
                    continue; // not a marker Turnstile wrote: not ours to judge
                }
                if (now == Long.MIN_VALUE) {
                    now = nodes.serverNow();
                }
                if (data.untilMs() <= now && deleteExpired(hold, stat)) {
                    deleteIfEmpty(parent);
                }
            }
        } catch (KeeperException.NoNodeException none) {
            // no lock was ever taken under this base path
        } catch (Exception e) {
            log.debug("sweeping ended hold markers under {} failed (next sweep in {} ms): {}", base, sweepIntervalMs, e.toString());
        }
    }
}
