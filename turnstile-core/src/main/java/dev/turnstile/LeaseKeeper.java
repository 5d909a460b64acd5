package dev.turnstile;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads behind keep-alive and loss detection. Timers only hand work over, so a renewal stuck
 * on an unreachable store can never delay another lease's deadline check: store calls and user
 * callbacks run on a separate pool.
 */
final class LeaseKeeper implements AutoCloseable {
    private final ScheduledThreadPoolExecutor timer;
    private final ExecutorService workers;
    private final DeadlineTimer deadlines;

    LeaseKeeper() {
        this.timer = new ScheduledThreadPoolExecutor(1, daemon("turnstile-timer"));
        this.timer.setRemoveOnCancelPolicy(true);
        this.workers = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 30, TimeUnit.SECONDS,
                new SynchronousQueue<>(), daemon("turnstile-keeper"));
        this.deadlines = new DeadlineTimer(timer);
    }

    ScheduledFuture<?> schedule(Runnable task, long delayNanos) {
        return timer.schedule(task, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
    }

    /**
     * Runs a deadline check on the timer thread at {@code dueNanos} ({@link System#nanoTime()}),
     * without a timer entry of its own (see {@link DeadlineTimer}).
     *
     * @throws java.util.concurrent.RejectedExecutionException if the timer has stopped
     */
    DeadlineTimer.Check checkAt(long dueNanos, Runnable check) {
        return deadlines.schedule(dueNanos, check);
    }

    /** Runs a store call or a user callback off the timer thread. */
    void execute(Runnable task) {
        workers.execute(task);
    }

    @Override
    public void close() {
        timer.shutdownNow();
        workers.shutdown();
    }

    private static ThreadFactory daemon(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
