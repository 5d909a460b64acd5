package dev.turnstile.spi;

/**
 * A store that can tell a holder its lease can no longer be proven held for a reason other than its
 * TTL: a forced release it hears of (PostgreSQL {@code LISTEN/NOTIFY}), or the end of the session
 * the lease hangs on (ZooKeeper). The holder then reports the loss before the store can let another
 * client in (docs/design.md, rule 8).
 */
public interface WatchesLeases extends StoreCapability {

    /**
     * Asks to be told about a lease this store granted: {@link LeaseProof#provenUntil} with the last
     * moment the lease is still proven held (moved on as it is proven again), {@link LeaseProof#lost}
     * when it is gone, {@link LeaseProof#ended} when it may have ended and the holder should look.
     *
     * @param name the lock name
     * @param token the lease's token
     * @param proof told of the lease's proof
     * @return a handle that stops the calls (the lease closes it when it ends)
     */
    ReleaseWatch watchLease(String name, String token, LeaseProof proof);
}
