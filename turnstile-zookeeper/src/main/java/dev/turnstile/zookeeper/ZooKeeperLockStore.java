package dev.turnstile.zookeeper;

import dev.turnstile.LockInfo;
import dev.turnstile.StoreSchemaException;
import dev.turnstile.StoreUnavailableException;
import dev.turnstile.spi.AcquireRequest;
import dev.turnstile.spi.Grant;
import dev.turnstile.spi.LeaseProof;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.ReleaseListener;
import dev.turnstile.spi.ReleaseWatch;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorWatcher;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A lock store on ZooKeeper over Apache Curator.
 *
 * <p><b>Layout.</b> Under the base path (default {@code /turnstile}, inside the client's namespace or
 * chroot), each lock is a container node {@code locks/<name>} ({@code <name>} percent-encoded in
 * UTF-8, so any lock name is a valid node name and distinct names stay distinct). An acquire creates
 * an ephemeral sequential child {@code _c_<uuid>-lock-<sequence>} (Curator's protected mode, so a
 * create whose reply was lost is found again rather than duplicated) whose data is JSON:
 * {@code {"owner":…,"token":…,"ttl_ms":…,"from":"mtime","acquired_at":…,"expires_at":…}} — so
 * {@code zkCli.sh get /turnstile/locks/nightly/_c_…-lock-0000000003} shows who holds the lock, since
 * when and until when.
 *
 * <p><b>Who holds it.</b> The lowest sequence whose lease has not expired. An acquire that finds an
 * unexpired node below its own is busy and deletes its node; an expired one below it is deleted
 * (with its version, so a concurrent extend wins) and skipped.
 *
 * <p><b>Expiry on the server's clock.</b> A lease expires at its node's {@code mtime} (the last
 * acquire or extend) plus its TTL; both times are the ensemble's (ZooKeeper stamps every write with
 * the leader's clock). A contender compares that with a fresh server time it gets for free: the
 * {@code ctime} of the node it has just created. No client clock is ever compared with another
 * machine's. So {@code lockAtMostFor} holds even when the holder's process is alive but stuck and
 * its session stays up. A dead holder frees the lock sooner, when its session expires and its
 * ephemeral node goes.
 *
 * <p><b>Fence.</b> The lease node's creation zxid ({@code czxid}). Zxids order every write of the
 * ensemble and never repeat for its life, so fences rise strictly per lock name in the order the
 * lock is held (the holder is always the lowest sequence, and a later holder's node was created
 * later), even when the lock's parent node is deleted (it is a container node, removed by the
 * server once empty) and re-created, which restarts the sequence numbers.
 *
 * <p><b>lockAtLeastFor.</b> An early release replaces the ephemeral node, in one transaction, by a
 * persistent marker {@code locks/<name>/hold} that keeps the lock taken until the lease node's
 * {@code ctime} plus the minimum hold (a server time), so it holds even when the process exits
 * right after the release.
 *
 * <p><b>Sessions.</b> The session is the lease's heartbeat: see {@link ZooKeeperLockStoreFactory}
 * for the session timeout. While the connection is suspended the lease cannot be proven held;
 * {@link #extend} fails with {@link StoreUnavailableException} (the lease keeper retries until the
 * local deadline), and once the session is lost every extend is refused.
 *
 * <p>Waiters are woken by a watch on the node that holds the lock (one watch per store and name,
 * shared by the threads of the client), so a release or a session expiry wakes them at once; an
 * expiry by TTL is found by the waiters' fallback poll.
 */
public final class ZooKeeperLockStore implements LockStore {
    private static final Logger log = LoggerFactory.getLogger(ZooKeeperLockStore.class);
    static final String LOCK_PREFIX = "lock-";
    static final String HOLD = "hold";
    private static final String DEFAULT_BASE = "/turnstile";

    private final CuratorFramework client;
    private final boolean ownsClient;
    private final String base;
    private final String description;
    /**
     * This store's granted leases by token: the node, its stat and data as this store last wrote
     * them, so that release and extend go straight to a versioned write (a version that moved means
     * a read first; a release by a foreign token scans the lock's nodes).
     */
    private final Map<String, Found> ownNodes = new ConcurrentHashMap<>();
    /** Re-arms release watches and proves the session alive while leases are held. */
    private final ScheduledExecutorService watchThread;
    private final ConnectionStateListener stateListener = this::stateChanged;
    private volatile ConnectionState state = ConnectionState.CONNECTED;
    /** The held leases' proofs (see {@link #watchLease}), by token. */
    private final Map<String, LeaseProof> proofs = new ConcurrentHashMap<>();
    /**
     * When (nanoTime) the latest request that got an answer was sent: the server heard from this
     * session then, so it cannot expire it before that plus the session timeout.
     */
    private final java.util.concurrent.atomic.AtomicLong lastContact = new java.util.concurrent.atomic.AtomicLong(System.nanoTime());
    /** The session the held leases' nodes belong to (0 before the first connection). */
    private volatile long sessionId;
    private final long configuredSessionTimeoutMs;
    private volatile boolean closed;

    private ZooKeeperLockStore(Builder b) {
        this.client = b.client;
        this.ownsClient = b.ownsClient;
        this.base = b.basePath;
        this.description = b.description != null ? b.description : "zookeeper (" + b.client.getZookeeperClient().getCurrentConnectionString()
                + ", " + base + ")";
        this.configuredSessionTimeoutMs = b.sessionTimeoutMs;
        this.watchThread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "turnstile-zookeeper-watch");
            t.setDaemon(true);
            return t;
        });
        client.getConnectionStateListenable().addListener(stateListener);
        long beat = Math.max(50, sessionTimeoutMs() / 4);
        watchThread.scheduleWithFixedDelay(this::proveSession, beat, beat, TimeUnit.MILLISECONDS);
    }

    /**
     * Starts a builder over the application's Curator client, which must be started (or be started
     * before the first lock call) and which the store leaves open on {@link #close()}.
     *
     * @param client a Curator client
     * @return a builder
     * @throws IllegalArgumentException if {@code client} is null
     */
    public static Builder builder(CuratorFramework client) {
        if (client == null) {
            throw new IllegalArgumentException("client is null: give a CuratorFramework built with CuratorFrameworkFactory");
        }
        return new Builder(client);
    }

    /**
     * Sessions and leases (DESIGN principle 8, with the session timeout in the TTL's role). While
     * connected, the server keeps the session, and so the lease nodes, alive. Once the connection is
     * SUSPENDED, the server may expire the session as soon as the session timeout has passed since it
     * last heard from this client, and then let another client in: so every held lease is proven
     * only until the send time of the last answered request plus the session timeout, less a margin
     * for the two clocks' rates. The store keeps that send time recent while it holds leases (a
     * cheap request every quarter of the session timeout). RECONNECTED in the same session lifts the
     * limit; LOST, or a reconnection in a new session, ends every lease at once.
     */
    private void stateChanged(CuratorFramework c, ConnectionState newState) {
        state = newState;
        switch (newState) {
            case SUSPENDED -> {
                long limit = proofLimit();
                proofs.values().forEach(p -> p.provenUntil(limit));
            }
            case LOST -> sessionEnded("the ZooKeeper session was lost (expired, or the connection stayed down past its timeout)");
            case CONNECTED, RECONNECTED -> {
                long id = currentSessionId();
                if (sessionId != 0 && id != sessionId) {
                    sessionEnded("the ZooKeeper session expired: the client reconnected in a new session");
                } else {
                    proofs.values().forEach(p -> p.provenUntil(LeaseProof.NO_LIMIT));
                }
                sessionId = id;
            }
            default -> { }
        }
    }

    private void sessionEnded(String reason) {
        // The server has dropped (or will drop) every ephemeral node of the session.
        ownNodes.clear();
        List<LeaseProof> all = new ArrayList<>(proofs.values());
        proofs.clear();
        all.forEach(p -> p.lost(reason));
    }

    private long proofLimit() {
        long timeout = TimeUnit.MILLISECONDS.toNanos(sessionTimeoutMs());
        return lastContact.get() + timeout - Math.max(timeout / 10, TimeUnit.MILLISECONDS.toNanos(20));
    }

    /** The negotiated session timeout, or the configured one before the first connection. */
    long sessionTimeoutMs() {
        int negotiated = client.getZookeeperClient().getLastNegotiatedSessionTimeoutMs();
        return negotiated > 0 ? negotiated : configuredSessionTimeoutMs;
    }

    private long currentSessionId() {
        try {
            return client.getZookeeperClient().getZooKeeper().getSessionId();
        } catch (Exception e) {
            return 0;
        }
    }

    /** A request answered: the session was alive on the server when it was sent. */
    private void contact(long sentNanos) {
        lastContact.accumulateAndGet(sentNanos, (a, b) -> b - a > 0 ? b : a);
    }

    /** Keeps {@link #lastContact} recent while leases are held, so a short suspension costs no lease. */
    private void proveSession() {
        if (proofs.isEmpty() || closed || state == ConnectionState.SUSPENDED || state == ConnectionState.LOST) {
            return;
        }
        long t0 = System.nanoTime();
        try {
            client.checkExists().forPath("/");
            contact(t0);
        } catch (Exception e) {
            log.debug("session heartbeat failed: {}", e.toString());
        }
    }

    @Override
    public ReleaseWatch watchLease(String name, String token, LeaseProof proof) {
        proofs.put(token, proof);
        ConnectionState s = state;
        if (s == ConnectionState.LOST) {
            proofs.remove(token, proof);
            proof.lost("the ZooKeeper session was lost");
        } else if (s == ConnectionState.SUSPENDED) {
            proof.provenUntil(proofLimit());
        }
        return () -> proofs.remove(token, proof);
    }

    // --- acquire ----------------------------------------------------------------------------

    @Override
    public Optional<Grant> tryAcquire(AcquireRequest request) {
        checkOpen();
        String parent = lockPath(request.name());
        long ttlMs = Math.max(1, request.ttl().toMillis());
        NodeData data = NodeData.lease(request.owner(), request.token(), ttlMs, "mtime", System.currentTimeMillis());
        Stat mine = new Stat();
        String path;
        long t0 = System.nanoTime();
        try {
            path = client.create().storingStatIn(mine).creatingParentContainersIfNeeded().withProtection()
                    .withMode(CreateMode.EPHEMERAL_SEQUENTIAL).forPath(parent + "/" + LOCK_PREFIX, data.bytes());
        } catch (Exception e) {
            throw failure("acquiring lock '" + request.name() + "'", e);
        }
        contact(t0);
        if (sessionId == 0) {
            sessionId = currentSessionId();
        }
        // The ctime of the node just created is a fresh reading of the server's clock.
        long now = mine.getCtime();
        boolean granted = false;
        try {
            granted = isFirst(parent, sequence(path), now);
        } finally {
            if (!granted) {
                deleteQuietly(path, request.name());
            }
        }
        if (!granted) {
            return Optional.empty();
        }
        ownNodes.put(request.token(), new Found(path, mine, data));
        return Optional.of(new Grant(mine.getCzxid(), Instant.ofEpochMilli(mine.getCtime()),
                Instant.ofEpochMilli(mine.getCtime() + ttlMs)));
    }

    /**
     * Whether no unexpired lease is ahead of the node with sequence {@code seq}: deletes the expired
     * ones it meets (with their version, so that one extended meanwhile survives and is met again).
     */
    private boolean isFirst(String parent, long seq, long now) {
        while (true) {
            List<String> children = children(parent);
            boolean again = false;
            if (children.contains(HOLD)) {
                Verdict v = judge(parent + "/" + HOLD, now);
                if (v == Verdict.HELD) {
                    return false;
                }
                again = v == Verdict.CHANGED;
            }
            if (!again) {
                for (String child : sorted(children)) {
                    if (sequence(child) >= seq) {
                        break;
                    }
                    Verdict v = judge(parent + "/" + child, now);
                    if (v == Verdict.HELD) {
                        return false;
                    }
                    // CHANGED: extended under us. GONE: released, expired, or swapped for the hold
                    // node in one transaction (a release with lockAtLeastFor) after our listing: the
                    // list is stale either way, so read it again, or we would miss the hold node.
                    again = true;
                    break;
                }
            }
            if (!again) {
                return true;
            }
        }
    }

    private enum Verdict { HELD, GONE, CHANGED }

    /** Reads one node: held (unexpired at {@code now}), gone (or deleted now as expired), or changed under us. */
    private Verdict judge(String path, long now) {
        Stat stat = new Stat();
        byte[] bytes;
        try {
            bytes = client.getData().storingStatIn(stat).forPath(path);
        } catch (KeeperException.NoNodeException gone) {
            return Verdict.GONE;
        } catch (Exception e) {
            throw failure("reading " + path, e);
        }
        if (NodeData.parse(bytes).expiresAtMs(stat) > now) {
            return Verdict.HELD;
        }
        try {
            client.delete().withVersion(stat.getVersion()).forPath(path);
            return Verdict.GONE;
        } catch (KeeperException.NoNodeException gone) {
            return Verdict.GONE;
        } catch (KeeperException.BadVersionException extended) {
            return Verdict.CHANGED;
        } catch (Exception e) {
            throw failure("removing the expired lease " + path, e);
        }
    }

    // --- extend and release -----------------------------------------------------------------

    /** A lease node found by its token. */
    private record Found(String path, Stat stat, NodeData data) {}

    /** Finds the node of {@code token}: this store's own record first, else a scan of the lock's nodes. */
    private Found find(String name, String token) {
        String parent = lockPath(name);
        Found known = ownNodes.get(token);
        if (known != null && known.path().startsWith(parent + "/")) {
            return known;
        }
        List<String> children;
        try {
            children = client.getChildren().forPath(parent);
        } catch (KeeperException.NoNodeException none) {
            return null;
        } catch (Exception e) {
            throw failure("reading lock '" + name + "'", e);
        }
        for (String child : sorted(children)) {
            Found f = read(parent + "/" + child, token);
            if (f != null) {
                return f;
            }
        }
        return null;
    }

    private Found read(String path, String token) {
        Stat stat = new Stat();
        try {
            NodeData data = NodeData.parse(client.getData().storingStatIn(stat).forPath(path));
            return token.equals(data.token()) && data.untilMs() == null ? new Found(path, stat, data) : null;
        } catch (KeeperException.NoNodeException gone) {
            return null;
        } catch (Exception e) {
            throw failure("reading " + path, e);
        }
    }

    @Override
    public boolean extend(String name, String token, Duration ttl) {
        checkOpen();
        checkSession("extending lock '" + name + "'");
        long ttlMs = Math.max(1, ttl.toMillis());
        while (true) {
            Found f = find(name, token);
            if (f == null) {
                return false;
            }
            long expiredAt = f.data().expiresAtMs(f.stat());
            NodeData next = NodeData.lease(f.data().owner(), token, ttlMs, "mtime", System.currentTimeMillis());
            Stat written;
            long t0 = System.nanoTime();
            try {
                written = client.setData().withVersion(f.stat().getVersion()).forPath(f.path(), next.bytes());
            } catch (KeeperException.NoNodeException gone) {
                ownNodes.remove(token);
                return false;
            } catch (KeeperException.BadVersionException raced) {
                ownNodes.remove(token);
                continue;
            } catch (Exception e) {
                throw failure("extending lock '" + name + "'", e);
            }
            contact(t0);
            // The write's mtime is the server's clock at the extend: if the lease had run out by
            // then, a contender may already have judged it expired, so the extend does not count.
            if (written.getMtime() >= expiredAt) {
                deleteQuietly(f.path(), name);
                ownNodes.remove(token);
                return false;
            }
            ownNodes.computeIfPresent(token, (t, old) -> new Found(f.path(), written, next));
            return true;
        }
    }

    @Override
    public boolean release(String name, String token, Duration lockAtLeastFor) {
        checkOpen();
        while (true) {
            Found f = find(name, token);
            if (f == null) {
                return false;
            }
            try {
                if (lockAtLeastFor.isZero()) {
                    client.delete().withVersion(f.stat().getVersion()).forPath(f.path());
                } else {
                    holdUntil(name, f, lockAtLeastFor);
                }
                ownNodes.remove(token);
                return true;
            } catch (KeeperException.NoNodeException gone) {
                ownNodes.remove(token);
                return false;
            } catch (KeeperException.BadVersionException raced) {
                ownNodes.remove(token);
                continue;
            } catch (Exception e) {
                throw failure("releasing lock '" + name + "'", e);
            }
        }
    }

    /**
     * Swaps the ephemeral lease node for the persistent hold marker in one transaction: the lock
     * stays taken until the lease's ctime plus {@code lockAtLeastFor} (server times), whether or not
     * this process lives on. A stale marker (expired, or left by a lease that was force-released) is
     * replaced.
     */
    private void holdUntil(String name, Found f, Duration lockAtLeastFor) throws Exception {
        String hold = lockPath(name) + "/" + HOLD;
        NodeData marker = NodeData.hold(f.data(), f.stat().getCzxid(), f.stat().getCtime(),
                f.stat().getCtime() + lockAtLeastFor.toMillis());
        List<CuratorOp> ops = new ArrayList<>();
        ops.add(client.transactionOp().delete().withVersion(f.stat().getVersion()).forPath(f.path()));
        if (client.checkExists().forPath(hold) != null) {
            ops.add(client.transactionOp().delete().forPath(hold));
        }
        ops.add(client.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(hold, marker.bytes()));
        client.transaction().forOperations(ops);
    }

    // --- listing and administration -----------------------------------------------------------

    @Override
    public List<LockInfo> heldLocks() {
        checkOpen();
        long now = serverNow();
        List<String> names;
        try {
            names = client.getChildren().forPath(base + "/locks");
        } catch (KeeperException.NoNodeException none) {
            return List.of();
        } catch (Exception e) {
            throw failure("listing locks", e);
        }
        List<LockInfo> out = new ArrayList<>();
        for (String encoded : names) {
            String name = decode(encoded);
            Holder h = holder(lockPath(name), now);
            if (h != null) {
                long fence = h.data().fence() != null ? h.data().fence() : h.stat().getCzxid();
                long acquired = h.data().acquiredAtMs() != null ? h.data().acquiredAtMs() : h.stat().getCtime();
                out.add(new LockInfo(name, h.data().owner(), fence, Instant.ofEpochMilli(acquired),
                        Instant.ofEpochMilli(h.data().expiresAtMs(h.stat()))));
            }
        }
        out.sort(Comparator.comparing(LockInfo::name));
        return out;
    }

    private record Holder(String path, Stat stat, NodeData data) {}

    /** The unexpired hold marker, else the lowest unexpired lease node, of a lock; null if free. */
    private Holder holder(String parent, long now) {
        List<String> children;
        try {
            children = client.getChildren().forPath(parent);
        } catch (KeeperException.NoNodeException none) {
            return null;
        } catch (Exception e) {
            throw failure("reading " + parent, e);
        }
        List<String> order = new ArrayList<>();
        if (children.contains(HOLD)) {
            order.add(HOLD);
        }
        order.addAll(sorted(children));
        for (String child : order) {
            Stat stat = new Stat();
            try {
                NodeData data = NodeData.parse(client.getData().storingStatIn(stat).forPath(parent + "/" + child));
                if (data.expiresAtMs(stat) > now) {
                    return new Holder(parent + "/" + child, stat, data);
                }
            } catch (KeeperException.NoNodeException gone) {
                // released meanwhile
            } catch (Exception e) {
                throw failure("reading " + parent, e);
            }
        }
        return null;
    }

    @Override
    public boolean forceRelease(String name) {
        checkOpen();
        String parent = lockPath(name);
        long now = serverNow();
        boolean freed = false;
        while (true) {
            Holder h = holder(parent, now);
            if (h == null) {
                return freed;
            }
            try {
                client.delete().forPath(h.path());
                freed = true;
            } catch (KeeperException.NoNodeException gone) {
                // released meanwhile: look again
            } catch (Exception e) {
                throw failure("force-releasing lock '" + name + "'", e);
            }
            if (freed && !h.path().endsWith("/" + HOLD)) {
                return true;
            }
        }
    }

    /** The server's clock now (epoch ms): the mtime of a write to the store's clock node. */
    long serverNow() {
        String clock = base + "/clock";
        try {
            try {
                return client.setData().forPath(clock, new byte[0]).getMtime();
            } catch (KeeperException.NoNodeException first) {
                try {
                    client.create().creatingParentsIfNeeded().forPath(clock, new byte[0]);
                } catch (KeeperException.NodeExistsException raced) {
                    // created by another client meanwhile
                }
                return client.setData().forPath(clock, new byte[0]).getMtime();
            }
        } catch (Exception e) {
            throw failure("reading the server's clock", e);
        }
    }

    // --- release notifications ------------------------------------------------------------------

    @Override
    public ReleaseWatch watchReleases(String name, ReleaseListener listener) {
        checkOpen();
        HolderWatch w = new HolderWatch(lockPath(name), listener);
        w.arm();
        return w;
    }

    /**
     * Watches the node that holds the lock (the only node a waiter waits on: no herd of watches on
     * the parent), and re-arms on the next holder after each event, on the store's watch thread.
     */
    private final class HolderWatch implements ReleaseWatch, CuratorWatcher {
        private final String parent;
        private final ReleaseListener listener;
        private volatile boolean open = true;
        private volatile String watchedToken;

        HolderWatch(String parent, ReleaseListener listener) {
            this.parent = parent;
            this.listener = listener;
        }

        void arm() {
            if (!open || closed) {
                return;
            }
            List<String> children;
            try {
                children = client.getChildren().forPath(parent);
            } catch (KeeperException.NoNodeException none) {
                children = List.of();
            } catch (Exception e) {
                throw failure("watching " + parent, e);
            }
            List<String> order = new ArrayList<>();
            if (children.contains(HOLD)) {
                order.add(HOLD);
            }
            order.addAll(sorted(children));
            try {
                for (String child : order) {
                    Stat stat = new Stat();
                    byte[] bytes;
                    try {
                        bytes = client.getData().storingStatIn(stat).usingWatcher(this).forPath(parent + "/" + child);
                    } catch (KeeperException.NoNodeException gone) {
                        continue;
                    }
                    watchedToken = NodeData.parse(bytes).token();
                    return;
                }
                // Free: tell the waiter, who tries again, and watch for the next holder's node.
                watchedToken = null;
                listener.released(null);
                if (client.checkExists().usingWatcher(this).forPath(parent) != null) {
                    client.getChildren().usingWatcher(this).forPath(parent);
                }
            } catch (Exception e) {
                throw failure("watching " + parent, e);
            }
        }

        @Override
        public void process(WatchedEvent event) {
            if (!open || event.getType() == Watcher.Event.EventType.None) {
                return;
            }
            if (event.getType() == Watcher.Event.EventType.NodeDeleted) {
                listener.released(watchedToken);
            }
            try {
                watchThread.execute(() -> {
                    try {
                        arm();
                    } catch (RuntimeException e) {
                        log.debug("cannot re-arm the release watch on {}: {}", parent, e.toString());
                    }
                });
            } catch (RejectedExecutionException closing) {
                // the store is closing
            }
        }

        @Override
        public void close() {
            open = false;
        }
    }

    // --- plumbing ------------------------------------------------------------------------------

    @Override
    public String description() {
        return description;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        client.getConnectionStateListenable().removeListener(stateListener);
        watchThread.shutdownNow();
        if (ownsClient) {
            // Closing our own client ends the session, and the server drops the held locks' nodes
            // at once: their leases are lost now, and must say so before anyone else can be let in.
            sessionEnded("the store was closed, and its ZooKeeper session (with the nodes of its held locks) with it");
            client.close();
        }
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    /** After a failed wait for a connection, calls fail at once for this long instead of each waiting again. */
    private static final long CONNECT_RETRY_PAUSE_NANOS = TimeUnit.SECONDS.toNanos(1);
    private volatile long connectFailedAt;
    private volatile boolean connectFailed;

    /**
     * Refuses calls on a closed store, and waits for a connection at most the client's connection
     * timeout, once: Curator would otherwise spend that timeout on every step of a call (and its
     * retries), so an unreachable ensemble is reported after the connection timeout, not several.
     */
    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("the ZooKeeper lock store " + description + " is closed");
        }
        if (client.getZookeeperClient().isConnected()) {
            connectFailed = false;
            return;
        }
        if (connectFailed && System.nanoTime() - connectFailedAt < CONNECT_RETRY_PAUSE_NANOS) {
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
            connectFailedAt = System.nanoTime();
            connectFailed = true;
            throw unreachable();
        }
        connectFailed = false;
    }

    private StoreUnavailableException unreachable() {
        return new StoreUnavailableException("cannot connect to " + description + " within "
                + client.getZookeeperClient().getConnectionTimeoutMs() + " ms (turnstile.connectTimeout)", null);
    }

    /** While the session is not proven alive, a lease cannot be renewed; once it is lost, never. */
    private void checkSession(String what) {
        ConnectionState s = state;
        if (s == ConnectionState.SUSPENDED || s == ConnectionState.LOST) {
            throw new StoreUnavailableException(what + " on " + description + " failed: the ZooKeeper connection is "
                    + s.name().toLowerCase(java.util.Locale.ROOT), null);
        }
    }

    private void deleteQuietly(String path, String name) {
        try {
            client.delete().guaranteed().forPath(path);
        } catch (KeeperException.NoNodeException gone) {
            // already gone
        } catch (Exception e) {
            // guaranteed() keeps trying in the background; the node is ephemeral besides
            log.debug("could not remove the busy attempt on lock '{}' yet: {}", name, e.toString());
        }
    }

    private List<String> children(String parent) {
        try {
            return client.getChildren().forPath(parent);
        } catch (KeeperException.NoNodeException none) {
            return List.of();
        } catch (Exception e) {
            throw failure("reading " + parent, e);
        }
    }

    /** The lease nodes of a lock (not the hold marker), lowest sequence first. */
    private static List<String> sorted(List<String> children) {
        List<String> out = new ArrayList<>();
        for (String c : children) {
            if (c.contains(LOCK_PREFIX) && sequence(c) >= 0) {
                out.add(c);
            }
        }
        out.sort(Comparator.comparingLong(ZooKeeperLockStore::sequence));
        return out;
    }

    /** The sequence number a sequential node's name ends with (ten digits), or -1. */
    static long sequence(String path) {
        int at = path.lastIndexOf(LOCK_PREFIX);
        if (at < 0) {
            return -1;
        }
        try {
            return Long.parseLong(path.substring(at + LOCK_PREFIX.length()));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    String lockPath(String name) {
        return base + "/locks/" + encode(name);
    }

    /** Percent-encodes a lock name into a valid node name: only letters, digits, '-' and '_' stay. */
    static String encode(String name) {
        return URLEncoder.encode(name, StandardCharsets.UTF_8).replace("+", "%20").replace("*", "%2A").replace(".", "%2E");
    }

    static String decode(String node) {
        return URLDecoder.decode(node, StandardCharsets.UTF_8);
    }

    private RuntimeException failure(String what, Exception e) {
        if (e instanceof InterruptedException) {
            Thread.currentThread().interrupt();
        }
        if (closed) {
            return new IllegalStateException("the ZooKeeper lock store " + description + " is closed", e);
        }
        if (e instanceof KeeperException.NoAuthException || e instanceof KeeperException.AuthFailedException) {
            return new StoreSchemaException(what + " on " + description + " was refused: the ZooKeeper ACLs do not let this "
                    + "client read, create and delete under " + base + " (" + e.getMessage() + ")", e);
        }
        if (e instanceof RuntimeException r && !(e instanceof IllegalStateException)) {
            return r instanceof StoreUnavailableException ? r : new StoreUnavailableException(what + " on " + description
                    + " failed: " + e, e);
        }
        return new StoreUnavailableException(what + " on " + description + " failed: " + e, e);
    }

    /** Builds a {@link ZooKeeperLockStore}. Not thread-safe. */
    public static final class Builder {
        private final CuratorFramework client;
        private boolean ownsClient;
        private long sessionTimeoutMs = 60_000;
        private String basePath = DEFAULT_BASE;
        private String description;

        private Builder(CuratorFramework client) {
            this.client = client;
        }

        /**
         * Sets the path under which the store keeps its nodes. Default {@code /turnstile}.
         *
         * @param path an absolute ZooKeeper path, such as {@code /turnstile} or {@code /apps/billing/locks}
         * @return this builder
         * @throws IllegalArgumentException if the path is not absolute, ends with '/' or has empty,
         *     '.' or '..' segments
         */
        public Builder basePath(String path) {
            if (path == null || !path.matches("(/[^/\\p{Cntrl}]+)+") || path.matches(".*/\\.{1,2}(/.*)?")) {
                throw new IllegalArgumentException("base path '" + path + "' is invalid: give an absolute ZooKeeper path "
                        + "such as /turnstile, without a trailing '/', '.' or '..' segments");
            }
            this.basePath = path;
            return this;
        }

        /**
         * Tells the store the session timeout the client was built with, used until the server has
         * negotiated one (Curator's default is 60 s; the server may bound it).
         *
         * @param timeout the client's session timeout
         * @return this builder
         * @throws IllegalArgumentException if not positive
         */
        public Builder sessionTimeout(Duration timeout) {
            if (timeout == null || timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("session timeout " + timeout + " is invalid: give the positive session "
                        + "timeout the CuratorFramework was built with");
            }
            this.sessionTimeoutMs = timeout.toMillis();
            return this;
        }

        /** The store closes the client on close (it opened it from a URL). */
        Builder ownsClient(String description) {
            this.ownsClient = true;
            this.description = description;
            return this;
        }

        /**
         * Builds the store. The client is started here if it is not yet.
         *
         * @return the store
         */
        public ZooKeeperLockStore build() {
            if (client.getState() == org.apache.curator.framework.imps.CuratorFrameworkState.LATENT) {
                client.start();
            }
            return new ZooKeeperLockStore(this);
        }
    }

    static long millis(Duration d) {
        return TimeUnit.NANOSECONDS.toMillis(d.toNanos());
    }
}
