/**
 * Scheduled jobs that run once per tick across instances: {@link dev.turnstile.job.JobRunner} and {@link dev.turnstile.job.LockingScheduler}.
 *
 * <p>Nothing here is null unless marked {@code @Nullable} (JSpecify; checked by NullAway in the build).
 */
@NullMarked
package dev.turnstile.job;

import org.jspecify.annotations.NullMarked;
