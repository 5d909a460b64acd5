package dev.turnstile;

import static org.assertj.core.api.Assertions.assertThat;

import dev.turnstile.spi.AcquireRequest;
import dev.turnstile.spi.Grant;
import dev.turnstile.spi.LockStore;
import dev.turnstile.testing.InMemoryLockStore;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Every confirmed extend re-arms both the deadline check and the next renewal for the new deadline
 * and TTL, whether it moved earlier or later (docs/design.md, rule 8; issue 15.1).
 */
class LeaseRearmTest {

    /** An in-memory store that counts extends (the keep-alive's renewals and the caller's extends). */
    static final class CountingStore implements LockStore {
        final InMemoryLockStore inner = new InMemoryLockStore();
        final AtomicInteger extends_ = new AtomicInteger();

        @Override public Optional<Grant> tryAcquire(AcquireRequest r) { return inner.tryAcquire(r); }

        @Override
        public boolean extend(String n, String t, Duration ttl) {
            extends_.incrementAndGet();
            return inner.extend(n, t, ttl);
        }

        @Override public boolean release(String n, String t, Duration atLeast) { return inner.release(n, t, atLeast); }
        @Override public List<LockInfo> heldLocks() { return inner.heldLocks(); }
        @Override public boolean forceRelease(String n) { return inner.forceRelease(n); }
        @Override public String description() { return "counting"; }
    }

    private static AcquireRequest other(String name) {
        return new AcquireRequest(name, "someone-else", Owners.newToken(), Duration.ofSeconds(10));
    }

    @Test
    void aKeptAliveLeaseExtendedToAShorterTtlRenewsAtTheNewPaceAndStaysHeld() throws Exception {
        CountingStore store = new CountingStore();
        try (Turnstile t = Turnstile.builder(store).build()) {
            Lease lease = t.tryAcquire("job", LockOptions.builder().lockAtMostFor(Duration.ofSeconds(3)).keepAlive(true).build())
                    .orElseThrow();
            Thread.sleep(100);
            lease.extend(Duration.ofMillis(500));
            int before = store.extends_.get();
            long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1500);
            while (System.nanoTime() < end) {
                assertThat(store.inner.tryAcquire(other("job"))).as("another client got the lock").isEmpty();
                Thread.sleep(20);
            }
            assertThat(lease.isHeld()).isTrue();
            assertThat(lease.lost().toCompletableFuture()).isNotDone();
            assertThat(store.extends_.get() - before).as("renewals every 500/3 ms, not every 1 s").isGreaterThanOrEqualTo(5);
        }
    }

    @Test
    void aLeaseExtendedToAShorterTtlIsReportedLostBeforeTheStoreCanGrantItAgain() throws Exception {
        CountingStore store = new CountingStore();
        try (Turnstile t = Turnstile.builder(store).build()) {
            CompletableFuture<Optional<Grant>> othersTryAtLoss = new CompletableFuture<>();
            long[] lostAt = new long[1];
            Lease lease = t.tryAcquire("job", LockOptions.builder().lockAtMostFor(Duration.ofSeconds(3)).onLost(loss -> {
                lostAt[0] = System.nanoTime();
                othersTryAtLoss.complete(store.inner.tryAcquire(other("job")));
            }).build()).orElseThrow();
            Thread.sleep(100);
            long extended = System.nanoTime();
            lease.extend(Duration.ofMillis(500));
            Optional<Grant> othersTry = othersTryAtLoss.get(5, TimeUnit.SECONDS);
            assertThat(Duration.ofNanos(lostAt[0] - extended)).as("reported at the new deadline, not the old one")
                    .isLessThan(Duration.ofMillis(500));
            assertThat(othersTry).as("the store still refused everyone else when the loss was reported").isEmpty();
        }
    }

    @Test
    void aKeptAliveLeaseExtendedToALongerTtlRenewsAtTheNewPace() throws Exception {
        CountingStore store = new CountingStore();
        try (Turnstile t = Turnstile.builder(store).build()) {
            Lease lease = t.tryAcquire("job", LockOptions.builder().lockAtMostFor(Duration.ofMillis(300)).keepAlive(true).build())
                    .orElseThrow();
            lease.extend(Duration.ofSeconds(6));
            int before = store.extends_.get();
            Thread.sleep(1200);
            assertThat(store.extends_.get() - before).as("renewals every 2 s, not every 100 ms").isLessThanOrEqualTo(1);
            assertThat(lease.isHeld()).isTrue();
        }
    }

    @Test
    void aSetKeepAliveIntervalShorterThanAThirdOfTheTtlIsKept() throws Exception {
        CountingStore store = new CountingStore();
        try (Turnstile t = Turnstile.builder(store).build()) {
            Lease lease = t.tryAcquire("job", LockOptions.builder().lockAtMostFor(Duration.ofSeconds(3))
                    .keepAlive(Duration.ofMillis(100)).build()).orElseThrow();
            lease.extend(Duration.ofSeconds(6));
            int before = store.extends_.get();
            Thread.sleep(650);
            assertThat(store.extends_.get() - before).isBetween(3, 8);
            assertThat(lease.isHeld()).isTrue();
        }
    }
}
