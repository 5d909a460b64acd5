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
        lock(options);
    }

    @Override
    public void lock(Duration lockAtMostFor) {
        lock(withTtl(lockAtMostFor));
    }

    private void lock(LockOptions holdOptions) {
        if (reentered()) {
            return;
        }
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    Optional<Lease> l = turnstile.acquire(name, holdOptions, LOCK_WAIT_ROUND);
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
        return tryLock(Duration.ofNanos(unit.toNanos(time)), options);
    }

    @Override
    public boolean tryLock(Duration maxWait, Duration lockAtMostFor) throws InterruptedException {
        if (maxWait == null) {
            throw new IllegalArgumentException("maxWait is null: give how long to wait, Duration.ZERO for one try");
        }
        return tryLock(maxWait, withTtl(lockAtMostFor));
    }

    private boolean tryLock(Duration maxWait, LockOptions holdOptions) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before locking '" + name + "'");
        }
        if (reentered()) {
            return true;
        }
        // Lock's contract takes any wait; acquire's longest is 366 days, which is as good as forever here.
        Duration wait = maxWait.isNegative() ? Duration.ZERO
                : maxWait.compareTo(LockOptions.MAX_DURATION) > 0 ? LockOptions.MAX_DURATION : maxWait;
        Optional<Lease> l = turnstile.acquire(name, holdOptions, wait);
        l.ifPresent(this::took);
        return l.isPresent();
    }

    private LockOptions withTtl(Duration lockAtMostFor) {
        if (lockAtMostFor == null) {
            throw new IllegalArgumentException("lockAtMostFor is null: give the lease's time to live, such as Duration.ofSeconds(30)");
        }
        return options.toBuilder().lockAtMostFor(lockAtMostFor).build();
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
    public synchronized boolean isLocked() {
        return holder != null;
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

    /**
     * Counts one more hold if the calling thread holds the lock already and its lease is still
     * held. A thread whose lease was lost asks the store again, as any other would.
     */
    private synchronized boolean reentered() {
        if (holder == Thread.currentThread() && lease != null && lease.isHeld()) {
            holds++;
            return true;
        }
        return false;
    }

    /**
     * Records the lease the calling thread just took. A lease it replaces was lost before its
     * unlock (the store let this one in): if it was this thread's, the new lease carries its holds
     * on, so that every lock still has its unlock; if another thread's, that thread's unlock will
     * say it no longer holds the lock. The lost lease is given back here, which the store refuses
     * harmlessly.
     */
    private void took(Lease l) {
        Lease displaced;
        synchronized (this) {
            displaced = lease;
            holds = holder == Thread.currentThread() ? holds + 1 : 1;
            holder = Thread.currentThread();
            lease = l;
        }
        if (displaced != null) {
            displaced.release();
        }
    }
}
