package dev.turnstile;

/**
 * A fenced write was refused because the resource has already seen a higher fence: the writer's
 * lease was superseded (it expired, was taken over or force-released) and a newer holder has
 * written since. The write did not happen; the writer must stop, not retry with the same fence.
 *
 * <p>Thrown by the fenced-write helpers ({@code SqlFences}, {@code RedisFences}) and by every
 * {@link FenceGate}. It is a result of the fencing protocol, not a store failure.
 */
public class StaleFenceException extends TurnstileException {
    private static final long serialVersionUID = 1L;

    /** The fenced resource (usually the lock name). */
    private final String resource;
    /** The fence the refused write carried. */
    private final long fence;
    /** The highest fence the resource had recorded when it refused. */
    private final long highestSeen;

    /**
     * Creates the exception.
     *
     * @param resource the fenced resource (usually the lock name)
     * @param fence the fence the refused write carried
     * @param highestSeen the highest fence the resource had recorded when it refused
     */
    public StaleFenceException(String resource, long fence, long highestSeen) {
        super("stale fence: the write to '" + resource + "' carried fence " + fence + ", but the resource has already "
                + "accepted fence " + highestSeen + " from a newer holder of the lock; nothing was written. The lease that "
                + "gave fence " + fence + " is no longer held: stop this work (retrying with the same fence is always refused)",
                null);
        this.resource = resource;
        this.fence = fence;
        this.highestSeen = highestSeen;
    }

    /**
     * Returns the fenced resource.
     *
     * @return the resource name
     */
    public String resource() {
        return resource;
    }

    /**
     * Returns the fence the refused write carried.
     *
     * @return the stale fence
     */
    public long fence() {
        return fence;
    }

    /**
     * Returns the highest fence the resource had recorded when it refused the write.
     *
     * @return a fence larger than {@link #fence()}
     */
    public long highestSeen() {
        return highestSeen;
    }
}
