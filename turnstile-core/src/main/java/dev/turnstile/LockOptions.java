package dev.turnstile;

import java.time.Duration;
import java.util.Optional;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * How to hold a lock: its time to live ({@code lockAtMostFor}), its minimum hold
 * ({@code lockAtLeastFor}), keep-alive, loss callback and reentrancy. Immutable; build it with
 * {@link #builder()} or take {@link #defaults()}. Every setter validates at once and its message
 * names the field, the value and the rule; a null argument is bad input like any other
 * ({@link IllegalArgumentException}).
 */
public final class LockOptions {

    /** The shortest accepted duration for a lease: stores keep time in milliseconds. */
    public static final Duration MIN_TTL = Duration.ofMillis(10);
    /** The longest accepted duration anywhere in Turnstile; longer values are taken for mistakes. */
    public static final Duration MAX_DURATION = Duration.ofDays(366);

    private static final LockOptions DEFAULTS = builder().build();

    private final Duration lockAtMostFor;
    private final Duration lockAtLeastFor;
    private final boolean keepAlive;
    private final @Nullable Duration keepAliveInterval;
    private final @Nullable Consumer<LeaseLoss> onLost;
    private final @Nullable Object reentrancyContext;
    private final boolean reentrantPerThread;

    private LockOptions(Builder b) {
        this.lockAtMostFor = b.lockAtMostFor;
        this.lockAtLeastFor = b.lockAtLeastFor;
        this.keepAlive = b.keepAlive;
        this.keepAliveInterval = b.keepAliveInterval;
        this.onLost = b.onLost;
        this.reentrancyContext = b.reentrancyContext;
        this.reentrantPerThread = b.reentrantPerThread;
    }

    /**
     * Returns options with a 30 s {@code lockAtMostFor}, no {@code lockAtLeastFor}, no keep-alive
     * and no reentrancy.
     *
     * @return the default options
     */
    public static LockOptions defaults() {
        return DEFAULTS;
    }

    /**
     * Returns options that differ from the defaults only in {@code lockAtMostFor}.
     *
     * @param lockAtMostFor the lease's time to live
     * @return the options
     * @throws IllegalArgumentException if the duration is null or out of range
     */
    public static LockOptions lockAtMostFor(Duration lockAtMostFor) {
        return builder().lockAtMostFor(lockAtMostFor).build();
    }

    /**
     * Starts a builder with the default values.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Returns the lease's time to live: it expires by itself this long after acquire unless extended.
     *
     * @return the time to live
     */
    public Duration lockAtMostFor() {
        return lockAtMostFor;
    }

    /**
     * Returns the minimum hold: a release earlier than this only shortens the lease to this point.
     *
     * @return the minimum hold, {@link Duration#ZERO} for none
     */
    public Duration lockAtLeastFor() {
        return lockAtLeastFor;
    }

    /**
     * Tells whether a heartbeat renews the lease until it is released.
     *
     * @return {@code true} if kept alive
     */
    public boolean keepAlive() {
        return keepAlive;
    }

    /**
     * Returns how often the heartbeat renews: {@code lockAtMostFor / 3} unless set. After
     * {@link Lease#extend} the heartbeat follows a third of the new TTL (or the set interval if
     * that is shorter).
     *
     * @return the renewal interval
     */
    public Duration keepAliveInterval() {
        return keepAliveInterval != null ? keepAliveInterval : lockAtMostFor.dividedBy(3);
    }

    /** The renewal interval set with {@link Builder#keepAlive(Duration)}, or null: then it is a third of the current TTL. */
    @Nullable Duration keepAliveIntervalIfSet() {
        return keepAliveInterval;
    }

    /**
     * Returns the callback told when the lease is lost, if any.
     *
     * @return the callback
     */
    public Optional<Consumer<LeaseLoss>> onLost() {
        return Optional.ofNullable(onLost);
    }

    /**
     * Tells whether acquiring is re-entrant for the same owner context.
     *
     * @return {@code true} if re-entrant
     */
    public boolean reentrant() {
        return reentrantPerThread || reentrancyContext != null;
    }

    /** The owner context for reentrancy: the given key, or the calling thread. */
    Object reentrancyContext() {
        return reentrancyContext != null ? reentrancyContext : Thread.currentThread();
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
        b.keepAliveInterval = keepAliveInterval;
        b.onLost = onLost;
        b.reentrancyContext = reentrancyContext;
        b.reentrantPerThread = reentrantPerThread;
        return b;
    }

    @Override
    public String toString() {
        return "LockOptions{lockAtMostFor=" + lockAtMostFor + ", lockAtLeastFor=" + lockAtLeastFor
                + ", keepAlive=" + keepAlive + (keepAlive ? ", every " + keepAliveInterval() : "")
                + ", reentrant=" + reentrant() + "}";
    }

    /** Builds {@link LockOptions}; each setter fails fast on a bad value. Not thread-safe. */
    public static final class Builder {
        private Duration lockAtMostFor = Duration.ofSeconds(30);
        private Duration lockAtLeastFor = Duration.ZERO;
        private boolean keepAlive;
        private @Nullable Duration keepAliveInterval;
        private @Nullable Consumer<LeaseLoss> onLost;
        private @Nullable Object reentrancyContext;
        private boolean reentrantPerThread;

        private Builder() {}

        /**
         * Sets the lease's time to live.
         *
         * @param ttl between {@link #MIN_TTL} and {@link #MAX_DURATION}
         * @return this builder
         * @throws IllegalArgumentException if null or out of range
         */
        public Builder lockAtMostFor(Duration ttl) {
            this.lockAtMostFor = Validation.ttl("lockAtMostFor", ttl);
            return this;
        }

        /**
         * Sets the minimum hold: a release earlier than this only shortens the lease to this point,
         * so a fast job does not run again on another instance right after.
         *
         * @param atLeast zero or more, at most {@link #MAX_DURATION}; checked against
         *     {@code lockAtMostFor} in {@link #build()}
         * @return this builder
         * @throws IllegalArgumentException if null, negative or absurd
         */
        public Builder lockAtLeastFor(Duration atLeast) {
            this.lockAtLeastFor = Validation.nonNegative("lockAtLeastFor", atLeast);
            return this;
        }

        /**
         * Turns the heartbeat on or off. With it, the lease is renewed every
         * {@code keepAliveInterval} until released, and loss is reported through {@link Lease#lost()}
         * and {@link #onLost}.
         *
         * @param keepAlive {@code true} to renew
         * @return this builder
         */
        public Builder keepAlive(boolean keepAlive) {
            this.keepAlive = keepAlive;
            return this;
        }

        /**
         * Turns the heartbeat on with the given renewal interval.
         *
         * @param interval positive and shorter than {@code lockAtMostFor} (checked in {@link #build()})
         * @return this builder
         * @throws IllegalArgumentException if null or not positive
         */
        public Builder keepAlive(Duration interval) {
            this.keepAliveInterval = Validation.ttl("keepAlive interval", interval);
            this.keepAlive = true;
            return this;
        }

        /**
         * Sets a callback told once, on a Turnstile thread, when the lease is lost. A lease that is
         * also kept alive watches for releases where the store tells of them (Redis, ZooKeeper,
         * PostgreSQL): a forced release is then told within about a round trip, not at the next
         * renewal.
         *
         * @param onLost the callback
         * @return this builder
         * @throws IllegalArgumentException if {@code onLost} is null
         */
        public Builder onLost(Consumer<LeaseLoss> onLost) {
            this.onLost = Validation.notNull("onLost callback", onLost, "give a callback, or leave it unset for none");
            return this;
        }

        /**
         * Makes acquiring re-entrant for the calling thread: the same thread acquiring the same
         * name again gets the same lease and fence, and only the outermost release touches the store.
         *
         * @return this builder
         */
        public Builder reentrant() {
            this.reentrantPerThread = true;
            this.reentrancyContext = null;
            return this;
        }

        /**
         * Makes acquiring re-entrant for an explicit owner context (for async code, where the
         * thread is not the owner). Contexts are compared with {@code equals}.
         *
         * @param context the owner context
         * @return this builder
         * @throws IllegalArgumentException if {@code context} is null
         */
        public Builder reentrantFor(Object context) {
            this.reentrancyContext = Validation.notNull("reentrancy context", context,
                    "give the object that owns the hold (a job id, a request), or use reentrant() for the calling thread");
            this.reentrantPerThread = false;
            return this;
        }

        /**
         * Builds the options.
         *
         * @return the options
         * @throws IllegalArgumentException if {@code lockAtLeastFor} exceeds {@code lockAtMostFor}
         *     or the keep-alive interval is not shorter than {@code lockAtMostFor}
         */
        public LockOptions build() {
            if (lockAtLeastFor.compareTo(lockAtMostFor) > 0) {
                throw new IllegalArgumentException("lockAtLeastFor (" + Validation.show(lockAtLeastFor)
                        + ") is longer than lockAtMostFor (" + Validation.show(lockAtMostFor)
                        + "): make lockAtMostFor at least as long as lockAtLeastFor");
            }
            if (keepAliveInterval != null && keepAliveInterval.compareTo(lockAtMostFor) >= 0) {
                throw new IllegalArgumentException("keepAlive interval (" + Validation.show(keepAliveInterval)
                        + ") must be shorter than lockAtMostFor (" + Validation.show(lockAtMostFor)
                        + "); a third of it is a good value");
            }
            return new LockOptions(this);
        }
    }
}
