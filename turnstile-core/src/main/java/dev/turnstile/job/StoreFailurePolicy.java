package dev.turnstile.job;

/** What a job run does when the lock store cannot be reached to take its lock. */
public enum StoreFailurePolicy {
    /**
     * Skip this run and log the failure at ERROR; {@link JobRunner#call} returns a
     * {@link JobResult} whose {@link JobResult#status()} is
     * {@link JobResult.Status#SKIPPED_STORE_UNAVAILABLE}. The next tick tries again. The default:
     * an outage of the lock store must not run a job on every instance at once, nor crash a scheduler.
     */
    SKIP_AND_LOG,
    /**
     * Throw the {@link dev.turnstile.StoreUnavailableException} to the caller (the scheduler wrapper
     * logs it at ERROR and keeps the schedule).
     */
    FAIL
}
