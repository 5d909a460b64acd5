package dev.turnstile;

import java.time.Duration;

/**
 * Told what a {@link Turnstile} does, for metrics, tracing and logs. Register with
 * {@link Turnstile.Builder#listener}; several may be registered and each is called in order.
 *
 * <p>Every method has an empty default, so implement only what you need. Methods are called
 * synchronously on the thread that did the work (the caller's thread for acquires and releases, a
 * Turnstile thread for losses and failed renewals): keep them fast and non-blocking. A listener that
 * throws is logged at WARN and ignored; it never changes the outcome of a lock operation.
 */
public interface TurnstileListener {

    /**
     * Called once per public acquire call ({@link Turnstile#tryAcquire} or {@link Turnstile#acquire}),
     * when it ends. A waiting acquire reports once, with the time it waited; a re-entrant acquire
     * is reported like any other. Bad input and a closed client are not reported.
     *
     * @param name the lock name
     * @param outcome granted, busy, or failed on the store
     * @param latency how long the call took, waiting included
     */
    default void onAcquire(String name, AcquireOutcome outcome, Duration latency) {}

    /**
     * Called when a lease held by this client ends by a release that reached the store (whatever
     * the store answered: see {@link Lease#release()}); not for an inner re-entrant release, and not
     * for a lease that was lost (see {@link #onLost}).
     *
     * @param name the lock name
     * @param fence the released lease's fence
     * @param heldFor from the acquire call's start to the release
     */
    default void onRelease(String name, long fence, Duration heldFor) {}

    /**
     * Called once when a lease held by this client is lost (renewal refused, local deadline passed,
     * extend refused), on a Turnstile thread, right after {@link Lease#lost()} completed and the
     * lease's own {@code onLost} callback ran (the holder stops its work first).
     *
     * @param loss what was lost and why
     */
    default void onLost(LeaseLoss loss) {}

    /**
     * Called when a store call fails with {@link StoreUnavailableException}: an acquire, a renewal
     * (retried until the lease's deadline), an extend or a release.
     *
     * @param name the lock name
     * @param error the failure
     */
    default void onStoreFailure(String name, RuntimeException error) {}
}
