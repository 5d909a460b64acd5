package dev.turnstile.job;

import dev.turnstile.Lease;
import dev.turnstile.LeaseLoss;
import dev.turnstile.LeaseLostException;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * A job running under its lock, as the job (and {@link JobInterceptor}s) see it: its name, its
 * lease (with the fence to hand to the protected resource) and whether the lease was lost.
 * {@link #current()} finds it from anywhere on the job's thread, including nested runs (the
 * innermost wins) and virtual threads.
 *
 * <p><b>Loss mid-run.</b> When the lease is lost while the job runs (a keep-alive refused, the
 * store unreachable until the lease's local deadline, {@code lockAtMostFor} passed without
 * keep-alive, the lock force-released), the runner sets {@link #leaseLost()} at once, before the
 * store can hand the lock to anyone else, and, unless {@link JobOptions#interruptOnLoss()} is
 * false, interrupts the job's thread. Long jobs should poll {@link #leaseLost()} (or call
 * {@link #checkLease()}) between steps, and let an {@link InterruptedException} end them.
 */
public final class JobContext {
    private static final ThreadLocal<JobContext> CURRENT = new ThreadLocal<>();

    private final String name;
    private final Lease lease;
    private final Thread thread;
    private final boolean interruptOnLoss;
    private final @Nullable JobContext outer;
    private volatile @Nullable LeaseLoss loss;
    private volatile boolean lostSeen;
    private boolean running = true; // guarded by this
    private boolean interrupted; // guarded by this

    JobContext(String name, Lease lease, Thread thread, boolean interruptOnLoss, @Nullable JobContext outer) {
        this.name = name;
        this.lease = lease;
        this.thread = thread;
        this.interruptOnLoss = interruptOnLoss;
        this.outer = outer;
    }

    /**
     * Returns the innermost locked run on the calling thread.
     *
     * @return the context, or empty when this thread runs no job under {@link JobRunner}
     */
    public static Optional<JobContext> current() {
        return Optional.ofNullable(CURRENT.get());
    }

    static @Nullable JobContext currentOrNull() {
        return CURRENT.get();
    }

    /** Makes this the current context; returns the one it replaces, to be restored by {@link #exit}. */
    @Nullable JobContext enter() {
        JobContext previous = CURRENT.get();
        CURRENT.set(this);
        return previous;
    }

    /**
     * Restores the previous context and stops loss interrupts. Returns whether the runner interrupted
     * the thread, so the caller can clear that interrupt rather than leak it into unrelated work.
     */
    boolean exit(@Nullable JobContext previous) {
        if (previous == null) {
            CURRENT.remove();
        } else {
            CURRENT.set(previous);
        }
        synchronized (this) {
            running = false;
            return interrupted;
        }
    }

    /** The runner's loss hook: on a Turnstile thread. */
    void lost(LeaseLoss loss) {
        this.loss = loss;
        synchronized (this) {
            // Only while the job runs: an interrupt after it ended would hit whatever the thread does next.
            if (running && interruptOnLoss) {
                interrupted = true;
                thread.interrupt();
            }
        }
    }

    /**
     * Returns the job's name (its lock name).
     *
     * @return the name
     */
    public String name() {
        return name;
    }

    /**
     * Returns the lease the job runs under. Read it; releasing it is the runner's job.
     *
     * @return the lease
     */
    public Lease lease() {
        return lease;
    }

    /**
     * Returns the fence of the lease: pass it to the protected resource so it can reject a stale run.
     *
     * @return the fence
     */
    public long fence() {
        return lease.fence();
    }

    /**
     * Tells whether the lease was lost while the job ran: another instance may run the job now, so
     * stop. Never resets to {@code false}.
     *
     * @return {@code true} once the lease is lost
     */
    public boolean leaseLost() {
        if (lostSeen) {
            return true;
        }
        // While the job runs, the lease itself knows at once (a refused renewal, its deadline
        // passed); the loss hook that sets the reason and interrupts follows on another thread.
        if (loss != null || (!lease.isHeld() && running())) {
            lostSeen = true;
        }
        return lostSeen;
    }

    private synchronized boolean running() {
        return running;
    }

    /**
     * Returns why the lease was lost.
     *
     * @return the loss, or empty while the lease is held (and for a moment after {@link #leaseLost()}
     *     turned true: the reason is delivered by the loss hook, on another thread)
     */
    public Optional<LeaseLoss> loss() {
        return Optional.ofNullable(loss);
    }

    /**
     * Throws if the lease was lost: a check to call between the steps of a long job.
     *
     * @throws LeaseLostException if the lease was lost
     */
    public void checkLease() {
        if (leaseLost()) {
            LeaseLoss l = loss;
            throw new LeaseLostException(l != null ? l : new LeaseLoss(name, lease.fence(),
                    "a renewal was refused or its local deadline passed", java.time.Instant.now()));
        }
    }

    /** The context this run is nested in, on the same thread. */
    @Nullable JobContext outer() {
        return outer;
    }

    @Override
    public String toString() {
        return "JobContext{name='" + name + "', fence=" + lease.fence() + (loss != null ? ", lost" : "") + "}";
    }
}
