/**
 * Work claiming (the {@code lockedAt} pattern): many instances work one table or collection of
 * tasks, each task by one instance at a time, without a transaction held across the work.
 *
 * <p>{@link dev.turnstile.claim.TaskClaimer} claims the next due tasks of a {@link
 * dev.turnstile.claim.ClaimTable} that match a {@link dev.turnstile.claim.ClaimFilter}; each
 * {@link dev.turnstile.claim.Claim} carries a version that guards every later write, so a worker
 * that stalled past the lock timeout cannot overwrite the work of the one that claimed the task
 * after it. Stores implement {@link dev.turnstile.claim.ClaimStore}: nothing here is specific to
 * SQL.
 *
 * <p>Nothing here is null unless marked {@code @Nullable} (JSpecify; checked by NullAway in the build).
 */
@NullMarked
package dev.turnstile.claim;

import org.jspecify.annotations.NullMarked;
