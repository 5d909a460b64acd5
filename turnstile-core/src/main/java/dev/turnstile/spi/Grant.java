package dev.turnstile.spi;

import java.time.Instant;
import java.util.OptionalLong;

/**
 * What a store returns for a successful acquire.
 *
 * @param fence strictly greater than every fence the store issued before for this name
 * @param acquiredAt the store's clock at the acquire (a store whose expiry runs by a TTL, as Redis,
 *     may give the client's wall clock instead: the value is for people to read)
 * @param expiresAt when the lease ends, by the same clock
 * @param startedNanos a {@link System#nanoTime()} reading no later than the moment the lease started
 *     on the store, for a lease that started before the acquire call that returns it (a store that
 *     hands the lock to a waiter while the waiter is between tries); the holder's local deadline
 *     then counts from it rather than from the call's start. Empty for a lease that starts during
 *     the call, as every plain acquire does.
 */
public record Grant(long fence, Instant acquiredAt, Instant expiresAt, OptionalLong startedNanos) {

    /**
     * Checks the components.
     *
     * @param fence strictly greater than every fence the store issued before for this name
     * @param acquiredAt the store's clock at the acquire
     * @param expiresAt when the lease ends, by the same clock
     * @param startedNanos a {@code nanoTime} no later than the lease's start, or empty
     * @throws IllegalArgumentException if a component is null
     */
    public Grant {
        if (acquiredAt == null || expiresAt == null || startedNanos == null) {
            throw new IllegalArgumentException("acquiredAt, expiresAt and startedNanos must not be null "
                    + "(give OptionalLong.empty() for a lease that started during the acquire call)");
        }
    }

    /**
     * A grant for a lease that started during the acquire call that returns it.
     *
     * @param fence strictly greater than every fence the store issued before for this name
     * @param acquiredAt the store's clock at the acquire
     * @param expiresAt when the lease ends, by the same clock
     * @throws IllegalArgumentException if a time is null
     */
    public Grant(long fence, Instant acquiredAt, Instant expiresAt) {
        this(fence, acquiredAt, expiresAt, OptionalLong.empty());
    }
}
