package dev.turnstile;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Delay between polls while waiting for a lock held elsewhere. Grows with the time already waited
 * (about a tenth of it), between a floor and a ceiling, with jitter so that waiters in different
 * processes do not poll in step. A short wait polls often (fast hand-off); a long wait polls rarely
 * (cheap on the store).
 */
final class Backoff {
    private final long minNanos;
    private final long maxNanos;

    Backoff(Duration min, Duration max) {
        this.minNanos = min.toNanos();
        this.maxNanos = max.toNanos();
    }

    /** Returns the next delay in nanoseconds, given how long the caller has waited so far. */
    long nextDelayNanos(long waitedNanos) {
        long ceiling = Math.max(minNanos, Math.min(maxNanos, waitedNanos / 10));
        long floor = Math.max(minNanos / 2, ceiling / 2);
        return floor + ThreadLocalRandom.current().nextLong(Math.max(1, ceiling - floor + 1));
    }

    Duration min() {
        return Duration.ofNanos(minNanos);
    }

    Duration max() {
        return Duration.ofNanos(maxNanos);
    }
}
