package dev.turnstile.spi;

import java.time.Duration;

/**
 * A store that can forget lock names nobody uses any more, so that a store used with dynamic names
 * (one per customer, per tenant, per file) does not grow forever, without ever letting a fence go
 * back: a forgotten name used again gets a fence above every fence it had before.
 *
 * <p>How a store keeps that promise is its own (each store's class says): the SQL stores and MongoDB
 * raise a floor record to the highest fence they forget, in the same step, and a name's first fence
 * is taken above that floor; Redis floors every fence by its server's clock and forgets only a name
 * whose fence is more than {@code unusedFor} below that clock.
 */
public interface PrunesNames extends StoreCapability {

    /**
     * Forgets the names that nobody acquired for at least {@code unusedFor} by the store's clock and
     * that are free now. Never touches a lock that is held or kept by {@code lockAtLeastFor}. A store
     * that keeps when a lease ended (the SQL servers, MongoDB) also waits {@code unusedFor} after
     * that; one that does not (Redis, SQLite, whose release forgets the time) may forget a name as soon
     * as its lease ends, which costs its next acquire only the first-fence step.
     *
     * @param unusedFor how long a name must have been free, zero or more (already checked by the
     *     caller)
     * @return how many names were forgotten
     * @throws dev.turnstile.StoreUnavailableException if the store cannot be reached or fails (names
     *     forgotten before the failure stay forgotten)
     */
    long pruneUnused(Duration unusedFor);
}
