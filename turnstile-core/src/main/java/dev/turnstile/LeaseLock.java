package dev.turnstile;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import org.jspecify.annotations.Nullable;

/**
 * {@link DistributedLock} over a {@link Turnstile}: one lease per outermost hold, owned by the
 * thread that took it.
 *
 * <p>Each thread's hold is a record of its own, so that no thread's acquire ever touches another's
 * lease: a thread whose lease the store ended (expired, force-released) keeps its record, its
 * keep-alive reports the loss, and its unlock says so, while the thread the store let in holds a
 * record of its own. A thread that locks again after its own lease was lost gets a new lease for
 * the new hold; the holds of the lost lease become owed unlocks, each of which reports the loss. So
 * every lock still pairs with an unlock, the new lease is freed by the unlock that pairs with its
 * lock, and a loss is never hidden.
 */
final class LeaseLock implements DistributedLock {
    /** How long lock() waits per call to acquire; it calls again until it has the lock. */
    private static final Duration LOCK_WAIT_ROUND = Duration.ofHours(1);

    private final Turnstile turnstile;
    private final String name;
    private final LockOptions options;
    /** Only the thread a record is for reads or writes it (the map makes it visible to isLocked()). */
    private final Map<Thread, Hold> holds = new ConcurrentHashMap<>();

    /** One thread's hold: its lease and how many locks it counts, and the unlocks owed to a lease it lost. */
    private static final class Hold {
        @Nullable Lease lease;
        volatile int count;
        int owedToLost;
        @Nullable Lease lost;
        /** A lease whose release the store did not answer: released again before anything else this thread does here. */
        volatile @Nullable Lease pending;
    }

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

    /**
     * Frees the calling thread's hold once its count is down to the outermost lock; an unlock owed
     * to a lease lost earlier reports that loss. If the store cannot be reached, the hold stays,
     * so that the unlock can be tried again.
     */
    @Override
    @SuppressWarnings("NonAtomicVolatileUpdate") // only the record's own thread writes its count; others only read it
    public void unlock() {
        Thread me = Thread.currentThread();
        Hold h = holds.get(me);
        if (h == null) {
            throw new IllegalMonitorStateException("lock '" + name + "' is not held by thread '" + me.getName()
                    + "': only the thread that locked it may unlock it");
        }
        if (h.count > 0) {
            h.count--;
            Lease l = h.lease;
            if (h.count > 0 || l == null) {
                return;
            }
            h.lease = null;
            h.pending = l; // until the store answers: an unlock or lock tried again releases it first
            releasePending(me, h);
            return;
        }
        if (h.pending != null) {
            releasePending(me, h); // the unlock that failed, tried again
            return;
        }
        Lease lost = h.lost;
        h.owedToLost--;
        if (h.owedToLost == 0) {
            h.lost = null;
            forgetIfDone(me, h);
        }
        if (lost == null) {
            throw new IllegalStateException("lock '" + name + "': an unlock owed to no lease"); // cannot happen
        }
        if (h.owedToLost == 0) {
            try {
                lost.release(); // its outcome is known; this only stops its bookkeeping
            } catch (RuntimeException e) {
                // the loss is what this unlock reports
            }
        }
        throw lostAtUnlock(lost, "the lease was lost before unlock (it expired, or the store ended it), and a later lock "
                + "of this thread asked the store again: another holder may have run beside this hold");
    }

    /**
     * Releases the lease whose release is pending. If the store does not answer, it stays pending
     * and the exception says so; the thread's next unlock or lock tries again.
     */
    private void releasePending(Thread me, Hold h) {
        Lease l = h.pending;
        if (l == null) {
            return;
        }
        ReleaseOutcome outcome = l.release(); // a failed release is retried by the next call (Lease.release)
        h.pending = null;
        forgetIfDone(me, h);
        if (outcome == ReleaseOutcome.ALREADY_EXPIRED || outcome == ReleaseOutcome.NOT_OWNER) {
            throw lostAtUnlock(l, outcome == ReleaseOutcome.ALREADY_EXPIRED
                    ? "the lease had expired before unlock (lockAtMostFor passed without a keep-alive): another holder may have run beside this one"
                    : "the store no longer held the lease at unlock (force-released or taken over)");
        }
    }

    private void forgetIfDone(Thread me, Hold h) {
        if (h.count == 0 && h.owedToLost == 0 && h.pending == null) {
            holds.remove(me, h);
        }
    }

    private LeaseLostException lostAtUnlock(Lease l, String reason) {
        LeaseLoss known = l.lost().toCompletableFuture().getNow(null);
        return new LeaseLostException(known != null ? known : new LeaseLoss(name, l.fence(), reason, Instant.now()));
    }

    @Override
    public boolean isLocked() {
        return holds.values().stream().anyMatch(h -> h.count > 0 || h.pending != null);
    }

    @Override
    public boolean isHeldByCurrentThread() {
        Hold h = holds.get(Thread.currentThread());
        Lease l = h == null ? null : h.lease;
        return h != null && h.count > 0 && l != null && l.isHeld();
    }

    @Override
    public long fence() {
        Hold h = holds.get(Thread.currentThread());
        Lease l = h == null || h.count == 0 ? null : h.lease;
        if (l == null) {
            throw new IllegalMonitorStateException("lock '" + name + "' is not held by thread '" + Thread.currentThread().getName()
                    + "': its fence is the holder's");
        }
        return l.fence();
    }

    @Override
    public Optional<Lease> lease() {
        Hold h = holds.get(Thread.currentThread());
        return h == null || h.count == 0 ? Optional.empty() : Optional.ofNullable(h.lease);
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
     * Counts one more hold if the calling thread holds the lock and its lease is still held. If
     * its lease was lost, its holds become unlocks owed to that loss, and the store is asked again.
     */
    @SuppressWarnings("NonAtomicVolatileUpdate") // only the record's own thread writes its count; others only read it
    private boolean reentered() {
        Thread me = Thread.currentThread();
        Hold h = holds.get(me);
        if (h != null && h.pending != null) {
            // an unlock the store did not answer: its lease is released first, or this lock would wait
            // for it; a loss it reports belongs to that earlier hold, which is over either way
            try {
                releasePending(me, h);
            } catch (LeaseLostException reportedAtUnlock) {
                // the unlock that failed was told of the store's error; the lease is gone now
            }
        }
        if (h == null || h.count == 0) {
            return false;
        }
        Lease l = h.lease;
        if (l != null && l.isHeld()) {
            h.count++;
            return true;
        }
        Lease older = h.lost;
        if (older != null && older != l) {
            // Lost twice before unlocking: the newer loss is what every owed unlock reports now.
            try {
                older.release(); // its outcome is known; this only stops its bookkeeping
            } catch (RuntimeException e) {
                // nothing to add to the loss already owed
            }
        }
        h.lost = l;
        h.owedToLost += h.count;
        h.count = 0;
        h.lease = null;
        return false;
    }

    /** Records the lease the calling thread just took: a hold of its own, one lock so far. */
    private void took(Lease l) {
        Hold h = holds.computeIfAbsent(Thread.currentThread(), t -> new Hold());
        h.lease = l;
        h.count = 1;
    }
}
