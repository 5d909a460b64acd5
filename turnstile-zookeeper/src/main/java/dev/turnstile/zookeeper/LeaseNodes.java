package dev.turnstile.zookeeper;

import dev.turnstile.spi.AcquireRequest;
import dev.turnstile.spi.Grant;
import dev.turnstile.zookeeper.LockNodes.Created;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;

/**
 * The lease nodes of one store: an acquire that does not wait (one transaction when the lock is
 * free), extend, and release (a delete, or a swap for the {@code lockAtLeastFor} hold marker). It
 * keeps the node, stat and data of each lease it granted, so that release and extend go straight
 * to a versioned write; a version that moved means a read first, and a token it does not know (a
 * lease of another client, or a create whose answer was lost) means a scan of the lock's nodes.
 * None of its calls looks again more than {@link LockNodes#MAX_RACES} times after other writes.
 */
final class LeaseNodes {
    private final CuratorFramework client;
    private final LockNodes nodes;
    private final SessionGuard session;
    private final HoldMarkers holds;
    /** This store's granted leases by token, as this store last wrote them. */
    private final Map<String, Found> own = new ConcurrentHashMap<>();

    LeaseNodes(CuratorFramework client, LockNodes nodes, SessionGuard session, HoldMarkers holds) {
        this.client = client;
        this.nodes = nodes;
        this.session = session;
        this.holds = holds;
    }

    /**
     * A lease node found by its token, with the server time its lease started (the acquiring write's
     * mtime: a place promoted, or a node that became first after others went, started its lease after
     * its creation; see {@link NodeData#leaseStartMs}) and, where this store granted it, when
     * ({@code nanoTime}) the acquiring write's answer arrived, else 0.
     */
    record Found(String path, Stat stat, NodeData data, long acquiredAtMs, long grantedNanos) {}

    /** Records a lease this store was granted (by {@link #acquire}, or a place promoted in {@link WaitingLine}). */
    void granted(String token, Found lease) {
        own.put(token, lease);
    }

    /** The node of this store's lease of {@code token}, if it granted one and has not seen it end; else null. */
    @Nullable Found own(String token) {
        return own.get(token);
    }

    /** The session's ephemeral nodes are gone with it. */
    void forgetAll() {
        own.clear();
    }

    /** One try that does not wait: a node of the caller's, kept if nothing unexpired is ahead of it. */
    Optional<Grant> acquire(AcquireRequest request) {
        String parent = nodes.lockPath(request.name());
        long ttlMs = Math.max(1, request.ttl().toMillis());
        NodeData data = NodeData.lease(request.owner(), request.token(), ttlMs, "mtime", System.currentTimeMillis());
        long t0 = System.nanoTime();
        Created c;
        try {
            c = nodes.create(parent, request.token(), data.bytes());
        } catch (Exception e) {
            throw nodes.failure("acquiring lock '" + request.name() + "'", e);
        }
        session.contacted(t0);
        long grantedAt = System.nanoTime();
        boolean granted = false;
        Stat stat = createdStat(c);
        try {
            boolean first = c.alone() || nodes.isFirst(parent, LockNodes.sequence(c.path()), c.ctime(), request.token());
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
            throw nodes.failure("acquiring lock '" + request.name() + "'", e);
        } finally {
            if (!granted) {
                nodes.deleteQuietly(c.path(), request.name());
            }
        }
        if (!granted) {
            return Optional.empty();
        }
        own.put(request.token(), new Found(c.path(), stat, data, stat.getMtime(), grantedAt));
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

    /** Finds the node of {@code token}: this store's own record first, else a scan of the lock's nodes; null if none. */
    private @Nullable Found find(String name, String token) {
        String parent = nodes.lockPath(name);
        Found known = own.get(token);
        if (known != null && known.path().startsWith(parent + "/")) {
            return known;
        }
        String mine = LockNodes.nodePrefix(token);
        for (String child : LockNodes.sorted(nodes.children(parent))) {
            if (child.startsWith(mine)) {
                Found f = read(parent + "/" + child, token);
                if (f != null) {
                    return f;
                }
            }
        }
        return null;
    }

    private @Nullable Found read(String path, String token) {
        Stat stat = new Stat();
        try {
            NodeData data = NodeData.parse(client.getData().storingStatIn(stat).forPath(path));
            return token.equals(data.token()) && data.untilMs() == null && !data.isPlace()
                    ? new Found(path, stat, data, data.leaseStartMs(stat), 0) : null;
        } catch (KeeperException.NoNodeException gone) {
            return null;
        } catch (Exception e) {
            throw nodes.failure("reading " + path, e);
        }
    }

    /** Renews the lease of {@code token} for {@code ttl} from now (server time); false if it has none. */
    boolean extend(String name, String token, Duration ttl) {
        session.check("extending lock '" + name + "'", nodes.description());
        long ttlMs = Math.max(1, ttl.toMillis());
        for (int attempt = 0; attempt < LockNodes.MAX_RACES; attempt++) {
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
                own.remove(token);
                return false;
            } catch (KeeperException.BadVersionException raced) {
                own.remove(token);
                continue;
            } catch (Exception e) {
                throw nodes.failure("extending lock '" + name + "'", e);
            }
            session.contact(t0);
            // The write's mtime is the server's clock at the extend: if the lease had run out by
            // then, a contender may already have judged it expired, so the extend does not count.
            if (written.getMtime() >= expiredAt) {
                nodes.deleteQuietly(f.path(), name);
                own.remove(token);
                return false;
            }
            own.computeIfPresent(token, (t, old) -> new Found(f.path(), written, next, old.acquiredAtMs(), old.grantedNanos()));
            return true;
        }
        throw nodes.raced("extending lock '" + name + "'");
    }

    /**
     * Ends the lease of {@code token}: true if this release ended one, false if it has none. A token
     * unknown here (another client's, or a create whose reply was lost) may have left two nodes (a
     * create sent twice), and neither may stay.
     */
    boolean release(String name, String token, Duration lockAtLeastFor) {
        if (!own.containsKey(token)) {
            boolean released = releaseFound(name, token, lockAtLeastFor);
            nodes.deleteOwnNodes(nodes.lockPath(name), token);
            return released;
        }
        return releaseFound(name, token, lockAtLeastFor);
    }

    /**
     * Deletes the token's lease node, or swaps it for a hold marker: true if this release ended a
     * lease of the token, false if it has none (expired and removed by a contender, force-released,
     * or gone with its session). Never loops: it looks again at most {@link LockNodes#MAX_RACES} times.
     */
    private boolean releaseFound(String name, String token, Duration lockAtLeastFor) {
        for (int attempt = 0; attempt < LockNodes.MAX_RACES; attempt++) {
            Found f = find(name, token);
            if (f == null) {
                own.remove(token);
                return false;
            }
            try {
                if (lockAtLeastFor.isZero() || holdIsOver(f, lockAtLeastFor)) {
                    client.delete().withVersion(f.stat().getVersion()).forPath(f.path());
                } else {
                    holdUntil(name, f, lockAtLeastFor);
                }
                own.remove(token);
                return true;
            } catch (KeeperException.NoNodeException gone) {
                // Either the lease node is gone, or (with a hold) the stale marker the transaction
                // also deletes was removed by another client since it was seen; the transaction
                // applied nothing either way. This store's record of the node cannot tell the two
                // apart, so forget it: the next look scans the lock's nodes and finds the lease node
                // again, or finds none (then the lease is not held, and the release says so).
                own.remove(token);
            } catch (KeeperException.BadVersionException raced) {
                own.remove(token);
            } catch (Exception e) {
                throw nodes.failure("releasing lock '" + name + "'", e);
            }
        }
        throw nodes.raced("releasing lock '" + name + "'");
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
        String parent = nodes.lockPath(name);
        String hold = parent + "/" + LockNodes.HOLD;
        long until = f.acquiredAtMs() + lockAtLeastFor.toMillis();
        NodeData marker = NodeData.hold(f.data(), f.stat().getCzxid(), f.acquiredAtMs(), until);
        List<CuratorOp> ops = new ArrayList<>();
        ops.add(client.transactionOp().delete().withVersion(f.stat().getVersion()).forPath(f.path()));
        if (client.checkExists().forPath(hold) != null) {
            ops.add(client.transactionOp().delete().forPath(hold));
        }
        ops.add(client.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(hold, marker.bytes()));
        ops.add(client.transactionOp().setData().forPath(parent, LockNodes.EMPTY));
        List<CuratorTransactionResult> results = client.transaction().forOperations(ops);
        long serverNow = results.get(results.size() - 1).getResultStat().getMtime();
        holds.endWhenOver(parent, f.stat().getCzxid(), until - serverNow);
    }
}
