package dev.turnstile.job;

/**
 * Checks that code runs under a lock taken by {@link JobRunner} (or by anything built on it: the
 * {@link LockingScheduler}, the Spring starter's annotation, the ShedLock bridge's executor). Put it
 * at the top of a method that must never run unlocked, as ShedLock users do with their
 * {@code LockAssert}:
 *
 * <pre>{@code
 * void purgeExpiredCoupons() {
 *     LockAssert.assertLocked("coupon-purge");
 *     ...
 * }
 * }</pre>
 *
 * <p>It looks at the calling thread only (a thread-local, restored after nested runs; it works the
 * same on virtual threads): work handed to another thread is not covered.
 */
public final class LockAssert {
    private LockAssert() {}

    /**
     * Checks that the calling thread runs a job under some lock whose lease is still held.
     *
     * @throws IllegalStateException if it does not, or if the lease was lost
     */
    public static void assertLocked() {
        JobContext ctx = JobContext.currentOrNull();
        if (ctx == null) {
            throw new IllegalStateException("this code must run under a lock, but thread '" + Thread.currentThread().getName()
                    + "' holds none: run it through JobRunner.run/call, LockingScheduler or a @Locked method (a lock taken "
                    + "on another thread does not count)");
        }
        checkHeld(ctx);
    }

    /**
     * Checks that the calling thread runs under the lock {@code name} (the innermost run or any run
     * it is nested in) and that its lease is still held.
     *
     * @param name the lock name expected
     * @throws IllegalStateException if the thread runs under no lock of that name, or its lease was lost
     * @throws IllegalArgumentException if {@code name} is null
     */
    public static void assertLocked(String name) {
        if (name == null) {
            throw new IllegalArgumentException("lock name is null: give the name of the lock this code must run under");
        }
        JobContext innermost = JobContext.currentOrNull();
        for (JobContext ctx = innermost; ctx != null; ctx = ctx.outer()) {
            if (ctx.name().equals(name)) {
                checkHeld(ctx);
                return;
            }
        }
        throw new IllegalStateException("this code must run under lock '" + name + "', but thread '"
                + Thread.currentThread().getName() + "' " + (innermost == null ? "holds no lock"
                        : "runs under " + held(innermost) + " only")
                + ": run it through JobRunner.run/call (or LockingScheduler, or a @Locked method) with the name '" + name + "'");
    }

    private static String held(JobContext innermost) {
        StringBuilder b = new StringBuilder();
        for (JobContext ctx = innermost; ctx != null; ctx = ctx.outer()) {
            b.append(b.length() == 0 ? "" : ", ").append('\'').append(ctx.name()).append('\'');
        }
        return b.toString();
    }

    private static void checkHeld(JobContext ctx) {
        if (ctx.leaseLost()) {
            throw new IllegalStateException("the lease on lock '" + ctx.name() + "' (fence " + ctx.fence()
                    + ") was lost while this code ran" + ctx.loss().map(l -> " (" + l.reason() + ")").orElse("")
                    + ": another instance may run it now; stop, or keep the lease alive (JobOptions.keepAlive)");
        }
    }
}
