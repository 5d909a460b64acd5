package dev.turnstile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.turnstile.testing.InMemoryLockStore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@link Turnstile#lock}: a lease seen as a {@link Lock}, owned by the thread that locked it. */
class DistributedLockTest {
    private final InMemoryLockStore store = new InMemoryLockStore();
    private final Turnstile turnstile = Turnstile.builder(store).build();
    private final Turnstile other = Turnstile.builder(store).owner("other-process").build();
    private static final LockOptions TEN_SECONDS = LockOptions.lockAtMostFor(Duration.ofSeconds(10));

    @AfterEach
    void close() {
        turnstile.close();
        other.close();
    }

    @Test
    void lockAndUnlockTakeAndFreeALease() {
        DistributedLock lock = turnstile.lock("report", TEN_SECONDS);
        assertThat(lock.isLocked()).isFalse();
        lock.lock();
        try {
            assertThat(lock.isLocked()).isTrue();
            assertThat(lock.isHeldByCurrentThread()).isTrue();
            assertThat(other.tryAcquire("report", TEN_SECONDS)).as("another process waits").isEmpty();
            assertThat(lock.lease()).get().extracting(Lease::fence).isEqualTo(lock.fence());
        } finally {
            lock.unlock();
        }
        assertThat(lock.isHeldByCurrentThread()).isFalse();
        assertThat(lock.isLocked()).isFalse();
        assertThat(lock.lease()).isEmpty();
        assertThat(other.tryAcquire("report", TEN_SECONDS)).as("freed").isPresent();
    }

    @Test
    void theHoldingThreadMayLockAgainAndOnlyTheLastUnlockFrees() {
        DistributedLock lock = turnstile.lock("nested", TEN_SECONDS);
        lock.lock();
        long fence = lock.fence();
        assertThat(lock.tryLock()).isTrue();
        lock.lock();
        assertThat(lock.fence()).as("one lease for the whole hold").isEqualTo(fence);
        lock.unlock();
        lock.unlock();
        assertThat(other.tryAcquire("nested", TEN_SECONDS)).as("still held after two of three unlocks").isEmpty();
        lock.unlock();
        assertThat(other.tryAcquire("nested", TEN_SECONDS)).isPresent();
    }

    @Test
    void anotherThreadWaitsAndCannotUnlock() throws Exception {
        DistributedLock lock = turnstile.lock("shared", TEN_SECONDS);
        lock.lock();
        long first = lock.fence();
        CompletableFuture<Throwable> unlockElsewhere = CompletableFuture.supplyAsync(
                () -> org.assertj.core.api.Assertions.catchThrowable(lock::unlock));
        assertThat(unlockElsewhere.get(5, TimeUnit.SECONDS)).isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining("only the thread that locked it may unlock it");
        assertThat(CompletableFuture.supplyAsync(lock::tryLock).get(5, TimeUnit.SECONDS)).as("busy for another thread").isFalse();

        CountDownLatch locked = new CountDownLatch(1);
        CompletableFuture<Long> waiter = CompletableFuture.supplyAsync(() -> {
            lock.lock();
            try {
                locked.countDown();
                return lock.fence();
            } finally {
                lock.unlock();
            }
        });
        assertThat(locked.await(300, TimeUnit.MILLISECONDS)).as("waits while held").isFalse();
        lock.unlock();
        assertThat(waiter.get(5, TimeUnit.SECONDS)).as("a new lease, a greater fence").isGreaterThan(first);
    }

    @Test
    void tryLockWithATimeWaitsThatLongAndAZeroOrNegativeTimeOnce() throws Exception {
        Lease held = other.tryAcquire("timed", TEN_SECONDS).orElseThrow();
        DistributedLock lock = turnstile.lock("timed", TEN_SECONDS);
        long start = System.nanoTime();
        assertThat(lock.tryLock(200, TimeUnit.MILLISECONDS)).isFalse();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(190));
        assertThat(lock.tryLock(-5, TimeUnit.SECONDS)).isFalse();
        held.release();
        assertThat(lock.tryLock(0, TimeUnit.SECONDS)).isTrue();
        lock.unlock();
        assertThatThrownBy(() -> lock.tryLock(1, null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unit is null");
    }

    /** A tryLock of any length waits (until interrupted here): beyond acquire's 366 days, as good as forever. */
    @Test
    void aWaitOfCenturiesWaits() throws Exception {
        Lease held = other.tryAcquire("forever", TEN_SECONDS).orElseThrow();
        DistributedLock lock = turnstile.lock("forever", TEN_SECONDS);
        for (java.util.concurrent.Callable<Boolean> wait : List.<java.util.concurrent.Callable<Boolean>>of(
                () -> lock.tryLock(Long.MAX_VALUE, TimeUnit.NANOSECONDS),
                () -> lock.tryLock(Long.MAX_VALUE, TimeUnit.DAYS),
                () -> lock.tryLock(Duration.ofDays(365L * 1000), TEN_SECONDS.lockAtMostFor()))) {
            CompletableFuture<Throwable> outcome = new CompletableFuture<>();
            Thread t = new Thread(() -> outcome.complete(org.assertj.core.api.Assertions.catchThrowable(wait::call)));
            t.start();
            Thread.sleep(200);
            assertThat(outcome).as("still waiting").isNotDone();
            t.interrupt();
            assertThat(outcome.get(5, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);
        }
        held.release();
    }

    @Test
    void theTimeToLiveOfOneHoldCanBeGiven() throws Exception {
        DistributedLock lock = turnstile.lock("ttl", TEN_SECONDS);
        lock.lock(Duration.ofMillis(200));
        assertThat(lock.lease().orElseThrow().expiresAt()).isBefore(java.time.Instant.now().plusSeconds(2));
        Thread.sleep(400);
        assertThat(lock.isHeldByCurrentThread()).as("the lease ran out").isFalse();
        Lease theirs = other.tryAcquire("ttl", TEN_SECONDS).orElseThrow();
        assertThat(lock.tryLock(Duration.ofMillis(100), Duration.ofSeconds(5))).as("a lost hold is not re-entered").isFalse();
        assertThatThrownBy(lock::unlock).isInstanceOf(LeaseLostException.class).hasMessageContaining("is lost");
        theirs.release();
        lock.lock(Duration.ofSeconds(5));
        lock.lock(Duration.ofMillis(50));
        assertThat(lock.lease().orElseThrow().expiresAt()).as("a re-entry keeps the lease's time")
                .isAfter(java.time.Instant.now().plusSeconds(3));
        lock.unlock();
        lock.unlock();
        assertThatThrownBy(() -> lock.lock(null)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lockAtMostFor is null");
        assertThatThrownBy(() -> lock.tryLock(null, Duration.ofSeconds(1))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxWait is null");
        assertThatThrownBy(() -> lock.lock(Duration.ofMillis(1))).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void lockInterruptiblyStopsWhenInterruptedAndLockWaitsOnKeepingTheInterrupt() throws Exception {
        Lease held = other.tryAcquire("interrupts", TEN_SECONDS).orElseThrow();
        DistributedLock lock = turnstile.lock("interrupts", TEN_SECONDS);
        CompletableFuture<Throwable> interruptible = new CompletableFuture<>();
        Thread t = new Thread(() -> interruptible.complete(org.assertj.core.api.Assertions.catchThrowable(lock::lockInterruptibly)));
        t.start();
        Thread.sleep(100);
        t.interrupt();
        assertThat(interruptible.get(5, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);

        AtomicBoolean interruptKept = new AtomicBoolean();
        CountDownLatch gotIt = new CountDownLatch(1);
        Thread u = new Thread(() -> {
            lock.lock(); // not interruptible
            interruptKept.set(Thread.currentThread().isInterrupted());
            lock.unlock();
            gotIt.countDown();
        });
        u.start();
        Thread.sleep(100);
        u.interrupt();
        Thread.sleep(100);
        assertThat(gotIt.getCount()).as("still waiting after the interrupt").isEqualTo(1);
        held.release();
        assertThat(gotIt.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(interruptKept).as("the interrupt is kept for the caller").isTrue();
    }

    @Test
    void unlockingALostLeaseSaysSoAndForgetsTheHold() {
        DistributedLock lock = turnstile.lock("lost", TEN_SECONDS);
        lock.lock();
        long fence = lock.fence();
        assertThat(store.forceRelease("lost")).isTrue();
        assertThatThrownBy(lock::unlock).isInstanceOf(LeaseLostException.class)
                .hasMessageContaining("fence " + fence).hasMessageContaining("force-released or taken over");
        assertThatThrownBy(lock::fence).isInstanceOf(IllegalMonitorStateException.class);
        assertThat(lock.tryLock()).as("free to lock again").isTrue();
        lock.unlock();
    }

    /**
     * The store ends a kept-alive hold (force-release) while another thread waits on the same lock
     * object: the waiter gets the lock, and the first holder still hears of its loss (its onLost,
     * and its unlock), because nothing it does touches the first holder's lease.
     */
    @Test
    void aWaiterLetInAfterAForcedReleaseLeavesTheFirstHoldersLossToBeReported() throws Exception {
        CompletableFuture<LeaseLoss> firstLost = new CompletableFuture<>();
        LockOptions kept = LockOptions.builder().lockAtMostFor(Duration.ofSeconds(1)).keepAlive(true).onLost(firstLost::complete).build();
        DistributedLock lock = turnstile.lock("forced", kept);
        lock.lock();
        CompletableFuture<Long> second = new CompletableFuture<>();
        Thread waiter = new Thread(() -> {
            lock.lock();
            try {
                second.complete(lock.fence());
            } finally {
                lock.unlock();
            }
        });
        waiter.start();
        Thread.sleep(100);
        long first = lock.fence();
        assertThat(store.forceRelease("forced")).isTrue();
        assertThat(second.get(5, TimeUnit.SECONDS)).isGreaterThan(first);
        assertThat(firstLost.get(5, TimeUnit.SECONDS).fence()).as("the first holder is told").isEqualTo(first);
        assertThatThrownBy(lock::unlock).isInstanceOf(LeaseLostException.class);
        waiter.join(5_000);
    }

    /** A nested lock after the outer lease was lost takes a new lease; the outermost unlock still reports the loss. */
    @Test
    void aLossUnderANestedLockIsReportedByTheOutermostUnlock() throws Exception {
        DistributedLock lock = turnstile.lock("nested-loss", TEN_SECONDS);
        lock.lock(Duration.ofMillis(100));
        Thread.sleep(250);
        other.tryAcquire("nested-loss", TEN_SECONDS).orElseThrow().release();
        lock.lock(); // the outer lease is gone: a new one
        assertThat(lock.isHeldByCurrentThread()).isTrue();
        lock.unlock(); // frees the new lease
        assertThat(other.tryAcquire("nested-loss", TEN_SECONDS)).as("the new lease is freed by its own unlock").isPresent()
                .get().extracting(Lease::release).isEqualTo(ReleaseOutcome.RELEASED);
        assertThatThrownBy(lock::unlock).isInstanceOf(LeaseLostException.class).hasMessageContaining("(fence 1) is lost");
        assertThatThrownBy(lock::unlock).as("every lock has had its unlock").isInstanceOf(IllegalMonitorStateException.class);
    }

    /**
     * Spring Integration's leader loop: a leader whose lease was lost tries again (false while
     * another holds), later gets a new lease (true), and unlocks once when it stops: the lock is free.
     */
    @Test
    void aHolderThatLostItsLeaseAndTookANewOneFreesItWithOneUnlock() throws Exception {
        LockOptions kept = LockOptions.builder().lockAtMostFor(Duration.ofSeconds(1)).keepAlive(true).build();
        DistributedLock lock = turnstile.lock("leader", kept);
        assertThat(lock.tryLock()).isTrue();
        assertThat(store.forceRelease("leader")).isTrue();
        Lease theirs = other.tryAcquire("leader", TEN_SECONDS).orElseThrow();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (lock.isHeldByCurrentThread() && System.nanoTime() < until) {
            Thread.sleep(20); // until the keep-alive finds the lease gone (a re-entry trusts the lease's own view)
        }
        assertThat(lock.isHeldByCurrentThread()).isFalse();
        assertThat(lock.tryLock()).as("another holds it").isFalse();
        theirs.release();
        assertThat(lock.tryLock()).isTrue();
        lock.unlock();
        assertThat(other.tryAcquire("leader", TEN_SECONDS)).as("free after the one unlock").isPresent();
    }

    /** An unlock whose release the store does not answer keeps the hold, so that it can be tried again. */
    @Test
    void anUnlockTheStoreDidNotAnswerCanBeTriedAgain() {
        java.util.concurrent.atomic.AtomicBoolean down = new java.util.concurrent.atomic.AtomicBoolean();
        InMemoryLockStore inner = new InMemoryLockStore();
        dev.turnstile.spi.LockStore flaky = new dev.turnstile.spi.LockStore() {
            @Override public java.util.Optional<dev.turnstile.spi.Grant> tryAcquire(dev.turnstile.spi.AcquireRequest r) {
                return inner.tryAcquire(r);
            }
            @Override public boolean extend(String n, String t, Duration ttl) { return inner.extend(n, t, ttl); }
            @Override public boolean release(String n, String t, Duration atLeast) {
                if (down.get()) {
                    throw new StoreUnavailableException("the store is down (test)", null);
                }
                return inner.release(n, t, atLeast);
            }
            @Override public List<LockInfo> heldLocks() { return inner.heldLocks(); }
            @Override public boolean forceRelease(String n) { return inner.forceRelease(n); }
            @Override public String description() { return "flaky"; }
        };
        try (Turnstile t = Turnstile.builder(flaky).build()) {
            DistributedLock lock = t.lock("flaky", TEN_SECONDS);
            lock.lock();
            down.set(true);
            assertThatThrownBy(lock::unlock).isInstanceOf(StoreUnavailableException.class);
            assertThat(lock.isLocked()).as("still held: the unlock can be tried again").isTrue();
            down.set(false);
            lock.unlock();
            assertThat(lock.isLocked()).isFalse();
            assertThat(inner.heldLocks()).isEmpty();

            // Not tried again, but locked again: the pending release goes first, so the lock does not
            // wait out its own earlier lease, and nothing is reported lost.
            lock.lock();
            down.set(true);
            assertThatThrownBy(lock::unlock).isInstanceOf(StoreUnavailableException.class);
            down.set(false);
            long start = System.nanoTime();
            lock.lock();
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("not the 10 s of its own earlier lease")
                    .isLessThan(Duration.ofSeconds(5));
            lock.unlock();
            assertThatThrownBy(lock::unlock).as("every lock had its unlock").isInstanceOf(IllegalMonitorStateException.class);
            assertThat(inner.heldLocks()).isEmpty();
        }
    }

    @Test
    void whatALockCannotDoIsRefusedClearly() {
        DistributedLock lock = turnstile.lock("refused", TEN_SECONDS);
        assertThatThrownBy(lock::newCondition).isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("no conditions");
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);
        assertThatThrownBy(() -> turnstile.lock("x", LockOptions.builder().lockAtMostFor(Duration.ofSeconds(5)).reentrant().build()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("leave reentrant() out");
        assertThatThrownBy(() -> turnstile.lock("x", null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("options");
        assertThatThrownBy(() -> turnstile.lock("", TEN_SECONDS)).isInstanceOf(IllegalArgumentException.class);
        assertThat(lock.name()).isEqualTo("refused");
    }
}
