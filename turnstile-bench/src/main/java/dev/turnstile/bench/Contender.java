package dev.turnstile.bench;

/**
 * One way to take and free a named lock without waiting. The acquire+release benchmark times
 * {@link #acquireRelease} cycles of every contender on the same pool, in interleaved slices.
 * Implementations are thread-safe; each benchmark thread uses its own lock name.
 */
interface Contender extends AutoCloseable {

    /** Short upper-case label for tables, such as {@code TURNSTILE}. */
    String id();

    /**
     * Takes the lock (it is free: only this thread uses the name) and releases it at once.
     *
     * @param lockName the lock name
     * @return {@code true} if the acquire succeeded and the release was confirmed; {@code false} is
     *     a failure the report shows
     * @throws Exception if the library or the database failed (also counted as a failure)
     */
    boolean acquireRelease(String lockName) throws Exception;

    /** Frees what the contender made (threads, caches); never the shared pool. */
    @Override
    default void close() {}
}
