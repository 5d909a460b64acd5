package dev.turnstile.zookeeper;

import dev.turnstile.StoreSchemaException;
import dev.turnstile.StoreUnavailableException;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorWatcher;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A lock's nodes under {@code <base>/locks/<encoded name>}: how they are named, created, listed and
 * judged, and how a failed request is reported. Who holds a lock follows from its children alone:
 * the unexpired hold marker, else the lowest unexpired sequence; an expired node ahead is deleted
 * with its version, so that one extended meanwhile survives (see {@code docs/stores/zookeeper.md}).
 */
final class LockNodes {
    private static final Logger log = LoggerFactory.getLogger(LockNodes.class);
    static final String LOCK_PREFIX = "lock-";
    static final String HOLD = "hold";
    static final byte[] EMPTY = new byte[0];
    /**
     * How many times a release, extend or force-release looks again after another client's write
     * got in its way, before it gives up with {@link StoreUnavailableException}: no store call loops
     * without bound.
     */
    static final int MAX_RACES = 8;
    /** What {@link #ahead} returns when the caller's own node is not among the children. */
    static final String MISSING = "";

    private final CuratorFramework client;
    private final String base;
    private final String description;
    private final BooleanSupplier closed;

    LockNodes(CuratorFramework client, String base, String description, BooleanSupplier closed) {
        this.client = client;
        this.base = base;
        this.description = description;
        this.closed = closed;
    }

    String base() {
        return base;
    }

    String description() {
        return description;
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

    /** How the nodes of one token are named: {@code <encoded token>-lock-<sequence>}. */
    static String nodePrefix(String token) {
        return encode(token) + "-" + LOCK_PREFIX;
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

    /** The lease nodes of a lock (not the hold marker), lowest sequence first. */
    static List<String> sorted(List<String> children) {
        List<String> out = new ArrayList<>();
        for (String c : children) {
            if (c.contains(LOCK_PREFIX) && sequence(c) >= 0) {
                out.add(c);
            }
        }
        out.sort(Comparator.comparingLong(LockNodes::sequence));
        return out;
    }

    /**
     * The nodes in front of the node with sequence {@code seq} among a lock's {@code children}, front
     * first: the hold marker if there is one, then the lower sequences in order.
     */
    static List<String> inFront(List<String> children, long seq) {
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
        return order;
    }

    /** The children of {@code parent}; none if it does not exist. */
    List<String> children(String parent) {
        try {
            return client.getChildren().forPath(parent);
        } catch (KeeperException.NoNodeException none) {
            return List.of();
        } catch (Exception e) {
            throw failure("reading " + parent, e);
        }
    }

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
            // The node's own name, under the parent as this store names it: the path a transaction's
            // create returns still carries a chroot of the connect string (ZooKeeper's client strips
            // it from a plain create's answer, not from a transaction's).
            String made = results.get(0).getResultPath();
            String path = parent + "/" + made.substring(made.lastIndexOf('/') + 1);
            if (sequence(path) < 0) {
                // The parent's sequence counter (a signed int: every child made or deleted since the
                // parent was made counts) has run past its largest value, and new names get negative
                // numbers, which would sort ahead of the line: the node must not stay. An empty
                // parent is made anew (with a fresh counter); one with nodes left waits for them.
                deleteQuietly(path, parent);
                if (attempt < 3 && deleteIfEmpty(parent)) {
                    continue;
                }
                throw new StoreUnavailableException("the lock under " + parent + " on " + description + " cannot take "
                        + "new nodes: ZooKeeper's sequence counter of its node has run out (2^31 nodes made and deleted "
                        + "under it since it was made). It is made anew as soon as the lock is free and nobody waits; "
                        + "until then acquires of it fail", null);
            }
            return new Created(path, p.getMzxid(), p.getMtime(), p.getNumChildren() == 1);
        }
    }

    /** Deletes the lock's parent if it has no children; true if it is gone. */
    private boolean deleteIfEmpty(String parent) {
        try {
            client.delete().forPath(parent);
            return true;
        } catch (KeeperException.NoNodeException gone) {
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (Exception notEmpty) {
            return false;
        }
    }

    /**
     * Whether no unexpired lease or place is ahead of the node with sequence {@code seq}: deletes the
     * expired ones it meets (with their version, so that one extended or touched meanwhile survives
     * and is met again), and this token's own older nodes (a create Curator sent twice).
     */
    boolean isFirst(String parent, long seq, long now, String token) {
        return ahead(parent, seq, now, token, null, null) == null;
    }

    /**
     * How a waiter in line looks ahead of its place, and what the look found. A waiter must watch
     * the node right ahead of it; when that node is the front one, the read that judges the front
     * sets the watch too, so one request does both. A place just made behind other waiters leaves
     * the front unjudged: the waiter right behind the front judges it on each of its own tries, and
     * this waiter's next try (a wake or a poll) judges it if it is still in front. That saves a read
     * per queueing. The look also keeps the nodes it found in front, for the woken waiter's
     * one-transaction turn ({@code WaitingLine.takeTurn}).
     */
    static final class Look {
        final CuratorWatcher watcher;
        final boolean judgeFront;
        /** The expiry (server time) of the unexpired front node, if it was judged; else the largest long. */
        long frontExpiry = Long.MAX_VALUE;
        /** Whether the judging read set {@link #watcher} on the node returned (then no other watch is needed). */
        boolean watching;
        /** The nodes in front as the last listing showed them, front first (see {@link #inFront}). */
        List<String> front = List.of();

        Look(CuratorWatcher watcher, boolean judgeFront) {
            this.watcher = watcher;
            this.judgeFront = judgeFront;
        }
    }

    /**
     * The nearest node ahead of the node with sequence {@code seq} while an unexpired lease, place or
     * hold marker is ahead of it; null when none is (the node is first). With a {@code look}, it may
     * leave the front unjudged and may watch it (see {@link Look}), and records what it learnt there.
     * If {@code mine} is given and that node is not among the children, returns {@link #MISSING}.
     */
    @Nullable String ahead(String parent, long seq, long now, String token, @Nullable Look look,
            @Nullable String mine) {
        String own = nodePrefix(token);
        while (true) {
            List<String> children = children(parent);
            if (mine != null && !children.contains(mine)) {
                return MISSING;
            }
            List<String> order = inFront(children, seq);
            if (look != null) {
                look.front = order;
            }
            if (order.isEmpty()) {
                return null;
            }
            String first = order.get(0);
            if (first.startsWith(own)) {
                deleteQuietly(parent + "/" + first, parent);
                continue;
            }
            String last = order.get(order.size() - 1);
            if (look != null && order.size() > 1 && !look.judgeFront) {
                return last;
            }
            CuratorWatcher watcher = look != null && order.size() == 1 ? look.watcher : null;
            long[] expiry = new long[1];
            Verdict v = judge(parent + "/" + first, now, expiry, watcher);
            if (v == Verdict.HELD) {
                if (look != null) {
                    look.frontExpiry = expiry[0];
                    look.watching = watcher != null;
                }
                return last;
            }
            // CHANGED: extended under us. GONE: released, expired, or swapped for the hold node in one
            // transaction (a release with lockAtLeastFor) after our listing: the list is stale either
            // way, so read it again, or we would miss the hold node.
        }
    }

    private enum Verdict { HELD, GONE, CHANGED }

    /**
     * Reads one node: held (unexpired at {@code now}), gone (or deleted now as expired), or changed
     * under us. With a {@code watcher}, the read also watches the node.
     */
    private Verdict judge(String path, long now, long[] expiry, @Nullable CuratorWatcher watcher) {
        Stat stat = new Stat();
        byte[] bytes;
        try {
            bytes = watcher == null ? client.getData().storingStatIn(stat).forPath(path)
                    : client.getData().storingStatIn(stat).usingWatcher(watcher).forPath(path);
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

    /** The server's clock now (epoch ms): the mtime of a write to the store's clock node. */
    long serverNow() {
        String clock = base + "/clock";
        try {
            try {
                return client.setData().forPath(clock, EMPTY).getMtime();
            } catch (KeeperException.NoNodeException first) {
                try {
                    client.create().creatingParentsIfNeeded().forPath(clock, EMPTY);
                } catch (KeeperException.NodeExistsException raced) {
                    // created by another client meanwhile
                }
                return client.setData().forPath(clock, EMPTY).getMtime();
            }
        } catch (Exception e) {
            throw failure("reading the server's clock", e);
        }
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
    void deleteOwnNodes(String parent, String token) {
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
     * interrupted wait's stopWaiting, core's undo of a try that the interrupt cut off) would so leave
     * its delete to Curator's background retry, done only after the waiter had returned, and fail the
     * listing that finds a node whose create's answer the interrupt cut off: that node would hold the
     * line up until its queue timeout, or a lease node the lock for its whole TTL. Each call is still
     * bounded by the client's connection timeout and retry policy.
     */
    static <T> T uninterrupted(Supplier<T> cleanup) {
        boolean interrupted = Thread.interrupted();
        try {
            return cleanup.get();
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** The failure of a store call that met {@link #MAX_RACES} other clients' writes in a row. */
    StoreUnavailableException raced(String what) {
        return new StoreUnavailableException(what + " on " + description + " failed: the lock's nodes changed under it "
                + MAX_RACES + " times in a row (other clients' writes); try again", null);
    }

    /** What a failed request throws: closed, refused by the ACLs, or unavailable (the interrupt flag kept). */
    RuntimeException failure(String what, Exception e) {
        if (e instanceof InterruptedException) {
            Thread.currentThread().interrupt();
        }
        if (closed.getAsBoolean()) {
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
}
