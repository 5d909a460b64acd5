package dev.turnstile.testkit;

import dev.turnstile.LockInfo;
import dev.turnstile.StoreUnavailableException;
import dev.turnstile.spi.AcquireRequest;
import dev.turnstile.spi.Grant;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.NotifiesReleases;
import dev.turnstile.spi.ReleaseListener;
import dev.turnstile.spi.ReleaseWatch;
import dev.turnstile.spi.StoreCapability;
import dev.turnstile.testing.InMemoryLockStore;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/** The reference store passes the contract: keeps the kit honest. All clients share one store. */
class InMemoryLockStoreContractTest extends LockStoreContract {
    private final InMemoryLockStore shared = new InMemoryLockStore();

    @Override
    protected LockStore newStore() {
        return new Client(shared);
    }

    @Override
    protected String storeUrl() {
        return null;
    }

    @Override
    protected LockStore unreachableStore() {
        return new Client(null);
    }

    /**
     * A separate client object over the shared store; over {@code null} it is "unreachable". Closing
     * it closes the client, not the shared store.
     */
    private static final class Client implements LockStore, NotifiesReleases {
        private final InMemoryLockStore store;
        private volatile boolean closed;

        Client(InMemoryLockStore store) {
            this.store = store;
        }

        private InMemoryLockStore s() {
            if (closed) {
                throw new IllegalStateException("the LockStore " + description() + " is closed");
            }
            if (store == null) {
                throw new StoreUnavailableException("in-memory store is unreachable (by construction)", null);
            }
            return store;
        }

        @Override public Optional<Grant> tryAcquire(AcquireRequest r) { return s().tryAcquire(r); }
        @Override public boolean extend(String n, String t, Duration ttl) { return s().extend(n, t, ttl); }
        @Override public boolean release(String n, String t, Duration atLeast) { return s().release(n, t, atLeast); }
        @Override public List<LockInfo> heldLocks() { return s().heldLocks(); }
        @Override public boolean forceRelease(String n) { return s().forceRelease(n); }
        @Override public String description() { return "in-memory client"; }
        @Override public void close() { closed = true; }
        @Override public boolean isClosed() { return closed; }

        /**
         * The shared store's release notices, so that the contract checks the in-memory store's
         * {@link NotifiesReleases} too (through this client until it is closed).
         */
        @Override
        public ReleaseWatch watchReleases(String n, ReleaseListener l) {
            return s().watchReleases(n, l);
        }

        /** Notices only where there is a store: the unreachable client has none to give. */
        @Override
        public <C extends StoreCapability> Optional<C> capability(Class<C> type) {
            return store == null ? Optional.empty() : LockStore.super.capability(type);
        }
    }
}
