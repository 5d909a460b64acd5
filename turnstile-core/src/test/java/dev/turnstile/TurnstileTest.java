package dev.turnstile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.turnstile.spi.AcquireRequest;
import dev.turnstile.spi.Grant;
import dev.turnstile.spi.HandOver;
import dev.turnstile.spi.HandsOver;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.NotifiesReleases;
import dev.turnstile.spi.ReleaseListener;
import dev.turnstile.spi.ReleaseWatch;
import dev.turnstile.spi.StoreUrls;
import dev.turnstile.testing.InMemoryLockStore;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Client behaviour that needs a store to misbehave on cue; the store contract itself is in the testkit. */
class TurnstileTest {

    /** Delegates to an in-memory store and fails on demand, like a store that became unreachable. */
    static final class FlakyStore implements LockStore {
        final InMemoryLockStore inner = new InMemoryLockStore();
        final AtomicBoolean down = new AtomicBoolean();
        final AtomicBoolean failAfterAcquire = new AtomicBoolean();
        final AtomicInteger releases = new AtomicInteger();
        final java.util.Queue<Long> acquireDelaysMillis = new java.util.concurrent.ConcurrentLinkedQueue<>();

        private void check() {
            if (down.get()) {
                throw new StoreUnavailableException("store is down", null);
            }
        }

        @Override
        public Optional<Grant> tryAcquire(AcquireRequest r) {
            check();
            Long delay = acquireDelaysMillis.poll();
            if (delay != null) {
                try {
                    Thread.sleep(delay);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new StoreUnavailableException("interrupted while talking to the store", e);
                }
            }
            Optional<Grant> g = inner.tryAcquire(r);
            if (failAfterAcquire.get()) {
                throw new StoreUnavailableException("timed out after sending", null);
            }
            return g;
        }

        @Override public boolean extend(String n, String t, Duration ttl) { check(); return inner.extend(n, t, ttl); }

        @Override
        public boolean release(String n, String t, Duration atLeast) {
            releases.incrementAndGet();
            check();
            return inner.release(n, t, atLeast);
        }

        @Override public List<LockInfo> heldLocks() { check(); return inner.heldLocks(); }
        @Override public boolean forceRelease(String n) { check(); return inner.forceRelease(n); }
        @Override public String description() { return "flaky"; }
    }

    @Test
    void keepAliveReportsLossAtTheLocalDeadlineWhenTheStoreGoesAway() throws Exception {
        FlakyStore store = new FlakyStore();
        try (Turnstile t = Turnstile.builder(store).build()) {
            CompletableFuture<LeaseLoss> told = new CompletableFuture<>();
            Lease lease = t.tryAcquire("job", LockOptions.builder().lockAtMostFor(Duration.ofMillis(600))
                    .keepAlive(true).onLost(told::complete).build()).orElseThrow();
            Thread.sleep(300); // at least one renewal confirmed
            long down = System.nanoTime();
            store.down.set(true);
            LeaseLoss loss = lease.lost().toCompletableFuture().get(3, TimeUnit.SECONDS);
            Duration detectedAfter = Duration.ofNanos(System.nanoTime() - down);
            assertThat(detectedAfter).as("no later than the TTL after the last renewal").isLessThan(Duration.ofMillis(600));
            assertThat(loss.reason()).contains("deadline");
            assertThat(told.get(1, TimeUnit.SECONDS)).isEqualTo(loss);
            assertThat(lease.isHeld()).isFalse();
            assertThatThrownBy(() -> lease.extend(Duration.ofSeconds(1))).isInstanceOf(LeaseLostException.class);
        }
    }

    @Test
    void keepAliveSurvivesATransientStoreFailure() throws Exception {
        FlakyStore store = new FlakyStore();
        try (Turnstile t = Turnstile.builder(store).build()) {
            Lease lease = t.tryAcquire("job", LockOptions.builder().lockAtMostFor(Duration.ofMillis(900))
                    .keepAlive(true).build()).orElseThrow();
            store.down.set(true);
            Thread.sleep(350); // one renewal fails
            store.down.set(false);
            Thread.sleep(1200);
            assertThat(lease.isHeld()).isTrue();
            assertThat(lease.lost().toCompletableFuture()).isNotDone();
        }
    }

    @Test
    void anAmbiguousAcquireIsReportedAsAFailureAndItsTokenReleased() {
        FlakyStore store = new FlakyStore();
        try (Turnstile t = Turnstile.builder(store).build()) {
            store.failAfterAcquire.set(true);
            assertThatThrownBy(() -> t.tryAcquire("job")).isInstanceOf(StoreUnavailableException.class);
            store.failAfterAcquire.set(false);
            assertThat(t.tryAcquire("job")).as("the committed acquire was undone").isPresent();
        }
    }

    @Test
    void aGrantThatTookMoreThanHalfItsTtlIsHandedBackAndTriedOnceMore() {
        FlakyStore store = new FlakyStore();
        try (Turnstile t = Turnstile.builder(store).build()) {
            LockOptions options = LockOptions.lockAtMostFor(Duration.ofMillis(200));
            store.acquireDelaysMillis.add(150L);
            Lease lease = t.tryAcquire("slow", options).orElseThrow();
            assertThat(lease.isHeld()).isTrue();
            assertThat(store.inner.heldLocks()).hasSize(1).allSatisfy(i -> assertThat(i.fence()).isEqualTo(lease.fence()));
            lease.release();
            store.acquireDelaysMillis.add(150L);
            store.acquireDelaysMillis.add(150L);
            assertThatThrownBy(() -> t.tryAcquire("slow", options)).isInstanceOf(StoreUnavailableException.class)
                    .hasMessageContaining("more than half of lockAtMostFor (200 ms), twice").hasMessageContaining("give a longer lockAtMostFor");
            assertThat(store.inner.heldLocks()).as("both slow grants were handed back").isEmpty();
        }
    }

    @Test
    void anInterruptDuringAStoreCallEndsAWaitWithInterruptedException() throws Exception {
        FlakyStore store = new FlakyStore();
        try (Turnstile t = Turnstile.builder(store).build()) {
            t.tryAcquire("job").orElseThrow();
            store.acquireDelaysMillis.add(5_000L);
            java.util.concurrent.atomic.AtomicReference<Throwable> thrown = new java.util.concurrent.atomic.AtomicReference<>();
            Thread waiter = new Thread(() -> {
                try {
                    t.acquire("job", LockOptions.defaults(), Duration.ofSeconds(30));
                } catch (Throwable e) {
                    thrown.set(e);
                }
            });
            waiter.start();
            Thread.sleep(300);
            waiter.interrupt();
            waiter.join(5_000);
            assertThat(thrown.get()).isInstanceOf(InterruptedException.class);
        }
    }

    @Test
    void aReleaseThatFailsCanBeRetriedAndThenIsIdempotent() {
        FlakyStore store = new FlakyStore();
        try (Turnstile t = Turnstile.builder(store).build()) {
            Lease lease = t.tryAcquire("job").orElseThrow();
            store.down.set(true);
            assertThatThrownBy(lease::release).isInstanceOf(StoreUnavailableException.class);
            store.down.set(false);
            assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
            int calls = store.releases.get();
            assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
            assertThat(store.releases.get()).as("second release does not touch the store").isEqualTo(calls);
        }
    }

    @Test
    void closeReleasesHeldLeasesAndRefusesNewAcquires() {
        InMemoryLockStore store = new InMemoryLockStore();
        Turnstile t = Turnstile.builder(store).build();
        t.tryAcquire("a").orElseThrow();
        t.tryAcquire("b", LockOptions.builder().keepAlive(true).build()).orElseThrow();
        t.close();
        assertThat(store.heldLocks()).isEmpty();
        assertThatThrownBy(() -> t.tryAcquire("c")).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    }

    @Test
    void aWaiterInTheSameJvmIsWokenByTheReleaseNotByItsPoll() throws Exception {
        InMemoryLockStore store = new InMemoryLockStore();
        try (Turnstile t = Turnstile.builder(store).pollInterval(Duration.ofSeconds(5), Duration.ofSeconds(5)).build()) {
            Lease holder = t.tryAcquire("job").orElseThrow();
            CompletableFuture<Optional<Lease>> waiter = CompletableFuture.supplyAsync(() -> {
                try {
                    return t.acquire("job", LockOptions.defaults(), Duration.ofSeconds(30));
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            Thread.sleep(200);
            long released = System.nanoTime();
            holder.release();
            assertThat(waiter.get(3, TimeUnit.SECONDS)).isPresent();
            assertThat(Duration.ofNanos(System.nanoTime() - released)).isLessThan(Duration.ofSeconds(1));
        }
    }

    @Test
    void aWaitingReacquireRightAfterOwnReleaseLetsAnotherClientsWaiterGoFirst() throws Exception {
        InMemoryLockStore store = new InMemoryLockStore();
        try (Turnstile a = Turnstile.builder(store).pollInterval(Duration.ofMillis(20), Duration.ofMillis(20)).build();
                Turnstile b = Turnstile.builder(store).pollInterval(Duration.ofMillis(1), Duration.ofMillis(1)).build()) {
            for (int round = 0; round < 5; round++) {
                Lease held = a.tryAcquire("job").orElseThrow();
                CompletableFuture<Lease> other = CompletableFuture.supplyAsync(() -> {
                    try {
                        return b.acquire("job", LockOptions.defaults(), Duration.ofSeconds(10)).orElseThrow();
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                });
                Thread.sleep(50); // b is polling now
                held.release();
                Optional<Lease> again = a.acquire("job", LockOptions.defaults(), Duration.ofMillis(10));
                assertThat(again).as("round %d: a deferred to b's waiter", round).isEmpty();
                other.get(5, TimeUnit.SECONDS).release();
            }
        }
    }

    /**
     * An in-memory store that counts release subscriptions opened and closed, and delivers its
     * notifications late, on another thread, as a real store's arrive.
     */
    static final class NotifyingStore implements LockStore, NotifiesReleases {
        final InMemoryLockStore inner = new InMemoryLockStore();
        final AtomicInteger watchesOpened = new AtomicInteger();
        final AtomicInteger watchesClosed = new AtomicInteger();
        final AtomicInteger attempts = new AtomicInteger();
        private final long notifyDelayMillis;
        private final java.util.concurrent.ScheduledExecutorService later =
                java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
                    Thread t = new Thread(r, "late-notifications");
                    t.setDaemon(true);
                    return t;
                });

        NotifyingStore(long notifyDelayMillis) {
            this.notifyDelayMillis = notifyDelayMillis;
        }

        @Override
        public Optional<Grant> tryAcquire(AcquireRequest r) {
            attempts.incrementAndGet();
            return inner.tryAcquire(r);
        }

        @Override public boolean extend(String n, String t, Duration ttl) { return inner.extend(n, t, ttl); }
        @Override public boolean release(String n, String t, Duration atLeast) { return inner.release(n, t, atLeast); }
        @Override public List<LockInfo> heldLocks() { return inner.heldLocks(); }
        @Override public boolean forceRelease(String n) { return inner.forceRelease(n); }
        @Override public String description() { return "notifying"; }

        @Override
        public ReleaseWatch watchReleases(String name, ReleaseListener listener) {
            watchesOpened.incrementAndGet();
            ReleaseWatch w = inner.watchReleases(name,
                    token -> later.schedule(() -> listener.released(token), notifyDelayMillis, TimeUnit.MILLISECONDS));
            return () -> {
                watchesClosed.incrementAndGet();
                w.close();
            };
        }
    }

    /**
     * Runs a task on a thread of its own (the common pool may have a single thread on a 2-core
     * machine, and these waits must run side by side).
     */
    private static final java.util.concurrent.Executor OWN_THREAD = task -> {
        Thread t = new Thread(task, "test-waiter");
        t.setDaemon(true);
        t.start();
    };

    private static CompletableFuture<Lease> acquireAsync(Turnstile t, String name) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return t.acquire(name, LockOptions.defaults(), Duration.ofSeconds(10)).orElseThrow();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }, OWN_THREAD);
    }

    /** a holds "job"; b waits for it (subscribing if it must) and gets it when a releases. */
    private static void bWaitsForA(Turnstile a, Turnstile b) throws Exception {
        Lease held = a.tryAcquire("job").orElseThrow();
        CompletableFuture<Lease> waiter = acquireAsync(b, "job");
        Thread.sleep(30);
        held.release();
        waiter.get(5, TimeUnit.SECONDS).release();
    }

    @Test
    void aReleaseSubscriptionOutlivesItsWaitAndClosesAfterTheLinger() throws Exception {
        NotifyingStore store = new NotifyingStore(0);
        try (Turnstile a = Turnstile.builder(store).build();
                Turnstile b = Turnstile.builder(store).watchLinger(Duration.ofMillis(300)).build()) {
            for (int round = 0; round < 3; round++) {
                bWaitsForA(a, b);
            }
            assertThat(store.watchesOpened).as("one subscription for three waits").hasValue(1);
            assertThat(store.watchesClosed).hasValue(0);
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (store.watchesClosed.get() == 0 && System.nanoTime() < until) {
                Thread.sleep(10);
            }
            assertThat(store.watchesClosed).as("closed once the linger passed").hasValue(1);
            bWaitsForA(a, b);
            assertThat(store.watchesOpened).as("a new one after the linger").hasValue(2);
        }
        assertThat(store.watchesClosed).as("closing the client closes what lingers").hasValue(2);
    }

    @Test
    void theLingerCountsFromTheLastWaitNotTheFirst() throws Exception {
        NotifyingStore store = new NotifyingStore(0);
        try (Turnstile a = Turnstile.builder(store).build();
                Turnstile b = Turnstile.builder(store).watchLinger(Duration.ofMillis(600)).build()) {
            bWaitsForA(a, b);
            long firstDone = System.nanoTime();
            Thread.sleep(350);
            bWaitsForA(a, b);
            long sleep = firstDone + TimeUnit.MILLISECONDS.toNanos(750) - System.nanoTime();
            Thread.sleep(Math.max(0, TimeUnit.NANOSECONDS.toMillis(sleep)));
            assertThat(store.watchesOpened).as("the second wait joined the lingering subscription").hasValue(1);
            assertThat(store.watchesClosed).as("600 ms after the first wait, but not after the second").hasValue(0);
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (store.watchesClosed.get() == 0 && System.nanoTime() < until) {
                Thread.sleep(10);
            }
            assertThat(store.watchesClosed).hasValue(1);
        }
    }

    @Test
    void aReacquireAfterOwnReleaseIsWokenByTheNextReleaseElsewhereNotByTheEndOfTheCourtesy() throws Exception {
        NotifyingStore store = new NotifyingStore(5);
        try (Turnstile a = Turnstile.builder(store).build();
                Turnstile b = Turnstile.builder(store).handOffCourtesy(Duration.ofSeconds(1)).build()) {
            Lease aHolds = a.tryAcquire("job").orElseThrow();
            CompletableFuture<Lease> bWaits = acquireAsync(b, "job"); // b subscribes
            Thread.sleep(30);
            aHolds.release();
            Lease bHolds = bWaits.get(5, TimeUnit.SECONDS);
            CompletableFuture<Lease> aWaits = acquireAsync(a, "job");
            Thread.sleep(30);
            bHolds.release(); // a takes it; b comes back at once and defers to the courtesy
            CompletableFuture<Lease> bAgain = acquireAsync(b, "job");
            aHolds = aWaits.get(5, TimeUnit.SECONDS);
            Thread.sleep(100);
            long released = System.nanoTime();
            aHolds.release();
            bAgain.get(5, TimeUnit.SECONDS).release();
            assertThat(Duration.ofNanos(System.nanoTime() - released))
                    .as("woken by a's release, not at the end of its 1 s courtesy").isLessThan(Duration.ofMillis(500));
        }
    }

    @Test
    void theStoresEchoOfOwnReleaseDoesNotEndTheCourtesy() throws Exception {
        NotifyingStore store = new NotifyingStore(50); // the echo comes while b defers
        try (Turnstile a = Turnstile.builder(store).build();
                Turnstile b = Turnstile.builder(store).handOffCourtesy(Duration.ofMillis(400)).build()) {
            Lease aHolds = a.tryAcquire("job").orElseThrow();
            CompletableFuture<Lease> bWaits = acquireAsync(b, "job"); // b subscribes, and stays subscribed
            Thread.sleep(30);
            aHolds.release();
            Lease bHolds = bWaits.get(5, TimeUnit.SECONDS);
            Thread.sleep(150); // a's release has been told by now
            bHolds.release(); // the store tells b's subscription of this release too
            long start = System.nanoTime();
            b.acquire("job", LockOptions.defaults(), Duration.ofSeconds(5)).orElseThrow().release();
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("b sat out its courtesy")
                    .isGreaterThanOrEqualTo(Duration.ofMillis(300));
        }
    }

    @Test
    void withTheCourtesyOffTheReleaserMayTakeTheLockAgainAtOnce() throws Exception {
        InMemoryLockStore store = new InMemoryLockStore();
        try (Turnstile a = Turnstile.builder(store).handOffCourtesy(Duration.ZERO).build()) {
            a.tryAcquire("job").orElseThrow().release();
            long start = System.nanoTime();
            assertThat(a.acquire("job", LockOptions.defaults(), Duration.ofSeconds(1))).isPresent();
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMillis(50));
        }
        assertThatThrownBy(() -> Turnstile.builder(store).handOffCourtesy(Duration.ofSeconds(2))).hasMessageContaining("courtesy");
    }

    @Test
    void threadsOfOneClientTakeTurnsOnABusyLock() throws Exception {
        InMemoryLockStore store = new InMemoryLockStore();
        try (Turnstile t = Turnstile.builder(store).build()) {
            int threads = 4;
            java.util.concurrent.ConcurrentHashMap<String, AtomicInteger> counts = new java.util.concurrent.ConcurrentHashMap<>();
            long end = System.nanoTime() + Duration.ofMillis(600).toNanos();
            List<Thread> workers = new java.util.ArrayList<>();
            for (int i = 0; i < threads; i++) {
                Thread w = new Thread(() -> {
                    try {
                        while (System.nanoTime() < end) {
                            Lease l = t.acquire("job", LockOptions.defaults(), Duration.ofSeconds(5)).orElseThrow();
                            counts.computeIfAbsent(Thread.currentThread().getName(), k -> new AtomicInteger()).incrementAndGet();
                            l.release();
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }, "w" + i);
                workers.add(w);
                w.start();
            }
            for (Thread w : workers) {
                w.join();
            }
            int total = counts.values().stream().mapToInt(AtomicInteger::get).sum();
            assertThat(total).as("in-JVM hand-offs are not slowed to the courtesy").isGreaterThan(1000);
            assertThat(counts.values()).allSatisfy(c -> assertThat(c.get()).isGreaterThan(total / threads / 4));
        }
    }

    @Test
    void threadsOfOneClientWaitInLineSoOnlyTheFirstAsksTheStore() throws Exception {
        NotifyingStore store = new NotifyingStore(0);
        try (Turnstile a = Turnstile.builder(store).build();
                Turnstile b = Turnstile.builder(store).pollInterval(Duration.ofSeconds(5), Duration.ofSeconds(5)).build()) {
            Lease held = a.tryAcquire("job").orElseThrow();
            int before = store.attempts.get();
            List<CompletableFuture<Lease>> waiters = new java.util.ArrayList<>();
            for (int i = 0; i < 4; i++) {
                waiters.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        Lease l = b.acquire("job", LockOptions.defaults(), Duration.ofSeconds(10)).orElseThrow();
                        Thread.sleep(20);
                        l.release();
                        return l;
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                }, OWN_THREAD));
            }
            Thread.sleep(300);
            int whileBusy = store.attempts.get() - before;
            assertThat(whileBusy).as("the first in line tried, and again once subscribed; the others did not").isLessThanOrEqualTo(2);
            held.release();
            for (CompletableFuture<Lease> w : waiters) {
                w.get(5, TimeUnit.SECONDS);
            }
            int handOffs = store.attempts.get() - before - whileBusy;
            assertThat(handOffs).as("each release sent one waiting thread to the store, not every one").isLessThanOrEqualTo(5);
        }
    }

    @Test
    void aReentrantAcquireDoesNotQueueBehindThreadsWaitingForItsOwnHold() throws Exception {
        try (Turnstile t = Turnstile.builder(new InMemoryLockStore()).pollInterval(Duration.ofSeconds(5), Duration.ofSeconds(5)).build()) {
            LockOptions reentrant = LockOptions.builder().reentrant().build();
            Lease outer = t.acquire("job", reentrant, Duration.ZERO).orElseThrow();
            CompletableFuture<Lease> other = acquireAsync(t, "job");
            Thread.sleep(200); // the other thread is first in line now
            long start = System.nanoTime();
            Lease inner = t.acquire("job", reentrant, Duration.ofSeconds(5)).orElseThrow();
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("not behind the other thread").isLessThan(Duration.ofSeconds(2));
            assertThat(inner.fence()).isEqualTo(outer.fence());
            inner.release();
            outer.release();
            other.get(5, TimeUnit.SECONDS).release();
        }
    }

    @Test
    void aWaitThatRunsOutBehindAnotherThreadStillTriesTheStoreOnce() throws Exception {
        InMemoryLockStore store = new InMemoryLockStore();
        try (Turnstile a = Turnstile.builder(store).build();
                Turnstile b = Turnstile.builder(store).pollInterval(Duration.ofSeconds(5), Duration.ofSeconds(5)).build()) {
            a.tryAcquire("job", LockOptions.lockAtMostFor(Duration.ofMillis(200))).orElseThrow();
            CompletableFuture<Lease> first = acquireAsync(b, "job"); // first in line, polling every 5 s
            Thread.sleep(400); // a's lease has expired, silently
            Optional<Lease> second = b.acquire("job", LockOptions.defaults(), Duration.ZERO);
            assertThat(second).as("maxWait 0 is one try, even behind another waiting thread").isPresent();
            second.get().release();
            first.get(5, TimeUnit.SECONDS).release();
        }
    }

    /** An in-memory store that hands a lock over in one call (it has no other clients to be fair to), and counts its calls. */
    static final class HandingStore implements LockStore, HandsOver {
        final InMemoryLockStore inner = new InMemoryLockStore();
        final AtomicInteger attempts = new AtomicInteger();
        final AtomicInteger handOvers = new AtomicInteger();
        final AtomicBoolean failHandOver = new AtomicBoolean();
        final java.util.concurrent.CountDownLatch handOverStarted = new java.util.concurrent.CountDownLatch(1);
        volatile long handOverMillis;
        /** When set, a hand-over that has granted the lock waits here before it returns (after counting down handOverDone). */
        volatile java.util.concurrent.CountDownLatch handOverGate;
        final java.util.concurrent.CountDownLatch handOverDone = new java.util.concurrent.CountDownLatch(1);

        @Override
        public synchronized Optional<Grant> tryAcquire(AcquireRequest r) {
            attempts.incrementAndGet();
            return inner.tryAcquire(r);
        }

        @Override public synchronized boolean extend(String n, String t, Duration ttl) { return inner.extend(n, t, ttl); }
        @Override public synchronized boolean release(String n, String t, Duration atLeast) { return inner.release(n, t, atLeast); }
        @Override public List<LockInfo> heldLocks() { return inner.heldLocks(); }
        @Override public synchronized boolean forceRelease(String n) { return inner.forceRelease(n); }
        @Override public String description() { return "handing"; }

        @Override
        public synchronized HandOver handOver(String name, String token, AcquireRequest next) {
            if (failHandOver.get()) {
                throw new StoreUnavailableException("store is down", null);
            }
            handOvers.incrementAndGet();
            handOverStarted.countDown();
            if (handOverMillis > 0) {
                try {
                    Thread.sleep(handOverMillis);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            if (!inner.release(name, token, Duration.ZERO)) {
                return HandOver.notHeld();
            }
            HandOver done = HandOver.handedTo(inner.tryAcquire(next).orElseThrow());
            java.util.concurrent.CountDownLatch gate = handOverGate;
            if (gate != null) {
                handOverDone.countDown();
                try {
                    gate.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return done;
        }
    }

    @Test
    void aReleaseHandsTheLockStraightToTheNextThreadInLine() throws Exception {
        HandingStore store = new HandingStore();
        try (Turnstile t = Turnstile.builder(store).pollInterval(Duration.ofSeconds(5), Duration.ofSeconds(5)).build()) {
            Lease first = t.tryAcquire("job").orElseThrow();
            CompletableFuture<Lease> next = acquireAsync(t, "job");
            Thread.sleep(200); // the other thread tried once and waits for a release now
            int attemptsBefore = store.attempts.get();
            assertThat(first.release()).hasToString("RELEASED");
            Lease handed = next.get(5, TimeUnit.SECONDS);
            assertThat(store.handOvers).hasValue(1);
            assertThat(store.attempts.get()).as("no acquire of its own after the release").isEqualTo(attemptsBefore);
            assertThat(handed.fence()).isGreaterThan(first.fence());
            assertThat(handed.token()).isNotEqualTo(first.token());
            assertThat(handed.isHeld()).isTrue();
            assertThat(t.heldLocks()).singleElement().satisfies(i -> assertThat(i.fence()).isEqualTo(handed.fence()));
            assertThat(handed.release()).hasToString("RELEASED");
            assertThat(t.heldLocks()).isEmpty();
        }
    }

    @Test
    void aLeaseHandedToAReentrantWaiterIsReentrantOnItsThread() throws Exception {
        HandingStore store = new HandingStore();
        try (Turnstile t = Turnstile.builder(store).pollInterval(Duration.ofSeconds(5), Duration.ofSeconds(5)).build()) {
            Lease first = t.tryAcquire("job").orElseThrow();
            LockOptions reentrant = LockOptions.builder().reentrant().build();
            CompletableFuture<long[]> next = CompletableFuture.supplyAsync(() -> {
                try {
                    Lease outer = t.acquire("job", reentrant, Duration.ofSeconds(10)).orElseThrow();
                    Lease inner = t.acquire("job", reentrant, Duration.ZERO).orElseThrow();
                    long[] fences = {outer.fence(), inner.fence()};
                    inner.release();
                    boolean stillHeld = outer.isHeld();
                    outer.release();
                    return stillHeld ? fences : null;
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }, OWN_THREAD);
            Thread.sleep(200);
            first.release();
            long[] fences = next.get(5, TimeUnit.SECONDS);
            assertThat(store.handOvers).hasValue(1);
            assertThat(fences).as("the inner release left the outer lease held").isNotNull();
            assertThat(fences[1]).isEqualTo(fences[0]);
            assertThat(t.heldLocks()).isEmpty();
        }
    }

    @Test
    void aWaiterInterruptedDuringAHandOverThrowsAndHoldsNothing() throws Exception {
        HandingStore store = new HandingStore();
        store.handOverMillis = 300;
        try (Turnstile t = Turnstile.builder(store).pollInterval(Duration.ofSeconds(5), Duration.ofSeconds(5)).build()) {
            Lease first = t.tryAcquire("job").orElseThrow();
            java.util.concurrent.atomic.AtomicReference<Throwable> thrown = new java.util.concurrent.atomic.AtomicReference<>();
            Thread waiter = new Thread(() -> {
                try {
                    t.acquire("job", LockOptions.defaults(), Duration.ofSeconds(10));
                } catch (Throwable e) {
                    thrown.set(e);
                }
            });
            waiter.start();
            Thread.sleep(200);
            CompletableFuture<ReleaseOutcome> releasing = CompletableFuture.supplyAsync(first::release);
            assertThat(store.handOverStarted.await(5, TimeUnit.SECONDS)).isTrue();
            waiter.interrupt();
            waiter.join(5000);
            assertThat(releasing.get(5, TimeUnit.SECONDS)).isEqualTo(ReleaseOutcome.RELEASED);
            assertThat(thrown.get()).as("the wait ended by the interrupt").isInstanceOf(InterruptedException.class);
            assertThat(store.handOvers).hasValue(1);
            assertThat(t.heldLocks()).as("the lease handed over as the interrupt came was released").isEmpty();
        }
    }

    /** Waits on {@code t} for "job" on a thread of its own; the outcome (a lease or what was thrown) completes the future. */
    private static CompletableFuture<Object> waitFor(Turnstile t, LockOptions options) {
        CompletableFuture<Object> outcome = new CompletableFuture<>();
        Thread waiter = new Thread(() -> {
            try {
                outcome.complete(t.acquire("job", options, Duration.ofSeconds(30)));
            } catch (Throwable e) {
                outcome.complete(e);
            }
        }, "test-waiter");
        waiter.setDaemon(true);
        waiter.start();
        return outcome;
    }

    @Test
    void aHandOverThatMeetsTheClosingClientsStoppedTimerReleasesTheGrantAndFreesTheWaiter() throws Exception {
        HandingStore store = new HandingStore();
        Turnstile t = Turnstile.builder(store).pollInterval(Duration.ofSeconds(5), Duration.ofSeconds(5)).build();
        try {
            LockOptions keptAlive = LockOptions.builder().keepAlive(true).build();
            Lease first = t.tryAcquire("job").orElseThrow();
            CompletableFuture<Object> waiter = waitFor(t, keptAlive);
            Thread.sleep(200); // the waiter tried once and waits for a release now
            store.handOverGate = new java.util.concurrent.CountDownLatch(1);
            CompletableFuture<Object> releasing = CompletableFuture.supplyAsync(() -> {
                try {
                    return first.release();
                } catch (Throwable e) {
                    return e;
                }
            }, OWN_THREAD);
            assertThat(store.handOverDone.await(5, TimeUnit.SECONDS)).isTrue();
            // The lock is granted to the waiter's token in the store; now the client's timer stops, as
            // close() does, between the hand-over's check that the client is open and the lease's start.
            t.keeper.close();
            store.handOverGate.countDown();
            assertThat(releasing.get(5, TimeUnit.SECONDS)).as("the release itself succeeded").isEqualTo(ReleaseOutcome.RELEASED);
            assertThat(waiter.get(5, TimeUnit.SECONDS)).as("the waiter was not left parked")
                    .isInstanceOfSatisfying(IllegalStateException.class, e -> assertThat(e).hasMessageContaining("closed"));
            assertThat(store.inner.heldLocks()).as("the grant made for the waiter was released").isEmpty();
        } finally {
            t.close();
        }
    }

    @Test
    void closeDuringAHandOverReleasesTheGrantAndTheWaiterThrows() throws Exception {
        HandingStore store = new HandingStore();
        Turnstile t = Turnstile.builder(store).pollInterval(Duration.ofSeconds(5), Duration.ofSeconds(5)).build();
        LockOptions withOnLost = LockOptions.builder().onLost(loss -> { }).build();
        Lease first = t.tryAcquire("job").orElseThrow();
        CompletableFuture<Object> waiter = waitFor(t, withOnLost);
        Thread.sleep(200);
        store.handOverGate = new java.util.concurrent.CountDownLatch(1);
        CompletableFuture<Object> releasing = CompletableFuture.supplyAsync(() -> {
            try {
                return first.release();
            } catch (Throwable e) {
                return e;
            }
        }, OWN_THREAD);
        assertThat(store.handOverDone.await(5, TimeUnit.SECONDS)).isTrue();
        t.close(); // runs to the end while the hand-over is in the store
        store.handOverGate.countDown();
        assertThat(releasing.get(5, TimeUnit.SECONDS)).isEqualTo(ReleaseOutcome.RELEASED);
        assertThat(waiter.get(5, TimeUnit.SECONDS)).isInstanceOfSatisfying(IllegalStateException.class,
                e -> assertThat(e).hasMessageContaining("closed"));
        assertThat(store.inner.heldLocks()).isEmpty();
    }

    @Test
    void closeEndsEveryWaitAtOnceWithIllegalStateException() throws Exception {
        InMemoryLockStore store = new InMemoryLockStore();
        Turnstile holder = Turnstile.builder(store).build();
        Turnstile t = Turnstile.builder(store).pollInterval(Duration.ofSeconds(5), Duration.ofSeconds(5)).build();
        holder.tryAcquire("job").orElseThrow();
        CompletableFuture<Object> first = waitFor(t, LockOptions.defaults());
        CompletableFuture<Object> second = waitFor(t, LockOptions.defaults()); // in line behind the first
        Thread.sleep(200);
        long closing = System.nanoTime();
        t.close();
        for (CompletableFuture<Object> w : List.of(first, second)) {
            assertThat(w.get(5, TimeUnit.SECONDS)).isInstanceOfSatisfying(IllegalStateException.class,
                    e -> assertThat(e).hasMessageContaining("this Turnstile is closed"));
        }
        assertThat(Duration.ofNanos(System.nanoTime() - closing)).as("not after the 5 s poll").isLessThan(Duration.ofSeconds(1));
        assertThatThrownBy(() -> t.acquire("job", LockOptions.defaults(), Duration.ofSeconds(1)))
                .isInstanceOf(IllegalStateException.class);
        holder.close();
    }

    @Test
    void aFailedHandOverFailsTheReleaseAndStrandsNoWaiter() throws Exception {
        HandingStore store = new HandingStore();
        try (Turnstile t = Turnstile.builder(store).pollInterval(Duration.ofSeconds(5), Duration.ofSeconds(5)).build()) {
            Lease first = t.tryAcquire("job").orElseThrow();
            CompletableFuture<Lease> next = acquireAsync(t, "job");
            Thread.sleep(200);
            store.failHandOver.set(true);
            assertThatThrownBy(first::release).isInstanceOf(StoreUnavailableException.class);
            assertThat(next).isNotDone();
            store.failHandOver.set(false);
            assertThat(first.release()).as("a failed release can be retried").hasToString("RELEASED");
            Lease handed = next.get(5, TimeUnit.SECONDS);
            assertThat(handed.fence()).isGreaterThan(first.fence());
            handed.release();
        }
    }

    @Test
    void aReentrantAcquireOnALostOuterLeaseThrows() throws Exception {
        try (Turnstile t = Turnstile.builder(new InMemoryLockStore()).build()) {
            LockOptions options = LockOptions.builder().lockAtMostFor(Duration.ofMillis(50)).reentrant().build();
            t.tryAcquire("job", options).orElseThrow();
            Thread.sleep(100);
            assertThatThrownBy(() -> t.tryAcquire("job", options)).isInstanceOf(LeaseLostException.class);
        }
    }

    @Test
    void optionsRejectBadValuesWithTheFieldNamed() {
        assertThatThrownBy(() -> LockOptions.builder().lockAtMostFor(Duration.ofSeconds(3)).keepAlive(Duration.ofSeconds(3)).build())
                .hasMessageContaining("keepAlive interval").hasMessageContaining("shorter than lockAtMostFor");
        assertThatThrownBy(() -> LockOptions.lockAtMostFor(Duration.ofMillis(5))).hasMessageContaining("at least 10ms");
        assertThatThrownBy(() -> LockOptions.lockAtMostFor(null)).hasMessageContaining("null");
        assertThatThrownBy(() -> LockOptions.builder().lockAtLeastFor(Duration.ofSeconds(-1))).hasMessageContaining("negative");
        assertThatThrownBy(() -> Turnstile.builder(new InMemoryLockStore()).owner("bad\u0001owner"))
                .hasMessageContaining("control character");
        assertThatThrownBy(() -> Turnstile.builder(new InMemoryLockStore()).pollInterval(Duration.ZERO, Duration.ofSeconds(1)))
                .hasMessageContaining("poll interval");
    }

    @Test
    void defaultOwnersDifferBetweenClientsOfOneProcess() {
        String a = Turnstile.builder(new InMemoryLockStore()).build().owner();
        String b = Turnstile.builder(new InMemoryLockStore()).build().owner();
        assertThat(a).isNotEqualTo(b).contains(":" + ProcessHandle.current().pid() + ":");
    }

    @Test
    void backoffGrowsWithTheWaitWithinItsBounds() {
        Backoff b = new Backoff(Duration.ofMillis(2), Duration.ofSeconds(1));
        for (int i = 0; i < 1000; i++) {
            assertThat(b.nextDelayNanos(0)).isBetween(1_000_000L, 2_000_000L);
            assertThat(b.nextDelayNanos(Duration.ofSeconds(1).toNanos())).isBetween(50_000_000L, 100_000_000L);
            assertThat(b.nextDelayNanos(Duration.ofHours(1).toNanos())).isBetween(500_000_000L, 1_000_000_000L);
        }
    }

    @Test
    void namesThatStartOrEndWithAnyKindOfSpaceAreRefused() {
        for (String space : List.of(" ", "\u00a0", "\u2007", "\u202f", "\u3000", "\u2002")) {
            assertThatThrownBy(() -> Turnstile.checkLockName("job" + space)).as("U+%04X", (int) space.charAt(0))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("white space");
            assertThatThrownBy(() -> Turnstile.checkLockName(space + "job")).isInstanceOf(IllegalArgumentException.class);
        }
        assertThat(Turnstile.checkLockName("a\u00a0b")).as("inside a name it is fine").isEqualTo("a\u00a0b");
    }

    @Test
    void urlsAreRedacted() {
        assertThat(StoreUrls.redact("jdbc:mysql://root:s3cret@h:3306/db")).isEqualTo("jdbc:mysql://root:***@h:3306/db");
        assertThat(StoreUrls.redact("jdbc:postgresql://h/db?user=u&password=s3cret&ssl=true"))
                .isEqualTo("jdbc:postgresql://h/db?user=u&password=***&ssl=true");
        assertThat(StoreUrls.redact("redis://:s3cret@h:6379/0")).doesNotContain("s3cret");
        assertThat(StoreUrls.redact("jdbc:h2:tcp://h/x;PASSWORD=s3cret")).doesNotContain("s3cret");
    }
}
