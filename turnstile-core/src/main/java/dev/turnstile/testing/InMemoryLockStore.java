package dev.turnstile.testing;

import dev.turnstile.LockInfo;
import dev.turnstile.spi.AcquireRequest;
import dev.turnstile.spi.Grant;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.NotifiesReleases;
import dev.turnstile.spi.PrunesNames;
import dev.turnstile.spi.ReleaseListener;
import dev.turnstile.spi.ReleaseResult;
import dev.turnstile.spi.ReleaseWatch;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jspecify.annotations.Nullable;

/**
 * A store inside this JVM: the reference implementation of the {@link LockStore} contract, for
 * tests of code that uses Turnstile. Expiry is judged on the monotonic clock. It passes the same
 * contract suite as the real stores. Like Redis, it notifies {@linkplain #watchReleases watchers}
 * of releases (with the released token) and forced releases, but not of expiries.
 */
public final class InMemoryLockStore implements LockStore, NotifiesReleases, PrunesNames {
    private final Map<String, Row> rows = new HashMap<>();
    /** The highest fence of every pruned name: a name's first fence starts above it. */
    private long floor; // guarded by this
    private final Map<String, List<ReleaseListener>> watchers = new ConcurrentHashMap<>();
    private volatile boolean closed;

    private static final class Row {
        @Nullable String owner;
        @Nullable String token;
        long fence;
        long acquiredNanos;
        long expiresNanos;
        @Nullable Instant acquiredAt;
    }

    @Override
    public synchronized Optional<Grant> tryAcquire(AcquireRequest request) {
        checkOpen();
        long now = System.nanoTime();
        Row row = rows.computeIfAbsent(request.name(), k -> {
            Row fresh = new Row();
            fresh.fence = floor;
            return fresh;
        });
        if (row.token != null && row.expiresNanos - now > 0) {
            return Optional.empty();
        }
        row.owner = request.owner();
        row.token = request.token();
        row.fence++;
        row.acquiredNanos = now;
        row.expiresNanos = now + request.ttl().toNanos();
        row.acquiredAt = Instant.now();
        return Optional.of(new Grant(row.fence, row.acquiredAt, row.acquiredAt.plus(request.ttl())));
    }

    /**
     * Forgets the names not acquired for {@code unusedFor} whose lease ended that long ago (by the
     * monotonic clock), keeping their highest fence as the floor of every name's first fence, as the
     * SQL stores do.
     */
    @Override
    public synchronized long pruneUnused(Duration unusedFor) {
        checkOpen();
        long cutoff = System.nanoTime() - unusedFor.toNanos();
        long pruned = 0;
        for (var it = rows.values().iterator(); it.hasNext(); ) {
            Row row = it.next();
            if (row.expiresNanos - cutoff <= 0 && row.acquiredNanos - cutoff <= 0) {
                floor = Math.max(floor, row.fence);
                it.remove();
                pruned++;
            }
        }
        return pruned;
    }

    @Override
    public synchronized boolean extend(String name, String token, Duration ttl) {
        checkOpen();
        Row row = heldBy(name, token);
        if (row == null) {
            return false;
        }
        row.expiresNanos = System.nanoTime() + ttl.toNanos();
        return true;
    }

    @Override
    public boolean release(String name, String token, Duration lockAtLeastFor) {
        return releaseReporting(name, token, lockAtLeastFor) != ReleaseResult.NOT_HELD;
    }

    /** Says whether the lease was freed or kept for {@code lockAtLeastFor}, by this store's (monotonic) clock. */
    @Override
    public ReleaseResult releaseReporting(String name, String token, Duration lockAtLeastFor) {
        checkOpen();
        boolean freed;
        synchronized (this) {
            Row row = heldBy(name, token);
            if (row == null) {
                return ReleaseResult.NOT_HELD;
            }
            long atLeastEnd = row.acquiredNanos + lockAtLeastFor.toNanos();
            long now = System.nanoTime();
            row.expiresNanos = atLeastEnd - now > 0 ? atLeastEnd : now;
            freed = row.expiresNanos == now;
            if (freed) {
                row.token = null;
            }
        }
        if (freed) {
            notifyWatchers(name, token);
        }
        return freed ? ReleaseResult.FREED : ReleaseResult.KEPT_FOR_AT_LEAST;
    }

    @Override
    public synchronized List<LockInfo> heldLocks() {
        checkOpen();
        long now = System.nanoTime();
        Instant wallNow = Instant.now();
        List<LockInfo> out = new ArrayList<>();
        rows.forEach((name, row) -> {
            if (row.token != null && row.expiresNanos - now > 0) {
                // a row with a token has its owner and start: the acquire sets the three together
                out.add(new LockInfo(name, Objects.requireNonNull(row.owner), row.fence, Objects.requireNonNull(row.acquiredAt),
                        wallNow.plusNanos(row.expiresNanos - now)));
            }
        });
        out.sort(Comparator.comparing(LockInfo::name));
        return out;
    }

    @Override
    public boolean forceRelease(String name) {
        checkOpen();
        synchronized (this) {
            Row row = rows.get(name);
            if (row == null || row.token == null || row.expiresNanos - System.nanoTime() <= 0) {
                return false;
            }
            row.token = null;
        }
        notifyWatchers(name, null);
        return true;
    }

    @Override
    public ReleaseWatch watchReleases(String name, ReleaseListener listener) {
        checkOpen();
        watchers.computeIfAbsent(name, k -> new CopyOnWriteArrayList<>()).add(listener);
        return () -> watchers.computeIfPresent(name, (k, list) -> {
            list.remove(listener);
            return list.isEmpty() ? null : list;
        });
    }

    /** Outside the store's lock, as a real store's notification arrives on another thread. */
    private void notifyWatchers(String name, @Nullable String token) {
        List<ReleaseListener> list = watchers.get(name);
        if (list != null) {
            list.forEach(l -> l.released(token));
        }
    }

    @Override
    public String description() {
        return "in-memory store";
    }

    /** Marks the store closed: every later operation throws {@link IllegalStateException}. */
    @Override
    public void close() {
        closed = true;
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("the LockStore " + description() + " is closed: build a new one, and keep it "
                    + "open while a Turnstile uses it");
        }
    }

    private @Nullable Row heldBy(String name, String token) {
        Row row = rows.get(name);
        if (row == null || row.token == null || !row.token.equals(token) || row.expiresNanos - System.nanoTime() <= 0) {
            return null;
        }
        return row;
    }
}
