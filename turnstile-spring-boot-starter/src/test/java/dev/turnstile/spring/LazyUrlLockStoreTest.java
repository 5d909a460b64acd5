package dev.turnstile.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.turnstile.LockInfo;
import dev.turnstile.LockOptions;
import dev.turnstile.Lease;
import dev.turnstile.LeaseLoss;
import dev.turnstile.ReleaseOutcome;
import dev.turnstile.Turnstile;
import dev.turnstile.spi.AcquireRequest;
import dev.turnstile.spi.Grant;
import dev.turnstile.spi.KeepsWaitingLine;
import dev.turnstile.spi.LeaseProof;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStoreFactory;
import dev.turnstile.spi.NotifiesReleases;
import dev.turnstile.spi.ReleaseListener;
import dev.turnstile.spi.ReleaseResult;
import dev.turnstile.spi.ReleaseWatch;
import dev.turnstile.spi.WatchesLeases;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The lazily opened store forwards what a store may need to hear besides the lock calls: a lease's
 * proof (so a session store can report a suspended or lost session) and the end of a wait (so a
 * store with a waiting line can drop the waiter's place).
 */
class LazyUrlLockStoreTest {
    private static final String URL = "recording-test://x";

    /**
     * A prune asked of a store nothing has opened yet (an instance whose store was down at start-up)
     * opens it and prunes, rather than being told the store cannot prune (attack finding).
     */
    @Test
    void aPruneOpensTheLazyStoreAndPrunes(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) {
        String url = "jdbc:sqlite:" + dir.resolve("lazy.db");
        try (LazyUrlLockStore first = new LazyUrlLockStore(url); Turnstile t = Turnstile.builder(first).build()) {
            t.tryAcquire("old", LockOptions.lockAtMostFor(Duration.ofMinutes(1))).orElseThrow().release();
        }
        try (LazyUrlLockStore lazy = new LazyUrlLockStore(url); Turnstile t = Turnstile.builder(lazy).build()) {
            assertEquals(1L, t.pruneUnused(Duration.ZERO));
        }
    }

    @Test
    void aLeaseHearsOfItsSessionLossThroughTheLazyStore() throws Exception {
        RecordingStore.reset();
        try (LazyUrlLockStore lazy = new LazyUrlLockStore(URL); Turnstile t = Turnstile.builder(lazy).build()) {
            Lease lease = t.tryAcquire("a", LockOptions.lockAtMostFor(Duration.ofMinutes(1))).orElseThrow();
            LeaseProof proof = RecordingStore.proofs.get(lease.token());
            assertTrue(proof != null, "the store was never asked to watch the lease: LazyUrlLockStore must forward the WatchesLeases capability");
            proof.lost("session expired (test)");
            LeaseLoss loss = lease.lost().toCompletableFuture().get(5, TimeUnit.SECONDS);
            assertTrue(loss.reason().contains("session expired"), loss.reason());
        }
    }

    @Test
    void aWaitThatEndsWithoutTheLockIsReportedThroughTheLazyStore() throws Exception {
        RecordingStore.reset();
        RecordingStore.busy = true;
        try (LazyUrlLockStore lazy = new LazyUrlLockStore(URL); Turnstile t = Turnstile.builder(lazy).build()) {
            assertTrue(t.acquire("b", LockOptions.lockAtMostFor(Duration.ofMinutes(1)), Duration.ofMillis(200)).isEmpty());
            assertEquals(RecordingStore.waitingTokens, RecordingStore.stopped,
                    "every token that waited in line must be told to stop waiting: LazyUrlLockStore must forward the KeepsWaitingLine capability");
            assertEquals(1, RecordingStore.stopped.size(), "all tries of one wait share one token");
        }
    }

    @Test
    void aReleaseReportsWhatTheStoreAppliedThroughTheLazyStore() throws Exception {
        RecordingStore.reset();
        try (LazyUrlLockStore lazy = new LazyUrlLockStore(URL); Turnstile t = Turnstile.builder(lazy).build()) {
            // The store says it freed the lock although this process measured less than lockAtLeastFor:
            // its clock decides, so the release must say RELEASED, not SHORTENED_TO_AT_LEAST.
            Lease lease = t.tryAcquire("c", LockOptions.builder().lockAtMostFor(Duration.ofMinutes(1))
                    .lockAtLeastFor(Duration.ofSeconds(30)).build()).orElseThrow();
            assertEquals(ReleaseOutcome.RELEASED, lease.release(),
                    "LazyUrlLockStore must forward releaseReporting, or the store's answer is lost");
        }
    }

    @Test
    void aWaiterWhoseSubscriptionFailsPollsThroughTheLazyStore() throws Exception {
        RecordingStore.reset();
        RecordingStore.busy = true;
        RecordingStore.subscribeFails = true;
        try (LazyUrlLockStore lazy = new LazyUrlLockStore(URL); Turnstile t = Turnstile.builder(lazy).build()) {
            Thread freeLater = new Thread(() -> {
                try {
                    Thread.sleep(300);
                } catch (InterruptedException e) {
                    return;
                }
                RecordingStore.busy = false;
            });
            freeLater.start();
            // The opened store cannot subscribe now (ZooKeeper while its connection is down): the wait
            // must poll, as it does while the store cannot be opened, not fail.
            Optional<Lease> lease = t.acquire("e", LockOptions.lockAtMostFor(Duration.ofMinutes(1)), Duration.ofSeconds(10));
            assertTrue(lease.isPresent(), "the waiter polled and took the lock once it was free");
            assertTrue(RecordingStore.subscribeTries.get() > 0, "the waiter tried to subscribe");
            freeLater.join();
        }
    }

    /** Registered for {@code recording-test:} in this module's test resources. */
    public static final class RecordingFactory implements LockStoreFactory {
        @Override
        public List<String> schemes() {
            return List.of("recording-test:");
        }

        @Override
        public LockStore open(String url) {
            return new RecordingStore();
        }
    }

    static final class RecordingStore implements LockStore, NotifiesReleases, WatchesLeases, KeepsWaitingLine {
        static final ConcurrentHashMap<String, LeaseProof> proofs = new ConcurrentHashMap<>();
        static final Set<String> waitingTokens = ConcurrentHashMap.newKeySet();
        static final Set<String> stopped = ConcurrentHashMap.newKeySet();
        static volatile boolean busy;
        static volatile boolean subscribeFails;
        static final java.util.concurrent.atomic.AtomicInteger subscribeTries = new java.util.concurrent.atomic.AtomicInteger();
        private static final AtomicLong fence = new AtomicLong();

        static void reset() {
            proofs.clear();
            waitingTokens.clear();
            stopped.clear();
            busy = false;
            subscribeFails = false;
            subscribeTries.set(0);
        }

        @Override
        public Optional<Grant> tryAcquire(AcquireRequest r) {
            if (r.waiting()) {
                waitingTokens.add(r.token());
            }
            if (busy) {
                return Optional.empty();
            }
            Instant now = Instant.now();
            return Optional.of(new Grant(fence.incrementAndGet(), now, now.plus(r.ttl())));
        }

        @Override
        public boolean extend(String name, String token, Duration ttl) {
            return true;
        }

        @Override
        public boolean release(String name, String token, Duration lockAtLeastFor) {
            return true;
        }

        /** Says the lock is free, as a store whose clock had passed the minimum hold would. */
        @Override
        public ReleaseResult releaseReporting(String name, String token, Duration lockAtLeastFor) {
            return ReleaseResult.FREED;
        }

        @Override
        public List<LockInfo> heldLocks() {
            return List.of();
        }

        @Override
        public boolean forceRelease(String name) {
            return false;
        }

        @Override
        public ReleaseWatch watchReleases(String name, ReleaseListener listener) {
            subscribeTries.incrementAndGet();
            if (subscribeFails) {
                throw new dev.turnstile.StoreUnavailableException("cannot subscribe: the connection is down (test)", null);
            }
            return () -> {};
        }

        @Override
        public ReleaseWatch watchLease(String name, String token, LeaseProof proof) {
            proofs.put(token, proof);
            return () -> proofs.remove(token, proof);
        }

        @Override
        public void stopWaiting(String name, String token) {
            stopped.add(token);
        }

        @Override
        public String description() {
            return "recording";
        }
    }
}
