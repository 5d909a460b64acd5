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
     * Returns the lock's name.
     *
     * @return the name given to {@link Turnstile#lock(String, LockOptions)}
     */
    String name();

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
