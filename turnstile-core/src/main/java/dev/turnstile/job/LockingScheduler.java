package dev.turnstile.job;

import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gives an existing {@link ScheduledExecutorService} locked scheduling in one line: every tick
 * runs through a {@link JobRunner}, so across all instances sharing the store it runs on one of
 * them, and is skipped on the others.
 *
 * <pre>{@code
 * LockingScheduler scheduler = LockingScheduler.wrap(executor, JobRunner.builder(turnstile).build());
 * scheduler.scheduleAtFixedRate("cleanup", options, this::cleanup, 0, 1, TimeUnit.MINUTES);
 * }</pre>
 *
 * <p>Unlike a raw {@code ScheduledExecutorService}, a periodic task that throws does not cancel its
 * schedule: the exception is logged at ERROR with the job's name and the next tick runs as usual.
 * (An {@link Error} still ends the schedule, as it should.) The executor stays the caller's: this
 * class never shuts it down.
 */
public final class LockingScheduler {
    private static final Logger log = LoggerFactory.getLogger(LockingScheduler.class);

    private final ScheduledExecutorService executor;
    private final JobRunner runner;
    /**
     * The schedules made through this wrapper, by job name, for {@link #nextTicks()}. Cancelled and
     * ended ones are dropped when read and every {@link #PRUNE_EVERY} schedules, so an application
     * that schedules many one-off runs pays a walk of the queue only now and then, not per call.
     */
    private final java.util.Queue<Schedule> schedules = new java.util.concurrent.ConcurrentLinkedQueue<>();
    private final java.util.concurrent.atomic.AtomicLong scheduled = new java.util.concurrent.atomic.AtomicLong();
    private static final int PRUNE_EVERY = 64;

    private record Schedule(String name, ScheduledFuture<?> future) {}

    private LockingScheduler(ScheduledExecutorService executor, JobRunner runner) {
        this.executor = executor;
        this.runner = runner;
    }

    /**
     * Wraps an executor.
     *
     * @param executor the executor that runs the ticks (it keeps its own threads and lifecycle)
     * @param runner the runner that locks each tick
     * @return the wrapper
     * @throws IllegalArgumentException if either is null
     */
    public static LockingScheduler wrap(ScheduledExecutorService executor, JobRunner runner) {
        if (executor == null) {
            throw new IllegalArgumentException("executor is null: give the ScheduledExecutorService to wrap, "
                    + "e.g. Executors.newSingleThreadScheduledExecutor()");
        }
        if (runner == null) {
            throw new IllegalArgumentException("runner is null: give a JobRunner, e.g. JobRunner.builder(turnstile).build()");
        }
        return new LockingScheduler(executor, runner);
    }

    /**
     * Returns the wrapped executor.
     *
     * @return the executor
     */
    public ScheduledExecutorService executor() {
        return executor;
    }

    /**
     * Returns the runner that locks each tick.
     *
     * @return the runner
     */
    public JobRunner runner() {
        return runner;
    }

    /**
     * Runs {@code task} under the lock {@code name} every {@code period}, as
     * {@link ScheduledExecutorService#scheduleAtFixedRate} does, on one instance per tick.
     *
     * @param name the lock name
     * @param options how each tick holds the lock
     * @param task the job
     * @param initialDelay the delay before the first tick
     * @param period the time between tick starts; positive
     * @param unit the unit of both
     * @return the schedule's future: cancel it to stop the ticks
     * @throws IllegalArgumentException if an argument is null or invalid
     */
    public ScheduledFuture<?> scheduleAtFixedRate(String name, JobOptions options, Runnable task, long initialDelay,
            long period, TimeUnit unit) {
        Runnable tick = tick(name, options, task, unit, period);
        return remember(name, executor.scheduleAtFixedRate(tick, initialDelay, period, unit));
    }

    /**
     * Runs {@code task} under the lock {@code name} with {@code delay} between the end of one tick
     * and the start of the next, as {@link ScheduledExecutorService#scheduleWithFixedDelay} does.
     *
     * @param name the lock name
     * @param options how each tick holds the lock
     * @param task the job
     * @param initialDelay the delay before the first tick
     * @param delay the delay between ticks; positive
     * @param unit the unit of both
     * @return the schedule's future: cancel it to stop the ticks
     * @throws IllegalArgumentException if an argument is null or invalid
     */
    public ScheduledFuture<?> scheduleWithFixedDelay(String name, JobOptions options, Runnable task, long initialDelay,
            long delay, TimeUnit unit) {
        Runnable tick = tick(name, options, task, unit, delay);
        return remember(name, executor.scheduleWithFixedDelay(tick, initialDelay, delay, unit));
    }

    /**
     * Runs {@code task} once under the lock {@code name} after {@code delay}. Unlike the periodic
     * methods, a failure reaches the future (as {@link java.util.concurrent.ExecutionException}).
     *
     * @param name the lock name
     * @param options how the run holds the lock
     * @param task the job
     * @param delay the delay before the run
     * @param unit its unit
     * @return a future with the run's result (ran, or skipped and why)
     * @throws IllegalArgumentException if an argument is null or invalid
     */
    public ScheduledFuture<JobResult<Void>> schedule(String name, JobOptions options, Runnable task, long delay,
            TimeUnit unit) {
        check(name, options, task, unit);
        return remember(name, executor.schedule(() -> runner.run(name, options, task), delay, unit));
    }

    /**
     * When each job scheduled through this wrapper ticks next, by this process's clock: for a job
     * scheduled more than once, its soonest. A tick that is due or running shows as now or a moment
     * ago; cancelled schedules and ended one-off runs are left out. For a console's jobs page.
     *
     * @return job name to its next tick, a snapshot
     */
    public java.util.Map<String, java.time.Instant> nextTicks() {
        schedules.removeIf(s -> s.future().isDone());
        java.time.Instant now = java.time.Instant.now();
        java.util.Map<String, java.time.Instant> out = new java.util.TreeMap<>();
        for (Schedule s : schedules) {
            java.time.Instant at = now.plusMillis(s.future().getDelay(TimeUnit.MILLISECONDS));
            out.merge(s.name(), at, (a, b) -> a.isBefore(b) ? a : b);
        }
        return out;
    }

    /** How many schedules are remembered, ended ones not yet dropped included (for tests). */
    int remembered() {
        return schedules.size();
    }

    private <F extends ScheduledFuture<?>> F remember(String name, F future) {
        if (scheduled.incrementAndGet() % PRUNE_EVERY == 0) {
            schedules.removeIf(s -> s.future().isDone());
        }
        schedules.add(new Schedule(name, future));
        return future;
    }

    private Runnable tick(String name, JobOptions options, Runnable task, TimeUnit unit, long period) {
        check(name, options, task, unit);
        if (period <= 0) {
            throw new IllegalArgumentException("period of job '" + name + "' is " + period + " " + unit
                    + ": it must be positive");
        }
        return () -> {
            try {
                runner.run(name, options, task);
            } catch (RuntimeException e) {
                // A raw ScheduledExecutorService would cancel every later tick on this exception.
                log.error("job '{}' failed; its schedule goes on", name, e);
            }
        };
    }

    private static void check(String name, JobOptions options, Runnable task, TimeUnit unit) {
        dev.turnstile.Turnstile.checkLockName(name);
        if (options == null) {
            throw new IllegalArgumentException("options of job '" + name + "' are null: give JobOptions, e.g. JobOptions.defaults()");
        }
        if (task == null) {
            throw new IllegalArgumentException("task of job '" + name + "' is null: give the job to run");
        }
        if (unit == null) {
            throw new IllegalArgumentException("time unit of job '" + name + "' is null: give one, e.g. TimeUnit.SECONDS");
        }
    }
}
