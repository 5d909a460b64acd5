package dev.turnstile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.turnstile.spi.AcquireRequest;
import dev.turnstile.spi.Grant;
import dev.turnstile.spi.KeepsWaitingLine;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.NotifiesReleases;
import dev.turnstile.spi.ReleaseListener;
import dev.turnstile.spi.ReleaseWatch;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A waiting acquire asks the store with one token for all its tries (so a store with a waiting line
 * keeps one place for it), and tells the store when the wait ends without the lock.
 */
class WaitingLineTokenTest {
    private static final LockOptions OPTIONS = LockOptions.lockAtMostFor(Duration.ofMinutes(1));

    /** Busy until {@code grantOnTry} tries have been made (0: always busy); notifies, so waiters queue. */
    static class QueueingStore implements LockStore, NotifiesReleases, KeepsWaitingLine {
        final List<AcquireRequest> tries = new CopyOnWriteArrayList<>();
        final List<String> stopped = new CopyOnWriteArrayList<>();
        final AtomicInteger fence = new AtomicInteger();
        volatile int grantOnTry;

        @Override
        public Optional<Grant> tryAcquire(AcquireRequest r) {
            tries.add(r);
            if (grantOnTry == 0 || tries.size() < grantOnTry) {
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
            return () -> {};
        }

        @Override
        public void stopWaiting(String name, String token) {
            stopped.add(name + "/" + token);
        }

        @Override
        public String description() {
            return "queueing";
        }
    }

    @Test
    void everyTryOfOneWaitCarriesOneTokenAndATimeoutLeavesTheLine() throws Exception {
        QueueingStore store = new QueueingStore();
        try (Turnstile t = Turnstile.builder(store).build()) {
            assertTrue(t.acquire("n", OPTIONS, Duration.ofMillis(300)).isEmpty());
        }
        assertTrue(store.tries.size() >= 3, "expected several tries, got " + store.tries.size());
        String token = store.tries.get(0).token();
        assertTrue(store.tries.stream().allMatch(r -> r.token().equals(token)), "tries used different tokens");
        assertTrue(store.tries.stream().skip(1).anyMatch(AcquireRequest::waiting), "no try asked to wait in line");
        assertEquals(List.of("n/" + token), store.stopped);
    }

    @Test
    void aWaitThatGetsTheLockDoesNotLeaveTheLine() throws Exception {
        QueueingStore store = new QueueingStore();
        store.grantOnTry = 3;
        try (Turnstile t = Turnstile.builder(store).build()) {
            Lease lease = t.acquire("n", OPTIONS, Duration.ofSeconds(10)).orElseThrow();
            assertEquals(store.tries.get(0).token(), lease.token(), "the lease must carry the token the wait queued with");
            lease.release();
        }
        assertEquals(List.of(), store.stopped);
    }

    @Test
    void anInterruptedWaitLeavesTheLine() throws Exception {
        QueueingStore store = new QueueingStore();
        try (Turnstile t = Turnstile.builder(store).build()) {
            Thread me = Thread.currentThread();
            Thread interrupter = new Thread(() -> {
                while (store.tries.stream().noneMatch(AcquireRequest::waiting)) {
                    Thread.onSpinWait();
                }
                me.interrupt();
            });
            interrupter.start();
            assertThrows(InterruptedException.class, () -> t.acquire("n", OPTIONS, Duration.ofSeconds(30)));
            interrupter.join();
        }
        assertEquals(List.of("n/" + store.tries.get(0).token()), store.stopped);
    }

    /**
     * A wait whose turn among this client's threads never came makes one try of its own at its
     * deadline; an interrupt that cuts that try off in the store (which reports it unavailable, the
     * flag up, as ZooKeeper's client does) ends the wait with InterruptedException, as on every
     * other try (found by the 2026-11-28 attack on the ZooKeeper line).
     */
    @Test
    void anInterruptThatCutsOffTheTryAfterTheTurnNeverCameIsAnInterrupt() throws Exception {
        java.util.concurrent.CountDownLatch firstWaits = new java.util.concurrent.CountDownLatch(1);
        QueueingStore store = new QueueingStore() {
            @Override
            public Optional<Grant> tryAcquire(AcquireRequest r) {
                if (Thread.currentThread().getName().equals("second")) {
                    Thread.currentThread().interrupt();
                    throw new StoreUnavailableException("cut off", new InterruptedException());
                }
                firstWaits.countDown();
                return super.tryAcquire(r);
            }
        };
        try (Turnstile t = Turnstile.builder(store).build()) {
            Thread first = new Thread(() -> {
                try {
                    t.acquire("n", OPTIONS, Duration.ofSeconds(3));
                } catch (InterruptedException ignored) {
                    // the test ends it
                }
            });
            first.start();
            assertTrue(firstWaits.await(5, java.util.concurrent.TimeUnit.SECONDS));
            java.util.concurrent.atomic.AtomicReference<Throwable> thrown = new java.util.concurrent.atomic.AtomicReference<>();
            Thread second = new Thread(() -> {
                try {
                    t.acquire("n", OPTIONS, Duration.ofMillis(200)); // its turn never comes: the first waits ahead
                } catch (Throwable e) {
                    thrown.set(e);
                }
            }, "second");
            second.start();
            second.join(5_000);
            first.interrupt();
            first.join(5_000);
            assertTrue(thrown.get() instanceof InterruptedException, "thrown: " + thrown.get());
        }
    }

    @Test
    void triesWithoutWaitingUseAFreshTokenEachAndLeaveNoLine() {
        QueueingStore store = new QueueingStore();
        try (Turnstile t = Turnstile.builder(store).build()) {
            assertTrue(t.tryAcquire("n", OPTIONS).isEmpty());
            assertTrue(t.tryAcquire("n", OPTIONS).isEmpty());
        }
        assertNotEquals(store.tries.get(0).token(), store.tries.get(1).token());
        assertEquals(List.of(), store.stopped);
    }

    @Test
    void aRetryUnderAFreshTokenThatFindsTheLockBusyLeavesTheLine() throws Exception {
        // The first waiting try is granted too slowly (more than half the TTL), so core hands the
        // grant back and tries once more under a fresh token; that retry, busy, must not leave a
        // place in line that no later try asks for (the long chaos run saw one block a ZooKeeper
        // ensemble's lock for 30 s after a leader loss).
        AtomicBoolean slowOnce = new AtomicBoolean();
        QueueingStore store = new QueueingStore() {
            @Override
            public Optional<Grant> tryAcquire(AcquireRequest r) {
                tries.add(r);
                if (r.waiting() && slowOnce.compareAndSet(false, true)) {
                    try {
                        Thread.sleep(150);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    Instant now = Instant.now();
                    return Optional.of(new Grant(fence.incrementAndGet(), now, now.plus(r.ttl())));
                }
                return Optional.empty();
            }
        };
        try (Turnstile t = Turnstile.builder(store).build()) {
            assertTrue(t.acquire("n", LockOptions.lockAtMostFor(Duration.ofMillis(200)), Duration.ofMillis(600)).isEmpty());
        }
        int slow = 0;
        while (!store.tries.get(slow).waiting()) {
            slow++;
        }
        String shared = store.tries.get(slow).token();
        String retry = store.tries.get(slow + 1).token();
        assertNotEquals(shared, retry, "the retry after a slow grant uses a fresh token");
        assertTrue(store.stopped.contains("n/" + retry), "the retry's place was not dropped: " + store.stopped);
        assertTrue(store.stopped.contains("n/" + shared), "the wait's own place was not dropped: " + store.stopped);
    }
}
