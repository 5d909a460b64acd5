package dev.turnstile.testkit;

import static dev.turnstile.testkit.TestTiming.ms;
import static dev.turnstile.testkit.TestTiming.sleep;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.awaitility.Awaitility.await;

import dev.turnstile.Lease;
import dev.turnstile.LeaseLoss;
import dev.turnstile.LeaseLostException;
import dev.turnstile.LockInfo;
import dev.turnstile.LockOptions;
import dev.turnstile.ReleaseOutcome;
import dev.turnstile.StoreUnavailableException;
import dev.turnstile.Turnstile;
import dev.turnstile.job.JobOptions;
import dev.turnstile.job.JobRunner;
import dev.turnstile.job.LockingScheduler;
import dev.turnstile.spi.AcquireRequest;
import dev.turnstile.spi.HandsOver;
import dev.turnstile.spi.KeepsWaitingLine;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.NotifiesReleases;
import dev.turnstile.spi.PrunesNames;
import dev.turnstile.spi.SessionBoundLeases;
import dev.turnstile.spi.StoreCapability;
import dev.turnstile.spi.WatchesLeases;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The contract every {@link LockStore} must pass. A store's test extends it and supplies the store:
 *
 * <pre>{@code
 * class PostgresLockStoreContractTest extends LockStoreContract {
 *     protected LockStore newStore() { return JdbcLockStore.builder(dataSource).build(); }
 *     protected String storeUrl() { return "jdbc:postgresql://127.0.0.1:5432/test?user=postgres"; }
 *     protected LockStore unreachableStore() { ... a store pointed at a port where nothing listens ... }
 * }
 * }</pre>
 *
 * <p>Each test uses fresh lock names, so stores need no cleaning between tests. Durations scale with
 * {@code -Dturnstile.test.timeScale}. A missing server must fail the suite, never skip it.
 *
 * <p>A store's optional {@linkplain dev.turnstile.spi.StoreCapability capabilities} each have a group
 * here that runs when the store declares the capability and is skipped otherwise, so no capability is
 * claimed untested.
 *
 * <p>Why one class of about a thousand lines: it is a suite, one nested group per topic that every
 * store inherits whole by extending it; split into files, a store's test could extend some groups and
 * miss others.
 */
public abstract class LockStoreContract {

    /**
     * Returns a new, independent client of the store under test. Two calls stand for two processes:
     * they must share nothing but the store itself.
     *
     * @return a store client; the suite closes it after the test
     */
    protected abstract LockStore newStore();

    /**
     * Returns a URL a child JVM can open with {@link dev.turnstile.spi.LockStores#open} to reach the
     * same store. Only a store that lives inside one JVM (the in-memory reference store) may return
     * {@code null}, which skips the multi-process test for it and says so.
     *
     * @return the store URL
     */
    protected abstract String storeUrl();

    /**
     * Returns a client configured like {@link #newStore()} but pointed where nothing answers (a
     * closed port, an unreadable path). It should fail within a few seconds.
     *
     * @return an unreachable store
     */
    protected abstract LockStore unreachableStore();

    /**
     * Tells whether the store's fences are safe: strictly increasing per name across every grant.
     * Only a store that documents otherwise (Redlock) returns {@code false}; its fence-order checks
     * are then skipped while every exclusion check still applies.
     *
     * @return {@code true} unless the store documents unsafe fences
     */
    protected boolean fencesAreSafe() {
        return true;
    }

    /**
     * Tells whether contenders that try at the very same moment can all come away busy: Redlock's
     * votes can split so that none has a majority. Only the liveness checks make allowance for it
     * (they try again); every exclusion check still applies.
     *
     * @return {@code true} if simultaneous tries can all fail
     */
    protected boolean simultaneousTriesCanAllFail() {
        return false;
    }

    /**
     * Tells whether the store tells a holder of a forced release: a kept-alive lease with an
     * {@code onLost} callback then learns of it within a second; on other stores, at its next
     * renewal. It follows from the capabilities the store declares, as their interfaces promise: a
     * store that {@linkplain WatchesLeases watches leases} (PostgreSQL LISTEN/NOTIFY, ZooKeeper), or
     * that {@linkplain NotifiesReleases notifies releases} to every watcher, that is without
     * {@linkplain KeepsWaitingLine a waiting line} of its own (Redis pub/sub).
     *
     * @return {@code true} if forced releases are told promptly
     */
    protected boolean toldOfForcedRelease() {
        LockStore probe = store();
        return probe.capability(WatchesLeases.class).isPresent()
                || (probe.capability(NotifiesReleases.class).isPresent() && probe.capability(KeepsWaitingLine.class).isEmpty());
    }

    /**
     * The contract group of each {@link StoreCapability}: a store that declares a capability runs its
     * group, and the others skip it (a capability, not a missing server). The testkit's own tests
     * check that every capability of the SPI has a group here.
     */
    static final Map<Class<? extends StoreCapability>, Class<?>> CAPABILITY_GROUPS = Map.of(
            HandsOver.class, HandingOver.class,
            NotifiesReleases.class, ReleaseNotices.class,
            WatchesLeases.class, LeaseWatching.class,
            SessionBoundLeases.class, SessionBound.class,
            KeepsWaitingLine.class, WaitingLinePlaces.class,
            dev.turnstile.spi.StoreClock.class, StoreClockReading.class,
            PrunesNames.class, Pruning.class);

    /** The store's {@code type}; the calling test is skipped when the store does not declare it. */
    static <C extends StoreCapability> C declared(LockStore store, Class<C> type) {
        Optional<C> capability = store.capability(type);
        org.junit.jupiter.api.Assumptions.assumeTrue(capability.isPresent(),
                "this store does not declare " + type.getSimpleName());
        return capability.get();
    }

    private final List<AutoCloseable> toClose = Collections.synchronizedList(new ArrayList<>());

    /**
     * Opens a tracked store client.
     *
     * @return a store client closed after the test
     */
    protected LockStore store() {
        LockStore store = newStore();
        toClose.add(store);
        return store;
    }

    /**
     * Builds a tracked client over a fresh store client, standing for another process.
     *
     * @return a Turnstile closed after the test
     */
    protected Turnstile client() {
        Turnstile turnstile = Turnstile.builder(store()).pollInterval(Duration.ofMillis(2), Duration.ofMillis(50)).build();
        toClose.add(0, turnstile);
        return turnstile;
    }

    /**
     * Returns a lock name no other test uses.
     *
     * @param what a readable prefix
     * @return a unique name
     */
    protected static String unique(String what) {
        return what + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    @AfterEach
    void closeAll() throws Exception {
        List<AutoCloseable> all;
        synchronized (toClose) {
            all = new ArrayList<>(toClose);
            toClose.clear();
        }
        for (AutoCloseable c : all) {
            c.close();
        }
    }

    static LockOptions ttl(long millis) {
        return LockOptions.lockAtMostFor(ms(millis));
    }

    static Lease held(Optional<Lease> lease) {
        assertThat(lease).as("expected the lock to be acquired").isPresent();
        return lease.get();
    }

    @Nested
    @DisplayName("mutual exclusion")
    class MutualExclusion {

        @Test
        @DisplayName("a second client is refused while the first holds the lock")
        void secondClientRefused() {
            String name = unique("excl");
            Lease first = held(client().tryAcquire(name, ttl(10_000)));
            assertThat(client().tryAcquire(name, ttl(10_000))).isEmpty();
            assertThat(first.isHeld()).isTrue();
        }

        @Test
        @DisplayName("a second acquire without reentrancy is refused even from the same client and thread")
        void notReentrantByDefault() {
            Turnstile t = client();
            String name = unique("nonre");
            Lease first = held(t.tryAcquire(name, ttl(10_000)));
            assertThat(t.tryAcquire(name, ttl(10_000))).isEmpty();
            first.release();
            assertThat(t.tryAcquire(name, ttl(10_000))).isPresent();
        }

        @Test
        @DisplayName("Turnstile.lock: a java.util.concurrent Lock that excludes other clients, waits, and hands over with a greater fence")
        void distributedLockView() throws Exception {
            String name = unique("lockview");
            dev.turnstile.DistributedLock mine = client().lock(name, ttl(10_000));
            dev.turnstile.DistributedLock theirs = client().lock(name, ttl(10_000));
            long first;
            java.util.concurrent.CompletableFuture<Long> waiting;
            mine.lock();
            try {
                first = mine.fence();
                waiting = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                    try {
                        assertThat(theirs.tryLock(10, java.util.concurrent.TimeUnit.SECONDS)).as("got it once freed").isTrue();
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                    try {
                        return theirs.fence();
                    } finally {
                        theirs.unlock();
                    }
                });
                Thread.sleep(200);
                assertThat(waiting).as("waits while the other client holds it").isNotDone();
            } finally {
                mine.unlock();
            }
            assertThat(waiting.get(15, java.util.concurrent.TimeUnit.SECONDS)).isGreaterThan(first);
        }

        @Test
        @DisplayName("different names do not block each other")
        void namesAreIndependent() {
            Turnstile t = client();
            String base = unique("indep");
            assertThat(t.tryAcquire(base + "-a", ttl(10_000))).isPresent();
            assertThat(t.tryAcquire(base + "-b", ttl(10_000))).isPresent();
        }

        @Test
        @DisplayName("8 threads on separate clients never overlap and fences rise in acquisition order")
        void threadsNeverOverlap() throws Exception {
            eightThreadsNeverOverlap(false);
        }

        @Test
        @DisplayName("8 threads of one client (in line, and handed the lock where the store can) never overlap and fences rise")
        void threadsOfOneClientNeverOverlap() throws Exception {
            eightThreadsNeverOverlap(true);
        }

        // Thread.yield() inside the critical section widens the window in which an overlap would be seen.
        @SuppressWarnings("ThreadPriorityCheck")
        private void eightThreadsNeverOverlap(boolean oneClient) throws Exception {
            String name = unique("threads");
            Turnstile shared = oneClient ? client() : null;
            int threads = 8;
            int rounds = 25;
            AtomicInteger inside = new AtomicInteger();
            AtomicInteger overlaps = new AtomicInteger();
            int[] unguarded = {0};
            List<Long> fences = Collections.synchronizedList(new ArrayList<>());
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                List<Future<?>> futures = new ArrayList<>();
                for (int i = 0; i < threads; i++) {
                    Turnstile t = shared != null ? shared : client(); // shared is there if oneClient
                    futures.add(pool.submit(() -> {
                        for (int r = 0; r < rounds; r++) {
                            try (Lease lease = held(t.acquire(name, ttl(30_000), Duration.ofSeconds(60)))) {
                                if (inside.incrementAndGet() != 1) {
                                    overlaps.incrementAndGet();
                                }
                                fences.add(lease.fence());
                                int v = unguarded[0];
                                Thread.yield();
                                unguarded[0] = v + 1;
                                inside.decrementAndGet();
                            }
                        }
                        return null;
                    }));
                }
                for (Future<?> f : futures) {
                    f.get(120, TimeUnit.SECONDS);
                }
            } finally {
                pool.shutdownNow();
            }
            assertThat(overlaps).hasValue(0);
            assertThat(unguarded[0]).isEqualTo(threads * rounds);
            assertThat(fences).hasSize(threads * rounds);
            if (fencesAreSafe()) {
                assertThat(fences).isSorted().doesNotHaveDuplicates();
            }
        }

        @Test
        @DisplayName("3 JVM processes contending on one name never overlap and fences rise")
        void processesNeverOverlap(@TempDir Path dir) throws Exception {
            org.junit.jupiter.api.Assumptions.assumeTrue(storeUrl() != null,
                    "this store lives inside one JVM: no other process can reach it");
            String name = unique("procs");
            int processes = 3;
            int iterations = 15;
            List<Integer> codes = ContenderProcess.runAll(storeUrl(), name, processes, iterations, dir,
                    Duration.ofMinutes(3));
            assertThat(codes).as(ContenderProcess.logs(dir)).containsOnly(0);
            assertThat(Files.readString(dir.resolve("counter")).trim()).isEqualTo(Integer.toString(processes * iterations));
            List<Long> fences = Files.readAllLines(dir.resolve("fences")).stream().map(Long::parseLong).toList();
            assertThat(fences).hasSize(processes * iterations);
            if (fencesAreSafe()) {
                assertThat(fences).isSorted().doesNotHaveDuplicates();
            }
        }
    }

    @Nested
    @DisplayName("expiry")
    class Expiry {

        @Test
        @DisplayName("an unreleased lease frees the lock after its TTL, and not before")
        void ttlFreesLock() {
            String name = unique("ttl");
            Turnstile other = client();
            held(client().tryAcquire(name, ttl(600)));
            assertThat(other.tryAcquire(name, ttl(600))).as("right after acquire").isEmpty();
            long start = System.nanoTime();
            await().atMost(ms(5_000)).pollInterval(Duration.ofMillis(20))
                    .until(() -> other.tryAcquire(name, ttl(5_000)).isPresent());
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(ms(300));
        }

        @Test
        @DisplayName("the lease reports itself not held once its local deadline passes")
        void leaseKnowsItsDeadline() {
            Lease lease = held(client().tryAcquire(unique("deadline"), ttl(300)));
            assertThat(lease.isHeld()).isTrue();
            await().atMost(ms(2_000)).until(() -> !lease.isHeld());
        }
    }

    @Nested
    @DisplayName("ownership")
    class Ownership {

        @Test
        @DisplayName("release and extend with a wrong token do nothing and say so")
        void wrongTokenDoesNothing() {
            String name = unique("owner");
            Lease lease = held(client().tryAcquire(name, ttl(10_000)));
            LockStore raw = store();
            assertThat(raw.release(name, "not-the-token", Duration.ZERO)).isFalse();
            assertThat(raw.extend(name, "not-the-token", ms(60_000))).isFalse();
            assertThat(client().tryAcquire(name, ttl(10_000))).as("still held by the owner").isEmpty();
            assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
        }

        @Test
        @DisplayName("release after expiry and takeover says ALREADY_EXPIRED and leaves the new holder alone")
        void releaseAfterTakeover() {
            String name = unique("takeover");
            Lease stale = held(client().tryAcquire(name, ttl(300)));
            Turnstile other = client();
            Lease fresh = await().atMost(ms(5_000)).until(() -> other.tryAcquire(name, ttl(10_000)).orElse(null),
                    l -> l != null);
            assertThat(stale.release()).isEqualTo(ReleaseOutcome.ALREADY_EXPIRED);
            assertThat(client().tryAcquire(name, ttl(10_000))).as("new holder kept the lock").isEmpty();
            assertThat(fresh.isHeld()).isTrue();
            assertThat(fresh.fence()).isGreaterThan(stale.fence());
        }

        @Test
        @DisplayName("extend by the owner keeps the lease past its first TTL")
        void extendKeepsLease() {
            String name = unique("extend");
            Lease lease = held(client().tryAcquire(name, ttl(500)));
            lease.extend(ms(5_000));
            sleep(800);
            assertThat(client().tryAcquire(name, ttl(1_000))).isEmpty();
            assertThat(lease.isHeld()).isTrue();
            assertThat(lease.expiresAt()).isAfter(lease.acquiredAt().plus(ms(4_000)));
        }

        @Test
        @DisplayName("extend after expiry throws LeaseLostException and completes lost()")
        void extendAfterExpiry() {
            Lease lease = held(client().tryAcquire(unique("late-extend"), ttl(200)));
            sleep(400);
            assertThatThrownBy(() -> lease.extend(ms(5_000))).isInstanceOf(LeaseLostException.class)
                    .hasMessageContaining("lost");
            assertThat(lease.lost().toCompletableFuture()).succeedsWithin(ms(2_000));
        }

        @Test
        @DisplayName("extend refused by the store (lease taken over) throws LeaseLostException")
        void extendRefused() {
            String name = unique("refused");
            Lease lease = held(client().tryAcquire(name, ttl(10_000)));
            assertThat(client().forceRelease(name)).isTrue();
            held(client().tryAcquire(name, ttl(10_000)));
            assertThatThrownBy(() -> lease.extend(ms(5_000))).isInstanceOf(LeaseLostException.class);
            assertThat(lease.isHeld()).isFalse();
            // NOT_OWNER where the store told the holder of the forced release first; ALREADY_EXPIRED
            // where the refused extend was the first word (a refusal cannot tell expiry from takeover)
            assertThat(lease.release()).isIn(ReleaseOutcome.ALREADY_EXPIRED, ReleaseOutcome.NOT_OWNER);
        }

        @Test
        @DisplayName("release is idempotent and extend after release is refused")
        void releaseIdempotent() {
            String name = unique("idem");
            Lease lease = held(client().tryAcquire(name, ttl(10_000)));
            assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
            Lease next = held(client().tryAcquire(name, ttl(10_000)));
            assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
            assertThat(next.isHeld()).isTrue();
            assertThat(client().tryAcquire(name, ttl(10_000))).as("second release left the new holder alone").isEmpty();
            assertThatThrownBy(() -> lease.extend(ms(1_000))).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("released");
        }

        @Test
        @DisplayName("a release on an interrupted thread frees the lock and leaves the thread interrupted")
        void releaseOnAnInterruptedThread() throws Exception {
            // The usual way there: an executor's shutdownNow interrupts a job whose finally releases.
            String name = unique("interrupted-release");
            Lease lease = held(client().tryAcquire(name, ttl(60_000)));
            java.util.concurrent.CompletableFuture<Object> done = new java.util.concurrent.CompletableFuture<>();
            Thread releaser = new Thread(() -> {
                Thread.currentThread().interrupt();
                try {
                    ReleaseOutcome outcome = lease.release();
                    done.complete(outcome + (Thread.currentThread().isInterrupted() ? "" : " (interrupt lost)"));
                } catch (RuntimeException | Error e) {
                    done.complete(e);
                }
            }, "interrupted-releaser");
            releaser.start();
            assertThat(done.get(30, java.util.concurrent.TimeUnit.SECONDS)).isEqualTo(ReleaseOutcome.RELEASED.toString());
            assertThat(client().tryAcquire(name, ttl(10_000))).as("the lock is free at once, not after its TTL").isPresent();
        }

        @Test
        @DisplayName("a release interrupted at a random moment during the call still frees the lock and says RELEASED")
        void releaseInterruptedDuringTheCall() throws Exception {
            // shutdownNow's interrupt comes at any moment, also while the client waits for the store's answer
            java.util.Random random = new java.util.Random();
            Turnstile holder = client();
            Turnstile other = client();
            for (int round = 0; round < 40; round++) {
                String name = unique("cut-release");
                Lease lease = held(holder.tryAcquire(name, ttl(60_000)));
                java.util.concurrent.CompletableFuture<Object> done = new java.util.concurrent.CompletableFuture<>();
                Thread releaser = new Thread(() -> {
                    try {
                        ReleaseOutcome outcome = lease.release();
                        done.complete(outcome + (Thread.currentThread().isInterrupted() ? "" : " (interrupt lost)"));
                    } catch (RuntimeException | Error e) {
                        done.complete(e);
                    }
                }, "releaser-" + round);
                releaser.start();
                java.util.concurrent.locks.LockSupport.parkNanos(random.nextInt(2_000_000));
                releaser.interrupt();
                Object outcome = done.get(30, java.util.concurrent.TimeUnit.SECONDS);
                if (!outcome.equals(ReleaseOutcome.RELEASED.toString())) {
                    // interrupted before the release began its call: the interrupt is kept all the same
                    assertThat(outcome).as("round %d", round).isEqualTo(ReleaseOutcome.RELEASED + " (interrupt lost)");
                    assertThat(releaser.isInterrupted() || !releaser.isAlive()).isTrue();
                }
                Optional<Lease> next = other.tryAcquire(name, ttl(10_000));
                assertThat(next).as("round %d: the lock is free at once", round).isPresent();
                next.get().release();
            }
        }

        @Test
        @DisplayName("a force release frees the lock and the holder's release then says NOT_OWNER")
        void forceRelease() {
            String name = unique("force");
            Lease lease = held(client().tryAcquire(name, ttl(10_000)));
            assertThat(client().forceRelease(name)).isTrue();
            assertThat(client().forceRelease(name)).as("nothing left to free").isFalse();
            assertThat(lease.release()).isEqualTo(ReleaseOutcome.NOT_OWNER);
        }
    }

    @Nested
    @DisplayName("hand-over (stores that can)")
    class HandingOver {


        @Test
        @DisplayName("a hand-over ends the holder's lease and grants the next one a greater fence; a stale token hands nothing")
        void handOverGrantsAGreaterFence() {
            LockStore raw = store();
            HandsOver handing = declared(raw, HandsOver.class);
            String name = unique("hand");
            long first = raw.tryAcquire(new AcquireRequest(name, "me", "t1", ms(30_000))).orElseThrow().fence();
            dev.turnstile.spi.HandOver handed = handing.handOver(name, "t1", new AcquireRequest(name, "me", "t2", ms(30_000), true));
            assertThat(handed.released()).isTrue();
            assertThat(handed.grant()).hasValueSatisfying(g -> assertThat(g.fence()).isGreaterThan(first));
            assertThat(handing.handOver(name, "t1", new AcquireRequest(name, "me", "t3", ms(30_000), true)).released()).isFalse();
            assertThat(raw.extend(name, "t1", ms(30_000))).isFalse();
            assertThat(raw.extend(name, "t2", ms(30_000))).isTrue();
            assertThat(client().tryAcquire(name, ttl(10_000))).as("held by the next holder").isEmpty();
            assertThat(raw.release(name, "t2", Duration.ZERO)).isTrue();
        }

        @Test
        @DisplayName("a hand-over only releases when another client has waited for the lock")
        void anotherClientsWaiterComesFirst() {
            LockStore raw = store();
            HandsOver handing = declared(raw, HandsOver.class);
            String name = unique("fair");
            assertThat(raw.tryAcquire(new AcquireRequest(name, "me", "t1", ms(30_000)))).isPresent();
            LockStore other = store();
            assertThat(other.tryAcquire(new AcquireRequest(name, "you", "u1", ms(30_000), true))).isEmpty();
            dev.turnstile.spi.HandOver done = handing.handOver(name, "t1", new AcquireRequest(name, "me", "t2", ms(30_000), true));
            assertThat(done).isEqualTo(dev.turnstile.spi.HandOver.releasedOnly());
            assertThat(other.tryAcquire(new AcquireRequest(name, "you", "u2", ms(30_000), true))).isPresent();
        }
    }

    @Nested
    @DisplayName("the store's clock (stores that read it)")
    class StoreClockReading {

        @Test
        @DisplayName("the store's clock reads close to this machine's, and a lease it grants starts by it")
        void readsTheStoresClock() {
            LockStore raw = store();
            dev.turnstile.spi.StoreClock clock = declared(raw, dev.turnstile.spi.StoreClock.class);
            java.time.Instant before = java.time.Instant.now();
            java.time.Instant storeNow = clock.now();
            java.time.Instant after = java.time.Instant.now();
            // the suite's servers keep time with this machine (the same host, or NTP): to within a few seconds
            assertThat(storeNow).isBetween(before.minusSeconds(5), after.plusSeconds(5));
            String name = unique("clock");
            Lease lease = held(client().tryAcquire(name, ttl(10_000)));
            java.time.Instant later = clock.now();
            assertThat(later).isAfterOrEqualTo(storeNow);
            LockInfo info = client().heldLocks().stream().filter(i -> i.name().equals(name)).findFirst().orElseThrow();
            assertThat(info.acquiredAt()).as("acquired by a clock within seconds of the store's").isBefore(later.plusSeconds(5));
            lease.release();
        }
    }

    @Nested
    @DisplayName("release notices (stores that notify releases)")
    class ReleaseNotices {

        @Test
        @DisplayName("a release by another client is told within a second to a store with a waiter in line for the name")
        void aReleaseIsTold() throws Exception {
            LockStore raw = store();
            NotifiesReleases notifying = declared(raw, NotifiesReleases.class);
            String name = unique("notice");
            java.util.concurrent.BlockingQueue<String> told = new java.util.concurrent.LinkedBlockingQueue<>();
            dev.turnstile.spi.ReleaseWatch watch = notifying.watchReleases(name, token -> told.add(String.valueOf(token)));
            LockStore other = store();
            assertThat(other.tryAcquire(new AcquireRequest(name, "other", "o1", ms(30_000)))).isPresent();
            // a waiting try, as a waiter makes after subscribing: a store may tell only the waiters it has in line
            assertThat(raw.tryAcquire(new AcquireRequest(name, "me", "w1", ms(30_000), true))).isEmpty();
            sleep(300); // a subscription or a watch may be set off the caller's thread
            told.clear(); // notices may be spurious
            long released = System.nanoTime();
            assertThat(other.release(name, "o1", Duration.ZERO)).isTrue();
            assertThat(told.poll(5, TimeUnit.SECONDS)).as("a notice of the release").isNotNull();
            assertThat(Duration.ofNanos(System.nanoTime() - released)).isLessThan(ms(1_000));
            watch.close();
            watch.close(); // twice is harmless
        }
    }

    @Nested
    @DisplayName("lease watching (stores that watch leases)")
    class LeaseWatching {

        @Test
        @DisplayName("a forced release by another client is told to the watcher of the lease within a second")
        void aForcedReleaseIsTold() throws Exception {
            LockStore raw = store();
            WatchesLeases watching = declared(raw, WatchesLeases.class);
            String name = unique("watched");
            assertThat(raw.tryAcquire(new AcquireRequest(name, "me", "t1", ms(30_000)))).isPresent();
            CompletableFuture<String> ended = new CompletableFuture<>();
            dev.turnstile.spi.ReleaseWatch watch = watching.watchLease(name, "t1", new dev.turnstile.spi.LeaseProof() {
                @Override public void provenUntil(long nanoTime) { }
                @Override public void lost(String reason) { ended.complete(reason); }
                @Override public void ended(String reason) { ended.complete(reason); }
            });
            LockStore other = store();
            sleep(1_000); // the watch may be set off the caller's thread, after a delay (ZooKeeper 200 ms, PostgreSQL's LISTEN)
            assertThat(ended).as("nothing happened to the lease yet").isNotDone();
            long forced = System.nanoTime();
            assertThat(other.forceRelease(name)).isTrue();
            assertThat(ended.get(5, TimeUnit.SECONDS)).isNotBlank();
            assertThat(Duration.ofNanos(System.nanoTime() - forced)).isLessThan(ms(1_000));
            watch.close();
            watch.close(); // twice is harmless
        }
    }

    @Nested
    @DisplayName("session-bound leases (stores whose leases end with a session)")
    class SessionBound {

        @Test
        @DisplayName("the session bound is positive, and a lease's time left never exceeds it, whatever its TTL")
        void aLeaseIsBoundedByTheSession() {
            LockStore raw = store();
            SessionBoundLeases sessions = declared(raw, SessionBoundLeases.class);
            Turnstile t = Turnstile.builder(raw).build();
            toClose.add(0, t);
            Lease lease = held(t.tryAcquire(unique("session"), LockOptions.lockAtMostFor(Duration.ofHours(1))));
            Duration bound = sessions.sessionBound(); // read once connected: the negotiated session, not the configured one
            assertThat(bound).isPositive();
            assertThat(lease.timeLeft()).isPositive().isLessThanOrEqualTo(bound);
            lease.release();
        }
    }

    @Nested
    @DisplayName("waiting line (stores that keep waiters' places)")
    class WaitingLinePlaces {

        @Test
        @DisplayName("a wait that ended leaves no place in line: the next waiter takes a released lock on its first try")
        void anEndedWaitHoldsNoOneUp() {
            LockStore raw = store();
            KeepsWaitingLine line = declared(raw, KeepsWaitingLine.class);
            String name = unique("line");
            LockStore holder = store();
            assertThat(holder.tryAcquire(new AcquireRequest(name, "holder", "h1", ms(30_000)))).isPresent();
            assertThat(raw.tryAcquire(new AcquireRequest(name, "gone", "w1", ms(30_000), true))).as("in line").isEmpty();
            line.stopWaiting(name, "w1");
            line.stopWaiting(name, "w1"); // twice is harmless
            assertThat(holder.release(name, "h1", Duration.ZERO)).isTrue();
            assertThat(store().tryAcquire(new AcquireRequest(name, "next", "n1", ms(30_000), true)))
                    .as("the ended wait's place is gone, so nothing is ahead of this waiter").isPresent();
        }
    }

    @Nested
    @DisplayName("pruning unused names (stores that can)")
    class Pruning {

        @Test
        @DisplayName("a pruned name used again gets a fence above every fence it had")
        void aPrunedNameKeepsItsFencesRising() {
            Turnstile t = client();
            declared(t.store(), PrunesNames.class);
            String name = unique("prune");
            long last = 0;
            for (int i = 0; i < 3; i++) {
                Lease lease = held(t.tryAcquire(name, ttl(10_000)));
                assertThat(lease.fence()).isGreaterThan(last);
                last = lease.fence();
                lease.release();
            }
            sleep(300); // past unusedFor (and, on Redis, past the fence) by the store's clock
            assertThat(t.pruneUnused(ms(50))).isPositive();
            Lease again = held(client().tryAcquire(name, ttl(10_000)));
            if (fencesAreSafe()) {
                assertThat(again.fence()).isGreaterThan(last);
            }
            again.release();
        }

        @Test
        @DisplayName("a held lock, or one kept by lockAtLeastFor, is never pruned, however short the period")
        void aHeldLockIsNeverPruned() {
            Turnstile t = client();
            declared(t.store(), PrunesNames.class);
            String name = unique("prune-held");
            String kept = unique("prune-kept");
            Lease lease = held(t.tryAcquire(name, ttl(10_000)));
            Lease atLeast = held(t.tryAcquire(kept, LockOptions.builder().lockAtMostFor(ms(10_000)).lockAtLeastFor(ms(10_000)).build()));
            atLeast.release();
            sleep(300);
            t.pruneUnused(Duration.ZERO);
            assertThat(lease.isHeld()).isTrue();
            assertThat(client().tryAcquire(name, ttl(10_000))).isEmpty();
            assertThat(client().tryAcquire(kept, ttl(10_000))).isEmpty();
            assertThat(client().heldLocks()).extracting(LockInfo::name).contains(name, kept);
            lease.extend(ms(10_000));
            long fence = lease.fence();
            lease.release();
            Lease next = held(client().tryAcquire(name, ttl(10_000)));
            assertThat(next.fence()).isGreaterThan(fence);
            next.release();
        }

        /**
         * Four threads take and give back three names while a fifth prunes them with period zero
         * as fast as it can: every name's fences, written down by each holder while it holds the
         * lock (so in the order the store granted them), must rise strictly (on a store whose fences
         * are safe: Redlock's are not, with or without pruning, and this test caught one going back).
         */
        @Test
        @DisplayName("pruning beside running acquires never lets a fence repeat or go back")
        void pruningBesideAcquiresKeepsFencesRising() throws Exception {
            Turnstile t = client();
            declared(t.store(), PrunesNames.class);
            List<String> names = List.of(unique("prune-race-a"), unique("prune-race-b"), unique("prune-race-c"));
            List<List<Long>> fences = List.of(Collections.synchronizedList(new ArrayList<>()),
                    Collections.synchronizedList(new ArrayList<>()), Collections.synchronizedList(new ArrayList<>()));
            java.util.concurrent.atomic.AtomicLong pruned = new java.util.concurrent.atomic.AtomicLong();
            java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(5);
            // every client opened, and used once, before any runs: H2 2.3's TCP server can fail a session that
            // opens while others work (a NullPointerException reading INFORMATION_SCHEMA.SESSIONS)
            List<Turnstile> workers = new ArrayList<>();
            for (int w = 0; w < 4; w++) {
                Turnstile worker = client();
                worker.tryAcquire(unique("prune-warm"), ttl(10_000)).ifPresent(Lease::release);
                workers.add(worker);
            }
            Turnstile pruner = client();
            pruner.pruneUnused(Duration.ofDays(1));
            sleep(300);
            long end = System.nanoTime() + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(1500);
            try {
                List<java.util.concurrent.Future<?>> work = new ArrayList<>();
                for (int w = 0; w < 4; w++) {
                    Turnstile worker = workers.get(w);
                    int seed = w;
                    work.add(pool.submit(() -> {
                        for (int i = seed; System.nanoTime() < end; i++) {
                            int n = i % names.size();
                            Optional<Lease> lease = worker.tryAcquire(names.get(n), ttl(10_000));
                            if (lease.isPresent()) {
                                fences.get(n).add(lease.get().fence());
                                lease.get().release();
                            }
                        }
                        return null;
                    }));
                }
                work.add(pool.submit(() -> {
                    while (System.nanoTime() < end) {
                        pruned.addAndGet(pruner.pruneUnused(Duration.ZERO));
                    }
                    return null;
                }));
                for (java.util.concurrent.Future<?> f : work) {
                    f.get(30, java.util.concurrent.TimeUnit.SECONDS);
                }
            } finally {
                pool.shutdownNow();
            }
            for (int n = 0; n < names.size(); n++) {
                String name = names.get(n);
                List<Long> seen = fences.get(n);
                assertThat(seen).as("fences of " + name).isNotEmpty();
                for (int i = 1; i < seen.size() && fencesAreSafe(); i++) {
                    assertThat(seen.get(i)).as("fence %d of %s, after %d (pruned %d names meanwhile; around it: %s)", i, name,
                            seen.get(i - 1), pruned.get(), seen.subList(Math.max(0, i - 4), Math.min(seen.size(), i + 4)))
                            .isGreaterThan(seen.get(i - 1));
                }
            }
            assertThat(pruned.get()).as("names pruned while the workers ran").isPositive();
        }

        @Test
        @DisplayName("a period that is negative, too long or missing is refused with what to give")
        @SuppressWarnings("NullAway") // null is the bad input under test
        void badPeriodsAreRefused() {
            Turnstile t = client();
            declared(t.store(), PrunesNames.class);
            for (Duration bad : new Duration[] {Duration.ofMillis(-1), Duration.ofDays(400)}) {
                assertThatThrownBy(() -> t.pruneUnused(bad)).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("unusedFor is").hasMessageContaining("Duration.ofDays(7)");
            }
            assertThatThrownBy(() -> t.pruneUnused(null)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("unusedFor is null");
        }
    }

    @Nested
    @DisplayName("fencing")
    class Fencing {

        @Test
        @DisplayName("fences strictly increase across release, expiry, force release and new clients")
        void fencesIncrease() {
            String name = unique("fence");
            List<Long> fences = new ArrayList<>();
            Lease a = held(client().tryAcquire(name, ttl(10_000)));
            fences.add(a.fence());
            a.release();
            Lease b = held(client().tryAcquire(name, ttl(200)));
            fences.add(b.fence());
            Turnstile other = client();
            Lease c = await().atMost(ms(5_000)).until(() -> other.tryAcquire(name, ttl(10_000)).orElse(null), l -> l != null);
            fences.add(c.fence());
            client().forceRelease(name);
            Lease d = held(client().tryAcquire(name, ttl(10_000)));
            fences.add(d.fence());
            d.release();
            assertThat(fences.get(0)).isPositive();
            if (fencesAreSafe()) {
                assertThat(fences).isSorted().doesNotHaveDuplicates();
            }
        }

        @Test
        @DisplayName("the store lists the holder with its fence, owner and times")
        void listing() {
            String name = unique("list");
            Turnstile t = client();
            Lease lease = held(t.tryAcquire(name, ttl(10_000)));
            LockInfo info = client().heldLocks().stream().filter(i -> i.name().equals(name)).findFirst().orElseThrow();
            assertThat(info.fence()).isEqualTo(lease.fence());
            assertThat(info.owner()).isEqualTo(t.owner());
            assertThat(info.expiresAt()).isAfter(info.acquiredAt());
            lease.release();
            assertThat(client().heldLocks()).extracting(LockInfo::name).doesNotContain(name);
        }
    }

    @Nested
    @DisplayName("lockAtLeastFor")
    class AtLeastFor {

        @Test
        @DisplayName("an early release only shortens the lease to lockAtLeastFor")
        void earlyReleaseShortens() {
            String name = unique("atleast");
            LockOptions options = LockOptions.builder().lockAtMostFor(ms(10_000)).lockAtLeastFor(ms(800)).build();
            long start = System.nanoTime();
            Lease lease = held(client().tryAcquire(name, options));
            assertThat(lease.release()).isEqualTo(ReleaseOutcome.SHORTENED_TO_AT_LEAST);
            Turnstile other = client();
            assertThat(other.tryAcquire(name, ttl(1_000))).as("still held until lockAtLeastFor").isEmpty();
            await().atMost(ms(5_000)).pollInterval(Duration.ofMillis(20)).until(() -> other.tryAcquire(name, ttl(1_000)).isPresent());
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(ms(700));
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(ms(5_000));
        }

        @Test
        @DisplayName("a release after lockAtLeastFor frees the lock at once")
        void lateReleaseFrees() {
            String name = unique("atleast-late");
            LockOptions options = LockOptions.builder().lockAtMostFor(ms(10_000)).lockAtLeastFor(ms(200)).build();
            Lease lease = held(client().tryAcquire(name, options));
            sleep(400);
            assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
            assertThat(client().tryAcquire(name, ttl(1_000))).isPresent();
        }
    }

    @Nested
    @DisplayName("reentrancy")
    class Reentrancy {

        @Test
        @DisplayName("the same thread re-enters with the same fence; only the outermost release frees")
        void sameThread() {
            String name = unique("reent");
            Turnstile t = client();
            LockOptions options = LockOptions.builder().lockAtMostFor(ms(10_000)).reentrant().build();
            Lease outer = held(t.tryAcquire(name, options));
            Lease inner = held(t.tryAcquire(name, options));
            assertThat(inner.fence()).isEqualTo(outer.fence());
            assertThat(inner.token()).isEqualTo(outer.token());
            assertThat(inner.release()).isEqualTo(ReleaseOutcome.STILL_HELD);
            assertThat(inner.release()).as("idempotent").isEqualTo(ReleaseOutcome.STILL_HELD);
            assertThat(client().tryAcquire(name, ttl(1_000))).isEmpty();
            assertThat(outer.release()).isEqualTo(ReleaseOutcome.RELEASED);
            assertThat(client().tryAcquire(name, ttl(1_000))).isPresent();
        }

        @Test
        @DisplayName("another thread is refused; an explicit context re-enters across threads")
        void contexts() throws Exception {
            String name = unique("ctx");
            Turnstile t = client();
            LockOptions perThread = LockOptions.builder().lockAtMostFor(ms(10_000)).reentrant().build();
            Lease outer = held(t.tryAcquire(name, perThread));
            CompletableFuture<Optional<Lease>> fromOtherThread = CompletableFuture.supplyAsync(() -> t.tryAcquire(name, perThread));
            assertThat(fromOtherThread.get(10, TimeUnit.SECONDS)).isEmpty();
            outer.release();

            Object job = "job-42";
            LockOptions perJob = LockOptions.builder().lockAtMostFor(ms(10_000)).reentrantFor(job).build();
            Lease a = held(t.tryAcquire(name, perJob));
            Lease b = CompletableFuture.supplyAsync(() -> t.tryAcquire(name, perJob)).get(10, TimeUnit.SECONDS).orElseThrow();
            assertThat(b.fence()).isEqualTo(a.fence());
            b.release();
            a.release();
            assertThat(client().tryAcquire(name, ttl(1_000))).isPresent();
        }
    }

    @Nested
    @DisplayName("waiting")
    class Waiting {

        @Test
        @DisplayName("a wait on a held lock gives up after its timeout")
        void waitTimesOut() throws Exception {
            String name = unique("wait-timeout");
            held(client().tryAcquire(name, ttl(10_000)));
            long start = System.nanoTime();
            assertThat(client().acquire(name, ttl(1_000), ms(500))).isEmpty();
            Duration waited = Duration.ofNanos(System.nanoTime() - start);
            assertThat(waited).isGreaterThanOrEqualTo(ms(500)).isLessThan(ms(5_000));
        }

        @Test
        @DisplayName("a waiter takes the lock soon after another client releases it")
        void waiterWakesOnRelease() throws Exception {
            String name = unique("wait-release");
            Lease holder = held(client().tryAcquire(name, ttl(10_000)));
            Turnstile waiter = client();
            CompletableFuture<Optional<Lease>> waiting = CompletableFuture.supplyAsync(() -> {
                try {
                    return waiter.acquire(name, ttl(10_000), ms(20_000));
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            sleep(300);
            assertThat(waiting).isNotDone();
            long released = System.nanoTime();
            holder.release();
            Lease got = waiting.get(10, TimeUnit.SECONDS).orElseThrow();
            assertThat(Duration.ofNanos(System.nanoTime() - released)).isLessThan(ms(2_000));
            assertThat(got.fence()).isGreaterThan(holder.fence());
        }

        @Test
        @DisplayName("a waiter takes the lock when the holder's lease expires")
        void waiterWakesOnExpiry() throws Exception {
            String name = unique("wait-expiry");
            held(client().tryAcquire(name, ttl(500)));
            assertThat(client().acquire(name, ttl(10_000), ms(10_000))).isPresent();
        }

        @Test
        @DisplayName("an interrupted waiter stops waiting with InterruptedException and holds nothing")
        void waiterInterrupted() throws Exception {
            String name = unique("wait-interrupt");
            Lease holder = held(client().tryAcquire(name, ttl(10_000)));
            Turnstile waiter = client();
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            CountDownLatch started = new CountDownLatch(1);
            Thread thread = new Thread(() -> {
                started.countDown();
                try {
                    waiter.acquire(name, ttl(10_000), ms(30_000));
                } catch (Throwable e) {
                    thrown.set(e);
                }
            });
            thread.start();
            started.await();
            sleep(200);
            thread.interrupt();
            thread.join(ms(5_000).toMillis());
            assertThat(thread.isAlive()).isFalse();
            assertThat(thrown.get()).isInstanceOf(InterruptedException.class);
            holder.release();
            assertThat(client().tryAcquire(name, ttl(1_000))).as("the interrupted waiter took nothing").isPresent();
        }
    }

    @Nested
    @DisplayName("keep-alive")
    class KeepAlive {

        @Test
        @DisplayName("a kept-alive lease outlives its TTL many times over")
        void keepsLease() {
            String name = unique("keep");
            LockOptions options = LockOptions.builder().lockAtMostFor(ms(400)).keepAlive(true).build();
            Lease lease = held(client().tryAcquire(name, options));
            Turnstile other = client();
            for (int i = 0; i < 6; i++) {
                sleep(250);
                assertThat(other.tryAcquire(name, ttl(1_000))).as("still held after %d ms", (i + 1) * 250).isEmpty();
            }
            assertThat(lease.isHeld()).isTrue();
            assertThat(lease.lost().toCompletableFuture()).isNotDone();
            assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
            assertThat(other.tryAcquire(name, ttl(1_000))).isPresent();
        }

        @Test
        @DisplayName("a kept-alive lease reports loss through lost() and onLost when it is taken over")
        void reportsTakeover() throws Exception {
            String name = unique("keep-lost");
            CompletableFuture<LeaseLoss> callback = new CompletableFuture<>();
            LockOptions options = LockOptions.builder().lockAtMostFor(ms(600)).keepAlive(true)
                    .onLost(callback::complete).build();
            Lease lease = held(client().tryAcquire(name, options));
            assertThat(client().forceRelease(name)).isTrue();
            Lease thief = held(client().tryAcquire(name, ttl(10_000)));
            LeaseLoss loss = lease.lost().toCompletableFuture().get(ms(3_000).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(loss.name()).isEqualTo(name);
            assertThat(loss.fence()).isEqualTo(lease.fence()).isLessThan(thief.fence());
            assertThat(callback.get(ms(3_000).toMillis(), TimeUnit.MILLISECONDS)).isEqualTo(loss);
            assertThat(lease.isHeld()).isFalse();
            assertThat(thief.isHeld()).isTrue();
        }

        @Test
        @DisplayName("a forced release reaches a kept-alive lease with onLost within a second where the store tells of "
                + "releases, else at its next renewal; its release then says NOT_OWNER")
        void forcedReleaseIsToldPromptlyWhereTheStoreCan() throws Exception {
            String name = unique("keep-forced");
            CompletableFuture<Long> lostAt = new CompletableFuture<>();
            // renewals every 2 s: a loss told sooner than that was told by the store
            LockOptions options = LockOptions.builder().lockAtMostFor(ms(6_000)).keepAlive(true)
                    .onLost(loss -> lostAt.complete(System.nanoTime())).build();
            Lease lease = held(client().tryAcquire(name, options));
            sleep(300); // the watch is set off the acquire's path
            long forced = System.nanoTime();
            assertThat(client().forceRelease(name)).isTrue();
            long told = lostAt.get(ms(5_000).toMillis(), TimeUnit.MILLISECONDS);
            Duration after = Duration.ofNanos(told - forced);
            if (toldOfForcedRelease()) {
                assertThat(after).as("told by the store").isLessThan(ms(1_000));
            } else {
                assertThat(after).as("found at the next renewal").isLessThan(ms(2_500));
            }
            assertThat(lease.isHeld()).isFalse();
            if (toldOfForcedRelease()) {
                assertThat(lease.release()).as("ended by the store before its deadline").isEqualTo(ReleaseOutcome.NOT_OWNER);
            } else {
                lease.release();
            }
        }
    }

    @Nested
    @DisplayName("extend to a shorter TTL")
    class ShorterExtend {

        @Test
        @DisplayName("with keep-alive the lease renews at the new TTL's pace and stays held")
        void keepAliveFollowsTheShorterTtl() {
            String name = unique("shorter-keep");
            // Renewals every 800 ms (a third of 2.4 s) would let the 600 ms lease lapse; every 200 ms
            // (a third of the new TTL) keep it, with 400 ms to spare for a slow renewal on a busy machine.
            LockOptions options = LockOptions.builder().lockAtMostFor(ms(2_400)).keepAlive(true).build();
            Lease lease = held(client().tryAcquire(name, options));
            lease.extend(ms(600));
            Turnstile other = client();
            long start = System.nanoTime();
            long end = start + ms(1_800).toNanos();
            while (System.nanoTime() < end) {
                assertThat(other.tryAcquire(name, ttl(1_000))).as("another client took the lock %d ms after the extend",
                        (System.nanoTime() - start) / 1_000_000).isEmpty();
                sleep(30);
            }
            assertThat(lease.isHeld()).isTrue();
            assertThat(lease.lost().toCompletableFuture()).isNotDone();
            assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
        }

        @Test
        @DisplayName("without keep-alive the loss is reported at the new deadline, before another client gets the lock")
        void lossIsReportedBeforeTheStoreFreesTheLock() {
            String name = unique("shorter-lost");
            AtomicLong lostAt = new AtomicLong();
            LockOptions options = LockOptions.builder().lockAtMostFor(ms(900)).onLost(loss -> lostAt.set(System.nanoTime())).build();
            Lease lease = held(client().tryAcquire(name, options));
            long extended = System.nanoTime();
            lease.extend(ms(300));
            Turnstile other = client();
            await().atMost(ms(5_000)).pollInterval(Duration.ofMillis(5)).until(() -> other.tryAcquire(name, ttl(10_000)).isPresent());
            long taken = System.nanoTime();
            assertThat(lostAt.get()).as("onLost had fired when another client got the lock").isNotZero();
            assertThat(lostAt.get() - taken).as("onLost before the other client's grant").isNegative();
            assertThat(Duration.ofNanos(lostAt.get() - extended)).as("at the new deadline, not the old one").isLessThan(ms(300));
            assertThat(lease.isHeld()).isFalse();
        }
    }

    @Nested
    @DisplayName("scheduled jobs and leadership")
    class Scheduling extends SchedulingContract {
        @Override
        protected Turnstile client() {
            return LockStoreContract.this.client();
        }

        @Override
        protected Turnstile unreachableClient() {
            LockStore dead = unreachableStore();
            toClose.add(dead);
            Turnstile t = Turnstile.builder(dead).build();
            toClose.add(0, t);
            return t;
        }

        @Override
        protected boolean fencesAreSafe() {
            return LockStoreContract.this.fencesAreSafe();
        }

        @Override
        protected boolean simultaneousTriesCanAllFail() {
            return LockStoreContract.this.simultaneousTriesCanAllFail();
        }
    }

    @Nested
    @DisplayName("unreachable store")
    class Unavailable {

        @Test
        @DisplayName("every operation raises StoreUnavailableException, not busy")
        void distinctError() {
            LockStore dead = unreachableStore();
            toClose.add(dead);
            Turnstile t = Turnstile.builder(dead).build();
            toClose.add(0, t);
            String name = unique("dead");
            assertThatThrownBy(() -> t.tryAcquire(name, ttl(1_000))).isInstanceOf(StoreUnavailableException.class);
            assertThatThrownBy(() -> t.acquire(name, ttl(1_000), ms(100))).isInstanceOf(StoreUnavailableException.class);
            assertThatThrownBy(t::heldLocks).isInstanceOf(StoreUnavailableException.class);
            assertThatThrownBy(() -> dead.extend(name, "t", ms(1_000))).isInstanceOf(StoreUnavailableException.class);
            assertThatThrownBy(() -> dead.release(name, "t", Duration.ZERO)).isInstanceOf(StoreUnavailableException.class);
        }
    }

    @Nested
    @DisplayName("closed store")
    class ClosedStore {

        @Test
        @DisplayName("a client over a closed store says it is closed (IllegalStateException), not that it is unreachable")
        void saysItIsClosed() throws Exception {
            LockStore closedFirst = newStore();
            closedFirst.close();
            assertThat(closedFirst.isClosed()).isTrue();
            assertThatThrownBy(() -> Turnstile.builder(closedFirst).build()).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("is closed");
            closedFirst.close(); // twice is harmless

            LockStore raw = store();
            Turnstile t = Turnstile.builder(raw).build();
            toClose.add(0, t);
            String name = unique("closed");
            assertThat(raw.isClosed()).isFalse();
            raw.close();
            assertThatThrownBy(() -> t.tryAcquire(name, ttl(1_000))).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("is closed");
            assertThatThrownBy(() -> t.acquire(name, ttl(1_000), ms(100))).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("is closed");
            assertThatThrownBy(t::heldLocks).isInstanceOf(IllegalStateException.class).hasMessageContaining("is closed");
            assertThatThrownBy(() -> t.forceRelease(name)).isInstanceOf(IllegalStateException.class).hasMessageContaining("is closed");
        }
    }

    @Nested
    @DisplayName("bad input")
    class BadInput {

        @ParameterizedTest(name = "name [{0}]")
        @ValueSource(strings = {"", " lead", "trail ", "tab\there", "nul\u0000", "line\nbreak", "del\u007f", "lone\ud800"})
        @DisplayName("invalid names are rejected with a message and leave nothing behind")
        void invalidNames(String name) {
            Turnstile t = client();
            int before = t.heldLocks().size();
            assertThatThrownBy(() -> t.tryAcquire(name, ttl(1_000))).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("lock name");
            assertThatThrownBy(() -> t.acquire(name, ttl(1_000), ms(10))).isInstanceOf(IllegalArgumentException.class);
            assertThat(t.heldLocks()).hasSize(before);
        }

        @Test
        @DisplayName("null and over-long names are rejected")
        @SuppressWarnings("NullAway") // passes a null name on purpose, to see it rejected
        void nullAndLongNames() {
            Turnstile t = client();
            assertThatThrownBy(() -> t.tryAcquire(null, ttl(1_000))).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("null");
            assertThatThrownBy(() -> t.tryAcquire("x".repeat(256), ttl(1_000))).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("255");
            assertThat(t.tryAcquire(unique("y".repeat(240)), ttl(1_000))).as("a 249-character name works").isPresent();
        }

        @Test
        @DisplayName("the length limit counts Unicode code points: 255 astral characters fit the store, 256 do not")
        void lengthInCodePoints() {
            Turnstile t = client();
            String tag = UUID.randomUUID().toString().substring(0, 8);
            String rocket = "\ud83d\ude80"; // one code point, two UTF-16 units, four UTF-8 bytes
            String longest = tag + rocket.repeat(255 - tag.length());
            assertThat(longest.codePointCount(0, longest.length())).isEqualTo(255);
            Lease lease = held(t.tryAcquire(longest, ttl(10_000)));
            assertThat(lease.name()).isEqualTo(longest);
            assertThat(t.heldLocks()).extracting(LockInfo::name).contains(longest);
            assertThat(client().tryAcquire(longest, ttl(1_000))).as("held: the whole name was stored").isEmpty();
            assertThat(client().tryAcquire(longest.substring(0, longest.length() - 2), ttl(1_000)))
                    .as("a prefix is another lock").isPresent();
            assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
            assertThatThrownBy(() -> t.tryAcquire(longest + rocket, ttl(1_000))).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("256 characters (Unicode code points)").hasMessageContaining("255");
        }

        @Test
        @DisplayName("names are compared in NFC: a precomposed and a decomposed accent are one lock; case and ß stay distinct")
        void namesAreNormalizedToNfc() {
            Turnstile t = client();
            String tag = UUID.randomUUID().toString().substring(0, 8);
            String composed = "caf\u00e9-" + tag;
            String decomposed = "cafe\u0301-" + tag;
            Lease lease = held(t.tryAcquire(decomposed, ttl(10_000)));
            assertThat(lease.name()).as("the store sees the NFC form").isEqualTo(composed);
            assertThat(client().tryAcquire(composed, ttl(1_000))).as("same text, other form: busy").isEmpty();
            assertThat(t.heldLocks()).extracting(LockInfo::name).contains(composed).doesNotContain(decomposed);
            assertThat(client().forceRelease(decomposed)).as("force-release finds it by either form").isTrue();
            List<Lease> distinct = new ArrayList<>();
            for (String n : List.of("Stra\u00dfe-" + tag, "Strasse-" + tag, "STRASSE-" + tag, "\uff21-" + tag, "A-" + tag,
                    "\ufb01le-" + tag, "file-" + tag)) {
                distinct.add(held(t.tryAcquire(n, ttl(10_000))));
            }
            assertThat(distinct).extracting(Lease::fence).doesNotContainNull();
            distinct.forEach(Lease::release);
        }

        @Test
        @DisplayName("bad durations are rejected with the field named")
        void badDurations() throws Exception {
            assertThatThrownBy(() -> LockOptions.lockAtMostFor(Duration.ZERO)).hasMessageContaining("lockAtMostFor");
            assertThatThrownBy(() -> LockOptions.lockAtMostFor(Duration.ofSeconds(-1))).hasMessageContaining("positive");
            assertThatThrownBy(() -> LockOptions.lockAtMostFor(Duration.ofDays(400))).hasMessageContaining("limit");
            assertThatThrownBy(() -> LockOptions.builder().lockAtMostFor(Duration.ofSeconds(1))
                    .lockAtLeastFor(Duration.ofSeconds(2)).build()).hasMessageContaining("lockAtLeastFor")
                    .hasMessageContaining("longer than lockAtMostFor");
            Turnstile t = client();
            String name = unique("neg-wait");
            assertThatThrownBy(() -> t.acquire(name, ttl(1_000), Duration.ofMillis(-1)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxWait");
            assertThat(t.heldLocks()).extracting(LockInfo::name).doesNotContain(name);
        }

        @Test
        @DisplayName("names with quotes, wildcards, SQL and unicode are stored literally and stay distinct")
        void literalNames() {
            Turnstile t = client();
            String tag = UUID.randomUUID().toString().substring(0, 6);
            List<String> names = List.of("q'uote" + tag, "d\"q" + tag, "pct%" + tag, "pct_" + tag, "semi;DROP TABLE x;--" + tag,
                    "ünï©ødé-日本-" + tag, "emoji-\ud83d\ude80-" + tag, "Case" + tag, "case" + tag, "back\\slash" + tag,
                    "{braces}*?[glob]" + tag);
            List<Lease> leases = new ArrayList<>();
            for (String n : names) {
                leases.add(held(t.tryAcquire(n, ttl(10_000))));
            }
            assertThat(t.heldLocks()).extracting(LockInfo::name).containsAll(names);
            assertThat(client().tryAcquire("pct%" + tag, ttl(1_000))).isEmpty();
            assertThat(client().tryAcquire("pct" + tag, ttl(1_000))).as("no wildcard matching").isPresent();
            leases.forEach(Lease::release);
        }

        @Test
        @DisplayName("tokens are compared exactly: a prefix or another token neither takes nor frees the lock")
        void rawTokensAreCompared() {
            String name = unique("raw");
            LockStore raw = store();
            assertThat(raw.tryAcquire(new AcquireRequest(name, "me", "token-1", ms(10_000)))).isPresent();
            assertThat(raw.tryAcquire(new AcquireRequest(name, "me", "token-2", ms(10_000))))
                    .as("same owner, new token: still busy, acquire is not keyed by owner").isEmpty();
            assertThat(raw.release(name, "token-", Duration.ZERO)).as("prefix of the token").isFalse();
            assertThat(raw.release(name, "TOKEN-1", Duration.ZERO)).as("other case").isFalse();
            assertThat(raw.release(name, "token-1", Duration.ZERO)).isTrue();
        }
    }

    @Nested
    @Tag("release-after-loss") // -Dgroups=release-after-loss runs only these, on every store
    @DisplayName("release after a loss")
    class ReleaseAfterLoss {

        private ReleaseOutcome releasePromptly(Lease lease) {
            // A hang must fail the test, not the build: the release runs on a thread the test abandons.
            return assertTimeoutPreemptively(ms(5_000), () -> lease.release(),
                    "release() with lockAtLeastFor did not return: the store loops once the lease is gone");
        }

        @Test
        @DisplayName("release with lockAtLeastFor after the lease was taken over returns promptly, reports it not held, leaves the new holder alone")
        void atLeastForAfterTakeover() {
            String name = unique("atleast-takeover");
            Lease stale = held(client().tryAcquire(name, LockOptions.builder().lockAtMostFor(ms(300)).lockAtLeastFor(ms(200)).build()));
            Turnstile other = client();
            Lease fresh = await().atMost(ms(5_000)).pollInterval(Duration.ofMillis(20))
                    .until(() -> other.tryAcquire(name, ttl(10_000)).orElse(null), l -> l != null);
            long start = System.nanoTime();
            assertThat(releasePromptly(stale)).isEqualTo(ReleaseOutcome.ALREADY_EXPIRED);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("promptly").isLessThan(ms(2_000));
            assertThat(client().tryAcquire(name, ttl(10_000))).as("the new holder kept the lock").isEmpty();
            assertThat(fresh.isHeld()).isTrue();
            assertThat(fresh.release()).isEqualTo(ReleaseOutcome.RELEASED);
            assertThat(client().tryAcquire(name, ttl(10_000))).as("the stale release left no hold behind").isPresent();
        }

        @Test
        @DisplayName("release with lockAtLeastFor after a force-release returns promptly, reports it not held, holds nothing")
        void atLeastForAfterForceRelease() {
            String name = unique("atleast-forced");
            Lease lease = held(client().tryAcquire(name, LockOptions.builder().lockAtMostFor(ms(10_000)).lockAtLeastFor(ms(5_000)).build()));
            assertThat(client().forceRelease(name)).isTrue();
            assertThat(releasePromptly(lease)).isIn(ReleaseOutcome.NOT_OWNER, ReleaseOutcome.ALREADY_EXPIRED);
            assertThat(client().tryAcquire(name, ttl(10_000))).as("the lock is free: no hold was made for a lease not held").isPresent();
        }

        @Test
        @DisplayName("a locked schedule whose run overran and lost its lock (lockAtLeastFor, interruptOnLoss(false)) keeps ticking")
        void overrunningScheduleKeepsTicking() throws Exception {
            String name = unique("atleast-tick");
            Turnstile other = client();
            AtomicInteger runs = new AtomicInteger();
            CountDownLatch takenOver = new CountDownLatch(1);
            JobOptions options = JobOptions.builder().lockAtMostFor(ms(300)).lockAtLeastFor(ms(200)).interruptOnLoss(false).build();
            ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor();
            try {
                LockingScheduler scheduler = LockingScheduler.wrap(executor, JobRunner.builder(client()).build());
                ScheduledFuture<?> unused = scheduler.scheduleWithFixedDelay(name, options, () -> {
                    if (runs.incrementAndGet() == 1) {
                        // Overrun the TTL until another instance has taken the lock over.
                        Lease taker = await().atMost(ms(5_000)).pollInterval(Duration.ofMillis(20))
                                .until(() -> other.tryAcquire(name, ttl(200)).orElse(null), l -> l != null);
                        taker.release();
                        takenOver.countDown();
                    }
                }, 0, ms(20).toMillis(), TimeUnit.MILLISECONDS);
                assertThat(takenOver.await(ms(10_000).toMillis(), TimeUnit.MILLISECONDS)).as("the first run was taken over").isTrue();
                await().atMost(ms(5_000)).untilAsserted(() -> assertThat(runs.get()).as("later ticks ran").isGreaterThanOrEqualTo(3));
            } finally {
                executor.shutdownNow();
            }
        }
    }
}
