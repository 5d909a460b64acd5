package dev.turnstile.job;

import java.time.Duration;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * How one run of a job ended, as a {@link JobListener} is told.
 *
 * @param name the job's lock name
 * @param status ran, skipped as busy, or skipped as the store was unavailable (also when it is not
 *     set up, or the client is closed: the caller then gets that error)
 * @param startedAt when the run was asked for, by this process's clock
 * @param took from then to the end of the run (the lock's release included); for a skipped run,
 *     how long the try took
 * @param fence the run's fence, or {@code -1} if it did not run
 * @param leaseLost whether the lease was lost while the job ran
 * @param failure what the job threw ({@code ClassName: message}), or why it did not run (the store's
 *     error); {@code null} if it returned or another instance held the lock
 */
public record JobRunReport(String name, JobResult.Status status, Instant startedAt, Duration took, long fence,
        boolean leaseLost, @Nullable String failure) {}
