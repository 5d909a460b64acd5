package dev.turnstile.spi;

/**
 * A store that tells of releases, so that waiters need not poll often. Expiries are not told: waiters
 * find them by their fallback poll, which they keep either way, so a lost notice costs latency,
 * never liveness.
 *
 * <p>Who is told: on a store that {@linkplain KeepsWaitingLine keeps a waiting line}, at least the
 * watchers of the name whose store has a waiter in line for it (ZooKeeper watches only the node
 * ahead of each place); on any other store, every watcher of the name, forced releases included
 * (Redis pub/sub), so that a holder watching its own name learns of a forced release at once.
 */
public interface NotifiesReleases extends StoreCapability {

    /**
     * Asks to be told when the lock is released, as the type says. The store calls {@code listener}
     * on any thread, possibly spuriously, with the released token where it knows it ({@code null}
     * for a forced release or an unknown token).
     *
     * @param name the lock name
     * @param listener called on a release of {@code name}
     * @return a handle that stops the notifications
     * @throws dev.turnstile.StoreUnavailableException if the store cannot subscribe now
     */
    ReleaseWatch watchReleases(String name, ReleaseListener listener);
}
