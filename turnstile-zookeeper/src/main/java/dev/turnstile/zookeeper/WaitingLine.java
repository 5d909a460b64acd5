package dev.turnstile.zookeeper;

import dev.turnstile.spi.AcquireRequest;
import dev.turnstile.spi.Grant;
import dev.turnstile.spi.ReleaseListener;
import dev.turnstile.spi.ReleaseWatch;
import dev.turnstile.zookeeper.LeaseNodes.Found;
import dev.turnstile.zookeeper.LockNodes.Created;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorWatcher;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The waiting line of a ZooKeeper store's waiting acquires: each keeps its node as its place in
 * line from try to try, watches only the node ahead of it (so a release wakes one waiter, by the
 * server: no herd), and becomes the holder by a versioned write of lease data when nothing
 * unexpired is ahead. Places are rewritten every third of the queue timeout, so a frozen waiter
 * holds the line up for no longer than that; see {@link ZooKeeperLockStore} for the whole design.
 */
final class WaitingLine {
    private static final Logger log = LoggerFactory.getLogger(WaitingLine.class);

    private final LockNodes nodes;
    private final LeaseNodes leases;
    private final CuratorFramework client;
    private final SessionGuard session;
    private final ScheduledExecutorService watchThread;
    /** How long a place in line lasts after its last write (see {@link ZooKeeperLockStore.Builder#queueTimeout}). */
    private final long queueTimeoutMs;
    /** The places in line of this store's waiting acquires, by token. */
    private final Map<String, Place> places = new ConcurrentHashMap<>();
    /** This store's release listeners by lock name (see {@link #watchReleases}). */
    private final Map<String, Set<ReleaseListener>> listeners = new ConcurrentHashMap<>();
    private final AtomicLong wakeUps = new AtomicLong();
    private final AtomicLong turns = new AtomicLong();
    /**
     * The longest line in front of a woken waiter that its one-transaction try still checks (two
     * operations per node); a longer one is looked at by a listing instead.
     */
    static final int TURN_FRONT_LIMIT = 16;

    WaitingLine(LockNodes nodes, LeaseNodes leases, CuratorFramework client, SessionGuard session,
            ScheduledExecutorService watchThread, long queueTimeoutMs) {
        this.nodes = nodes;
        this.leases = leases;
        this.client = client;
        this.session = session;
        this.watchThread = watchThread;
        this.queueTimeoutMs = queueTimeoutMs;
        long touch = Math.max(10, queueTimeoutMs / 3);
        // runs until the store shuts its thread down
        ScheduledFuture<?> unused = watchThread.scheduleWithFixedDelay(this::touchPlaces, touch, touch, TimeUnit.MILLISECONDS);
    }

    /**
     * A waiting acquire's place in line: its own sequential node (data {@code "queued":true}) kept
     * from try to try (all tries of one wait carry one token). It holds nothing; it keeps the nodes
     * behind it waiting, and the lock passes to it when nothing unexpired is ahead: a versioned write
     * of lease data makes it the holder (its czxid is the fence, the write's mtime the lease's start).
     * It watches only the nearest node ahead of it, and is woken when that node is deleted. The store
     * touches it every third of the queue timeout; a place not written for that long (its
     * process frozen) is expired, and whoever meets it at the front deletes it.
     */
    final class Place implements CuratorWatcher {
        final String name;
        final String parent;
        final String path;
        final long seq;
        final long czxid;
        final NodeData data;
        /** Guarded by this: the node's data version as this store last wrote it. */
        int version;
        /** The server time (epoch ms) of this place's last write, and when (nanoTime) it was learnt. */
        volatile long serverNow;
        volatile long serverNowAt;
        volatile long lastTry = System.nanoTime();
        volatile boolean open = true;
        volatile @Nullable String watched;
        /** Set when the watched node was seen deleted, cleared by the next try (see {@link #takeTurn}). */
        volatile boolean aheadGone;
        /** The nodes in front of it at its last listing, front first. */
        volatile List<String> front = List.of();

        Place(String name, String parent, Created c, NodeData data) {
            this.name = name;
            this.parent = parent;
            this.path = c.path();
            this.seq = LockNodes.sequence(c.path());
            this.czxid = c.czxid();
            this.data = data;
            this.serverNow = c.ctime();
            this.serverNowAt = System.nanoTime();
        }

        /**
         * Writes the place again, so it does not expire: the write's mtime is a fresh server time.
         * False if the place is lost (deleted as expired, or its session's nodes went); true if
         * written, or if it is no longer a place (promoted or dropped), which must not be touched.
         */
        synchronized boolean touch() throws Exception {
            if (!open) {
                return true;
            }
            long t0 = System.nanoTime();
            try {
                Stat s = client.setData().withVersion(version).forPath(path, data.bytes());
                version = s.getVersion();
                serverNow = s.getMtime();
                serverNowAt = t0;
                session.contact(t0);
                return true;
            } catch (KeeperException.NoNodeException | KeeperException.BadVersionException lost) {
                return false;
            }
        }

        @Override
        public void process(WatchedEvent event) {
            if (!open || event.getType() == Watcher.Event.EventType.None) {
                return;
            }
            if (event.getType() == Watcher.Event.EventType.NodeDeleted) {
                if (event.getPath() != null && event.getPath().equals(watched)) {
                    aheadGone = true;
                }
                wake(this);
                return;
            }
            // The front node right ahead, watched by the read that judged it, was written (promoted,
            // extended, touched): still ahead, so watch it again (for its deletion only) without
            // waking the waiter; if it went meanwhile, wake it.
            try {
                watchThread.execute(() -> {
                    String w = watched;
                    try {
                        if (open && w != null && !watchDeletion(this, w)) {
                            wake(this);
                        }
                    } catch (Exception e) {
                        wake(this); // the waiter looks for itself
                    }
                });
            } catch (RejectedExecutionException closing) {
                // the store is closing
            }
        }
    }

    /**
     * Watches {@code path} for its deletion, and for nothing else: a child watch, which the server
     * also fires when the node itself is deleted, on a node that never has children (lease nodes and
     * places are ephemeral; nothing is created under the hold marker). A data watch (or
     * {@code exists}) would also fire on every write to the node ahead (its promotion, extend or
     * touch), and each would cost a request to watch it again. False if the node is gone already.
     */
    private boolean watchDeletion(Place p, String path) throws Exception {
        try {
            client.getChildren().usingWatcher(p).forPath(path);
            return true;
        } catch (KeeperException.NoNodeException gone) {
            return false;
        }
    }

    /** Tells this store's waiters on the place's lock that the node ahead of it went. */
    private void wake(Place p) {
        wakeUps.incrementAndGet();
        for (ReleaseListener l : listeners.getOrDefault(p.name, Set.of())) {
            l.released(null);
        }
    }

    /** One try of a waiting acquire: takes or keeps its place in line, and promotes it if nothing unexpired is ahead. */
    Optional<Grant> waitInLine(AcquireRequest r) {
        String parent = nodes.lockPath(r.name());
        long ttlMs = Math.max(1, r.ttl().toMillis());
        try {
            for (int round = 0; round < 2; round++) {
                Place p = places.get(r.token());
                boolean queueing = false;
                if (p == null || !p.parent.equals(parent)) {
                    NodeData data = NodeData.place(r.owner(), r.token(), queueTimeoutMs);
                    long t0 = System.nanoTime();
                    Created c = nodes.create(parent, r.token(), data.bytes());
                    session.contacted(t0);
                    p = new Place(r.name(), parent, c, data);
                    places.put(r.token(), p);
                    if (c.alone()) {
                        return promote(p, r, ttlMs);
                    }
                    queueing = true;
                }
                p.lastTry = System.nanoTime();
                String mine = p.path.substring(parent.length() + 1);
                if (!queueing && p.aheadGone) {
                    p.aheadGone = false;
                    Grant turn = takeTurn(p, r, ttlMs, parent);
                    if (turn != null) {
                        return Optional.of(turn);
                    }
                    if (!p.open) {
                        return Optional.empty(); // the place was lost, as a promotion's can be
                    }
                }
                LockNodes.Look look = new LockNodes.Look(p, !queueing);
                String before = nodes.ahead(parent, p.seq, p.serverNow, r.token(), look, mine);
                if (before != null && !before.isEmpty() && look.frontExpiry <= p.serverNow + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - p.serverNowAt)) {
                    // The node in front may have expired since this place last heard the server's
                    // time: touch the place for a fresh one, and look again.
                    if (!p.touch()) {
                        drop(r.token(), p);
                        continue;
                    }
                    look = new LockNodes.Look(p, true);
                    before = nodes.ahead(parent, p.seq, p.serverNow, r.token(), look, mine);
                }
                if (before == null) {
                    return promote(p, r, ttlMs);
                }
                if (before.isEmpty()) {
                    drop(r.token(), p); // expired and deleted by another, or the session's nodes went
                    continue;
                }
                p.front = look.front;
                p.watched = parent + "/" + before;
                if (!look.watching && !watchDeletion(p, p.watched)) {
                    p.aheadGone = true;
                    wake(p); // gone already: the waiter tries again at once
                }
                return Optional.empty();
            }
            return Optional.empty();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw nodes.failure("waiting in line for lock '" + r.name() + "'", e);
        }
    }

    /**
     * The try of a waiter whose node ahead was just deleted, which most often makes it the holder:
     * one transaction that promotes the place only if nothing is left in front of it, instead of a
     * listing and then the promotion. The nodes that can be in front are those the place's last
     * listing showed in front (sequences only grow, so no node made later is ahead of it) and a hold
     * marker (made by a release with {@code lockAtLeastFor}); the transaction creates and deletes
     * each of those paths, which fails (and so applies nothing) if any of them exists, and then
     * writes the lease data with the place's version. So the place is never rewritten unless it is
     * the holder: a waiter paused at any point of this try still holds the line up for no longer
     * than the queue timeout. Null if something is still in front (the try then goes on the usual
     * way) or if the place was lost (expired and deleted by another, or gone with its session; then
     * it is closed). A line longer than {@link #TURN_FRONT_LIMIT} nodes takes the usual way.
     */
    private @Nullable Grant takeTurn(Place p, AcquireRequest r, long ttlMs, String parent) throws Exception {
        List<String> front = p.front;
        if (front.isEmpty() || front.size() > TURN_FRONT_LIMIT) {
            return null;
        }
        turns.incrementAndGet();
        NodeData lease = NodeData.lease(r.owner(), r.token(), ttlMs, "mtime", System.currentTimeMillis());
        List<CuratorOp> ops = new ArrayList<>();
        for (String node : front.contains(LockNodes.HOLD) ? front : concat(front, LockNodes.HOLD)) {
            ops.add(client.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(parent + "/" + node, LockNodes.EMPTY));
            ops.add(client.transactionOp().delete().forPath(parent + "/" + node));
        }
        Stat written;
        synchronized (p) {
            if (!p.open) {
                places.remove(r.token(), p);
                return null;
            }
            ops.add(client.transactionOp().setData().withVersion(p.version).forPath(p.path, lease.bytes()));
            long t0 = System.nanoTime();
            try {
                List<CuratorTransactionResult> results = client.transaction().forOperations(ops);
                written = results.get(results.size() - 1).getResultStat();
            } catch (KeeperException.NodeExistsException inFront) {
                return null;
            } catch (KeeperException.NoNodeException | KeeperException.BadVersionException lost) {
                drop(r.token(), p);
                return null;
            }
            session.contact(t0);
            p.open = false;
            places.remove(r.token(), p);
        }
        leases.granted(r.token(), new Found(p.path, written, lease, written.getMtime(), System.nanoTime()));
        return new Grant(p.czxid, Instant.ofEpochMilli(written.getMtime()), Instant.ofEpochMilli(written.getMtime() + ttlMs));
    }

    private static List<String> concat(List<String> nodes, String last) {
        List<String> all = new ArrayList<>(nodes);
        all.add(last);
        return all;
    }

    /** Makes the place the holder: a versioned write of lease data (its mtime starts the lease). */
    private Optional<Grant> promote(Place p, AcquireRequest r, long ttlMs) throws Exception {
        NodeData lease = NodeData.lease(r.owner(), r.token(), ttlMs, "mtime", System.currentTimeMillis());
        Stat written;
        synchronized (p) {
            if (!p.open) {
                places.remove(r.token(), p);
                return Optional.empty();
            }
            long t0 = System.nanoTime();
            try {
                written = client.setData().withVersion(p.version).forPath(p.path, lease.bytes());
            } catch (KeeperException.NoNodeException | KeeperException.BadVersionException lost) {
                drop(r.token(), p);
                return Optional.empty();
            }
            session.contact(t0);
            p.open = false;
            places.remove(r.token(), p);
        }
        leases.granted(r.token(), new Found(p.path, written, lease, written.getMtime(), System.nanoTime()));
        return Optional.of(new Grant(p.czxid, Instant.ofEpochMilli(written.getMtime()),
                Instant.ofEpochMilli(written.getMtime() + ttlMs)));
    }

    /**
     * Forgets a place and deletes its node if it is still there; nothing if it is no longer a place:
     * a promoted place is a lease now, and only its release may delete it.
     */
    private void drop(String token, Place p) {
        synchronized (p) {
            if (!p.open) {
                return;
            }
            p.open = false;
        }
        places.remove(token, p);
        nodes.deleteQuietly(p.path, p.name);
    }

    /** Leaves the line: the waiter with {@code token} stopped waiting. */
    void stopWaiting(String token) {
        Place p = places.get(token);
        if (p != null) {
            drop(token, p);
        }
    }

    /** Keeps the live places from expiring; drops those whose waiter stopped asking long ago. */
    private void touchPlaces() {
        long abandoned = TimeUnit.MILLISECONDS.toNanos(Math.max(30_000, 10 * queueTimeoutMs));
        for (Map.Entry<String, Place> e : places.entrySet()) {
            Place p = e.getValue();
            try {
                if (System.nanoTime() - p.lastTry > abandoned || !p.touch()) {
                    drop(e.getKey(), p);
                }
            } catch (Exception failed) {
                log.debug("could not touch the waiting place {}: {}", p.path, failed.toString());
            }
        }
    }

    /** How many times a watch on a node ahead woke this store's waiters (for tests). */
    long wakeUps() {
        return wakeUps.get();
    }

    /** How many woken tries took their turn by one transaction, granted or not (for tests). */
    long turns() {
        return turns.get();
    }

    /** How many places in line this store keeps now (for tests). */
    int places() {
        return places.size();
    }

    /**
     * The store is closing over a client that stays open (the application's): its places would hold
     * the line up for a queue timeout, so they are deleted, in the background (Curator retries a
     * guaranteed delete until it is done; a close never waits for the server).
     */
    @SuppressWarnings("ModifyCollectionInEnhancedForLoop") // a ConcurrentHashMap's iterator allows it
    void leaveAll() {
        for (Map.Entry<String, Place> e : places.entrySet()) {
            Place p = e.getValue();
            synchronized (p) {
                if (!p.open) {
                    continue;
                }
                p.open = false;
            }
            places.remove(e.getKey(), p);
            try {
                client.delete().guaranteed().inBackground().forPath(p.path);
            } catch (Exception failed) {
                log.debug("could not remove the waiting place {} on close: {}", p.path, failed.toString());
            }
        }
    }

    /** The session's nodes are gone: every place with them. */
    void forgetPlaces() {
        places.values().forEach(p -> p.open = false);
        places.clear();
    }

    /** Registers {@code listener} for wake-ups of this store's waiters on the lock {@code name}. */
    ReleaseWatch watchReleases(String name, ReleaseListener listener) {
        listeners.compute(name, (n, s) -> {
            Set<ReleaseListener> set = s != null ? s : ConcurrentHashMap.newKeySet();
            set.add(listener);
            return set;
        });
        return () -> listeners.computeIfPresent(name, (n, s) -> {
            s.remove(listener);
            return s.isEmpty() ? null : s;
        });
    }
}
