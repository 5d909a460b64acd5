package dev.turnstile;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import org.jspecify.annotations.Nullable;

/** {@link DistributedLock} over a {@link Turnstile}: one lease per outermost hold, owned by the thread that took it. */
final class LeaseLock implements DistributedLock {
    /** How long lock() waits per call to acquire; it calls again until it has the lock. */
    private static final Duration LOCK_WAIT_ROUND = Duration.ofHours(1);

    private final Turnstile turnstile;
    private final String name;
    private final LockOptions options;
    private @Nullable Thread holder; // guarded by this
    private int holds; // guarded by this
    private @Nullable Lease lease; // guarded by this

    LeaseLock(Turnstile turnstile, String name, LockOptions options) {
        this.turnstile = turnstile;
        this.name = name;
        this.options = options;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public void lock() {
        if (reentered()) {
            return;
        }
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    Optional<Lease> l = turnstile.acquire(name, options, LOCK_WAIT_ROUND);
                    if (l.isPresent()) {
                        took(l.get());
                        return;
                    }
                } catch (InterruptedException e) {
                    interrupted = true; // lock() is not interruptible: wait on, and say so afterwards
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before locking '" + name + "'");
        }
        if (reentered()) {
            return;
        }
        while (true) {
            Optional<Lease> l = turnstile.acquire(name, options, LOCK_WAIT_ROUND);
            if (l.isPresent()) {
                took(l.get());
                return;
            }
        }
    }

    @Override
    public boolean tryLock() {
        if (reentered()) {
            return true;
        }
        Optional<Lease> l = turnstile.tryAcquire(name, options);
        l.ifPresent(this::took);
        return l.isPresent();
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        if (unit == null) {
            throw new IllegalArgumentException("unit is null: give a TimeUnit, such as TimeUnit.SECONDS");
        }
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before locking '" + name + "'");
        }
        if (reentered()) {
            return true;
        }
        Optional<Lease> l = turnstile.acquire(name, options, Duration.ofNanos(Math.max(0, unit.toNanos(time))));
        l.ifPresent(this::took);
        return l.isPresent();
    }

    @Override
    public void unlock() {
        Lease l;
        synchronized (this) {
            if (holder != Thread.currentThread() || lease == null) {
                throw new IllegalMonitorStateException("lock '" + name + "' is not held by thread '"
                        + Thread.currentThread().getName() + "': only the thread that locked it may unlock it");
            }
            if (--holds > 0) {
                return;
            }
            l = lease;
            holder = null;
            lease = null;
        }
        ReleaseOutcome outcome = l.release();
        if (outcome == ReleaseOutcome.ALREADY_EXPIRED || outcome == ReleaseOutcome.NOT_OWNER) {
            throw new LeaseLostException(new LeaseLoss(name, l.fence(), outcome == ReleaseOutcome.ALREADY_EXPIRED
                    ? "the lease had expired before unlock (lockAtMostFor passed without a keep-alive): another holder may have run beside this one"
                    : "the store no longer held the lease at unlock (force-released or taken over)", Instant.now()));
        }
    }

    @Override
    public synchronized boolean isHeldByCurrentThread() {
        return holder == Thread.currentThread() && lease != null && lease.isHeld();
    }

    @Override
    public synchronized long fence() {
        if (holder != Thread.currentThread() || lease == null) {
            throw new IllegalMonitorStateException("lock '" + name + "' is not held by thread '" + Thread.currentThread().getName()
                    + "': its fence is the holder's");
        }
        return lease.fence();
    }

    @Override
    public synchronized Optional<Lease> lease() {
        return holder == Thread.currentThread() ? Optional.ofNullable(lease) : Optional.empty();
    }

    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("lock '" + name + "' is a distributed lock: it has no conditions (wait and "
                + "signal across processes through the resource it protects, or a queue)");
    }

    @Override
    public String toString() {
        return "DistributedLock{name='" + name + "'}";
    }

    /** Counts one more hold if the calling thread holds the lock already. */
    private synchronized boolean reentered() {
        if (holder == Thread.currentThread()) {
            holds++;
            return true;
        }
        return false;
    }

    /**
     * Records the lease the calling thread just took. A hold it replaces is another thread's whose
     * lease ran out before it unlocked (the store let this one in): that thread's unlock will say it
     * no longer holds the lock, and its lease is given back here, which the store refuses harmlessly.
     */
    private void took(Lease l) {
        Lease displaced;
        synchronized (this) {
            displaced = lease;
            holder = Thread.currentThread();
            holds = 1;
            lease = l;
        }
        if (displaced != null) {
            displaced.release();
        }
    }
}
