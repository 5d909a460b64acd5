package dev.turnstile;

/**
 * The receiving side of fencing: a resource that admits a piece of work only if the work's fence
 * is at least the highest fence the resource has admitted, and records it. Fences are compared
 * per resource; a resource is named like a lock (the fences of one lock name are comparable, those
 * of different names are not), so the resource is usually the lock name itself.
 *
 * <p>Implementations: {@code SqlFences.gate(DataSource)} (turnstile-jdbc) keeps the resource's
 * row locked while the work runs, so admitted work is also ordered: a newer fence waits until the
 * older work ends and a stale one that arrives later is refused. {@code RedisFences.gate()}
 * (turnstile-redis) records and compares atomically but does not hold the resource while the work
 * runs. Each says so in its own documentation.
 */
public interface FenceGate {

    /**
     * Work run under the gate; may throw the caller's own checked exception.
     *
     * @param <T> the result type
     * @param <E> the checked exception the work may throw
     */
    @FunctionalInterface
    interface Work<T, E extends Exception> {
        /**
         * Runs the work.
         *
         * @return its result
         * @throws E the work's own failure
         */
        T run() throws E;
    }

    /**
     * Admits the work if {@code fence} is at least the highest fence admitted for {@code resource},
     * records {@code fence} as the highest, and runs the work.
     *
     * @param resource the resource, named like a lock (see {@link Turnstile#tryAcquire})
     * @param fence the fence of the writer's lease, positive
     * @param work what to run once admitted
     * @param <T> the work's result type
     * @param <E> the work's checked exception
     * @return the work's result
     * @throws StaleFenceException if the resource has admitted a higher fence; the work did not run
     * @throws IllegalArgumentException if the resource is not a valid lock name or the fence is not positive
     * @throws StoreUnavailableException if the resource's store cannot be reached; the work did not run
     * @throws E if the work throws it (the fence stays recorded)
     */
    <T, E extends Exception> T admit(String resource, long fence, Work<T, E> work) throws E;

    /**
     * Checks a fenced resource's name by the rules of lock names, and returns it in the form every
     * store sees (Unicode NFC).
     *
     * @param resource the resource name
     * @return the name in normalization form C
     * @throws IllegalArgumentException if it is not a valid lock name; the message says what to fix
     */
    static String checkResource(String resource) {
        try {
            return Validation.lockName(resource);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("fenced resource: " + e.getMessage(), e);
        }
    }

    /**
     * Checks a fence presented with a write.
     *
     * @param fence the fence
     * @return the fence
     * @throws IllegalArgumentException if it is not positive (every store's fences start at 1)
     */
    static long checkFence(long fence) {
        if (fence < 1) {
            throw new IllegalArgumentException("fence " + fence + " is not positive: pass the fence of a held lease "
                    + "(Lease.fence(), JobContext.fence() or $TURNSTILE_FENCE); every store's fences start at 1");
        }
        return fence;
    }
}
