package dev.turnstile;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * One acquire of a re-entrant hold: every acquire by the same owner context gets its own view of
 * the same underlying lease, and only the last view released releases the lease.
 */
final class ReentrantLease implements Lease {
    /** The shared hold: the underlying lease and how many views are open. Guarded by itself. */
    static final class Hold {
        final HeldLease lease;
        int count;

        Hold(HeldLease lease) {
            this.lease = lease;
        }
    }

    private final Hold hold;
    private final Runnable onLastRelease;
    private @Nullable ReleaseOutcome outcome; // guarded by hold

    ReentrantLease(Hold hold, Runnable onLastRelease) {
        this.hold = hold;
        this.onLastRelease = onLastRelease;
    }

    @Override public String name() { return hold.lease.name(); }
    @Override public String owner() { return hold.lease.owner(); }
    @Override public String token() { return hold.lease.token(); }
    @Override public long fence() { return hold.lease.fence(); }
    @Override public Instant acquiredAt() { return hold.lease.acquiredAt(); }
    @Override public Instant expiresAt() { return hold.lease.expiresAt(); }
    @Override public boolean isHeld() { return hold.lease.isHeld(); }
    @Override public Duration timeLeft() { return hold.lease.timeLeft(); }
    @Override public void extend(Duration lockAtMostFor) { hold.lease.extend(lockAtMostFor); }
    @Override public CompletionStage<LeaseLoss> lost() { return hold.lease.lost(); }

    @Override
    public ReleaseOutcome release() {
        return releaseView(null);
    }

    @Override
    public ReleaseOutcome release(Duration lockAtLeastFor) {
        return releaseView(Validation.nonNegative("lockAtLeastFor", lockAtLeastFor));
    }

    /** Only the outermost release uses {@code lockAtLeastFor}; null means the options' own. */
    private ReleaseOutcome releaseView(@Nullable Duration lockAtLeastFor) {
        synchronized (hold) {
            if (outcome != null) {
                return outcome;
            }
            if (--hold.count > 0) {
                outcome = ReleaseOutcome.STILL_HELD;
                return outcome;
            }
            onLastRelease.run();
            outcome = lockAtLeastFor == null ? hold.lease.release() : hold.lease.release(lockAtLeastFor);
            return outcome;
        }
    }

    @Override
    public void close() {
        release();
    }

    @Override
    public String toString() {
        return "Reentrant" + hold.lease;
    }
}
