package dev.turnstile.zookeeper;

import dev.turnstile.LockInfo;
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
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.KeeperException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A lock store on ZooKeeper over Apache Curator. What it gives users — the node layout, who holds a
 * lock, expiry on the server's clock, fences from creation zxids, {@code lockAtLeastFor} markers,
 * sessions and the waiting line — is described once, in {@code docs/stores/zookeeper.md}; this class
 * composes the parts that do it:
 *
 * <ul>
 *   <li>{@code LockNodes}: a lock's nodes, how they are named, created and judged (the lowest
 *       unexpired sequence holds the lock; an expired node ahead is deleted with its version, so a
 *       concurrent extend wins), and how a failed request is reported;</li>
 *   <li>{@code LeaseNodes}: this store's leases: an acquire that does not wait, extend and release,
 *       none retrying more than {@code LockNodes.MAX_RACES} times after another client's write;</li>
 *   <li>{@code SessionGuard}: the session as the proof of the held leases (docs/design.md, rule 8):
 *       a lease is proven only until the last answered request plus the session timeout, less a
 *       margin, and a heartbeat every quarter of the session timeout moves that on;
 *       {@code LeaseNodeWatch} tells a held lease at once when its node is deleted by someone else;</li>
 *   <li>{@code WaitingLine}: waiting acquires' places in line, each watching only the node ahead;</li>
 *   <li>{@code HoldMarkers}: the persistent markers that keep a lock until {@code lockAtLeastFor}
 *       after an early release, and their sweep;</li>
 *   <li>{@code LockAdmin}: listing and forced release; {@code ConnectGate}: one bounded wait for a
 *       connection per call.</li>
 * </ul>
 *
 * <p><b>Interrupts.</b> An interrupt ends a wait, never the cleanup after it: a try that an interrupt
 * cuts off while its create is in flight deletes the node the server may have made (found by its
 * token) before it throws, and {@link #release} and {@link #stopWaiting} work on an interrupted thread
 * (the flag is kept), with every delete answered before they return.
 *
 * <p>Past 400 lines only by its public {@link Builder}, each of whose options documents itself.
 */
public final class ZooKeeperLockStore implements LockStore, NotifiesReleases, SessionBoundLeases, KeepsWaitingLine {
    private static final Logger log = LoggerFactory.getLogger(ZooKeeperLockStore.class);
    private static final String DEFAULT_BASE = "/turnstile";
    /** The default {@link Builder#queueTimeout}. */
    static final Duration DEFAULT_QUEUE_TIMEOUT = Duration.ofSeconds(3);
    /** The default {@link Builder#holdSweepInterval}. */
    static final Duration DEFAULT_HOLD_SWEEP_INTERVAL = Duration.ofMinutes(1);

    private final CuratorFramework client;
    private final boolean ownsClient;
    private final String description;
    private volatile boolean closed;
    /** Proves the session alive while leases are held, and wakes the waiting line. */
    private final ScheduledExecutorService watchThread;
    /**
     * Ends hold markers and sweeps expired ones ({@link HoldMarkers}), and arms lease watches: its
     * own thread, so that this I/O never delays the session heartbeat on {@link #watchThread}.
     */
    private final ScheduledExecutorService sweepThread;
    private final SessionGuard session;
    private final ConnectionStateListener stateListener;
    private final ConnectGate gate;
    private final LockNodes nodes;
    private final HoldMarkers holds;
    private final LeaseNodes leases;
    private final WaitingLine line;
    private final LockAdmin admin;

    private ZooKeeperLockStore(Builder b) {
        this.client = b.client;
        this.ownsClient = b.ownsClient;
        this.description = b.description != null ? b.description : "zookeeper (" + b.client.getZookeeperClient().getCurrentConnectionString()
                + ", " + b.basePath + ")";
        this.watchThread = daemonThread("turnstile-zookeeper-watch");
        this.sweepThread = daemonThread("turnstile-zookeeper-sweep");
        this.nodes = new LockNodes(client, b.basePath, description, () -> closed);
        this.session = new SessionGuard(client, b.sessionTimeoutMs, watchThread, () -> closed, this::forgetSessionNodes);
        this.gate = new ConnectGate(client, session, description);
        this.holds = new HoldMarkers(nodes, session, () -> closed, client, sweepThread, b.holdSweepIntervalMs);
        this.leases = new LeaseNodes(client, nodes, session, holds);
        this.line = new WaitingLine(nodes, leases, client, session, watchThread, b.queueTimeoutMs);
        this.admin = new LockAdmin(client, nodes);
        this.stateListener = session::stateChanged;
        client.getConnectionStateListenable().addListener(stateListener);
    }

    private static ScheduledExecutorService daemonThread(String name) {
        return Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        });
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
        leases.forgetAll();
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
            LeaseNodes.Found own = leases.own(token);
            if (own != null) {
                new LeaseNodeWatch(client, session, sweepThread, () -> closed, own.path(), token, proof).armLater();
            }
        }
        return () -> session.unwatch(token, proof);
    }

    @Override
    public Optional<Grant> tryAcquire(AcquireRequest request) {
        checkOpen();
        return request.waiting() ? line.waitInLine(request) : leases.acquire(request);
    }

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

    /** How many woken waiting tries took their turn by one transaction, granted or not (for tests). */
    long turns() {
        return line.turns();
    }

    @Override
    public boolean extend(String name, String token, Duration ttl) {
        checkOpen();
        return leases.extend(name, token, ttl);
    }

    @Override
    public boolean release(String name, String token, Duration lockAtLeastFor) {
        checkOpen();
        try {
            // A release is an undo (of a lease, or of a try that failed), and both come on interrupted
            // threads: a job interrupted on lease loss releases in its finally block, and core undoes a
            // try that an interrupt cut off on the very thread it interrupted (see LockNodes.uninterrupted).
            return LockNodes.uninterrupted(() -> {
                stopWaiting(name, token); // an ambiguous waiting try is undone by a release of its token
                return leases.release(name, token, lockAtLeastFor);
            });
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

    @Override
    public List<LockInfo> heldLocks() {
        checkOpen();
        return admin.heldLocks();
    }

    @Override
    public boolean forceRelease(String name) {
        checkOpen();
        return admin.forceRelease(name);
    }

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

    /** Refuses calls on a closed store, and waits for a connection once (see {@link ConnectGate}). */
    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("the ZooKeeper lock store " + description + " is closed");
        }
        gate.awaitConnection();
    }

    /** The path of a lock's parent node (for tests). */
    String lockPath(String name) {
        return nodes.lockPath(name);
    }

    /** Builds a {@link ZooKeeperLockStore}. Not thread-safe. */
    public static final class Builder {
        private final CuratorFramework client;
        private boolean ownsClient;
        private long sessionTimeoutMs = 60_000;
        private String basePath = DEFAULT_BASE;
        private @Nullable String description;
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

        /**
         * Sets how the store names itself in messages and logs. Must not contain secrets. Default:
         * the client's connect string and the base path.
         *
         * @param description for example {@code zookeeper://zk1:2181/turnstile}
         * @return this builder
         * @throws IllegalArgumentException if {@code description} is null
         */
        public Builder description(String description) {
            if (description == null) {
                throw new IllegalArgumentException("description is null: give a text that names the ensemble without "
                        + "secrets, or do not set it");
            }
            this.description = description;
            return this;
        }

        /** The store closes the client on close (it opened it from a URL). */
        Builder owningClient() {
            this.ownsClient = true;
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
