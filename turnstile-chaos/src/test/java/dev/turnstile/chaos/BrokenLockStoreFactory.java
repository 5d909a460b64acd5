package dev.turnstile.chaos;

import dev.turnstile.LockInfo;
import dev.turnstile.spi.AcquireRequest;
import dev.turnstile.spi.Grant;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStoreFactory;
import dev.turnstile.spi.StoreCapability;
import dev.turnstile.spi.LockStores;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * Test only: {@code broken+<inner-url>} opens the inner store with one bug, the classic one: release
 * ignores the token and frees whoever holds the lock ({@code GET}-less {@code DEL}). The chaos
 * checker must catch it.
 */
public final class BrokenLockStoreFactory implements LockStoreFactory {
    static final String SCHEME = "broken+";

    @Override
    public List<String> schemes() {
        return List.of(SCHEME);
    }

    @Override
    public LockStore open(String url) {
        return new BrokenStore(LockStores.open(inner(url)));
    }

    @Override
    public String schema(String url) {
        return LockStores.factoryFor(inner(url)).schema(inner(url));
    }

    @Override
    public void applySchema(String url) {
        LockStores.factoryFor(inner(url)).applySchema(inner(url));
    }

    private static String inner(String url) {
        return url.substring(SCHEME.length());
    }

    /** Delegates the lock calls, except that release frees the lock whoever holds it; declares no capability. */
    static final class BrokenStore implements LockStore {
        private final LockStore inner;

        BrokenStore(LockStore inner) {
            this.inner = inner;
        }

        @Override
        public Optional<Grant> tryAcquire(AcquireRequest request) {
            return inner.tryAcquire(request);
        }

        @Override
        public boolean extend(String name, String token, Duration ttl) {
            return inner.extend(name, token, ttl);
        }

        @Override
        public boolean release(String name, String token, Duration lockAtLeastFor) {
            return inner.forceRelease(name); // the bug: the token is not checked
        }

        @Override
        public List<LockInfo> heldLocks() {
            return inner.heldLocks();
        }

        @Override
        public boolean forceRelease(String name) {
            return inner.forceRelease(name);
        }

        /**
         * None of the inner store's capabilities: a hand-over would bypass the broken release, and
         * release notices would tell a live holder of the stale release that freed its lock within
         * milliseconds, often before a waiter takes it, so the overlap this store exists to cause
         * would come and go by chance (CI saw a run without one). Holders find out at their next
         * renewal, waiters by polling.
         */
        @Override
        public <C extends StoreCapability> Optional<C> capability(Class<C> type) {
            return Optional.empty();
        }

        @Override
        public String description() {
            return "broken(" + inner.description() + ")";
        }

        @Override
        public void close() {
            inner.close();
        }
    }
}
