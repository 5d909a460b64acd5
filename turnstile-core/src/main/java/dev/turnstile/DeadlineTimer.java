package dev.turnstile;

import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The leases' deadline checks, kept in one ordered set behind a single timer entry armed for the
 * earliest of them.
 *
 * <p>Why not one timer entry per lease: arming an entry that becomes the timer's earliest wakes the
 * timer thread, so every lease that is watched (every job run, which always wants to hear of a
 * loss) paid a thread wake-up on its acquire, about a tenth of a PostgreSQL acquire+release on 2
 * cores. Here a deadline later than the one armed (the usual case: leases of one TTL, taken one
 * after another) touches no timer at all, and a released lease's check is simply dropped from the
 * set; the armed entry, when it comes due with nothing to check, re-arms for the earliest left.
 *
 * <p>Checks run on the timer thread, as before, and must only hand work over.
 */
final class DeadlineTimer {
    private static final Logger log = LoggerFactory.getLogger(DeadlineTimer.class);

    private final ScheduledThreadPoolExecutor timer;
    private final ConcurrentSkipListSet<Check> checks = new ConcurrentSkipListSet<>();
    private final AtomicLong sequence = new AtomicLong();
    private @Nullable ScheduledFuture<?> armed; // guarded by this
    private long armedNanos; // guarded by this; meaningful while armed != null

    DeadlineTimer(ScheduledThreadPoolExecutor timer) {
        this.timer = timer;
    }

    /** A check due at a {@link System#nanoTime()}; cancel it when it is no longer wanted. */
    final class Check implements Comparable<Check> {
        private final long dueNanos;
        private final long seq;
        private final Runnable task;

        private Check(long dueNanos, Runnable task) {
            this.dueNanos = dueNanos;
            this.seq = sequence.incrementAndGet();
            this.task = task;
        }

        /** Drops the check; it will not run unless it is already running. */
        void cancel() {
            checks.remove(this);
        }

        @Override
        public int compareTo(Check o) {
            long d = dueNanos - o.dueNanos; // nanoTime values: compare by difference, never directly
            return d != 0 ? Long.signum(d) : Long.compare(seq, o.seq);
        }

        @Override
        public boolean equals(@Nullable Object o) {
            return this == o;
        }

        @Override
        public int hashCode() {
            return Long.hashCode(seq);
        }
    }

    /**
     * Runs {@code task} on the timer thread once {@link System#nanoTime()} reaches {@code dueNanos},
     * unless the returned check is cancelled first.
     *
     * @throws RejectedExecutionException if the timer has stopped (the client is closing)
     */
    Check schedule(long dueNanos, Runnable task) {
        if (timer.isShutdown()) {
            throw new RejectedExecutionException("the lease timer has stopped: the Turnstile client is closing");
        }
        Check check = new Check(dueNanos, task);
        checks.add(check);
        armFor(dueNanos);
        return check;
    }

    /** Makes sure the timer fires no later than {@code dueNanos}. */
    private synchronized void armFor(long dueNanos) {
        if (armed != null && armedNanos - dueNanos <= 0) {
            return;
        }
        if (armed != null) {
            armed.cancel(false);
        }
        armedNanos = dueNanos;
        armed = timer.schedule(this::fire, Math.max(0, dueNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
    }

    private void fire() {
        synchronized (this) {
            armed = null;
        }
        long now = System.nanoTime();
        try {
            for (Check first = firstOrNull(); first != null && first.dueNanos - now <= 0; first = firstOrNull()) {
                if (checks.remove(first)) {
                    try {
                        first.task.run();
                    } catch (RuntimeException e) {
                        // one lease's check must not stop the others'
                        log.error("a lease's deadline check failed", e);
                    }
                }
            }
        } finally {
            // Also after an Error (a keeper thread that could not be made): the checks left must
            // keep a timer entry, as each had one of its own before.
            Check next = firstOrNull();
            if (next != null) {
                try {
                    armFor(next.dueNanos);
                } catch (RejectedExecutionException closing) {
                    // the client is closing: its leases end with it
                }
            }
        }
    }

    private @Nullable Check firstOrNull() {
        try {
            return checks.first();
        } catch (java.util.NoSuchElementException empty) {
            return null;
        }
    }
}
