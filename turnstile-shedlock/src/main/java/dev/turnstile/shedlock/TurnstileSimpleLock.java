package dev.turnstile.shedlock;

import dev.turnstile.Lease;
import dev.turnstile.LeaseLostException;
import java.time.Duration;
import java.util.Optional;
import net.javacrumbs.shedlock.core.AbstractSimpleLock;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * ShedLock's view of a Turnstile lease, as {@link TurnstileLockProvider} returns it. ShedLock's own
 * {@link AbstractSimpleLock} keeps the rules on validity: {@link #unlock()} or a successful
 * {@link #extend} makes this instance invalid, and using it again throws
 * {@link IllegalStateException}.
 */
public class TurnstileSimpleLock extends AbstractSimpleLock {
    private final TurnstileLockProvider provider;
    private final Lease lease;
    /** The requested lockAtMostFor, which may be shorter than the store's 10 ms minimum. */
    private final long expiresNanos;
    /** The minimum hold counted from the lease's acquire (an extend moves it). */
    private final Duration holdFromAcquire;
    private final long acquireNanos;

    /**
     * Creates the lock; see {@link TurnstileLockProvider#newLock}.
     *
     * @param provider the provider that took it
     * @param lease the lease
     * @param config the configuration it was taken or extended with
     * @param startNanos {@link System#nanoTime()} before the acquire or extend call
     * @param holdFromAcquire the minimum hold at unlock, counted from the acquire
     */
    protected TurnstileSimpleLock(TurnstileLockProvider provider, Lease lease, LockConfiguration config, long startNanos,
            Duration holdFromAcquire) {
        this(provider, lease, config, startNanos, holdFromAcquire, startNanos);
    }

    private TurnstileSimpleLock(TurnstileLockProvider provider, Lease lease, LockConfiguration config, long startNanos,
            Duration holdFromAcquire, long acquireNanos) {
        super(config);
        this.provider = provider;
        this.lease = lease;
        this.expiresNanos = startNanos + config.getLockAtMostFor().toNanos();
        this.holdFromAcquire = holdFromAcquire;
        this.acquireNanos = acquireNanos;
    }

    /**
     * Returns the Turnstile lease behind this lock: its {@link Lease#fence()} is what a protected
     * resource should check.
     *
     * @return the lease
     */
    public Lease lease() {
        return lease;
    }

    /**
     * Returns the lease's fence.
     *
     * @return the fence
     */
    public long fence() {
        return lease.fence();
    }

    private boolean expired() {
        return !lease.isHeld() || System.nanoTime() - expiresNanos >= 0;
    }

    @Override
    protected void doUnlock() {
        TurnstileLockProvider.forget(lease);
        lease.release(holdFromAcquire);
    }

    @Override
    protected Optional<SimpleLock> doExtend(LockConfiguration newConfig) {
        if (expired()) {
            // Past its lockAtMostFor as ShedLock counts it: expired for ShedLock, so free whatever
            // the store still holds (only a TTL under Turnstile's minimum outlives it).
            TurnstileLockProvider.forget(lease);
            lease.release(Duration.ZERO);
            return Optional.empty();
        }
        long now = System.nanoTime();
        try {
            lease.extend(TurnstileLockProvider.atLeastMinTtl(newConfig.getLockAtMostFor()));
        } catch (LeaseLostException lost) {
            TurnstileLockProvider.forget(lease);
            return Optional.empty();
        }
        Duration hold = Duration.ofNanos(now - acquireNanos).plus(newConfig.getLockAtLeastFor());
        return Optional.of(new TurnstileSimpleLock(provider, lease, newConfig, now, hold, acquireNanos));
    }

    @Override
    public String toString() {
        return "TurnstileSimpleLock{" + lockConfiguration.getName() + ", fence " + lease.fence() + "}";
    }
}
