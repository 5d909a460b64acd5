package dev.turnstile.spi;

/**
 * A store that tells a holder when its lease may have ended for a reason other than its TTL, at once
 * rather than at the next renewal: a forced release it hears of (PostgreSQL {@code LISTEN/NOTIFY},
 * a watch on a ZooKeeper lease node; the lock may already be someone else's by then, which the fence
 * guards), or the end of the session the lease hangs on (ZooKeeper: that one is reported before the
 * server can let another client in, docs/design.md, rule 8).
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
