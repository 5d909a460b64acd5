package dev.turnstile.zookeeper;

import dev.turnstile.LockInfo;
import dev.turnstile.StoreSchemaException;
import dev.turnstile.StoreUnavailableException;
import dev.turnstile.spi.AcquireRequest;
import dev.turnstile.spi.Grant;
import dev.turnstile.spi.KeepsWaitingLine;
import dev.turnstile.spi.LeaseProof;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.NotifiesReleases;
import dev.turnstile.spi.ReleaseListener;
import dev.turnstile.spi.ReleaseWatch;
import dev.turnstile.spi.SessionBoundLeases;
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
import java.util.function.Supplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A lock store on ZooKeeper over Apache Curator. What it gives users — the node layout, who holds a
 * lock, expiry on the server's clock, fences from creation zxids, {@code lockAtLeastFor} markers,
 * sessions and the waiting line — is described once, in {@code docs/stores/zookeeper.md}; this class
 * composes the parts that do it:
 *
 * <ul>
 *   <li>{@code SessionGuard}: the session as the proof of the held leases (docs/design.md, rule 8):
 *       a lease is proven only until the last answered request plus the session timeout, less a
 *       margin, and a heartbeat every quarter of the session timeout moves that on;</li>
 *   <li>{@code WaitingLine}: waiting acquires' places in line, each watching only the node ahead;</li>
 *   <li>{@code HoldMarkers}: the persistent markers that keep a lock until {@code lockAtLeastFor}
 *       after an early release, and their sweep;</li>
 *   <li>this class: acquire and the judging of a lock's children (the lowest unexpired sequence
 *       holds it; an expired node ahead is deleted with its version, so a concurrent extend wins),
 *       extend, release, forced release and listing, none retrying more than {@link #MAX_RACES}
 *       times after another client's write.</li>
 * </ul>
 *
 * <p><b>Interrupts.</b> An interrupt ends a wait, never the cleanup after it: a try that an interrupt
 * cuts off while its create is in flight deletes the node the server may have made (found by its
 * token) before it throws, and {@link #release} and {@link #stopWaiting} work on an interrupted thread
 * (the flag is kept), with every delete answered before they return.
 */
public final class ZooKeeperLockStore implements LockStore, NotifiesReleases, SessionBoundLeases, KeepsWaitingLine {
    private static final Logger log = LoggerFactory.getLogger(ZooKeeperLockStore.class);
    static final String LOCK_PREFIX = "lock-";
    static final String HOLD = "hold";
    private static final String DEFAULT_BASE = "/turnstile";
    /** The default {@link Builder#queueTimeout}. */
    static final Duration DEFAULT_QUEUE_TIMEOUT = Duration.ofSeconds(3);
    /** The default {@link Builder#holdSweepInterval}. */
    static final Duration DEFAULT_HOLD_SWEEP_INTERVAL = Duration.ofMinutes(1);
    private static final byte[] EMPTY = new byte[0];

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
    /** The session as the proof of the held leases. */
    private final SessionGuard session;
    private final ConnectionStateListener stateListener;
    private volatile boolean closed;
    /** The places in line of this store's waiting acquires. */
    private final WaitingLine line;
    /**
     * Ends hold markers and sweeps expired ones ({@link HoldMarkers}), and re-arms lease watches:
     * its own thread, so that this I/O never delays the session heartbeat on {@link #watchThread}.
     */
    private final ScheduledExecutorService sweepThread;
    private final HoldMarkers holds;

    private ZooKeeperLockStore(Builder b) {
        this.client = b.client;
        this.ownsClient = b.ownsClient;
        this.base = b.basePath;
        this.description = b.description != null ? b.description : "zookeeper (" + b.client.getZookeeperClient().getCurrentConnectionString()
                + ", " + base + ")";
        this.watchThread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "turnstile-zookeeper-watch");
            t.setDaemon(true);
            return t;
        });
        this.session = new SessionGuard(client, b.sessionTimeoutMs, watchThread, () -> closed, this::forgetSessionNodes);
        this.line = new WaitingLine(this, client, session, watchThread, b.queueTimeoutMs);
        this.stateListener = session::stateChanged;
        client.getConnectionStateListenable().addListener(stateListener);
        this.sweepThread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "turnstile-zookeeper-sweep");
            t.setDaemon(true);
            return t;
        });
        this.holds = new HoldMarkers(this, client, base, sweepThread, b.holdSweepIntervalMs);
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

    /** The session's ephemeral nodes are gone with it: forgets this store's leases' nodes and its places in line. */
    private void forgetSessionNodes() {
        ownNodes.clear();
        line.forgetPlaces();
    }

    /**
     * The session timeout (negotiated; the configured one before the first connection) less a
     * tenth of it: every lease's local deadline is at most that long after the store's last
     * answered request.
     */
    @Override
    public Duration sessionBound() {
        return Duration.ofNanos(session.sessionBoundNanos());
    }

    /** The negotiated session timeout, or the configured one before the first connection. */
    long sessionTimeoutMs() {
        return session.sessionTimeoutMs();
    }

    @Override
    public ReleaseWatch watchLease(String name, String token, LeaseProof proof) {
        if (session.watch(token, proof)) {
            Found own = ownNodes.get(token);
            if (own != null) {
                new LeaseNodeWatch(own.path(), token, proof).armLater();
            }
        }
        return () -> session.unwatch(token, proof);
    }

    /**
     * Tells a held lease at once when its node is deleted by someone else (a forced release, or a
     * client that found it expired), instead of at its next renewal: the holder can stop its work
     * within a round trip of the deletion. Stops when the lease's proof is no longer watched (the
     * lease ended), and a deletion seen after that is the holder's own release.
     */
    private static final long LEASE_WATCH_DELAY_MS = 200;

    private final class LeaseNodeWatch implements Watcher {
        private final String path;
        private final String token;
        private final LeaseProof proof;

        LeaseNodeWatch(String path, String token, LeaseProof proof) {
            this.path = path;
            this.token = token;
            this.proof = proof;
        }

        private boolean watching() {
            return session.watching(token, proof) && !closed;
        }

        /**
         * Sets the watch once the lease has lived {@link #LEASE_WATCH_DELAY_MS}: most leases are
         * released sooner, and a watch each would add a request to every acquire. A forced release
         * within that time is found by the next renewal.
         */
        void armLater() {
            try {
                sweepThread.schedule(this::arm, LEASE_WATCH_DELAY_MS, TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException closing) {
                // the store is closing
            }
        }

        /**
         * Sets the watch, in the background (never holding up the session heartbeat); if the node
         * is already gone, the lease is lost now.
         */
        void arm() {
            if (!watching()) {
                return;
            }
            try {
                client.checkExists().usingWatcher(this).inBackground((c, event) -> {
                    int rc = event.getResultCode();
                    if (rc == KeeperException.Code.NONODE.intValue() && watching()) {
                        proof.ended("its node was deleted (force-released, or expired and removed by another client)");
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
                proof.ended("its node was deleted (force-released, or expired and removed by another client)");
            } else {
                arm(); // written (renewed): watch again
            }
        }
    }

    // --- acquire ----------------------------------------------------------------------------

    /**
     * A node made by {@link #create}, and what the same transaction told of the lock's parent: the
     * transaction's zxid (the new node's czxid, the fence), its time (the new node's ctime, a fresh
     * reading of the server's clock) and whether the new node is the parent's only child.
     */
    record Created(String path, long czxid, long ctime, boolean alone) {}

    /**
     * Creates an ephemeral sequential node under the lock's parent and, in the same transaction,
     * writes the parent, whose returned stat answers in the same round trip what a listing would: a
     * node that is its parent's only child has nobody ahead of it. So an uncontended acquire costs one
     * round trip, as a bare create does. The node's name starts with the encoded token, so that a
     * create sent twice (Curator retries a transaction cut by a connection loss) is recognised as this
     * caller's own and removed by token.
     */
    Created create(String parent, String token, byte[] data) throws Exception {
        String prefix = parent + "/" + nodePrefix(token);
        for (int attempt = 0; ; attempt++) {
            List<CuratorTransactionResult> results;
            try {
                results = client.transaction().forOperations(
                        client.transactionOp().create().withMode(CreateMode.EPHEMERAL_SEQUENTIAL).forPath(prefix, data),
                        client.transactionOp().setData().forPath(parent, EMPTY));
            } catch (KeeperException.NoNodeException noParent) {
                // No parent yet, or an empty one removed meanwhile (by the server's container reaper,
                // or by a store ending a hold marker, see HoldMarkers): make it again, a few times.
                if (attempt >= 3) {
                    throw noParent;
                }
                client.createContainers(parent);
                continue;
            } catch (InterruptedException cut) {
                // The transaction was sent before the wait for its answer was interrupted: the server
                // may well have made the node, whose path nobody here learns. Left, a place would hold
                // the line up until its queue timeout, a lease the lock for its whole TTL. This
                // session's later requests are applied after it, so a listing now finds it.
                try {
                    deleteOwnNodes(parent, token);
                } catch (RuntimeException e) {
                    cut.addSuppressed(e); // core's undo of the failed try (a release of the token) looks again
                }
                throw cut;
            }
            Stat p = results.get(1).getResultStat();
            return new Created(results.get(0).getResultPath(), p.getMzxid(), p.getMtime(), p.getNumChildren() == 1);
        }
    }

    /** How the nodes of one token are named: {@code <encoded token>-lock-<sequence>}. */
    static String nodePrefix(String token) {
        return encode(token) + "-" + LOCK_PREFIX;
    }

    @Override
    public Optional<Grant> tryAcquire(AcquireRequest request) {
        checkOpen();
        if (request.waiting()) {
            return line.waitInLine(request);
        }
        String parent = lockPath(request.name());
        long ttlMs = Math.max(1, request.ttl().toMillis());
        NodeData data = NodeData.lease(request.owner(), request.token(), ttlMs, "mtime", System.currentTimeMillis());
        long t0 = System.nanoTime();
        Created c;
        try {
            c = create(parent, request.token(), data.bytes());
        } catch (Exception e) {
            throw failure("acquiring lock '" + request.name() + "'", e);
        }
        session.contacted(t0);
        long grantedAt = System.nanoTime();
        boolean granted = false;
        Stat stat = createdStat(c);
        try {
            boolean first = c.alone() || isFirst(parent, sequence(c.path()), c.ctime(), request.token());
            if (first && !c.alone()) {
                // Other nodes were there: the node may have become first well after its creation
                // (an expired lease or hold marker ahead was deleted meanwhile, by this caller or
                // another), so the lease starts now, at a write's mtime, not at the ctime: else it
                // would end early on the server, and lockAtLeastFor would count from before it held.
                stat = client.setData().withVersion(0).forPath(c.path(), data.bytes());
            }
            // Granted only now: a write that failed (an interrupt cut off the wait for its answer,
            // say) hands no lease to the caller, so its node must not stay and hold the lock.
            granted = first;
            grantedAt = System.nanoTime();
        } catch (KeeperException.NoNodeException | KeeperException.BadVersionException lost) {
            granted = false;
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw failure("acquiring lock '" + request.name() + "'", e);
        } finally {
            if (!granted) {
                deleteQuietly(c.path(), request.name());
            }
        }
        if (!granted) {
            return Optional.empty();
        }
        ownNodes.put(request.token(), new Found(c.path(), stat, data, stat.getMtime(), grantedAt));
        return Optional.of(new Grant(c.czxid(), Instant.ofEpochMilli(stat.getMtime()), Instant.ofEpochMilli(stat.getMtime() + ttlMs)));
    }

    /** The stat of a node just created (version 0), as the transaction told it. */
    private static Stat createdStat(Created c) {
        Stat s = new Stat();
        s.setCzxid(c.czxid());
        s.setMzxid(c.czxid());
        s.setCtime(c.ctime());
        s.setMtime(c.ctime());
        s.setVersion(0);
        return s;
    }

    /**
     * Whether no unexpired lease or place is ahead of the node with sequence {@code seq}: deletes the
     * expired ones it meets (with their version, so that one extended or touched meanwhile survives
     * and is met again), and this token's own older nodes (a create Curator sent twice).
     */
    private boolean isFirst(String parent, long seq, long now, String token) {
        return ahead(parent, seq, now, token, null, null) == null;
    }

    /** What {@link #ahead} returns when the caller's own node is not among the children. */
    private static final String MISSING = "";

    /**
     * The nearest node ahead of the node with sequence {@code seq} while an unexpired lease, place or
     * hold marker is ahead of it; null when none is (the node is first). {@code blocker}, if given,
     * receives the expiry (server time) of the first unexpired node ahead. If {@code mine} is given
     * and that node is not among the children, returns {@link #MISSING}.
     */
    String ahead(String parent, long seq, long now, String token, long[] blocker, String mine) {
        String own = nodePrefix(token);
        while (true) {
            List<String> children = children(parent);
            if (mine != null && !children.contains(mine)) {
                return MISSING;
            }
            List<String> order = new ArrayList<>();
            if (children.contains(HOLD)) {
                order.add(HOLD);
            }
            for (String child : sorted(children)) {
                if (sequence(child) >= seq) {
                    break;
                }
                order.add(child);
            }
            if (order.isEmpty()) {
                return null;
            }
            String first = order.get(0);
            if (first.startsWith(own)) {
                deleteQuietly(parent + "/" + first, parent);
                continue;
            }
            long[] expiry = new long[1];
            Verdict v = judge(parent + "/" + first, now, expiry);
            if (v == Verdict.HELD) {
                if (blocker != null) {
                    blocker[0] = expiry[0];
                }
                return order.get(order.size() - 1);
            }
            // CHANGED: extended under us. GONE: released, expired, or swapped for the hold node in one
            // transaction (a release with lockAtLeastFor) after our listing: the list is stale either
            // way, so read it again, or we would miss the hold node.
        }
    }

    private enum Verdict { HELD, GONE, CHANGED }

    /** Reads one node: held (unexpired at {@code now}), gone (or deleted now as expired), or changed under us. */
    private Verdict judge(String path, long now, long[] expiry) {
        Stat stat = new Stat();
        byte[] bytes;
        try {
            bytes = client.getData().storingStatIn(stat).forPath(path);
        } catch (KeeperException.NoNodeException gone) {
            return Verdict.GONE;
        } catch (Exception e) {
            throw failure("reading " + path, e);
        }
        expiry[0] = NodeData.parse(bytes).expiresAtMs(stat);
        if (expiry[0] > now) {
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
            throw failure("removing the expired node " + path, e);
        }
    }

    // --- the waiting line ------------------------------------------------------------------------

    @Override
    public void stopWaiting(String name, String token) {
        if (!closed) {
            line.stopWaiting(token);
        }
    }

    /** How many times a watch on a node ahead woke this store's waiters (for tests). */
    long wakeUps() {
        return line.wakeUps();
    }

    /** How many places in line this store keeps now (for tests). */
    int places() {
        return line.places();
    }

    /** Records a lease this store was granted, for its release and extend (see {@link WaitingLine}). */
    void granted(String token, Found lease) {
        ownNodes.put(token, lease);
    }

    // --- extend and release -----------------------------------------------------------------

    /**
     * A lease node found by its token, with the server time its lease started (the acquiring write's
     * mtime: a place promoted, or a node that became first after others went, started its lease after
     * its creation; see {@link NodeData#leaseStartMs}) and, where this store granted it, when
     * ({@code nanoTime}) the acquiring write's answer arrived, else 0.
     */
    record Found(String path, Stat stat, NodeData data, long acquiredAtMs, long grantedNanos) {}

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
        String own = nodePrefix(token);
        for (String child : sorted(children)) {
            if (child.startsWith(own)) {
                Found f = read(parent + "/" + child, token);
                if (f != null) {
                    return f;
                }
            }
        }
        return null;
    }

    private Found read(String path, String token) {
        Stat stat = new Stat();
        try {
            NodeData data = NodeData.parse(client.getData().storingStatIn(stat).forPath(path));
            return token.equals(data.token()) && data.untilMs() == null && !data.isPlace()
                    ? new Found(path, stat, data, data.leaseStartMs(stat), 0) : null;
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
        for (int attempt = 0; attempt < MAX_RACES; attempt++) {
            Found f = find(name, token);
            if (f == null) {
                return false;
            }
            long expiredAt = f.data().expiresAtMs(f.stat());
            // The lease's start goes along, so that a release that finds the node by a scan counts
            // lockAtLeastFor from it, not from this extend.
            NodeData next = NodeData.extended(f.data().owner(), token, ttlMs, "mtime", System.currentTimeMillis(), f.acquiredAtMs());
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
            session.contact(t0);
            // The write's mtime is the server's clock at the extend: if the lease had run out by
            // then, a contender may already have judged it expired, so the extend does not count.
            if (written.getMtime() >= expiredAt) {
                deleteQuietly(f.path(), name);
                ownNodes.remove(token);
                return false;
            }
            ownNodes.computeIfPresent(token, (t, old) -> new Found(f.path(), written, next, old.acquiredAtMs(), old.grantedNanos()));
            return true;
        }
        throw raced("extending lock '" + name + "'");
    }

    /**
     * How many times a release, extend or force-release looks again after another client's write
     * got in its way, before it gives up with {@link StoreUnavailableException}: no store call loops
     * without bound.
     */
    static final int MAX_RACES = 8;

    private StoreUnavailableException raced(String what) {
        return new StoreUnavailableException(what + " on " + description + " failed: the lock's nodes changed under it "
                + MAX_RACES + " times in a row (other clients' writes); try again", null);
    }

    @Override
    public boolean release(String name, String token, Duration lockAtLeastFor) {
        checkOpen();
        try {
            // A release is an undo (of a lease, or of a try that failed), and both come on interrupted
            // threads: a job interrupted on lease loss releases in its finally block, and core undoes a
            // try that an interrupt cut off on the very thread it interrupted (see uninterrupted).
            return uninterrupted(() -> releaseOwnOrFound(name, token, lockAtLeastFor));
        } catch (StoreUnavailableException e) {
            if (sessionExpired(e)) {
                // The server expired the session that made the node and removed its ephemeral
                // nodes with it: the lease is already gone and the lock free, nothing to release.
                log.debug("release of lock '{}': its session expired, so its node is gone", name);
                return false;
            }
            throw e;
        }
    }

    private static boolean sessionExpired(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof KeeperException.SessionExpiredException) {
                return true;
            }
        }
        return false;
    }

    private boolean releaseOwnOrFound(String name, String token, Duration lockAtLeastFor) {
        stopWaiting(name, token); // an ambiguous waiting try is undone by a release of its token
        if (!ownNodes.containsKey(token)) {
            // Unknown here (another client's token, or a create whose reply was lost): a create that
            // was sent twice left two nodes, and neither may stay.
            boolean released = releaseFound(name, token, lockAtLeastFor);
            deleteOwnNodes(lockPath(name), token);
            return released;
        }
        return releaseFound(name, token, lockAtLeastFor);
    }

    /**
     * Deletes the token's lease node, or swaps it for a hold marker: true if this release ended a
     * lease of the token, false if it has none (expired and removed by a contender, force-released,
     * or gone with its session). Never loops: it looks again at most {@link #MAX_RACES} times.
     */
    private boolean releaseFound(String name, String token, Duration lockAtLeastFor) {
        for (int attempt = 0; attempt < MAX_RACES; attempt++) {
            Found f = find(name, token);
            if (f == null) {
                ownNodes.remove(token);
                return false;
            }
            try {
                if (lockAtLeastFor.isZero() || holdIsOver(f, lockAtLeastFor)) {
                    client.delete().withVersion(f.stat().getVersion()).forPath(f.path());
                } else {
                    holdUntil(name, f, lockAtLeastFor);
                }
                ownNodes.remove(token);
                return true;
            } catch (KeeperException.NoNodeException gone) {
                // Either the lease node is gone, or (with a hold) the stale marker the transaction
                // also deletes was removed by another client since it was seen; the transaction
                // applied nothing either way. This store's record of the node cannot tell the two
                // apart, so forget it: the next look scans the lock's nodes and finds the lease node
                // again, or finds none (then the lease is not held, and the release says so).
                ownNodes.remove(token);
            } catch (KeeperException.BadVersionException raced) {
                ownNodes.remove(token);
            } catch (Exception e) {
                throw failure("releasing lock '" + name + "'", e);
            }
        }
        throw raced("releasing lock '" + name + "'");
    }

    /**
     * Whether the minimum hold has certainly passed on the server too, so the release needs no
     * marker: the acquiring write was applied before its answer arrived, so once {@code lockAtLeastFor}
     * (plus a margin for the clocks' rates) has passed here since that answer, it has passed on the
     * server's clock since the lease's start. Unknown for a node found by a scan.
     */
    private static boolean holdIsOver(Found f, Duration lockAtLeastFor) {
        long hold = lockAtLeastFor.toNanos();
        return f.grantedNanos() != 0 && System.nanoTime() - f.grantedNanos() - (hold + hold / 100 + TimeUnit.MILLISECONDS.toNanos(2)) >= 0;
    }

    /**
     * Swaps the ephemeral lease node for the persistent hold marker in one transaction: the lock
     * stays taken until the lease's start plus {@code lockAtLeastFor} (server times), whether or not
     * this process lives on. A stale marker (expired, or left by a lease that was force-released) is
     * replaced. The same transaction writes the lock's parent, whose mtime tells the server's time,
     * and so how long the hold has left: this store removes the marker (and the then empty parent)
     * when it ends; should this process be gone by then, any store's periodic sweep does (both in
     * {@link HoldMarkers}).
     */
    private void holdUntil(String name, Found f, Duration lockAtLeastFor) throws Exception {
        String parent = lockPath(name);
        String hold = parent + "/" + HOLD;
        long until = f.acquiredAtMs() + lockAtLeastFor.toMillis();
        NodeData marker = NodeData.hold(f.data(), f.stat().getCzxid(), f.acquiredAtMs(), until);
        List<CuratorOp> ops = new ArrayList<>();
        ops.add(client.transactionOp().delete().withVersion(f.stat().getVersion()).forPath(f.path()));
        if (client.checkExists().forPath(hold) != null) {
            ops.add(client.transactionOp().delete().forPath(hold));
        }
        ops.add(client.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(hold, marker.bytes()));
        ops.add(client.transactionOp().setData().forPath(parent, EMPTY));
        List<CuratorTransactionResult> results = client.transaction().forOperations(ops);
        long serverNow = results.get(results.size() - 1).getResultStat().getMtime();
        holds.endWhenOver(parent, f.stat().getCzxid(), until - serverNow);
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
                long acquired = h.data().leaseStartMs(h.stat());
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
                if (!data.isPlace() && data.expiresAtMs(stat) > now) {
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
        for (int attempt = 0; attempt < MAX_RACES; attempt++) {
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
        throw raced("force-releasing lock '" + name + "'");
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

    /**
     * Registers {@code listener}; it is called when a watch on the node ahead of one of this store's
     * places in line fires (that node was deleted), so only the waiter right behind a released lock
     * is woken, by the server, with no watch on the parent (no herd). Sets no watch of its own.
     */
    @Override
    public ReleaseWatch watchReleases(String name, ReleaseListener listener) {
        checkOpen();
        return line.watchReleases(name, listener);
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
        sweepThread.shutdownNow();
        if (!ownsClient) {
            // The client (and its session) lives on: the places in line of this store's waiters go
            // now, or the waiters behind them would wait out a queue timeout.
            line.leaveAll();
        }
        if (ownsClient) {
            // Closing our own client ends the session, and the server drops the held locks' nodes
            // at once: their leases are lost now, and must say so before anyone else can be let in.
            session.end("the store was closed, and its ZooKeeper session (with the nodes of its held locks) with it");
            // ZooKeeper's close sends closeSession and waits for it even when no server answers
            // (until its connect attempts give up: 10 s and more for a silent port). No close may
            // hang: wait one connect timeout, then let a daemon thread finish it. A client that
            // never connected has no session on any server to end, so there is nothing to wait
            // for: after a failed connect, close costs nothing on top of the connect timeout.
            boolean noSession = !session.everConnected() && !client.getZookeeperClient().isConnected();
            Thread closer = new Thread(client::close, "turnstile-zookeeper-close");
            closer.setDaemon(true);
            closer.start();
            try {
                closer.join(noSession ? 100 : Math.max(1000, client.getZookeeperClient().getConnectionTimeoutMs()));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Whether the connection is up (not suspended, not lost): background work waits otherwise. */
    boolean isConnected() {
        return session.isConnected();
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
            session.connected();
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
            connectFailure = Unreachable.diagnose(client.getZookeeperClient().getCurrentConnectionString());
            throw unreachable();
        }
        session.connected();
        connectFailed = false;
    }

    /** Why the last connect failed, in words (see {@link Unreachable}); null before one has. */
    private volatile String connectFailure;

    private StoreUnavailableException unreachable() {
        String why = connectFailure;
        return new StoreUnavailableException("cannot connect to " + description + " within "
                + client.getZookeeperClient().getConnectionTimeoutMs() + " ms (turnstile.connectTimeout)"
                + (why != null ? ": " + why : ""), null);
    }

    /** While the session is not proven alive, a lease cannot be renewed; once it is lost, never. */
    private void checkSession(String what) {
        session.check(what, description);
    }

    /**
     * Deletes a node this store gives up (a busy attempt, a dropped place, a node of its token), and
     * has the server's answer before it returns, also on an interrupted thread: a waiter that stopped
     * waiting has left the line by then, not a few milliseconds later.
     */
    void deleteQuietly(String path, String name) {
        uninterrupted(() -> {
            try {
                client.delete().guaranteed().forPath(path);
            } catch (KeeperException.NoNodeException gone) {
                // already gone
            } catch (Exception e) {
                // guaranteed() keeps trying in the background; the node is ephemeral besides
                log.debug("could not remove the busy attempt on lock '{}' yet: {}", name, e.toString());
            }
            return null;
        });
    }

    /**
     * Deletes every node of {@code token} under the lock's parent (they are named by it, see
     * {@link #nodePrefix}): those of a create whose answer was lost, which nobody here knows by path.
     */
    private void deleteOwnNodes(String parent, String token) {
        String own = nodePrefix(token);
        for (String child : uninterrupted(() -> children(parent))) {
            if (child.startsWith(own)) {
                deleteQuietly(parent + "/" + child, parent);
            }
        }
    }

    /**
     * Runs a cleanup with the calling thread's interrupt flag cleared, and raises the flag again
     * afterwards. ZooKeeper's client sends a request first and then waits for its answer, and that
     * wait throws {@link InterruptedException} at once while the flag is up: the server applies the
     * request all the same, but the caller cannot tell. A cleanup on an interrupted thread (an
     * interrupted wait's {@link #stopWaiting}, core's undo of a try that the interrupt cut off) would
     * so leave its delete to Curator's background retry, done only after the waiter had returned, and
     * fail the listing that finds a node whose create's answer the interrupt cut off: that node would
     * hold the line up until its queue timeout, or a lease node the lock for its whole TTL. Each call
     * is still bounded by the client's connection timeout and retry policy.
     */
    private static <T> T uninterrupted(Supplier<T> cleanup) {
        boolean interrupted = Thread.interrupted();
        try {
            return cleanup.get();
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
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

    RuntimeException failure(String what, Exception e) {
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
            return r instanceof StoreUnavailableException || r instanceof StoreSchemaException ? r
                    : new StoreUnavailableException(what + " on " + description
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
        private long queueTimeoutMs = DEFAULT_QUEUE_TIMEOUT.toMillis();
        private long holdSweepIntervalMs = DEFAULT_HOLD_SWEEP_INTERVAL.toMillis();

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
            String namespace = client.getNamespace();
            if ((namespace == null || namespace.isEmpty()) && (path.equals("/zookeeper") || path.startsWith("/zookeeper/"))) {
                throw new IllegalArgumentException("base path '" + path + "' is inside /zookeeper, which ZooKeeper keeps for "
                        + "itself (quotas, configuration): give another, such as /turnstile");
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

        /**
         * Sets how long a waiting acquire's place in line lasts without being written. The store
         * rewrites the places of its live waiters every third of this; a place whose process is
         * frozen (or cut off, before its session expires) is judged expired this long after its last
         * write, by the server's clock, and whoever meets it at the front of the line deletes it. So an
         * abandoned place delays the line by at most about this long (a waiter that gives up deletes
         * its place at once, and a dead one's place goes with its session). Default 3 s.
         *
         * @param timeout how long a place lasts after its last write
         * @return this builder
         * @throws IllegalArgumentException if not at least 100 ms
         */
        public Builder queueTimeout(Duration timeout) {
            if (timeout == null || timeout.toMillis() < 100) {
                throw new IllegalArgumentException("queue timeout " + timeout + " is invalid: give at least 100 ms "
                        + "(default 3 s): a waiter's place is rewritten every third of it");
            }
            this.queueTimeoutMs = timeout.toMillis();
            return this;
        }

        /**
         * Sets how often the store sweeps the base path for {@code lockAtLeastFor} hold markers whose
         * hold has ended. A store removes the markers it made itself when their hold ends; the sweep
         * is for those left by a process that is gone. Each sweep looks at up to 100 lock names (the
         * next ones in turn), and costs one read per name plus, if it finds a marker, one write for
         * the server's time. Default 1 min.
         *
         * @param interval the time between two sweeps
         * @return this builder
         * @throws IllegalArgumentException if not at least 100 ms
         */
        public Builder holdSweepInterval(Duration interval) {
            if (interval == null || interval.toMillis() < 100) {
                throw new IllegalArgumentException("hold sweep interval " + interval + " is invalid: give at least 100 ms "
                        + "(default 1 min)");
            }
            this.holdSweepIntervalMs = interval.toMillis();
            return this;
        }

        /**
         * Refuses a store whose nodes would land in ZooKeeper's reserved /zookeeper tree. The path
         * the server sees is the connect string's chroot, then the client's namespace, then the base
         * path, so basePath() alone cannot tell: {@code namespace("zookeeper")} with the default
         * base path writes /zookeeper/turnstile, and {@code namespace("zookeeper/quota")} writes
         * into the quota tree.
         */
        private void checkNotReserved() {
            String connect = client.getZookeeperClient().getCurrentConnectionString();
            int slash = connect == null ? -1 : connect.indexOf('/');
            String chroot = slash < 0 ? "" : connect.substring(slash);
            String namespace = client.getNamespace() == null || client.getNamespace().isEmpty() ? "" : "/" + client.getNamespace();
            String effective = (chroot + namespace + basePath).replaceAll("/{2,}", "/");
            if (effective.equals("/zookeeper") || effective.startsWith("/zookeeper/")) {
                String how = !chroot.isEmpty() && (chroot + "/").startsWith("/zookeeper/") ? "the connect string's chroot '" + chroot + "'"
                        : !namespace.isEmpty() ? "the client's namespace '" + namespace.substring(1) + "' with base path '" + basePath + "'"
                        : "base path '" + basePath + "'";
                throw new IllegalArgumentException("the store's nodes would go to " + effective + " (" + how + "), inside "
                        + "/zookeeper, which ZooKeeper keeps for itself (quotas, configuration): give the client another "
                        + "namespace, or a base path such as /turnstile under a namespace of your own");
            }
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
         * @throws IllegalArgumentException if the store's nodes would go inside /zookeeper (the
         *     connect string's chroot, the client's namespace and the base path together)
         */
        public ZooKeeperLockStore build() {
            checkNotReserved();
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
