package dev.turnstile.spi;

import java.time.Duration;

/**
 * A validated request to take a lock.
 *
 * @param name the lock name (validated: non-empty, bounded, no control characters)
 * @param owner the readable holder identity to store
 * @param token the random ownership token, fresh for every acquire (stores may treat a re-sent token
 *     as the same acquisition)
 * @param ttl the lease's time to live, counted by the store's clock
 */
public record AcquireRequest(String name, String owner, String token, Duration ttl) {}
