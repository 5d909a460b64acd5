package dev.turnstile.spi;

import java.time.Duration;

/**
 * A validated request to take a lock.
 *
 * @param name the lock name (validated: non-empty, bounded, no control characters)
 * @param owner the readable holder identity to store
 * @param token the random ownership token, fresh for every acquire, except that all tries of one
 *     waiting acquire carry the same token (so a store may keep one place in line for them; see
 *     {@link KeepsWaitingLine#stopWaiting}); a try that got busy has left nothing held under it
 * @param ttl the lease's time to live, counted by the store's clock
 * @param waiting whether the caller waits for a release if the lock is busy (it has
 *     {@linkplain NotifiesReleases#watchReleases subscribed}, or tried to: a waiter whose subscription
 *     failed polls, and keeps its place all the same), so a store may queue it and wake it in turn;
 *     a queued waiter that does not answer its turn costs the others a short delay, never the lock
 */
public record AcquireRequest(String name, String owner, String token, Duration ttl, boolean waiting) {
    /**
     * A request from a caller that does not wait.
     *
     * @param name the lock name
     * @param owner the holder identity
     * @param token the ownership token
     * @param ttl the time to live
     */
    public AcquireRequest(String name, String owner, String token, Duration ttl) {
        this(name, owner, token, ttl, false);
    }
}
