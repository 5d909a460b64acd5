package dev.turnstile.job;

import dev.turnstile.StoreUnavailableException;
import java.util.Optional;
import java.util.OptionalLong;
import org.jspecify.annotations.Nullable;

/**
 * What one locked run did: it ran (with the job's value, possibly {@code null}), or it was skipped
 * because another instance held the lock, or because the store could not be reached. Skipping is a
 * result, never an exception.
 *
 * @param <T> the job's value type ({@link Void} for a {@link Runnable})
 */
public final class JobResult<T> {

    /** How a run ended. */
    public enum Status {
        /** The job ran under the lock. */
        RAN,
        /** Another holder had the lock; the job did not run. Logged at DEBUG. */
        SKIPPED_BUSY,
        /** The store could not be reached; the job did not run. Logged at ERROR. */
        SKIPPED_STORE_UNAVAILABLE
    }

    private final Status status;
    private final @Nullable T value;
    private final long fence;
    private final boolean leaseLost;
    private final @Nullable StoreUnavailableException storeFailure;

    private JobResult(Status status, @Nullable T value, long fence, boolean leaseLost,
            @Nullable StoreUnavailableException storeFailure) {
        this.status = status;
        this.value = value;
        this.fence = fence;
        this.leaseLost = leaseLost;
        this.storeFailure = storeFailure;
    }

    static <T> JobResult<T> ran(@Nullable T value, long fence, boolean leaseLost) {
        return new JobResult<>(Status.RAN, value, fence, leaseLost, null);
    }

    static <T> JobResult<T> busy() {
        return new JobResult<>(Status.SKIPPED_BUSY, null, 0, false, null);
    }

    static <T> JobResult<T> storeUnavailable(StoreUnavailableException e) {
        return new JobResult<>(Status.SKIPPED_STORE_UNAVAILABLE, null, 0, false, e);
    }

    /**
     * Returns how the run ended.
     *
     * @return the status
     */
    public Status status() {
        return status;
    }

    /**
     * Tells whether the job ran.
     *
     * @return {@code true} for {@link Status#RAN}
     */
    public boolean ran() {
        return status == Status.RAN;
    }

    /**
     * Tells whether the run was skipped, for either reason.
     *
     * @return {@code true} unless the job ran
     */
    public boolean skipped() {
        return status != Status.RAN;
    }

    /**
     * Returns the job's value.
     *
     * @return what the job returned ({@code null} for a {@link Runnable}, or a job that returned null)
     * @throws IllegalStateException if the job did not run: check {@link #ran()} first
     */
    public @Nullable T value() {
        if (status != Status.RAN) {
            throw new IllegalStateException("the job did not run (" + status + "): check ran() before value()");
        }
        return value;
    }

    /**
     * Returns the job's value if it ran and returned non-null.
     *
     * @return the value, or empty
     */
    public Optional<T> valueIfRan() {
        return Optional.ofNullable(value);
    }

    /**
     * Returns the fence of the lease the job ran under.
     *
     * @return the fence, or empty if the job did not run
     */
    public OptionalLong fence() {
        return status == Status.RAN ? OptionalLong.of(fence) : OptionalLong.empty();
    }

    /**
     * Tells whether the lease was lost while the job ran (the job was told through
     * {@link JobContext#leaseLost()} and, if asked, an interrupt).
     *
     * @return {@code true} if the job ran partly without its lock
     */
    public boolean leaseLost() {
        return leaseLost;
    }

    /**
     * Returns the store failure that made the run skip.
     *
     * @return the failure, or empty unless {@link Status#SKIPPED_STORE_UNAVAILABLE}
     */
    public Optional<StoreUnavailableException> storeFailure() {
        return Optional.ofNullable(storeFailure);
    }

    @Override
    public String toString() {
        return switch (status) {
            case RAN -> "JobResult{RAN, fence=" + fence + (leaseLost ? ", leaseLost" : "") + "}";
            case SKIPPED_BUSY -> "JobResult{SKIPPED_BUSY}";
            case SKIPPED_STORE_UNAVAILABLE -> "JobResult{SKIPPED_STORE_UNAVAILABLE: "
                    + (storeFailure != null ? storeFailure.getMessage() : "") + "}";
        };
    }
}
