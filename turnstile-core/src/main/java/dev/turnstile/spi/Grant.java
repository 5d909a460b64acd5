package dev.turnstile.spi;

import java.time.Instant;

/**
 * What a store returns for a successful acquire.
 *
 * @param fence strictly greater than every fence the store issued before for this name
 * @param acquiredAt the store's clock at the acquire (a store whose expiry runs by a TTL, as Redis,
 *     may give the client's wall clock instead: the value is for people to read)
 * @param expiresAt when the lease ends, by the same clock
 */
public record Grant(long fence, Instant acquiredAt, Instant expiresAt) {}
