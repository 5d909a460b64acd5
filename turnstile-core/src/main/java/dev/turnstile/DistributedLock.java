package dev.turnstile;

import java.util.Optional;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/**
 * A named Turnstile lock seen as a {@link Lock}, for code written against
 * {@code java.util.concurrent.locks} (or Redisson's {@code RLock}): {@link #lock()},
 * {@link #lockInterruptibly()}, {@link #tryLock()}, {@link #tryLock(long, java.util.concurrent.TimeUnit)}
 * and {@link #unlock()} take and free a lease of the store, with the options given to
 * {@link Turnstile#lock(String, LockOptions)}. Made by that method.
 *
 * <p><b>Ownership is by thread</b>, as with {@code ReentrantLock} and {@code RLock}: the thread
 * that locked must unlock ({@link IllegalMonitorStateException} otherwise), and it may lock again
 * while it holds (only the first lock takes a lease, only the matching last unlock frees it).
 * Other threads, of this process or any other, wait as for any lease of the name. One object may be
 * shared by threads; two objects of one name in one process contend like two processes.
 *
 * <p><b>A lease, not a monitor.</b> The hold ends at the lease's {@code lockAtMostFor} unless the
 * options keep it alive; {@link #isHeldByCurrentThread()} says whether it is still held, and
 * {@link #unlock()} of a lease that was lost meanwhile throws {@link LeaseLostException} (after
 * forgetting the hold), since the work it protected may have run beside another holder. Pass
 * {@link #fence()} to the resource you write, so that it can refuse a stale holder's writes.
 * {@link #newCondition()} is not supported. The store's failures are unchecked
 * {@link StoreUnavailableException}s, from every method that talks to it.
 */
public interface DistributedLock extends Lock {

    /**
     * As {@link #lock()}, with this hold's lease lasting {@code lockAtMostFor} rather than the
     * options' (and kept alive if the options say so). A thread that holds the lock already just
     * counts one more hold; its lease keeps its time.
     *
     * @param lockAtMostFor the lease's time to live
     * @throws IllegalArgumentException if {@code lockAtMostFor} is null, or does not fit the lock's
     *     options (shorter than their minimum hold, outside 10 ms to 366 days)
     */
    void lock(java.time.Duration lockAtMostFor);

    /**
     * As {@link #tryLock(long, java.util.concurrent.TimeUnit)}, with this hold's lease lasting
     * {@code lockAtMostFor} rather than the options' (see {@link #lock(java.time.Duration)}).
     *
     * @param maxWait how long to wait at most; zero or negative: one try
     * @param lockAtMostFor the lease's time to live
     * @return whether the calling thread holds the lock now
     * @throws InterruptedException if the thread is interrupted while waiting (nothing is held)
     * @throws IllegalArgumentException if an argument is null, or {@code lockAtMostFor} does not fit the options
     */
    boolean tryLock(java.time.Duration maxWait, java.time.Duration lockAtMostFor) throws InterruptedException;

    /**
     * Returns the lock's name.
     *
     * @return the name given to {@link Turnstile#lock(String, LockOptions)}
     */
    String name();

    /**
     * Returns whether some thread holds this lock object, without asking the store (as
     * {@code ReentrantLock.isLocked()}): for bookkeeping, not for deciding who may write.
     *
     * @return true between a thread's outermost lock and its last unlock
     */
    boolean isLocked();

    /**
     * Returns whether the calling thread holds the lock and its lease is still held.
     *
     * @return true if this thread locked it, has not unlocked it, and the lease is not lost
     */
    boolean isHeldByCurrentThread();

    /**
     * Returns the fence of the calling thread's hold: pass it to the resource the lock protects.
     *
     * @return the lease's fence
     * @throws IllegalMonitorStateException if the calling thread does not hold the lock
     */
    long fence();

    /**
     * Returns the lease of the calling thread's hold, for what {@link Lease} offers beyond a
     * {@link Lock} ({@code extend}, {@code lost()}, times). Release it with {@link #unlock()}, not
     * through the lease.
     *
     * @return the lease, or empty if the calling thread does not hold the lock
     */
    Optional<Lease> lease();

    /**
     * Not supported: a distributed lock has no condition variables.
     *
     * @throws UnsupportedOperationException always
     */
    @Override
    Condition newCondition();
}
