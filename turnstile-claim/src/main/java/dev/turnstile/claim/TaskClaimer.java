package dev.turnstile.claim;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * Claims tasks from a table (or collection) that many instances work at once, each task by one
 * instance at a time. Every instance ticks (every second, say) and asks for the next due task;
 * the store picks it, marks it claimed and raises its version in one atomic step, by its own clock,
 * skipping tasks another instance is claiming at the same moment. A task whose worker died is due
 * again once the lock timeout has passed since its claim.
 *
 * <pre>{@code
 * ClaimStore store = JdbcClaimStore.builder(dataSource, ClaimTable.builder("gateways").build()).build();
 * try (TaskClaimer claimer = TaskClaimer.builder(store).lockTimeout(Duration.ofMinutes(1)).build()) {
 *     for (Claim task : claimer.claim(ClaimFilter.where("phase", "Deleting"), 10)) {
 *         try (task) {
 *             deleteRecords(task.id());
 *             task.moveTo("Deleted");
 *         }
 *     }
 * }
 * }</pre>
 *
 * <p>Thread-safe. Closing the claimer stops keep-alive timers; it does not close the store.
 */
public final class TaskClaimer implements AutoCloseable {
    /** The largest batch one claim may ask for. */
    public static final int MAX_BATCH = 1000;
    private final ClaimStore store;
    private final Duration lockTimeout;
    private final Duration relockFloor;
    private final @Nullable Duration keepAlive;
    private final ScheduledThreadPoolExecutor timer;
    private final ExecutorService workers;
    private volatile boolean closed;

    private TaskClaimer(Builder b) {
        this.store = b.store;
        this.lockTimeout = b.lockTimeout;
        this.relockFloor = b.relockFloor != null ? b.relockFloor : min(Duration.ofSeconds(1), b.lockTimeout);
        this.keepAlive = b.keepAlive;
        this.timer = new ScheduledThreadPoolExecutor(1, daemon("turnstile-claim-timer"));
        this.timer.setRemoveOnCancelPolicy(true);
        this.workers = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 30, TimeUnit.SECONDS, new SynchronousQueue<>(),
                daemon("turnstile-claim-keeper"));
    }

    /**
     * Starts a builder over a claim store.
     *
     * @param store the store, for example {@code JdbcClaimStore}
     * @return a builder
     * @throws IllegalArgumentException if {@code store} is null
     */
    public static Builder builder(ClaimStore store) {
        if (store == null) {
            throw new IllegalArgumentException("claim store is null: give a ClaimStore, for example "
                    + "JdbcClaimStore.builder(dataSource, table).build()");
        }
        return new Builder(store);
    }

    /**
     * Claims the next due task that matches the filter, if any.
     *
     * @param filter which tasks may be claimed, for example {@code ClaimFilter.where("phase", "Deleting")}
     * @return the claim, or empty if no matching task is due (or all are being claimed by others)
     * @throws IllegalArgumentException if the filter is null or tests a column that is not a
     *     declared filter column of the table
     * @throws IllegalStateException if the claimer is closed
     * @throws dev.turnstile.StoreUnavailableException if the store cannot be reached
     */
    public Optional<Claim> claimNext(ClaimFilter filter) {
        List<Claim> claims = claim(filter, 1);
        return claims.isEmpty() ? Optional.empty() : Optional.of(claims.get(0));
    }

    /**
     * Claims up to {@code max} due tasks that match the filter, oldest {@code lockedAt} first,
     * then oldest {@code updatedAt}, in one atomic step.
     *
     * @param filter which tasks may be claimed
     * @param max how many at most, 1 to {@value #MAX_BATCH}
     * @return the claims, possibly none
     * @throws IllegalArgumentException if the filter is null or not allowed by the table, or
     *     {@code max} is out of range
     * @throws IllegalStateException if the claimer is closed
     * @throws dev.turnstile.StoreUnavailableException if the store cannot be reached
     */
    public List<Claim> claim(ClaimFilter filter, int max) {
        if (filter == null) {
            throw new IllegalArgumentException("filter is null: give ClaimFilter.where(column, value) or ClaimFilter.all()");
        }
        if (max < 1 || max > MAX_BATCH) {
            throw new IllegalArgumentException("batch size is " + max + ": claim between 1 and " + MAX_BATCH + " tasks at once");
        }
        if (closed) {
            throw new IllegalStateException("the TaskClaimer is closed: build a new one");
        }
        store.table().checkFilter(filter);
        long start = System.nanoTime();
        List<ClaimedRow> rows = store.claim(filter, max, lockTimeout);
        List<Claim> out = new ArrayList<>(rows.size());
        for (ClaimedRow row : rows) {
            HeldClaim c = new HeldClaim(this, row, start);
            if (keepAlive != null) {
                c.armKeepAlive();
            }
            out.add(c);
        }
        return out;
    }

    /**
     * Returns how long a claim holds a task without keep-alive.
     *
     * @return the lock timeout
     */
    public Duration lockTimeout() {
        return lockTimeout;
    }

    /**
     * Returns the shortest delay of a {@link Claim#relock()}.
     *
     * @return the relock floor
     */
    public Duration relockFloor() {
        return relockFloor;
    }

    /**
     * Returns the store this claimer works on.
     *
     * @return the store
     */
    public ClaimStore store() {
        return store;
    }

    /** Stops keep-alive timers. Claims still held keep their tasks until the lock timeout. */
    @Override
    public void close() {
        closed = true;
        timer.shutdownNow();
        workers.shutdown();
    }

    /** The keep-alive interval in nanoseconds; only claims of a claimer that has one arm a keep-alive. */
    long keepAliveNanos() {
        Duration k = keepAlive;
        if (k == null) {
            throw new IllegalStateException("this claimer has no keep-alive interval");
        }
        return k.toNanos();
    }

    /** Runs {@code task} on the worker pool after {@code delayNanos}; null once the claimer is closed. */
    @Nullable ScheduledFuture<?> schedule(Runnable task, long delayNanos) {
        if (timer.isShutdown()) {
            return null;
        }
        try {
            return timer.schedule(() -> workers.execute(task), Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            return null;
        }
    }

    void runAsync(Runnable task) {
        try {
            workers.execute(task);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            task.run();
        }
    }

    /** Clock-rate drift and scheduling slack, as for leases: 1 % + 2 ms, at least a tenth up to 100 ms. */
    static long driftMargin(Duration timeout) {
        long n = timeout.toNanos();
        return Math.max(n / 100 + 2_000_000L, Math.min(n / 10, 100_000_000L));
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    private static ThreadFactory daemon(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /** Builds a {@link TaskClaimer}. Not thread-safe. */
    public static final class Builder {
        private static final Duration MAX = Duration.ofDays(366);
        private final ClaimStore store;
        private Duration lockTimeout = Duration.ofMinutes(1);
        private @Nullable Duration relockFloor;
        private @Nullable Duration keepAlive;

        private Builder(ClaimStore store) {
            this.store = store;
        }

        /**
         * Sets how long a claim holds a task: a task whose worker died is due again this long
         * after its claim. Longer than any step of work (or use keep-alive). Default 1 minute.
         *
         * @param timeout at least 1 ms, at most 366 days
         * @return this builder
         * @throws IllegalArgumentException if it is null, zero, negative or out of range
         */
        public Builder lockTimeout(Duration timeout) {
            this.lockTimeout = positive("lock timeout", timeout);
            return this;
        }

        /**
         * Sets the shortest delay of a {@link Claim#relock()}. Default 1 second, or the lock
         * timeout if shorter.
         *
         * @param floor at least 1 ms
         * @return this builder
         * @throws IllegalArgumentException if it is null, zero, negative or out of range
         */
        public Builder relockFloor(Duration floor) {
            this.relockFloor = positive("relock floor", floor);
            return this;
        }

        /**
         * Keeps every claim alive every {@code interval} until it ends, for steps that may take
         * longer than the lock timeout; a refused keep-alive completes {@link Claim#lost()}.
         * Default off.
         *
         * @param interval shorter than the lock timeout (a third of it is a good choice)
         * @return this builder
         * @throws IllegalArgumentException if it is null, zero or negative
         */
        public Builder keepAlive(Duration interval) {
            this.keepAlive = positive("keep-alive interval", interval);
            return this;
        }

        /**
         * Builds the claimer.
         *
         * @return the claimer
         * @throws IllegalArgumentException if the relock floor or the keep-alive interval is not
         *     shorter than the lock timeout
         */
        public TaskClaimer build() {
            if (relockFloor != null && relockFloor.compareTo(lockTimeout) > 0) {
                throw new IllegalArgumentException("relock floor " + relockFloor + " is longer than the lock timeout "
                        + lockTimeout + ": a relock waits at most the lock timeout, so give a shorter floor");
            }
            if (keepAlive != null && keepAlive.compareTo(lockTimeout) >= 0) {
                throw new IllegalArgumentException("keep-alive interval " + keepAlive + " is not shorter than the lock "
                        + "timeout " + lockTimeout + ": the claim would expire between keep-alives; use a third of it");
            }
            return new TaskClaimer(this);
        }

        private static Duration positive(String what, Duration d) {
            if (d == null) {
                throw new IllegalArgumentException(what + " is null: give a duration such as 30s");
            }
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(what + " is " + d + ": it must be positive");
            }
            // the range first: toMillis() of a huge duration throws ArithmeticException
            if (d.compareTo(MAX) > 0) {
                throw new IllegalArgumentException(what + " is " + d + ": out of range, give 1ms to 366 days");
            }
            if (d.toMillis() < 1) {
                throw new IllegalArgumentException(what + " is " + d + ": it must be at least 1ms (stores keep time in "
                        + "milliseconds)");
            }
            return d;
        }
    }
}
