package dev.turnstile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.turnstile.spi.AcquireRequest;
import dev.turnstile.spi.Grant;
import dev.turnstile.spi.LockStore;
import dev.turnstile.testing.InMemoryLockStore;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A store may hand the lock to a waiter while the waiter is between tries (ZooKeeper's releasing
 * holder writes the lease into the next place): the lease then began before the try that returns
 * it, and the holder's local deadline must count from then (docs/design.md, rule 8).
 */
class GrantStartedBeforeTheCallTest {

    /** Grants as the in-memory store does, but says the lease began {@code agoMs} before the call. */
    static final class EarlyStore implements LockStore {
        final InMemoryLockStore inner = new InMemoryLockStore();
        final long agoMs;
        final AtomicInteger releases = new AtomicInteger();

        EarlyStore(long agoMs) {
            this.agoMs = agoMs;
        }

        @Override
        public Optional<Grant> tryAcquire(AcquireRequest r) {
            long began = System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(agoMs);
            return inner.tryAcquire(r).map(g -> new Grant(g.fence(), g.acquiredAt(), g.expiresAt(), OptionalLong.of(began)));
        }

        @Override public boolean extend(String n, String t, Duration ttl) { return inner.extend(n, t, ttl); }

        @Override
        public boolean release(String n, String t, Duration atLeast) {
            releases.incrementAndGet();
            return inner.release(n, t, atLeast);
        }

        @Override public List<LockInfo> heldLocks() { return inner.heldLocks(); }
        @Override public boolean forceRelease(String n) { return inner.forceRelease(n); }
        @Override public String description() { return "early"; }
    }

    @Test
    void theLocalDeadlineCountsFromWhenTheStoreSaysTheLeaseBegan() throws Exception {
        try (Turnstile t = Turnstile.builder(new EarlyStore(4_000)).build()) {
            Lease lease = t.tryAcquire("job", LockOptions.lockAtMostFor(Duration.ofSeconds(10))).orElseThrow();
            // 10 s from 4 s ago, less the drift margin: about 6 s left, not 10.
            assertThat(lease.timeLeft()).isLessThan(Duration.ofMillis(6_100)).isGreaterThan(Duration.ofMillis(5_000));
            lease.release();
        }
    }

    @Test
    void aLeaseThatBeganBeforeTheCallIsHandedBackWhenMostOfItIsGone() {
        EarlyStore store = new EarlyStore(6_000);
        try (Turnstile t = Turnstile.builder(store).build()) {
            // Began 6 s before a 10 s TTL was granted: more than half is gone, twice.
            assertThatThrownBy(() -> t.tryAcquire("job", LockOptions.lockAtMostFor(Duration.ofSeconds(10))))
                    .isInstanceOf(StoreUnavailableException.class).hasMessageContaining("more than half of lockAtMostFor");
            assertThat(store.releases.get()).as("both grants handed back").isEqualTo(2);
            assertThat(store.inner.heldLocks()).isEmpty();
        }
    }

    @Test
    void aStartAfterTheCallsStartChangesNothing() throws Exception {
        EarlyStore store = new EarlyStore(-60_000); // "began" a minute from now: the call's start counts
        try (Turnstile t = Turnstile.builder(store).build()) {
            Lease lease = t.tryAcquire("job", LockOptions.lockAtMostFor(Duration.ofSeconds(10))).orElseThrow();
            assertThat(lease.timeLeft()).isLessThanOrEqualTo(Duration.ofSeconds(10)).isGreaterThan(Duration.ofMillis(9_000));
            lease.release();
        }
    }

    @Test
    void aGrantRefusesNullComponentsWithWhatToGive() {
        assertThatThrownBy(() -> new Grant(1, Instant.EPOCH, Instant.EPOCH, nullOptional()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("OptionalLong.empty()");
        assertThat(new Grant(1, Instant.EPOCH, Instant.EPOCH).startedNanos()).isEmpty();
    }

    @SuppressWarnings({"NullAway", "DataFlowIssue"})
    private static OptionalLong nullOptional() {
        return null;
    }
}
