package dev.turnstile.spi;

import dev.turnstile.LockInfo;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * What a store must do for Turnstile. Every method is atomic on the store and judges expiry by the
 * store's own clock. Names and tokens reach the store only as bound parameters or keys. A store is
 * done when it passes {@code dev.turnstile.testkit.LockStoreContract}.
 *
 * <p>Errors: a store throws {@link dev.turnstile.StoreUnavailableException} when it cannot be
 * reached or fails, and {@link dev.turnstile.StoreSchemaException} when it is reachable but not set
 * up. Busy, not-owner and expired are results, never exceptions.
 *
 * <p>Implementations must be thread-safe.
 */
public interface LockStore extends AutoCloseable {

    /**
     * Takes the lock if it is free or its lease has expired: one atomic step that also bumps the
     * lock's fence.
     *
     * @param request what to take and for how long
     * @return the grant, or empty if another holder's lease has not expired
     */
    Optional<Grant> tryAcquire(AcquireRequest request);

    /**
     * Sets the lease to end {@code ttl} from now, if {@code token} still holds it and it has not
     * expired.
     *
     * @param name the lock name
     * @param token the holder's token
     * @param ttl the new time to live from now
     * @return {@code true} if extended; {@code false} if the token no longer holds an unexpired lease
     */
    boolean extend(String name, String token, Duration ttl);

    /**
     * Ends the lease held by {@code token}: at once, or at acquire time plus {@code lockAtLeastFor}
     * if that is still in the future. The lock's fence is kept so that it never goes backwards.
     * Both the acquire time and "now" are the store's clock (stamped by the store at the acquire
     * and never rewritten from a client's clock), so a client whose wall clock is stepped neither
     * frees the lock early nor keeps it taken for the size of the step.
     *
     * @param name the lock name
     * @param token the holder's token
     * @param lockAtLeastFor the minimum hold counted from the acquire, {@link Duration#ZERO} for none
     * @return {@code true} if the token held an unexpired lease; {@code false} otherwise
     */
    boolean release(String name, String token, Duration lockAtLeastFor);

    /**
     * Does what {@link #release(String, String, Duration)} does and says what was applied: whether
     * the lock is free now or kept until acquire time plus {@code lockAtLeastFor}, decided in the
     * same atomic step by the store's clock. The client reports
     * {@link dev.turnstile.ReleaseOutcome#SHORTENED_TO_AT_LEAST} only when the store says
     * {@link ReleaseResult#KEPT_FOR_AT_LEAST}, so a holder is never told the lock stays taken when
     * the store has freed it (and the job could run twice in one tick), or the other way round.
     *
     * <p>The default calls {@link #release(String, String, Duration)} and maps {@code false} to
     * {@link ReleaseResult#NOT_HELD}, {@code true} to {@link ReleaseResult#FREED} when
     * {@code lockAtLeastFor} is zero and to {@link ReleaseResult#ENDED} (not known which) otherwise.
     * A store that knows which override this and returns {@link ReleaseResult#FREED} or
     * {@link ReleaseResult#KEPT_FOR_AT_LEAST}; both methods must then agree ({@code release} returns
     * {@code true} exactly when this returns anything but {@code NOT_HELD}). The client calls this
     * one, so a store that wraps or delegates to another must forward it.
     *
     * @param name the lock name
     * @param token the holder's token
     * @param lockAtLeastFor the minimum hold counted from the acquire, {@link Duration#ZERO} for none
     * @return what the store applied; never {@code null}
     * @throws dev.turnstile.StoreUnavailableException if the store cannot be reached or fails
     *     (the release may or may not have been applied)
     */
    default ReleaseResult releaseReporting(String name, String token, Duration lockAtLeastFor) {
        if (!release(name, token, lockAtLeastFor)) {
            return ReleaseResult.NOT_HELD;
        }
        return lockAtLeastFor.isZero() ? ReleaseResult.FREED : ReleaseResult.ENDED;
    }

    /**
     * Lists the locks whose leases have not expired, by name.
     *
     * @return a snapshot, sorted by name
     */
    List<LockInfo> heldLocks();

    /**
     * Frees a lock whoever holds it (administrative). The fence is kept.
     *
     * @param name the lock name
     * @return {@code true} if an unexpired lease was ended
     */
    boolean forceRelease(String name);

    /**
     * Asks to be told when the lock is released or expires anywhere, so that waiters need not poll
     * often. Stores that cannot notify (SQL) return {@link ReleaseWatch#NONE}, and waiters then
     * poll with backoff; stores that can (Redis pub/sub, ZooKeeper watches) call {@code listener}
     * on any thread, possibly spuriously, with the released token where they know it. Waiters keep
     * a bounded fallback poll either way, so a lost notification costs latency, never liveness.
     *
     * @param name the lock name
     * @param listener called on a release or expiry of {@code name}
     * @return a handle that stops the notifications
     */
    default ReleaseWatch watchReleases(String name, ReleaseListener listener) {
        return ReleaseWatch.NONE;
    }

    /**
     * Asks to be told when a lease this store granted can no longer be proven held for a reason
     * other than its TTL: a store whose leases hang on a session (ZooKeeper) calls
     * {@link LeaseProof#provenUntil} with the last moment the server cannot yet have expired the
     * session (and moves it on as the session is proven alive) and {@link LeaseProof#lost} when
     * the session is gone, so that the holder reports the loss before the server can let another
     * client in (docs/design.md, rule 8). Stores without sessions return {@link ReleaseWatch#NONE}.
     *
     * @param name the lock name
     * @param token the lease's token
     * @param proof told of the lease's proof
     * @return a handle that stops the calls (the lease closes it when it ends)
     */
    default ReleaseWatch watchLease(String name, String token, LeaseProof proof) {
        return ReleaseWatch.NONE;
    }

    /**
     * Tells the store that a waiting acquire has ended without the lock: it timed out, was
     * interrupted or failed, or was given a lease of another token. A store that keeps a place in a
     * waiting line for {@linkplain AcquireRequest#waiting() waiting} requests (ZooKeeper) drops the
     * place of {@code token} at once, so the waiters behind it need not wait for it to time out.
     * Every try of one waiting acquire carries the same token, so the place is found by it. A store
     * that wraps or delegates to another must forward this call. Best effort: a place left behind
     * must cost the line a bounded delay, never the lock.
     *
     * @param name the lock name
     * @param token the token every try of the ended wait carried
     */
    default void stopWaiting(String name, String token) {}

    /**
     * Tells whether {@link #handOver} is supported. Only a store that knows whether other clients
     * are waiting (a waiter queue) should say yes: handing a lock from thread to thread of one
     * client without that knowledge would starve every other client.
     *
     * @return {@code false} unless the store overrides {@link #handOver}
     */
    default boolean handsOver() {
        return false;
    }

    /**
     * Ends the lease held by {@code token} and, in the same atomic step, grants the lock to
     * {@code next} (a waiter of the same client, with its own token), unless a waiter of another
     * client has waited longer: then it only releases, and wakes that waiter. The next holder's
     * fence is greater than the released one, as with {@link #tryAcquire}. One store call instead of
     * a release and an acquire.
     *
     * @param name the lock name
     * @param token the current holder's token
     * @param next the next holder's request (its {@code waiting} flag is set)
     * @return what was done
     * @throws UnsupportedOperationException if {@link #handsOver()} is {@code false}
     */
    default HandOver handOver(String name, String token, AcquireRequest next) {
        throw new UnsupportedOperationException(description() + " cannot hand a lock over");
    }

    /**
     * Describes the store for logs and messages, without secrets.
     *
     * @return for example {@code postgresql://db:5432/app (table turnstile_locks)}
     */
    String description();

    /**
     * Releases the store's own resources (a pool it created). A store built over the caller's client
     * leaves it open. Closing twice is harmless. A closed store should refuse every operation with an
     * {@link IllegalStateException} saying so, and {@link #isClosed()} should then return {@code true}:
     * using a closed store is a programming error, not an outage.
     */
    @Override
    default void close() {}

    /**
     * How long after its last answer from the server this store can still vouch for a lease it
     * granted, for a store whose leases also end with a session (ZooKeeper: the negotiated session
     * timeout less a margin). Such a store bounds every lease's local deadline by it through
     * {@link #watchLease}, so {@link dev.turnstile.Lease#timeLeft()} never exceeds it whatever the
     * TTL. A caller that must act a fixed time before a lease can end (the CLI's guard stops its
     * command a grace period before the deadline) fits that time into this bound as into the TTL.
     * A store that wraps or delegates to another must forward this call.
     *
     * @return the bound, or empty for a store whose leases end only by their TTL (the default)
     */
    default Optional<Duration> sessionBound() {
        return Optional.empty();
    }

    /**
     * Tells whether {@link #close()} was called, so that a client can report a closed store as what it
     * is rather than as an unreachable one.
     *
     * @return {@code true} once closed; the default, for a store that does not track it, is {@code false}
     */
    default boolean isClosed() {
        return false;
    }
}
