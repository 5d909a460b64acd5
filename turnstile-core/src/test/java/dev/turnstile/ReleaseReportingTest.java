package dev.turnstile;

import static org.assertj.core.api.Assertions.assertThat;

import dev.turnstile.spi.AcquireRequest;
import dev.turnstile.spi.Grant;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.ReleaseResult;
import dev.turnstile.testing.InMemoryLockStore;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * {@code release()} reports what the store applied (issue 22, item 7): a store whose clock says the
 * minimum hold is over has freed the lock, whatever this process measured, and the other way round.
 */
class ReleaseReportingTest {

    /** An in-memory store whose release says what {@code says} holds, as a store on another clock would. */
    static final class SayingStore implements LockStore {
        final InMemoryLockStore inner = new InMemoryLockStore();
        final ReleaseResult says;
        final boolean reports;

        SayingStore(ReleaseResult says, boolean reports) {
            this.says = says;
            this.reports = reports;
        }

        @Override public Optional<Grant> tryAcquire(AcquireRequest r) { return inner.tryAcquire(r); }
        @Override public boolean extend(String n, String t, Duration ttl) { return inner.extend(n, t, ttl); }
        @Override public boolean release(String n, String t, Duration atLeast) { return inner.release(n, t, atLeast); }

        @Override
        public ReleaseResult releaseReporting(String n, String t, Duration atLeast) {
            if (!reports) {
                return LockStore.super.releaseReporting(n, t, atLeast);
            }
            inner.release(n, t, atLeast);
            return says;
        }

        @Override public List<LockInfo> heldLocks() { return inner.heldLocks(); }
        @Override public boolean forceRelease(String n) { return inner.forceRelease(n); }
        @Override public String description() { return "saying " + says; }
    }

    private static ReleaseOutcome acquireAndRelease(LockStore store, Duration atLeast, long holdMillis) throws Exception {
        try (Turnstile t = Turnstile.builder(store).build()) {
            Lease lease = t.tryAcquire("job", LockOptions.builder().lockAtMostFor(Duration.ofSeconds(10)).lockAtLeastFor(atLeast)
                    .build()).orElseThrow();
            Thread.sleep(holdMillis);
            return lease.release();
        }
    }

    @Test
    void aStoreThatFreedTheLockBeforeTheMinimumHoldByThisClockIsReportedReleased() throws Exception {
        // The store's clock says the minimum hold is over (or its clock decided so): not shortened.
        assertThat(acquireAndRelease(new SayingStore(ReleaseResult.FREED, true), Duration.ofSeconds(5), 0))
                .isEqualTo(ReleaseOutcome.RELEASED);
    }

    @Test
    void aStoreThatKeptTheLockAfterTheMinimumHoldByThisClockIsReportedShortened() throws Exception {
        assertThat(acquireAndRelease(new SayingStore(ReleaseResult.KEPT_FOR_AT_LEAST, true), Duration.ofMillis(20), 60))
                .isEqualTo(ReleaseOutcome.SHORTENED_TO_AT_LEAST);
    }

    @Test
    void aStoreThatDoesNotSayIsJudgedByTheTimeMeasuredHere() throws Exception {
        assertThat(acquireAndRelease(new SayingStore(null, false), Duration.ofSeconds(5), 0))
                .isEqualTo(ReleaseOutcome.SHORTENED_TO_AT_LEAST);
        assertThat(acquireAndRelease(new SayingStore(null, false), Duration.ofMillis(20), 60))
                .isEqualTo(ReleaseOutcome.RELEASED);
    }

    @Test
    void theDefaultMapsTheBooleanRelease() {
        SayingStore store = new SayingStore(null, false);
        AcquireRequest r = new AcquireRequest("x", "me", "t1", Duration.ofSeconds(10));
        store.tryAcquire(r).orElseThrow();
        assertThat(store.releaseReporting("x", "t1", Duration.ofSeconds(5))).isEqualTo(ReleaseResult.ENDED);
        assertThat(store.releaseReporting("x", "not-the-token", Duration.ZERO)).isEqualTo(ReleaseResult.NOT_HELD);
        store.tryAcquire(new AcquireRequest("y", "me", "t2", Duration.ofSeconds(10))).orElseThrow();
        assertThat(store.releaseReporting("y", "t2", Duration.ZERO)).isEqualTo(ReleaseResult.FREED);
    }

    @Test
    void theInMemoryStoreSaysWhatItApplied() {
        InMemoryLockStore store = new InMemoryLockStore();
        store.tryAcquire(new AcquireRequest("x", "me", "t1", Duration.ofSeconds(10))).orElseThrow();
        assertThat(store.releaseReporting("x", "t1", Duration.ofSeconds(5))).isEqualTo(ReleaseResult.KEPT_FOR_AT_LEAST);
        assertThat(store.tryAcquire(new AcquireRequest("x", "other", "t2", Duration.ofSeconds(10)))).isEmpty();
        store.tryAcquire(new AcquireRequest("y", "me", "t3", Duration.ofSeconds(10))).orElseThrow();
        assertThat(store.releaseReporting("y", "t3", Duration.ofMillis(0))).isEqualTo(ReleaseResult.FREED);
        assertThat(store.releaseReporting("y", "t3", Duration.ZERO)).isEqualTo(ReleaseResult.NOT_HELD);
    }
}
