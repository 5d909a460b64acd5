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
     * Returns this store as the capability {@code type} if it has it, for example
     * {@code store.capability(NotifiesReleases.class)}. A store declares a capability by implementing
     * its interface ({@link StoreCapability} lists them), which the default finds; a store that has a
     * capability only in some set-ups overrides this to say so (the JDBC store watches leases on
     * PostgreSQL only), and a store that wraps another forwards the question to it.
     *
     * @param type the capability's interface
     * @param <C> the capability's type
     * @return the capability, or empty if this store does not have it
     */
    default <C extends StoreCapability> Optional<C> capability(Class<C> type) {
        return type.isInstance(this) ? Optional.of(type.cast(this)) : Optional.empty();
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
     * Tells whether {@link #close()} was called, so that a client can report a closed store as what it
     * is rather than as an unreachable one.
     *
     * @return {@code true} once closed; the default, for a store that does not track it, is {@code false}
     */
    default boolean isClosed() {
        return false;
    }
}
