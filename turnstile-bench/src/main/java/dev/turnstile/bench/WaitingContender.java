package dev.turnstile.bench;

import java.time.Duration;

/**
 * A lock library's blocking acquire, as used by the cross-process hand-off benchmark: each child
 * JVM loops acquire, hold, release on one shared name.
 */
interface WaitingContender extends AutoCloseable {

    /** Short upper-case label for tables, such as {@code SPRING}. */
    String id();

    /**
     * Blocks until the lock is held.
     *
     * @param lockName the lock name
     * @param maxWait how long to wait at most
     * @return the handle that releases it
     * @throws IllegalStateException if the lock stayed busy for {@code maxWait}
     * @throws Exception if interrupted or the library failed
     */
    Held acquire(String lockName, Duration maxWait) throws Exception;

    /** A held lock. */
    interface Held {
        /**
         * Releases the lock.
         *
         * @throws Exception if the library failed
         */
        void release() throws Exception;
    }

    /** Frees what the contender made (threads, caches); never the shared pool. */
    @Override
    default void close() {}
}
