package dev.turnstile.job;

import dev.turnstile.LockOptions;
import java.time.Duration;
import java.util.Objects;

/**
 * How a job holds its lock: {@code lockAtMostFor}, {@code lockAtLeastFor}, keep-alive, what to do
 * when the store is unreachable, and whether to interrupt the job when its lease is lost. Immutable;
 * build with {@link #builder()}, start from {@link #defaults()}, or derive with {@link #toBuilder()}.
 * Every setter validates at once; a message names the field, the value and the fix.
 *
 * <p>Defaults: {@code lockAtMostFor} 30 s, {@code lockAtLeastFor} 0, no keep-alive,
 * {@link StoreFailurePolicy#SKIP_AND_LOG}, interrupt on loss.
 */
public final class JobOptions {
    private static final JobOptions DEFAULTS = builder().build();

    private final Duration lockAtMostFor;
    private final Duration lockAtLeastFor;
    private final boolean keepAlive;
    private final StoreFailurePolicy onStoreUnavailable;
    private final boolean interruptOnLoss;

    private JobOptions(Builder b) {
        this.lockAtMostFor = b.lockAtMostFor;
        this.lockAtLeastFor = b.lockAtLeastFor;
        this.keepAlive = b.keepAlive;
        this.onStoreUnavailable = b.onStoreUnavailable;
        this.interruptOnLoss = b.interruptOnLoss;
    }

    /**
     * Returns the default options (see the class comment).
     *
     * @return the defaults
     */
    public static JobOptions defaults() {
        return DEFAULTS;
    }

    /**
     * Starts a builder with the default values.
     *
     * @return a builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Starts a builder holding these options.
     *
     * @return a builder with every field copied
     */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.lockAtMostFor = lockAtMostFor;
        b.lockAtLeastFor = lockAtLeastFor;
        b.keepAlive = keepAlive;
        b.onStoreUnavailable = onStoreUnavailable;
        b.interruptOnLoss = interruptOnLoss;
        return b;
    }

    /**
     * Returns the lease's time to live: without keep-alive, the longest a run may hold the lock (a
     * run still going then is told its lease is lost); with keep-alive, how long the lock outlives
     * an instance that died holding it.
     *
     * @return the time to live
     */
    public Duration lockAtMostFor() {
        return lockAtMostFor;
    }

    /**
     * Returns the minimum hold: a run that ends earlier keeps the lock until this much time has
     * passed since it was taken, so a fast run does not run again elsewhere in the same tick.
     *
     * @return the minimum hold, zero for none
     */
    public Duration lockAtLeastFor() {
        return lockAtLeastFor;
    }

    /**
     * Tells whether the lease is renewed (every {@code lockAtMostFor / 3}) while the job runs, for
     * jobs that may run longer than {@code lockAtMostFor}.
     *
     * @return {@code true} if kept alive
     */
    public boolean keepAlive() {
        return keepAlive;
    }

    /**
     * Returns what a run does when the store cannot be reached.
     *
     * @return the policy
     */
    public StoreFailurePolicy onStoreUnavailable() {
        return onStoreUnavailable;
    }

    /**
     * Tells whether the job's thread is interrupted when its lease is lost mid-run (besides the
     * {@link JobContext#leaseLost()} flag, which is always set).
     *
     * @return {@code true} to interrupt
     */
    public boolean interruptOnLoss() {
        return interruptOnLoss;
    }

    /**
     * Returns the lock options for one run; {@code onLost} is the runner's hook that tells the job.
     */
    LockOptions toLockOptions(java.util.function.Consumer<dev.turnstile.LeaseLoss> onLost) {
        return LockOptions.builder()
                .lockAtMostFor(lockAtMostFor)
                .lockAtLeastFor(lockAtLeastFor)
                .keepAlive(keepAlive)
                .onLost(onLost)
                .build();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof JobOptions other && lockAtMostFor.equals(other.lockAtMostFor)
                && lockAtLeastFor.equals(other.lockAtLeastFor) && keepAlive == other.keepAlive
                && onStoreUnavailable == other.onStoreUnavailable && interruptOnLoss == other.interruptOnLoss;
    }

    @Override
    public int hashCode() {
        return Objects.hash(lockAtMostFor, lockAtLeastFor, keepAlive, onStoreUnavailable, interruptOnLoss);
    }

    @Override
    public String toString() {
        return "JobOptions{lockAtMostFor=" + lockAtMostFor + ", lockAtLeastFor=" + lockAtLeastFor + ", keepAlive="
                + keepAlive + ", onStoreUnavailable=" + onStoreUnavailable + ", interruptOnLoss=" + interruptOnLoss + "}";
    }

    /** Builds {@link JobOptions}; each setter fails fast on a bad value. Not thread-safe. */
    public static final class Builder {
        private Duration lockAtMostFor = Duration.ofSeconds(30);
        private Duration lockAtLeastFor = Duration.ZERO;
        private boolean keepAlive;
        private StoreFailurePolicy onStoreUnavailable = StoreFailurePolicy.SKIP_AND_LOG;
        private boolean interruptOnLoss = true;

        private Builder() {}

        /**
         * Sets the lease's time to live.
         *
         * @param lockAtMostFor 10 ms to 366 days
         * @return this builder
         * @throws IllegalArgumentException if null, zero, negative or out of range
         */
        public Builder lockAtMostFor(Duration lockAtMostFor) {
            LockOptions.builder().lockAtMostFor(lockAtMostFor); // the same checks and messages as every lease
            this.lockAtMostFor = lockAtMostFor;
            return this;
        }

        /**
         * Sets the minimum hold.
         *
         * @param lockAtLeastFor zero or more; at most the maximum hold (checked in {@link #build()})
         * @return this builder
         * @throws IllegalArgumentException if null, negative or absurd
         */
        public Builder lockAtLeastFor(Duration lockAtLeastFor) {
            LockOptions.builder().lockAtLeastFor(lockAtLeastFor);
            this.lockAtLeastFor = lockAtLeastFor;
            return this;
        }

        /**
         * Turns renewal of the lease while the job runs on or off.
         *
         * @param keepAlive {@code true} to renew every {@code lockAtMostFor / 3}
         * @return this builder
         */
        public Builder keepAlive(boolean keepAlive) {
            this.keepAlive = keepAlive;
            return this;
        }

        /**
         * Sets what a run does when the store cannot be reached.
         *
         * @param policy skip and log at ERROR (default), or fail
         * @return this builder
         * @throws IllegalArgumentException if null
         */
        public Builder onStoreUnavailable(StoreFailurePolicy policy) {
            if (policy == null) {
                throw new IllegalArgumentException("onStoreUnavailable policy is null: give StoreFailurePolicy.SKIP_AND_LOG "
                        + "(the default) or StoreFailurePolicy.FAIL");
            }
            this.onStoreUnavailable = policy;
            return this;
        }

        /**
         * Sets whether the job's thread is interrupted when the lease is lost mid-run. The
         * {@link JobContext#leaseLost()} flag is set either way.
         *
         * @param interrupt {@code true} (default) to interrupt
         * @return this builder
         */
        public Builder interruptOnLoss(boolean interrupt) {
            this.interruptOnLoss = interrupt;
            return this;
        }

        /**
         * Builds the options.
         *
         * @return the options
         * @throws IllegalArgumentException if {@code lockAtLeastFor} is longer than {@code lockAtMostFor}
         */
        public JobOptions build() {
            LockOptions.builder().lockAtMostFor(lockAtMostFor).lockAtLeastFor(lockAtLeastFor).build();
            return new JobOptions(this);
        }
    }
}
