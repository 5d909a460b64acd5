package dev.turnstile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.turnstile.spi.AcquireRequest;
import dev.turnstile.spi.Grant;
import dev.turnstile.spi.LockStore;
import dev.turnstile.testing.InMemoryLockStore;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Store calls that clean up (a release, the undo of an acquire whose answer an interrupt cut off)
 * must reach the store although the thread is interrupted: clients such as Lettuce, Curator and
 * the MongoDB driver refuse to send on an interrupted thread, which left the lock taken until its
 * TTL. The interrupt itself is kept for the caller.
 */
class InterruptedStoreCallTest {

    /**
     * A store whose acquire is taken (as the real store may have taken it) and then cut off by an
     * interrupt, and whose release, like those clients, refuses to run on an interrupted thread.
     */
    static final class CutOffStore implements LockStore {
        final InMemoryLockStore inner = new InMemoryLockStore();
        final CompletableFuture<String> undone = new CompletableFuture<>();
        volatile boolean cutOff = true;

        @Override
        public Optional<Grant> tryAcquire(AcquireRequest r) {
            Optional<Grant> granted = inner.tryAcquire(r);
            if (cutOff) {
                Thread.currentThread().interrupt();
                throw new StoreUnavailableException("cannot acquire lock '" + r.name() + "': Command interrupted", null);
            }
            return granted;
        }

        @Override
        public boolean release(String name, String token, Duration atLeast) {
            if (Thread.currentThread().isInterrupted()) {
                throw new StoreUnavailableException("cannot release lock '" + name + "': Command interrupted", null);
            }
            boolean released = inner.release(name, token, atLeast);
            undone.complete(token);
            return released;
        }

        @Override public boolean extend(String n, String t, Duration ttl) { return inner.extend(n, t, ttl); }
        @Override public List<LockInfo> heldLocks() { return inner.heldLocks(); }
        @Override public boolean forceRelease(String n) { return inner.forceRelease(n); }
        @Override public String description() { return "cut-off"; }
    }

    @Test
    void anAcquireCutOffByAnInterruptIsUndoneAndTheCallerKeepsItsInterrupt() throws Exception {
        CutOffStore store = new CutOffStore();
        try (Turnstile t = Turnstile.builder(store).build()) {
            long start = System.nanoTime();
            assertThatThrownBy(() -> t.tryAcquire("job", LockOptions.lockAtMostFor(Duration.ofMinutes(1))))
                    .isInstanceOf(StoreUnavailableException.class);
            assertThat(Thread.interrupted()).as("the caller's interrupt is kept").isTrue();
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).as("returned at once").isLessThan(1_000);

            assertThat(store.undone.get(5, TimeUnit.SECONDS)).as("the undo reached the store").isNotEmpty();
            store.cutOff = false;
            assertThat(t.tryAcquire("job", LockOptions.lockAtMostFor(Duration.ofSeconds(5)))).as("the lock is free, not held for its TTL")
                    .isPresent();
        }
    }

    /** A store whose first release is cut off by an interrupt that comes during the call, after or before the store applied it. */
    static final class InterruptedDuringRelease implements LockStore {
        final InMemoryLockStore inner = new InMemoryLockStore();
        final boolean appliedBeforeTheCut;
        final java.util.concurrent.atomic.AtomicInteger releases = new java.util.concurrent.atomic.AtomicInteger();

        InterruptedDuringRelease(boolean appliedBeforeTheCut) {
            this.appliedBeforeTheCut = appliedBeforeTheCut;
        }

        @Override public Optional<Grant> tryAcquire(AcquireRequest r) { return inner.tryAcquire(r); }

        @Override
        public boolean release(String name, String token, Duration atLeast) {
            if (Thread.currentThread().isInterrupted()) {
                throw new StoreUnavailableException("cannot release lock '" + name + "': Command interrupted", null);
            }
            if (releases.incrementAndGet() == 1) {
                if (appliedBeforeTheCut) {
                    inner.release(name, token, atLeast);
                }
                Thread.currentThread().interrupt(); // shutdownNow, while the client waits for the answer
                throw new StoreUnavailableException("cannot release lock '" + name + "': Command interrupted", null);
            }
            return inner.release(name, token, atLeast);
        }

        @Override public boolean extend(String n, String t, Duration ttl) { return inner.extend(n, t, ttl); }
        @Override public List<LockInfo> heldLocks() { return inner.heldLocks(); }
        @Override public boolean forceRelease(String n) { return inner.forceRelease(n); }
        @Override public String description() { return "interrupted-during-release"; }
    }

    @ParameterizedTest(name = "applied before the cut: {0}")
    @ValueSource(booleans = {true, false})
    void aReleaseCutOffByAnInterruptDuringTheCallIsMadeAgainAndSaysReleased(boolean appliedBeforeTheCut) {
        InterruptedDuringRelease store = new InterruptedDuringRelease(appliedBeforeTheCut);
        try (Turnstile t = Turnstile.builder(store).build()) {
            Lease lease = t.tryAcquire("job", LockOptions.lockAtMostFor(Duration.ofMinutes(1))).orElseThrow();
            try {
                assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
                assertThat(Thread.currentThread().isInterrupted()).as("the interrupt is kept").isTrue();
            } finally {
                Thread.interrupted();
            }
            assertThat(store.releases).hasValue(2);
            assertThat(t.tryAcquire("job", LockOptions.lockAtMostFor(Duration.ofSeconds(5)))).as("free at once").isPresent();
        }
    }

    @Test
    void aReleaseOnAnInterruptedThreadReachesTheStoreAndKeepsTheInterrupt() {
        CutOffStore store = new CutOffStore();
        store.cutOff = false;
        try (Turnstile t = Turnstile.builder(store).build()) {
            Lease lease = t.tryAcquire("job", LockOptions.lockAtMostFor(Duration.ofMinutes(1))).orElseThrow();
            Thread.currentThread().interrupt();
            try {
                assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
                assertThat(Thread.currentThread().isInterrupted()).as("the caller's interrupt is kept").isTrue();
            } finally {
                Thread.interrupted();
            }
            assertThat(t.tryAcquire("job", LockOptions.lockAtMostFor(Duration.ofSeconds(5)))).isPresent();
        }
    }
}
