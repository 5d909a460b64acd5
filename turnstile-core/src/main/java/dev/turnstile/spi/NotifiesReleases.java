package dev.turnstile.spi;

/**
 * A store that tells of releases and expiries, so that waiters need not poll often. Waiters keep a
 * bounded fallback poll either way, so a lost notification costs latency, never liveness.
 */
public interface NotifiesReleases extends StoreCapability {

    /**
     * Asks to be told when the lock is released or expires anywhere, at least while this store has a
     * waiting acquire of the name in line (ZooKeeper watches only the node ahead of a waiter's place;
     * Redis tells every subscriber). The store calls {@code listener} on any thread, possibly
     * spuriously, with the released token where it knows it.
     *
     * @param name the lock name
     * @param listener called on a release or expiry of {@code name}
     * @return a handle that stops the notifications
     * @throws dev.turnstile.StoreUnavailableException if the store cannot subscribe now
     */
    ReleaseWatch watchReleases(String name, ReleaseListener listener);
}
