package dev.turnstile.spi;

/**
 * How a store whose leases also hang on a session (ZooKeeper) tells a held lease that it can no
 * longer be proven held, for {@link WatchesLeases#watchLease}. Calls may come on any thread and must be
 * cheap; the lease applies them at once.
 */
public interface LeaseProof {
    /** Passed to {@link #provenUntil} when the session is proven alive again: only the TTL rules. */
    long NO_LIMIT = Long.MAX_VALUE;

    /**
     * The lease is proven held only until {@code nanoTime} ({@link System#nanoTime()} scale): the
     * lease then counts as lost at that moment unless a later call moves the limit on (a later
     * limit, or {@link #NO_LIMIT}) before it passes. A time already past means lost now, and a
     * lease whose deadline has passed stays lost whatever a later call says.
     *
     * @param nanoTime the last moment the store can vouch for the lease, or {@link #NO_LIMIT}
     */
    void provenUntil(long nanoTime);

    /**
     * The lease is lost now (the session expired: the server drops or has dropped its node).
     *
     * @param reason why, for the loss report
     */
    void lost(String reason);

    /**
     * The lease was ended by someone else before its time (a forced release, a takeover the store
     * saw): lost now, and its release reports {@link dev.turnstile.ReleaseOutcome#NOT_OWNER} rather
     * than an expiry.
     *
     * @param reason why, for the loss report
     */
    default void ended(String reason) {
        lost(reason);
    }
}
