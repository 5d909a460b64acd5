package dev.turnstile;

import java.time.Instant;

/**
 * A snapshot of a held lock as the store reports it, for listing and debugging. Never contains the
 * owner's token.
 *
 * @param name the lock name
 * @param owner the readable holder identity
 * @param fence the holder's fence
 * @param acquiredAt when the holder acquired it, by the store's clock (the database's, the Redis or MongoDB server's,
 *     ZooKeeper's write times)
 * @param expiresAt when the lease ends unless extended, by the same clock
 */
public record LockInfo(String name, String owner, long fence, Instant acquiredAt, Instant expiresAt) {}
