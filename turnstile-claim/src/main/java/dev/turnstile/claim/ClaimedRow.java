package dev.turnstile.claim;

import java.time.Instant;

/**
 * One task a {@link ClaimStore} claimed (service provider interface).
 *
 * @param key the task's key as the store returned it, handed back unchanged to the store's
 *     guarded writes (a {@link Long}, a {@link String}, a driver's own type)
 * @param version the claim version the claim set: greater than any before for this task
 * @param lockedAt the claim's {@code lockedAt}, by the store's clock
 */
public record ClaimedRow(Object key, long version, Instant lockedAt) {

    /**
     * Checks the components.
     *
     * @param key the key
     * @param version the version
     * @param lockedAt the claim instant
     * @throws IllegalArgumentException if the key or instant is null
     */
    public ClaimedRow {
        if (key == null || lockedAt == null) {
            throw new IllegalArgumentException("a claimed row needs a key and a lockedAt");
        }
    }
}
