package dev.turnstile.job;

import dev.turnstile.Lease;
import dev.turnstile.LockOptions;
import dev.turnstile.StoreUnavailableException;
import dev.turnstile.Turnstile;
import java.lang.reflect.UndeclaredThrowableException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs jobs under named locks, once across every instance that shares the store: a run whose lock
 * is held elsewhere is skipped (a result, logged at DEBUG), not queued.
 *
 * <pre>{@code
 * JobRunner runner = JobRunner.builder(turnstile).build();
 * JobOptions options = JobOptions.builder()
 *         .lockAtMostFor(Duration.ofMinutes(10))
 *         .lockAtLeastFor(Duration.ofSeconds(30))
 *         .build();
 * JobResult<Void> result = runner.run("nightly-report", options, () -> writeReport());
 * }</pre>
 *
 * <p>Per run: the lock is taken without waiting, with {@code lockAtMostFor} as its TTL (renewed
 * every TTL/3 with {@link JobOptions#keepAlive()}); the interceptors and the job run on the calling
 * thread with {@link JobContext#current()} set; then the lease is released, or only shortened to
 * {@code lockAtLeastFor} after the acquire if the job finished sooner. If the lease is lost while
 * the job runs, the job is told: {@link JobContext#leaseLost()} turns true and, by default, its
 * thread is interrupted (see {@link JobContext}); the result then says {@link JobResult#leaseLost()}.
 * If the store cannot be reached, the run is skipped and logged at ERROR, or the failure is thrown,
 * as {@link JobOptions#onStoreUnavailable()} says.
 *
 * <p>Thread-safe; one per {@link Turnstile} is enough.
 */
public final class JobRunner {
    private static final Logger log = LoggerFactory.getLogger(JobRunner.class);

    private final Turnstile turnstile;
    private final List<JobInterceptor> interceptors;
    private final List<JobListener> listeners;
    private final JobOptions defaults;

    private JobRunner(Builder b) {
        this.turnstile = b.turnstile;
        this.interceptors = List.copyOf(b.interceptors);
        this.listeners = List.copyOf(b.listeners);
        this.defaults = b.defaults;
    }

    /**
     * Starts a builder over a lock client.
     *
     * @param turnstile the client whose store holds the jobs' locks
     * @return a builder
     * @throws IllegalArgumentException if {@code turnstile} is null
     */
    public static Builder builder(Turnstile turnstile) {
        if (turnstile == null) {
            throw new IllegalArgumentException("turnstile is null: give the Turnstile client, e.g. Turnstile.builder(store).build()");
        }
        return new Builder(turnstile);
    }

    /**
     * Returns the lock client.
     *
     * @return the client
     */
    public Turnstile turnstile() {
        return turnstile;
    }

    /**
     * Returns the options used by the overloads that take none.
     *
     * @return the default options
     */
    public JobOptions defaults() {
        return defaults;
    }

    /**
     * Runs a task under the lock {@code name} with the default options.
     *
     * @param name the lock name
     * @param task the job
     * @return what happened
     * @see #run(String, JobOptions, Runnable)
     */
    public JobResult<Void> run(String name, Runnable task) {
        return run(name, defaults, task);
    }

    /**
     * Runs a task under the lock {@code name}, or skips it if the lock is held elsewhere.
     *
     * @param name the lock name (1 to 255 characters, no control characters, no surrounding white space)
     * @param options how to hold the lock
     * @param task the job
     * @return what happened: ran, skipped because busy, or skipped because the store is unavailable
     * @throws IllegalArgumentException if an argument is null or the name is invalid
     * @throws StoreUnavailableException if the store cannot be reached and the policy is
     *     {@link StoreFailurePolicy#FAIL}
     * @throws dev.turnstile.StoreSchemaException if the store is not set up (lock table missing),
     *     whatever the policy: that is not an outage to skip until it passes, it never passes
     * @throws IllegalStateException if the Turnstile is closed
     * @throws RuntimeException what the task threw (after the lease was released); a checked
     *     exception from an interceptor arrives wrapped in {@link UndeclaredThrowableException}
     */
    public JobResult<Void> run(String name, JobOptions options, Runnable task) {
        notNull("task", task);
        try {
            return call(name, options, () -> {
                task.run();
                return null;
            });
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Exception e) {
            throw new UndeclaredThrowableException(e, "an interceptor of job '" + name + "' threw " + e);
        }
    }

    /**
     * Calls a task under the lock {@code name} with the default options.
     *
     * @param name the lock name
     * @param task the job
     * @param <T> the job's value type
     * @return what happened, with the job's value if it ran
     * @throws Exception what the task threw
     * @see #call(String, JobOptions, Callable)
     */
    public <T> JobResult<T> call(String name, Callable<T> task) throws Exception {
        return call(name, defaults, task);
    }

    /**
     * Calls a task under the lock {@code name}, or skips it if the lock is held elsewhere.
     *
     * @param name the lock name
     * @param options how to hold the lock
     * @param task the job
     * @param <T> the job's value type
     * @return what happened, with the job's value if it ran
     * @throws IllegalArgumentException if an argument is null or the name is invalid
     * @throws StoreUnavailableException if the store cannot be reached and the policy is
     *     {@link StoreFailurePolicy#FAIL}
     * @throws dev.turnstile.StoreSchemaException if the store is not set up (lock table missing),
     *     whatever the policy: that is not an outage to skip until it passes, it never passes
     * @throws IllegalStateException if the Turnstile is closed
     * @throws Exception what the task (or an interceptor) threw, after the lease was released
     */
    public <T> JobResult<T> call(String name, JobOptions options, Callable<T> task) throws Exception {
        Turnstile.checkLockName(name);
        notNull("options", options);
        notNull("task", task);
        Thread thread = Thread.currentThread();
        JobContext outer = JobContext.currentOrNull();
        // The context exists before the lease so that the loss hook can reach it; it learns its lease below.
        ContextRef ref = new ContextRef();
        LockOptions lockOptions = options.toLockOptions(loss -> ref.lost(loss));
        // read only for listeners: a clock read per run costs the hot path of an application without any
        Instant startedAt = listeners.isEmpty() ? Instant.EPOCH : Instant.now();
        long started = listeners.isEmpty() ? 0 : System.nanoTime();
        Optional<Lease> acquired;
        try {
            acquired = turnstile.tryAcquire(name, lockOptions);
        } catch (StoreUnavailableException e) {
            report(name, JobResult.Status.SKIPPED_STORE_UNAVAILABLE, startedAt, started, -1, false, describe(e));
            if (options.onStoreUnavailable() == StoreFailurePolicy.FAIL) {
                throw e;
            }
            log.error("job '{}' skipped: the lock store is unavailable ({})", name, e.getMessage());
            return JobResult.storeUnavailable(e);
        } catch (RuntimeException e) {
            // not set up (no lock table), or a closed client: the job did not run, and the caller gets the error
            report(name, JobResult.Status.SKIPPED_STORE_UNAVAILABLE, startedAt, started, -1, false, describe(e));
            throw e;
        }
        if (acquired.isEmpty()) {
            log.debug("job '{}' skipped: its lock is held elsewhere", name);
            report(name, JobResult.Status.SKIPPED_BUSY, startedAt, started, -1, false, null);
            return JobResult.busy();
        }
        Lease lease = acquired.get();
        JobContext ctx = new JobContext(name, lease, thread, options.interruptOnLoss(), outer);
        ref.set(ctx);
        JobContext previous = ctx.enter();
        T value;
        boolean lost = false;
        Throwable failure = null;
        try {
            value = intercepted(0, ctx, task);
        } catch (Exception | Error e) {
            failure = e;
            throw e;
        } finally {
            lost = ctx.leaseLost(); // while the run still counts as running: the lease's own verdict
            if (ctx.exit(previous)) {
                Thread.interrupted(); // our own loss interrupt: do not leak it into the caller's next work
            }
            release(lease);
            report(name, JobResult.Status.RAN, startedAt, started, lease.fence(), lost, failure == null ? null : describe(failure));
        }
        return JobResult.ran(value, lease.fence(), lost);
    }

    private void report(String name, JobResult.Status status, Instant startedAt, long startedNanos, long fence, boolean lost,
            @Nullable String failure) {
        if (listeners.isEmpty()) {
            return;
        }
        JobRunReport run = new JobRunReport(name, status, startedAt, Duration.ofNanos(System.nanoTime() - startedNanos), fence,
                lost, failure);
        for (JobListener l : listeners) {
            try {
                l.onJobEnded(run);
            } catch (VirtualMachineError e) {
                throw e; // out of memory, stack overflow: nothing can be relied on any more
            } catch (Throwable e) {
                // an Error or a checked exception (Kotlin, sneaky throws) too: the run's result stands
                log.warn("a JobListener failed for job '{}'; the run's result stands", name, e);
            }
        }
    }

    private static String describe(Throwable t) {
        return t.getClass().getName() + ": " + t.getMessage();
    }

    private <T> T intercepted(int i, JobContext ctx, Callable<T> task) throws Exception {
        if (i == interceptors.size()) {
            return task.call();
        }
        return interceptors.get(i).around(ctx, () -> intercepted(i + 1, ctx, task));
    }

    /** The job ran; a release that fails must not turn that into a failure: the lease expires by its TTL. */
    private static void release(Lease lease) {
        try {
            lease.release();
        } catch (StoreUnavailableException | dev.turnstile.StoreSchemaException e) {
            log.error("job '{}' ran, but releasing its lock failed ({}); the lock frees itself at its lockAtMostFor",
                    lease.name(), e.getMessage());
        }
    }

    private static void notNull(String what, Object value) {
        if (value == null) {
            throw new IllegalArgumentException(what + " is null: give a "
                    + ("options".equals(what) ? "JobOptions, e.g. JobOptions.defaults()" : "job to run"));
        }
    }

    /**
     * The loss hook may fire (on a Turnstile thread) before the context exists: the loss is kept
     * and delivered when it does.
     */
    private static final class ContextRef {
        private @Nullable JobContext ctx;
        private dev.turnstile.@Nullable LeaseLoss early;

        synchronized void set(JobContext ctx) {
            this.ctx = ctx;
            if (early != null) {
                ctx.lost(early);
            }
        }

        synchronized void lost(dev.turnstile.LeaseLoss loss) {
            if (ctx != null) {
                ctx.lost(loss);
            } else {
                early = loss;
            }
        }
    }

    /** Builds a {@link JobRunner}. Not thread-safe. */
    public static final class Builder {
        private final Turnstile turnstile;
        private final List<JobInterceptor> interceptors = new ArrayList<>();
        private final List<JobListener> listeners = new ArrayList<>();
        private JobOptions defaults = JobOptions.defaults();

        private Builder(Turnstile turnstile) {
            this.turnstile = turnstile;
        }

        /**
         * Adds an interceptor around every run; the first added is the outermost.
         *
         * @param interceptor the interceptor
         * @return this builder
         * @throws IllegalArgumentException if null
         */
        public Builder interceptor(JobInterceptor interceptor) {
            if (interceptor == null) {
                throw new IllegalArgumentException("interceptor is null: give a JobInterceptor, or add none");
            }
            interceptors.add(interceptor);
            return this;
        }

        /**
         * Adds a listener told how every run ended (ran, skipped busy, skipped on a store failure).
         *
         * @param listener the listener
         * @return this builder
         * @throws IllegalArgumentException if null
         */
        public Builder listener(JobListener listener) {
            if (listener == null) {
                throw new IllegalArgumentException("listener is null: give a JobListener, or add none");
            }
            listeners.add(listener);
            return this;
        }

        /**
         * Sets the options used by {@link JobRunner#run(String, Runnable)} and
         * {@link JobRunner#call(String, Callable)}.
         *
         * @param defaults the options; {@link JobOptions#defaults()} unless set
         * @return this builder
         * @throws IllegalArgumentException if null
         */
        public Builder defaults(JobOptions defaults) {
            if (defaults == null) {
                throw new IllegalArgumentException("defaults is null: give JobOptions, e.g. JobOptions.builder().lockAtMostFor(...).build()");
            }
            this.defaults = defaults;
            return this;
        }

        /**
         * Builds the runner.
         *
         * @return the runner
         */
        public JobRunner build() {
            return new JobRunner(this);
        }
    }
}
