package dev.turnstile.spi;

/**
 * A store where a {@linkplain AcquireRequest#waiting() waiting} acquire keeps a place in a waiting
 * line on the store (ZooKeeper), found by the token every try of one wait carries.
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
