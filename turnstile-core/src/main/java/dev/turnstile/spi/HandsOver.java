package dev.turnstile.spi;

/**
 * A store that can end a lease and grant the lock to the next waiter of the same client in one
 * atomic step. Only a store that knows whether other clients are waiting (a waiter queue) may have
 * it: handing a lock from thread to thread of one client without that knowledge would starve every
 * other client.
 */
public interface HandsOver extends StoreCapability {

    /**
     * Ends the lease held by {@code token} and, in the same atomic step, grants the lock to
     * {@code next} (a waiter of the same client, with its own token), unless a waiter of another
     * client has waited longer: then it only releases, and wakes that waiter. The next holder's
     * fence is greater than the released one, as with {@link LockStore#tryAcquire}. One store call
     * instead of a release and an acquire.
     *
     * @param name the lock name
     * @param token the current holder's token
     * @param next the next holder's request (its {@code waiting} flag is set)
     * @return what was done
     */
    HandOver handOver(String name, String token, AcquireRequest next);
}
