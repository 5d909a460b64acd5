package dev.turnstile.spi;

import java.time.Duration;

/**
 * A store that can forget lock names nobody uses any more, so that a store used with dynamic names
 * (one per customer, per tenant, per file) does not grow forever, without ever letting a fence go
 * back: a pruned name used again gets a fence above every fence it had before.
 *
 * <p>A store may have it only if a name's first fence is floored by a clock that only grows (the
 * store's own, as the SQL stores' and Redis' fences are): it then forgets a name only when the
 * name's lease ended at least {@code unusedFor} ago <em>and</em> its highest fence lies more than
 * {@code unusedFor} below that clock, so the next first fence, read from the clock, is above it
 * even after the clock stepped back by less than {@code unusedFor}.
 */
public interface PrunesNames extends StoreCapability {

    /**
     * Forgets the names whose lease ended at least {@code unusedFor} ago and whose fence lies more
     * than {@code unusedFor} below the store's clock. Never touches a held lock.
     *
     * @param unusedFor how long a name must have been free; also the clock step back that pruning
     *     survives. Positive.
     * @return how many names were forgotten
     */
    long pruneUnused(Duration unusedFor);
}
