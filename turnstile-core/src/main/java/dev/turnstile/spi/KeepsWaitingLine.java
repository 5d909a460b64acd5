package dev.turnstile.spi;

/**
 * A store where a {@linkplain AcquireRequest#waiting() waiting} acquire keeps a place in a waiting
 * line on the store, found by the token every try of one wait carries, that holds the waiters behind
 * it up until it is given up or times out (ZooKeeper). (Redis queues waiters too, but an entry left
 * there by a wait that ended costs the next release only the moment it waits for the named waiter.)
 */
public interface KeepsWaitingLine extends StoreCapability {

    /**
     * Tells the store that a waiting acquire has ended without the lock: it timed out, was
     * interrupted or failed, or was given a lease of another token. The store drops the place of
     * {@code token} at once, so the waiters behind it need not wait for it to time out. Best effort:
     * a place left behind must cost the line a bounded delay, never the lock.
     *
     * @param name the lock name
     * @param token the token every try of the ended wait carried
     */
    void stopWaiting(String name, String token);
}
