package dev.turnstile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.turnstile.spi.AcquireRequest;
import dev.turnstile.spi.Grant;
import dev.turnstile.spi.LeaseProof;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.ReleaseWatch;
import dev.turnstile.spi.WatchesLeases;
import dev.turnstile.testing.InMemoryLockStore;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A store whose leases hang on a session (ZooKeeper) limits a lease's proof when its connection is
 * suspended and ends it when the session is lost: the lease reports the loss then, not at its TTL.
 */
class LeaseProofTest {

    /** An in-memory store that hands out the lease's {@link LeaseProof} to the test, as a session would use it. */
    static final class SessionStore implements LockStore, WatchesLeases {
        final InMemoryLockStore inner = new InMemoryLockStore();
        final AtomicReference<LeaseProof> proof = new AtomicReference<>();
        final AtomicBoolean watchClosed = new AtomicBoolean();
        /**
         * How long an extend takes (a slow round trip, or a process frozen during it), in ms; when
         * set, the extend then says yes, as a session store whose node is still there does.
         */
        volatile long extendDelayMs;
        /** Run by the lease watch's close(), which the lease calls while it records a loss (for a race test). */
        volatile Runnable onWatchClose = () -> { };

        @Override public Optional<Grant> tryAcquire(AcquireRequest r) { return inner.tryAcquire(r); }

        @Override
        public boolean extend(String n, String t, Duration ttl) {
            if (extendDelayMs > 0) {
                try {
                    Thread.sleep(extendDelayMs);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return true;
            }
            return inner.extend(n, t, ttl);
        }
        @Override public boolean release(String n, String t, Duration atLeast) { return inner.release(n, t, atLeast); }
        @Override public List<LockInfo> heldLocks() { return inner.heldLocks(); }
        @Override public boolean forceRelease(String n) { return inner.forceRelease(n); }
        @Override public String description() { return "session"; }

        @Override
        public ReleaseWatch watchLease(String name, String token, LeaseProof p) {
            proof.set(p);
            return () -> {
                onWatchClose.run();
                watchClosed.set(true);
            };
        }
    }

    private static LockOptions tenSeconds(CompletableFuture<LeaseLoss> lost) {
        return LockOptions.builder().lockAtMostFor(Duration.ofSeconds(10)).onLost(lost::complete).build();
    }

    @Test
    void aSuspendedSessionEndsTheLeaseAtItsLimitNotAtTheTtl() throws Exception {
        SessionStore store = new SessionStore();
        try (Turnstile t = Turnstile.builder(store).build()) {
            CompletableFuture<LeaseLoss> lost = new CompletableFuture<>();
            Lease lease = t.tryAcquire("job", tenSeconds(lost)).orElseThrow();
            long suspended = System.nanoTime();
            store.proof.get().provenUntil(suspended + TimeUnit.MILLISECONDS.toNanos(200));
            assertThat(lease.isHeld()).isTrue();
            LeaseLoss loss = lost.get(3, TimeUnit.SECONDS);
            assertThat(Duration.ofNanos(System.nanoTime() - suspended)).isGreaterThanOrEqualTo(Duration.ofMillis(190))
                    .isLessThan(Duration.ofSeconds(2));
            assertThat(loss.reason()).contains("session");
            assertThat(lease.isHeld()).isFalse();
            assertThat(store.watchClosed).isTrue();
        }
    }

    /**
     * A loss is being recorded on another thread (here held inside the lease watch's close(), which
     * the lease calls as it disarms) while the holder extends: the extend must say the lease is lost.
     * It threw NullPointerException when the state said LOST before the loss was recorded.
     */
    @Test
    void anExtendThatMeetsALossBeingRecordedSaysLost() throws Exception {
        SessionStore store = new SessionStore();
        CountDownLatch inClose = new CountDownLatch(1);
        CountDownLatch letClose = new CountDownLatch(1);
        store.onWatchClose = () -> {
            inClose.countDown();
            try {
                letClose.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        try (Turnstile t = Turnstile.builder(store).build()) {
            Lease lease = t.tryAcquire("mid-loss", LockOptions.lockAtMostFor(Duration.ofSeconds(10))).orElseThrow();
            Thread session = new Thread(() -> store.proof.get().lost("the ZooKeeper session expired"));
            session.start();
            try {
                assertThat(inClose.await(5, TimeUnit.SECONDS)).as("the loss is being recorded").isTrue();
                assertThatThrownBy(() -> lease.extend(Duration.ofSeconds(10))).isInstanceOf(LeaseLostException.class)
                        .hasMessageContaining("the ZooKeeper session expired");
            } finally {
                store.onWatchClose = () -> { };
                letClose.countDown();
                session.join(5_000);
            }
        }
    }

    /**
     * A lease watch whose close() throws (a store's bug, a client closing under it) must neither
     * swallow the loss notice nor fail the release: closing a watch is best effort.
     */
    @Test
    void aWatchThatFailsToCloseNeitherHidesALossNorFailsARelease() throws Exception {
        SessionStore store = new SessionStore();
        store.onWatchClose = () -> {
            throw new IllegalStateException("the watch could not be closed");
        };
        try (Turnstile t = Turnstile.builder(store).build()) {
            CompletableFuture<LeaseLoss> lost = new CompletableFuture<>();
            Lease lease = t.tryAcquire("watched", tenSeconds(lost)).orElseThrow();
            store.proof.get().lost("the ZooKeeper session expired");
            assertThat(lost.get(2, TimeUnit.SECONDS).reason()).isEqualTo("the ZooKeeper session expired");
            assertThat(lease.isHeld()).isFalse();

            Lease other = t.tryAcquire("watched-2", LockOptions.lockAtMostFor(Duration.ofSeconds(10))).orElseThrow();
            assertThat(other.release()).isEqualTo(ReleaseOutcome.RELEASED);
            assertThat(t.tryAcquire("watched-2", LockOptions.lockAtMostFor(Duration.ofSeconds(10)))).isPresent();
        }
    }

    @Test
    void aSessionBackInTimeLiftsTheLimit() throws Exception {
        SessionStore store = new SessionStore();
        try (Turnstile t = Turnstile.builder(store).build()) {
            CompletableFuture<LeaseLoss> lost = new CompletableFuture<>();
            Lease lease = t.tryAcquire("job", tenSeconds(lost)).orElseThrow();
            store.proof.get().provenUntil(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300));
            Thread.sleep(100);
            store.proof.get().provenUntil(LeaseProof.NO_LIMIT);
            Thread.sleep(500);
            assertThat(lease.isHeld()).isTrue();
            assertThat(lost).isNotDone();
            assertThat(lease.timeLeft()).isGreaterThan(Duration.ofSeconds(8));
        }
    }

    @Test
    void aLostSessionEndsTheLeaseAtOnceAndALimitInThePastToo() throws Exception {
        SessionStore store = new SessionStore();
        try (Turnstile t = Turnstile.builder(store).build()) {
            CompletableFuture<LeaseLoss> lost = new CompletableFuture<>();
            Lease lease = t.tryAcquire("a", tenSeconds(lost)).orElseThrow();
            store.proof.get().lost("the ZooKeeper session expired");
            assertThat(lease.isHeld()).isFalse();
            assertThat(lost.get(1, TimeUnit.SECONDS).reason()).isEqualTo("the ZooKeeper session expired");

            Lease other = t.tryAcquire("b", LockOptions.lockAtMostFor(Duration.ofSeconds(10))).orElseThrow();
            store.proof.get().provenUntil(System.nanoTime() - 1);
            assertThat(other.isHeld()).as("a limit already past: lost now").isFalse();
        }
    }

    @Test
    void aDeadlinePassedWhileNobodyLookedIsNotRevivedByALaterProof() throws Exception {
        SessionStore store = new SessionStore();
        try (Turnstile t = Turnstile.builder(store).build()) {
            // No keep-alive and no onLost: nothing checks the deadline, as in a process frozen past it.
            Lease lease = t.tryAcquire("frozen", LockOptions.lockAtMostFor(Duration.ofSeconds(10))).orElseThrow();
            store.proof.get().provenUntil(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(100));
            Thread.sleep(250);
            // On resume the store's heartbeat answers first and proves the session again: too late.
            store.proof.get().provenUntil(System.nanoTime() + TimeUnit.SECONDS.toNanos(8));
            assertThat(lease.lost().toCompletableFuture().get(1, TimeUnit.SECONDS).reason()).contains("session");
            assertThat(lease.isHeld()).isFalse();
            assertThat(lease.timeLeft()).isEqualTo(Duration.ZERO);
        }
    }

    @Test
    void aLimitMovedOnBeforeItPassesKeepsTheLeaseAndItsDeadlineCheck() throws Exception {
        SessionStore store = new SessionStore();
        try (Turnstile t = Turnstile.builder(store).build()) {
            CompletableFuture<LeaseLoss> lost = new CompletableFuture<>();
            Lease lease = t.tryAcquire("beating", tenSeconds(lost)).orElseThrow();
            // A heartbeat every 50 ms, each proving the session for 200 ms more.
            for (int i = 0; i < 10; i++) {
                store.proof.get().provenUntil(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200));
                assertThat(lease.timeLeft()).isLessThanOrEqualTo(Duration.ofMillis(200));
                Thread.sleep(50);
            }
            assertThat(lease.isHeld()).isTrue();
            assertThat(lost).isNotDone();
            long stopped = System.nanoTime();
            LeaseLoss loss = lost.get(3, TimeUnit.SECONDS); // the beats stop: lost at the last limit
            assertThat(Duration.ofNanos(System.nanoTime() - stopped)).isLessThan(Duration.ofMillis(400));
            assertThat(loss.reason()).contains("session");
        }
    }

    @Test
    void aRenewalConfirmedAfterTheDeadlinePassedDoesNotReviveTheLease() throws Exception {
        SessionStore store = new SessionStore();
        try (Turnstile t = Turnstile.builder(store).build()) {
            Lease lease = t.tryAcquire("slow", LockOptions.lockAtMostFor(Duration.ofMillis(300))).orElseThrow();
            store.extendDelayMs = 500; // the store answers yes, but only after the lease's deadline
            assertThatThrownBy(() -> lease.extend(Duration.ofSeconds(10))).isInstanceOf(LeaseLostException.class)
                    .hasMessageContaining("deadline");
            assertThat(lease.isHeld()).isFalse();
            assertThat(lease.lost().toCompletableFuture()).succeedsWithin(Duration.ofSeconds(1));
        }
    }
}
