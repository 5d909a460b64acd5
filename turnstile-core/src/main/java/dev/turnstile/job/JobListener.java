package dev.turnstile.job;

/**
 * Told how each run of a {@link JobRunner} ended: ran (and how long, with which fence, whether it
 * failed or lost its lease), skipped because another instance held the lock, or skipped because the
 * store could not be reached. For a job history (the console's jobs page), metrics or alerts.
 * Registered with {@link JobRunner.Builder#listener}.
 *
 * <p>Called on the job's thread after the run's lease was released, once per {@code run}/{@code
 * call}, in registration order. Keep it fast: the caller waits. A listener that throws (anything
 * but a {@link VirtualMachineError}) is logged at WARN and ignored; it never changes the run's result.
 */
@FunctionalInterface
public interface JobListener {

    /**
     * Called when a run has ended.
     *
     * @param run how it ended
     */
    void onJobEnded(JobRunReport run);
}
