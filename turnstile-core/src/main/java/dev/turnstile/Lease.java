package dev.turnstile;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletionStage;

/**
 * A held lock: what a successful acquire returns. Ownership belongs to this object and its token,
 * not to a thread, so a lease may be used and released from any thread.
 *
 * <p>A lease expires by itself after its {@code lockAtMostFor} unless it is extended or kept alive.
 * This process tracks its own deadline on the monotonic clock (acquire start + TTL - drift margin)
 * and treats the lease as lost at that deadline unless a renewal was confirmed, so that
 * {@link #lost()} completes before the store can grant the lock to anyone else.
 *
 * <p>Use it with try-with-resources:
 *
 * <pre>{@code
 * try (Lease lease = turnstile.tryAcquire("nightly-report", options).orElse(null)) {
 *     if (lease == null) return;             // busy: someone else runs it
 *     writeReport(lease.fence());
 * }
 * }</pre>
 */
public interface Lease extends AutoCloseable {

    /**
     * Returns the lock name.
     *
     * @return the name this lease holds
     */
    String name();

    /**
     * Returns the readable owner identity stored with the lock (host, pid and a per-process id by
     * default).
     *
     * @return the owner
     */
    String owner();

    /**
     * Returns the random token that proves ownership to the store. It is a bearer secret: do not
     * log it.
     *
     * @return the token
     */
    String token();

    /**
     * Returns the fencing token: strictly greater than every fence issued before for this lock name
     * on this store. Pass it to the protected resource and have it reject writes with a smaller fence.
     *
     * @return the fence
     */
    long fence();

    /**
     * Returns when the lock was acquired, by the store's clock (on Redis, the acquiring client's
     * wall clock: it is written for people to read, while expiry is the server's {@code PX}).
     *
     * @return the acquire instant
     */
    Instant acquiredAt();

    /**
     * Returns when the lease ends unless extended, by the clock of {@link #acquiredAt()} (estimated
     * from the last confirmed acquire or renewal).
     *
     * @return the expiry instant
     */
    Instant expiresAt();

    /**
     * Tells whether this process can still prove it holds the lease: not released, not lost, and
     * its local monotonic deadline not passed.
     *
     * @return {@code true} while the lease is held
     */
    boolean isHeld();

    /**
     * Returns how much longer this process can prove it holds the lease: the time left before its
     * local deadline (the last confirmed acquire, renewal or extend, plus the TTL, minus a margin
     * for clock drift), on the monotonic clock. The store cannot grant the lock to anyone else
     * before this has run out. A watchdog outside the process (the CLI's guard) uses it to stop
     * work in time even when this process freezes.
     *
     * @return the time left, {@link Duration#ZERO} once the lease is released or lost
     */
    Duration timeLeft();

    /**
     * Extends the lease so that it ends {@code lockAtMostFor} from now, by the store's clock.
     * Atomic and owner-checked. The new time to live may be shorter than what is left: the local
     * deadline, the loss check and the keep-alive (a third of the new TTL, or the set interval if
     * shorter) all follow it, earlier or later, so a loss is still reported before the store can
     * grant the lock to anyone else.
     *
     * @param lockAtMostFor the new time to live, counted from now
     * @throws LeaseLostException if the lease expired, was taken over or was force-released (the
     *     lease is then marked lost and {@link #lost()} completes)
     * @throws IllegalStateException if the lease was released
     * @throws IllegalArgumentException if the duration is not positive or absurdly long
     * @throws StoreUnavailableException if the store cannot be reached; the lease stays held until
     *     its deadline
     */
    void extend(Duration lockAtMostFor);

    /**
     * Releases the lease. Idempotent: a second call returns the first call's outcome without
     * touching the store. A release before {@code lockAtLeastFor} has passed shortens the lease to
     * that point instead of freeing it. A release runs to its end on an interrupted thread (within
     * the store's own timeouts), so a job's {@code finally} reached by an executor's
     * {@code shutdownNow} still frees the lock; the thread stays interrupted.
     *
     * @return what happened
     * @throws StoreUnavailableException if the store cannot be reached; renewals stop, the lease
     *     expires by itself, and a later call retries
     */
    ReleaseOutcome release();

    /**
     * Releases the lease with another minimum hold than its options set: the lock stays taken
     * until {@code lockAtLeastFor} after the acquire (by the store's clock), or is freed at once if
     * that has passed. For bridges whose callers move the minimum hold while holding the lock
     * (ShedLock's {@code SimpleLock.extend(lockAtMostFor, lockAtLeastFor)}). Otherwise the same as
     * {@link #release()}: idempotent (a second call returns the first outcome whatever it is given).
     *
     * @param lockAtLeastFor the minimum hold counted from the acquire; zero frees the lock at once
     * @return what happened
     * @throws IllegalArgumentException if null, negative or absurd
     * @throws StoreUnavailableException if the store cannot be reached
     * @throws UnsupportedOperationException if this lease is not one of Turnstile's own
     */
    default ReleaseOutcome release(Duration lockAtLeastFor) {
        throw new UnsupportedOperationException(getClass().getName() + " cannot release with another lockAtLeastFor");
    }

    /**
     * Completes when the lease is lost while still supposed to be held: a renewal was refused, the
     * local deadline passed without a confirmed renewal, or {@link #extend} was refused. Never
     * completes for a lease released normally.
     *
     * @return a stage that completes with the loss
     */
    CompletionStage<LeaseLoss> lost();

    /**
     * Same as {@link #release()}, for try-with-resources.
     *
     * @throws StoreUnavailableException if the store cannot be reached
     */
    @Override
    void close();
}
