package dev.turnstile;

import java.time.Instant;

/**
 * Why and when a lease stopped being held. Delivered through {@link Lease#lost()} and the
 * {@link LockOptions.Builder#onLost} callback.
 *
 * @param name the lock name
 * @param fence the fence of the lost lease
 * @param reason a sentence saying why the lease can no longer be proven held
 * @param detectedAt when this process noticed (local wall clock, for logs only)
 */
public record LeaseLoss(String name, long fence, String reason, Instant detectedAt) {}
