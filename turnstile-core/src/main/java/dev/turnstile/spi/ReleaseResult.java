package dev.turnstile.spi;

import java.time.Duration;

/**
 * What a store applied on a release, as {@link LockStore#releaseReporting} reports it. The client
 * turns it into the {@link dev.turnstile.ReleaseOutcome} the holder sees, so that
 * {@code SHORTENED_TO_AT_LEAST} means the store really kept the lock, by the store's clock.
 */
public enum ReleaseResult {
    /** The token held an unexpired lease, and the store ended it: the lock is free now. */
    FREED,
    /**
     * The token held an unexpired lease whose acquire time plus {@code lockAtLeastFor} was still
     * ahead by the store's clock: the store keeps the lock until then.
     */
    KEPT_FOR_AT_LEAST,
    /**
     * The token held an unexpired lease, and the store ended it now or kept it until acquire time
     * plus {@code lockAtLeastFor} without saying which (a store that only implements
     * {@link LockStore#release(String, String, Duration)}). The client then judges which by the
     * time it measured since the acquire on its own monotonic clock.
     */
    ENDED,
    /** The token held no unexpired lease: it had expired, was taken over or was force-released. */
    NOT_HELD
}
