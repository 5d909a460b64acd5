package dev.turnstile.redis;

import dev.turnstile.LockInfo;
import dev.turnstile.StoreUnavailableException;
import dev.turnstile.spi.AcquireRequest;
import dev.turnstile.spi.Grant;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.NotifiesReleases;
import dev.turnstile.spi.ReleaseListener;
import dev.turnstile.spi.ReleaseResult;
import dev.turnstile.spi.ReleaseWatch;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Redlock: one lock over N independent Redis masters (odd, at least 3). An acquire runs on every
 * node at once and succeeds when a majority granted it within the validity window, that is when
 * {@code TTL - elapsed - drift} is still positive (drift: 1% of the TTL plus 2 ms); otherwise its
 * token is released on every node. Extend needs a majority too. A node that is down or slow costs
 * at most the per-node timeout, never the TTL; when fewer than a majority of nodes answer, the
 * operation fails with {@link StoreUnavailableException}.
 *
 * <p><b>Fences are not safe under Redlock.</b> Each node keeps its own counter (following its own
 * clock in microseconds, as every Redis store does), and two successive majorities share only some nodes, so the highest fence
 * of one grant can be lower than the highest fence of an earlier grant on other nodes when their
 * clocks disagree by more than the time between the grants; a node that restarts without persistence or whose clock
 * jumps can also let two clients hold majorities at once. Redlock is a good efficiency lock (it
 * survives a minority of nodes down); where correctness depends on the lock, use a single store
 * with safe fences and check the fence at the resource.
 */
public final class RedlockLockStore implements LockStore, NotifiesReleases, dev.turnstile.spi.StoreClock,
        dev.turnstile.spi.PrunesNames {
    private final List<RedisLockStore> nodes;
    private final int quorum;
    private final Duration nodeTimeout;
    private final ExecutorService pool;
    private final String description;
    private final List<Runnable> closers = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** The default {@link Builder#nodeTimeout}. */
    static final Duration DEFAULT_NODE_TIMEOUT = Duration.ofMillis(100);

    private RedlockLockStore(List<RedisLockStore> nodes, Duration nodeTimeout, String description) {
        this.nodes = List.copyOf(nodes);
        this.quorum = nodes.size() / 2 + 1;
        this.nodeTimeout = nodeTimeout;
        this.description = description;
        this.pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "turnstile-redlock");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Starts a builder over independent nodes. Each node's store should use a command timeout no
     * longer than the {@link Builder#nodeTimeout node timeout}.
     *
     * @param nodes the nodes' stores (each a standalone master, same key prefix); closed with this store
     * @return a builder
     * @throws IllegalArgumentException if {@code nodes} is null, or there are fewer than 3 nodes or
     *     an even number of them
     */
    public static Builder builder(List<RedisLockStore> nodes) {
        // not nodes.contains(null): List.of's contains throws NullPointerException for a null
        if (nodes == null || nodes.stream().anyMatch(Objects::isNull)) {
            throw new IllegalArgumentException((nodes == null ? "nodes is null" : "the node list holds a null")
                    + ": give the stores of 3, 5 or 7 independent Redis masters");
        }
        checkNodeCount(nodes.size());
        return new Builder(List.copyOf(nodes));
    }

    /**
     * Builds Redlock over independent nodes: {@code builder(nodes).nodeTimeout(nodeTimeout).build()}.
     *
     * @param nodes the nodes' stores (each a standalone master, same key prefix); closed with this store
     * @param nodeTimeout how long to wait for a node before counting it as failed
     * @return the store
     * @throws IllegalArgumentException as {@link #builder} and {@link Builder#build} do
     */
    public static RedlockLockStore of(List<RedisLockStore> nodes, Duration nodeTimeout) {
        return builder(nodes).nodeTimeout(nodeTimeout).build();
    }

    /** Builds a {@link RedlockLockStore}. Not thread-safe. */
    public static final class Builder {
        private final List<RedisLockStore> nodes;
        private Duration nodeTimeout = DEFAULT_NODE_TIMEOUT;
        private final List<Runnable> closers = new ArrayList<>();

        private Builder(List<RedisLockStore> nodes) {
            this.nodes = nodes;
        }

        /**
         * Sets how long to wait for a node before counting it as failed. Default 100 ms.
         *
         * @param nodeTimeout 1 ms to 1 day (a lock's whole call waits at most this long for the nodes)
         * @return this builder
         * @throws IllegalArgumentException if it is null, or outside that range
         */
        public Builder nodeTimeout(Duration nodeTimeout) {
            if (nodeTimeout == null || nodeTimeout.compareTo(Duration.ofMillis(1)) < 0 || nodeTimeout.compareTo(Duration.ofDays(1)) > 0) {
                throw new IllegalArgumentException("Redlock node timeout must be positive and at most a day (1ms to 1d), got "
                        + nodeTimeout);
            }
            this.nodeTimeout = nodeTimeout;
            return this;
        }

        /** Runs {@code closer} after the nodes are closed (shared client resources of a URL store). */
        Builder alsoClosing(Runnable closer) {
            closers.add(closer);
            return this;
        }

        /**
         * Builds the store: connects to every node up front, in parallel (a node that is down now is
         * retried on use).
         *
         * @return the store
         * @throws IllegalArgumentException if two nodes are one server (the same {@code run_id} in
         *     {@code INFO server}, whatever the addresses: it would count twice towards a majority);
         *     the nodes are closed then
         */
        public RedlockLockStore build() {
            StringBuilder d = new StringBuilder("redlock over ").append(nodes.size()).append(" nodes [");
            for (int i = 0; i < nodes.size(); i++) {
                d.append(i > 0 ? ", " : "").append(nodes.get(i).description());
            }
            RedlockLockStore store = new RedlockLockStore(nodes, nodeTimeout, d.append(']').toString());
            store.connectAll();
            try {
                store.refuseOneServerTwice();
            } catch (RuntimeException e) {
                store.close();
                throw e;
            }
            store.closers.addAll(closers); // refused, the caller closes what it made itself
            return store;
        }
    }

    /**
     * Connecting (TCP, handshake, a cold JVM's first Netty use) can take far longer than a lock
     * command, so it happens up front, in parallel and with the nodes' own connect timeout, and
     * does not eat into the per-node command timeout later. A node that is down now is retried
     * on use.
     */
    private void connectAll() {
        List<Future<?>> connecting = new ArrayList<>();
        for (RedisLockStore node : nodes) {
            connecting.add(pool.submit(node::connect));
        }
        for (Future<?> f : connecting) {
            try {
                f.get(10, TimeUnit.SECONDS);
            } catch (ExecutionException | TimeoutException e) {
                // counted as failed on use
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /**
     * Two addresses of one server (localhost and 127.0.0.1, a DNS alias) would give it two votes.
     * The spelling cannot tell; the server's {@code run_id} can. A node that cannot be asked now is
     * not compared.
     */
    private void refuseOneServerTwice() {
        List<Future<String>> ids = new ArrayList<>();
        for (RedisLockStore node : nodes) {
            ids.add(pool.submit(node::serverRunId));
        }
        Map<String, String> seen = new HashMap<>();
        for (int i = 0; i < nodes.size(); i++) {
            String id;
            try {
                id = ids.get(i).get(10, TimeUnit.SECONDS);
            } catch (ExecutionException | TimeoutException e) {
                continue;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new StoreUnavailableException("interrupted while asking the Redlock nodes who they are", e);
            }
            String node = nodes.get(i).description();
            String other = id == null ? null : seen.putIfAbsent(id, node);
            if (other != null) {
                throw new IllegalArgumentException("Redlock nodes must be independent servers, but " + other + " and " + node
                        + " are the same server (run_id " + id + "): it would count twice towards a majority; list each server once");
            }
        }
    }

    static void checkNodeCount(int n) {
        if (n < 3 || n % 2 == 0) {
            throw new IllegalArgumentException("Redlock needs an odd number of at least 3 independent nodes, got " + n
                    + (n % 2 == 0 && n >= 3 ? ": with an even count a split can leave no majority; add or drop one node" : ""));
        }
    }

    /**
     * Returns how many nodes must agree.
     *
     * @return N/2 + 1
     */
    public int quorum() {
        return quorum;
    }

    @Override
    public Optional<Grant> tryAcquire(AcquireRequest r) {
        long start = System.nanoTime();
        Replies<Optional<Grant>> replies = onAll("acquire lock '" + r.name() + "'", n -> n.tryAcquire(r));
        long elapsed = System.nanoTime() - start;
        long validity = r.ttl().toNanos() - elapsed - (r.ttl().toNanos() / 100 + 2_000_000L);
        List<Grant> grants = replies.values().stream().flatMap(Optional::stream).toList();
        if (grants.size() >= quorum && validity > 0) {
            Grant first = grants.get(0);
            long fence = grants.stream().mapToLong(Grant::fence).max().orElseThrow();
            return Optional.of(new Grant(fence, first.acquiredAt(), first.acquiredAt().plusNanos(validity + elapsed)));
        }
        // Partial grants would block others until their TTL: give them back.
        onAll("undo a partial acquire of '" + r.name() + "'", n -> n.release(r.name(), r.token(), Duration.ZERO));
        replies.requireQuorumAnswered(quorum);
        return Optional.empty();
    }

    @Override
    public boolean extend(String name, String token, Duration ttl) {
        long start = System.nanoTime();
        Replies<Boolean> replies = onAll("extend lock '" + name + "'", n -> n.extend(name, token, ttl));
        long ok = replies.values().stream().filter(Boolean::booleanValue).count();
        if (ok >= quorum && System.nanoTime() - start < ttl.toNanos()) {
            return true;
        }
        replies.requireQuorumAnswered(quorum);
        return false;
    }

    @Override
    public boolean release(String name, String token, Duration lockAtLeastFor) {
        return releaseReporting(name, token, lockAtLeastFor) != ReleaseResult.NOT_HELD;
    }

    /**
     * Releases on every node; each node decides lockAtLeastFor on its own clock. The lock stays
     * taken ({@code KEPT_FOR_AT_LEAST}) when a majority of nodes kept it; it is {@code FREED} when
     * a majority held the token but fewer than a majority kept it (no other client can be kept out
     * then either), and {@code NOT_HELD} when fewer than a majority held it.
     */
    @Override
    public ReleaseResult releaseReporting(String name, String token, Duration lockAtLeastFor) {
        Replies<ReleaseResult> replies = onAll("release lock '" + name + "'", n -> n.releaseReporting(name, token, lockAtLeastFor));
        long held = replies.values().stream().filter(r -> r != ReleaseResult.NOT_HELD).count();
        long kept = replies.values().stream().filter(r -> r == ReleaseResult.KEPT_FOR_AT_LEAST).count();
        if (kept >= quorum) {
            return ReleaseResult.KEPT_FOR_AT_LEAST;
        }
        if (held >= quorum) {
            return ReleaseResult.FREED;
        }
        replies.requireQuorumAnswered(quorum);
        return ReleaseResult.NOT_HELD;
    }

    @Override
    public boolean forceRelease(String name) {
        Replies<Boolean> replies = onAll("force-release lock '" + name + "'", n -> n.forceRelease(name));
        replies.requireQuorumAnswered(quorum);
        return replies.values().stream().anyMatch(Boolean::booleanValue);
    }

    /**
     * The nodes' clocks (Redis {@code TIME}; each node times its own copy of a lease): the median
     * of those that answered, a majority at least, so one node's wrong clock does not show.
     */
    @Override
    public java.time.Instant now() {
        Replies<java.time.Instant> replies = onAll("read the clock", RedisLockStore::now);
        replies.requireQuorumAnswered(quorum);
        List<java.time.Instant> sorted = replies.values().stream().sorted().toList();
        return sorted.get(sorted.size() / 2);
    }

    /**
     * Prunes every node in turn, as {@link RedisLockStore#pruneUnused} does (each node's fences stay
     * above its own earlier ones; Redlock's fence is not a safe one anyway). A node that fails does not
     * stop the others; the first failure is thrown after all were tried.
     *
     * @return the most names one node forgot
     */
    @Override
    public long pruneUnused(Duration unusedFor) {
        long most = 0;
        StoreUnavailableException failure = null;
        for (RedisLockStore node : nodes) {
            try {
                most = Math.max(most, node.pruneUnused(unusedFor));
            } catch (StoreUnavailableException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
        return most;
    }

    /** A lock counts as held when a majority of nodes hold it. */
    @Override
    public List<LockInfo> heldLocks() {
        Replies<List<LockInfo>> replies = onAll("list locks", RedisLockStore::heldLocks);
        replies.requireQuorumAnswered(quorum);
        Map<String, List<LockInfo>> byName = new HashMap<>();
        replies.values().forEach(list -> list.forEach(i -> byName.computeIfAbsent(i.name(), k -> new ArrayList<>()).add(i)));
        List<LockInfo> out = new ArrayList<>();
        byName.forEach((name, infos) -> {
            if (infos.size() >= quorum) {
                out.add(infos.stream().max(Comparator.comparingLong(LockInfo::fence)).orElseThrow());
            }
        });
        out.sort(Comparator.comparing(LockInfo::name));
        return out;
    }

    @Override
    public ReleaseWatch watchReleases(String name, ReleaseListener listener) {
        List<ReleaseWatch> watches = nodes.stream().map(n -> n.watchReleases(name, listener)).toList();
        return () -> watches.forEach(ReleaseWatch::close);
    }

    @Override
    public String description() {
        return description;
    }

    @Override
    public void close() {
        pool.shutdownNow();
        nodes.forEach(RedisLockStore::close);
        closers.forEach(Runnable::run);
    }

    @Override
    public boolean isClosed() {
        return pool.isShutdown();
    }

    /** The answers of the nodes that answered in time, and how many did not. */
    private record Replies<T>(List<T> values, int failed, String what, @Nullable String firstError) {
        void requireQuorumAnswered(int quorum) {
            if (values.size() < quorum) {
                throw new StoreUnavailableException("cannot " + what + ": only " + values.size() + " of "
                        + (values.size() + failed) + " Redlock nodes answered, " + quorum + " are needed"
                        + (firstError != null ? " (" + firstError + ")" : ""), null);
            }
        }
    }

    private <T> Replies<T> onAll(String what, Function<RedisLockStore, T> op) {
        List<Future<T>> futures = new ArrayList<>(nodes.size());
        for (RedisLockStore node : nodes) {
            futures.add(pool.submit(() -> op.apply(node)));
        }
        long deadline = System.nanoTime() + nodeTimeout.toNanos() + 5_000_000L;
        List<T> values = new ArrayList<>(nodes.size());
        int failed = 0;
        String firstError = null;
        for (Future<T> f : futures) {
            try {
                values.add(f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
            } catch (TimeoutException e) {
                f.cancel(true);
                failed++;
                firstError = firstError != null ? firstError : "a node did not answer within " + nodeTimeout.toMillis() + " ms";
            } catch (ExecutionException e) {
                failed++;
                firstError = firstError != null ? firstError : String.valueOf((e.getCause() != null ? e.getCause() : e).getMessage());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                futures.forEach(x -> x.cancel(true));
                throw new StoreUnavailableException("interrupted while waiting for Redlock nodes", e);
            }
        }
        return new Replies<>(values, failed, what, firstError);
    }
}
