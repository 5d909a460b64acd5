package dev.turnstile.spring;

import dev.turnstile.LockInfo;
import dev.turnstile.StoreUnavailableException;
import dev.turnstile.spi.AcquireRequest;
import dev.turnstile.spi.Grant;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import dev.turnstile.spi.NotifiesReleases;
import dev.turnstile.spi.PrunesNames;
import dev.turnstile.spi.ReleaseListener;
import dev.turnstile.spi.ReleaseResult;
import dev.turnstile.spi.ReleaseWatch;
import dev.turnstile.spi.StoreCapability;
import dev.turnstile.spi.StoreUrls;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * A store opened from {@code turnstile.store.url} that could not be reached at start-up: each
 * operation tries to open it again until one succeeds, so the application starts (its health
 * indicator reports the store DOWN) and recovers when the store comes back.
 */
final class LazyUrlLockStore implements LockStore, NotifiesReleases {
    private final String url;
    private final Object lock = new Object();
    /** The opened store; null until an operation could open it. */
    private volatile @Nullable LockStore delegate;
    private volatile boolean closed;

    LazyUrlLockStore(String url) {
        this.url = url;
    }

    private LockStore store() {
        LockStore s = delegate;
        if (s != null) {
            return s;
        }
        synchronized (lock) {
            if (closed) {
                throw new IllegalStateException("the LockStore " + description() + " is closed");
            }
            if (delegate == null) {
                delegate = LockStores.open(url);
            }
            return delegate;
        }
    }

    @Override
    public Optional<Grant> tryAcquire(AcquireRequest request) {
        return store().tryAcquire(request);
    }

    @Override
    public boolean extend(String name, String token, Duration ttl) {
        return store().extend(name, token, ttl);
    }

    @Override
    public boolean release(String name, String token, Duration lockAtLeastFor) {
        return store().release(name, token, lockAtLeastFor);
    }

    @Override
    public ReleaseResult releaseReporting(String name, String token, Duration lockAtLeastFor) {
        return store().releaseReporting(name, token, lockAtLeastFor);
    }

    @Override
    public List<LockInfo> heldLocks() {
        return store().heldLocks();
    }

    @Override
    public boolean forceRelease(String name) {
        return store().forceRelease(name);
    }

    /**
     * Subscribes through the opened store, opening it first if it is back; while it cannot be
     * reached (to open, or to subscribe), the answer is "none" and waiters poll until it is back.
     */
    @Override
    public ReleaseWatch watchReleases(String name, ReleaseListener listener) {
        try {
            return store().capability(NotifiesReleases.class)
                    .map(notifying -> notifying.watchReleases(name, listener))
                    .orElse(ReleaseWatch.NONE);
        } catch (StoreUnavailableException e) {
            return ReleaseWatch.NONE; // waiters poll until the store is back
        }
    }

    /**
     * {@link NotifiesReleases} always (this class's own, above: before the store is open, waiters
     * subscribe through it); every other capability the opened store's, none before. Those concern a
     * lease or a wait, which exist only once the store was opened: a session store (ZooKeeper) must
     * hear of every lease, or the lease would never learn that its session was suspended or lost.
     * {@link PrunesNames} is asked of the store opened then and there (a scheduled prune on an
     * instance that has not locked anything since the store came back must not be told that the store
     * cannot prune); a store still unreachable throws {@link StoreUnavailableException}.
     */
    @Override
    public <C extends StoreCapability> Optional<C> capability(Class<C> type) {
        if (type == NotifiesReleases.class) {
            return Optional.of(type.cast(this));
        }
        if (type == PrunesNames.class) {
            return store().capability(type);
        }
        LockStore s = delegate;
        return s != null ? s.capability(type) : Optional.empty();
    }

    @Override
    public String description() {
        LockStore s = delegate;
        return s != null ? s.description() : StoreUrls.redact(url);
    }

    @Override
    public void close() {
        synchronized (lock) {
            closed = true;
            if (delegate != null) {
                delegate.close();
            }
        }
    }

    @Override
    public boolean isClosed() {
        return closed;
    }
}
