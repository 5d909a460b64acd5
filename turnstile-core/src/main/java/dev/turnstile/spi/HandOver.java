package dev.turnstile.spi;

import java.util.Optional;

/**
 * What {@link HandsOver#handOver} did: nothing (the token no longer held the lock), a plain release
 * (another client had waited longer, and was told), or a release and a grant to the next holder in
 * one step.
 *
 * @param released whether the token held an unexpired lease, which has now ended
 * @param grant the next holder's grant, if the lock went straight to it
 */
public record HandOver(boolean released, Optional<Grant> grant) {

    /**
     * Checks the components.
     *
     * @param released whether the token held an unexpired lease, which has now ended
     * @param grant the next holder's grant, if the lock went straight to it
     * @throws IllegalArgumentException if grant is null
     * @throws IllegalArgumentException if a grant is given for a lock that was not released
     */
    public HandOver {
        if (grant == null) {
            throw new IllegalArgumentException("grant is null: give Optional.empty() when the lock was not handed over");
        }
        if (grant.isPresent() && !released) {
            throw new IllegalArgumentException("a lock can only be handed over by its holder");
        }
    }

    /**
     * The token did not hold an unexpired lease; nothing changed.
     *
     * @return the result
     */
    public static HandOver notHeld() {
        return new HandOver(false, Optional.empty());
    }

    /**
     * The lease ended and the lock is free (or promised to a client that waited longer).
     *
     * @return the result
     */
    public static HandOver releasedOnly() {
        return new HandOver(true, Optional.empty());
    }

    /**
     * The lease ended and the next holder holds the lock.
     *
     * @param grant the next holder's grant
     * @return the result
     */
    public static HandOver handedTo(Grant grant) {
        return new HandOver(true, Optional.of(grant));
    }
}
