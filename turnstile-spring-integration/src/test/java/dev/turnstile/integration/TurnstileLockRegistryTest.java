package dev.turnstile.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.turnstile.LockOptions;
import dev.turnstile.Turnstile;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Lock;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.integration.support.locks.DistributedLock;

/**
 * What Spring Integration's own registry tests expect of a {@code LockRegistry} (one lock per key,
 * re-entrant for its thread, two registries contending, expiry, unlock from another thread,
 * renewal, forgetting unused locks, {@code executeLocked}), on the embedded SQLite store and on
 * PostgreSQL, through two registries that stand for two application instances.
 */
class TurnstileLockRegistryTest {
    @TempDir static Path dir;
    private final List<AutoCloseable> opened = new ArrayList<>();

    static Stream<String> stores() {
        return Stream.of("sqlite", "postgresql");
    }

    private String url(String store) {
        return store.equals("sqlite") ? "jdbc:sqlite:" + dir.resolve("locks.db")
                : "jdbc:postgresql://127.0.0.1:5432/test?user=postgres&turnstile.createTable=true";
    }

    /** A registry of its own client and store: another application instance. */
    private TurnstileLockRegistry instance(String store, Duration ttl) {
        LockStore s = LockStores.open(url(store));
        Turnstile t = Turnstile.builder(s).build();
        opened.add(0, s);
        opened.add(0, t);
        return TurnstileLockRegistry.builder(t).prefix("si-test:").lockAtMostFor(ttl).build();
    }

    private static String key() {
        return UUID.randomUUID().toString();
    }

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable c : opened) {
            c.close();
        }
    }

    @ParameterizedTest
    @MethodSource("stores")
    void oneLockPerKeyExcludingTheOtherInstance(String store) throws Exception {
        TurnstileLockRegistry one = instance(store, Duration.ofSeconds(30));
        TurnstileLockRegistry two = instance(store, Duration.ofSeconds(30));
        String key = key();
        assertThat(one.obtain(key)).isSameAs(one.obtain(key));
        Lock mine = one.obtain(key);
        mine.lock();
        try {
            assertThat(CompletableFuture.supplyAsync(() -> two.obtain(key).tryLock()).get(10, TimeUnit.SECONDS)).isFalse();
            long fence = ((dev.turnstile.DistributedLock) mine).fence();
            assertThat(fence).isPositive();
        } finally {
            mine.unlock();
        }
        Lock theirs = two.obtain(key);
        assertThat(theirs.tryLock(5, TimeUnit.SECONDS)).isTrue();
        theirs.unlock();
    }

    @ParameterizedTest
    @MethodSource("stores")
    void reentrantForItsThreadAndOwnedByIt(String store) throws Exception {
        TurnstileLockRegistry one = instance(store, Duration.ofSeconds(30));
        TurnstileLockRegistry two = instance(store, Duration.ofSeconds(30));
        String key = key();
        Lock lock = one.obtain(key);
        lock.lockInterruptibly();
        lock.lock();
        assertThat(CompletableFuture.supplyAsync(() -> org.assertj.core.api.Assertions.catchThrowable(lock::unlock))
                .get(10, TimeUnit.SECONDS)).isInstanceOf(IllegalMonitorStateException.class);
        lock.unlock();
        assertThat(two.obtain(key).tryLock()).as("still held after one of two unlocks").isFalse();
        lock.unlock();
        assertThat(two.obtain(key).tryLock()).isTrue();
        two.obtain(key).unlock();
    }

    @ParameterizedTest
    @MethodSource("stores")
    void anExpiredLockIsTakenAndItsUnlockSaysSo(String store) throws Exception {
        TurnstileLockRegistry one = instance(store, Duration.ofMillis(300));
        TurnstileLockRegistry two = instance(store, Duration.ofSeconds(30));
        String key = key();
        Lock lock = one.obtain(key);
        lock.lock();
        assertThat(two.obtain(key).tryLock(5, TimeUnit.SECONDS)).as("free once the TTL passed").isTrue();
        assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class)
                .hasMessageContaining("was released in the store before unlock").hasCauseInstanceOf(dev.turnstile.LeaseLostException.class);
        two.obtain(key).unlock();
    }

    @ParameterizedTest
    @MethodSource("stores")
    void renewalKeepsTheLockAndATimeToLiveCanBeGivenPerHold(String store) throws Exception {
        TurnstileLockRegistry one = instance(store, Duration.ofMillis(400));
        TurnstileLockRegistry two = instance(store, Duration.ofSeconds(30));
        String key = key();
        DistributedLock lock = one.obtain(key);
        lock.lock();
        one.renewLock(key, Duration.ofSeconds(10));
        Thread.sleep(700);
        assertThat(two.obtain(key).tryLock()).as("renewed past its 400 ms").isFalse();
        lock.unlock();
        assertThatThrownBy(() -> one.renewLock(key)).isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining("only its holder can renew it");

        assertThat(lock.tryLock(Duration.ZERO, Duration.ofSeconds(10))).isTrue();
        Thread.sleep(700);
        assertThat(two.obtain(key).tryLock()).as("its own 10 s, not the registry's 400 ms").isFalse();
        lock.unlock();
    }

    /**
     * Spring Integration's LockRegistryLeaderInitiator over two registries (two instances): one
     * leader at a time, kept well past the 1 s time to live (its loop locks again, which renews),
     * and the other takes over when the leader stops.
     */
    @Test
    void springIntegrationsLeaderInitiatorElectsOneLeaderThatKeepsItAndHandsOver() throws Exception {
        TurnstileLockRegistry one = instance("sqlite", Duration.ofSeconds(1));
        TurnstileLockRegistry two = instance("sqlite", Duration.ofSeconds(1));
        String role = "role-" + key();
        org.springframework.integration.support.leader.LockRegistryLeaderInitiator a = initiator(one, "a", role);
        org.springframework.integration.support.leader.LockRegistryLeaderInitiator b = initiator(two, "b", role);
        a.start();
        b.start();
        try {
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!a.getContext().isLeader() && !b.getContext().isLeader() && System.nanoTime() < until) {
                Thread.sleep(20);
            }
            org.springframework.integration.support.leader.LockRegistryLeaderInitiator leader = a.getContext().isLeader() ? a : b;
            org.springframework.integration.support.leader.LockRegistryLeaderInitiator follower = leader == a ? b : a;
            assertThat(leader.getContext().isLeader()).as("a leader within 10 s").isTrue();
            for (int i = 0; i < 30; i++) { // 3 s: three times the time to live
                assertThat(follower.getContext().isLeader()).as("never two leaders").isFalse();
                assertThat(leader.getContext().isLeader()).as("leadership kept past the TTL").isTrue();
                Thread.sleep(100);
            }
            leader.stop();
            until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!follower.getContext().isLeader() && System.nanoTime() < until) {
                Thread.sleep(20);
            }
            assertThat(follower.getContext().isLeader()).as("the other takes over").isTrue();
        } finally {
            a.stop();
            b.stop();
        }
    }

    private static org.springframework.integration.support.leader.LockRegistryLeaderInitiator initiator(TurnstileLockRegistry registry,
            String id, String role) {
        org.springframework.integration.support.leader.LockRegistryLeaderInitiator i =
                new org.springframework.integration.support.leader.LockRegistryLeaderInitiator(registry,
                        new org.springframework.integration.leader.DefaultCandidate(id, role));
        i.setHeartBeatMillis(200);
        i.setBusyWaitMillis(50);
        return i;
    }

    @Test
    void unusedLocksAreForgottenAndHeldOrAwaitedOnesKept() throws Exception {
        TurnstileLockRegistry one = instance("sqlite", Duration.ofSeconds(30));
        TurnstileLockRegistry two = instance("sqlite", Duration.ofSeconds(30));
        String idle = key();
        String held = key();
        String awaited = key();
        DistributedLock idleLock = one.obtain(idle);
        DistributedLock heldLock = one.obtain(held);
        heldLock.lock();
        DistributedLock awaitedLock = one.obtain(awaited);
        DistributedLock theirs = two.obtain(awaited);
        theirs.lock();
        CompletableFuture<Boolean> waiting = CompletableFuture.supplyAsync(() -> {
            try {
                boolean got = awaitedLock.tryLock(10, TimeUnit.SECONDS);
                one.renewLock(awaited, Duration.ofSeconds(30)); // still this registry's lock of the key
                awaitedLock.unlock();
                return got;
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        Thread.sleep(100);
        one.expireUnusedOlderThan(10);
        assertThat(one.obtain(idle)).as("forgotten: a new object").isNotSameAs(idleLock);
        assertThatThrownBy(idleLock::tryLock).as("a forgotten object refuses to lock").isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("obtain it again");
        assertThat(one.obtain(held)).as("held: kept").isSameAs(heldLock);
        assertThat(one.obtain(awaited)).as("awaited: kept").isSameAs(awaitedLock);
        theirs.unlock();
        assertThat(waiting.get(15, TimeUnit.SECONDS)).isTrue();
        heldLock.unlock();
    }

    /**
     * Expiry running all the time beside a thread that obtains, locks, renews and unlocks: once a
     * lock call got in, the registry keeps the object until it is unlocked (before, expiry could
     * forget a lock its thread was taking, and the holder's renewLock then said it held nothing).
     */
    @Test
    void expiryNeverForgetsALockBeingTakenOrHeld() throws Exception {
        TurnstileLockRegistry one = instance("sqlite", Duration.ofSeconds(30));
        String key = key();
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        Thread expiry = new Thread(() -> {
            while (!stop.get()) {
                one.expireUnusedOlderThan(0);
            }
        });
        expiry.start();
        int held = 0;
        try {
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
            while (System.nanoTime() < until) {
                DistributedLock lock = one.obtain(key);
                try {
                    lock.lock();
                } catch (IllegalStateException forgottenBeforeTheCall) {
                    continue; // expiry came between obtain and lock: obtain again, as with Spring's JdbcLock
                }
                try {
                    held++;
                    assertThat(one.obtain(key)).as("a held lock stays the registry's").isSameAs(lock);
                    one.renewLock(key, Duration.ofSeconds(30));
                } finally {
                    lock.unlock();
                }
            }
        } finally {
            stop.set(true);
            expiry.join(5_000);
        }
        assertThat(held).isPositive();
    }

    @Test
    void executeLockedRunsTheTaskUnderTheLock() throws Exception {
        TurnstileLockRegistry one = instance("sqlite", Duration.ofSeconds(30));
        TurnstileLockRegistry two = instance("sqlite", Duration.ofSeconds(30));
        String key = key();
        AtomicInteger ran = new AtomicInteger();
        one.executeLocked(key, () -> {
            assertThat(two.obtain(key).tryLock()).as("locked while it runs").isFalse();
            ran.incrementAndGet();
        });
        assertThat(ran).hasValue(1);
        assertThat(two.obtain(key).tryLock()).isTrue();
        two.obtain(key).unlock();
    }

    /** A store that cannot be reached fails a lock as Spring Integration's registries do, with the cause inside. */
    @Test
    void anUnreachableStoreIsCannotAcquireLock() {
        org.postgresql.ds.PGSimpleDataSource nowhere = new org.postgresql.ds.PGSimpleDataSource();
        nowhere.setUrl("jdbc:postgresql://127.0.0.1:1/test?user=postgres&connectTimeout=1");
        LockStore s = dev.turnstile.jdbc.JdbcLockStore.builder(nowhere).build(); // connects at first use
        Turnstile t = Turnstile.builder(s).build();
        opened.add(0, s);
        opened.add(0, t);
        TurnstileLockRegistry registry = TurnstileLockRegistry.builder(t).build();
        assertThatThrownBy(() -> registry.obtain(key()).tryLock())
                .isInstanceOf(org.springframework.dao.CannotAcquireLockException.class)
                .hasCauseInstanceOf(dev.turnstile.StoreUnavailableException.class);
    }

    @Test
    void badInputIsRefusedWithWhatToGive() {
        TurnstileLockRegistry one = instance("sqlite", Duration.ofSeconds(30));
        assertThatThrownBy(() -> one.obtain(null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lockKey must be a String, not null");
        assertThatThrownBy(() -> one.obtain(new Object())).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not java.lang.Object");
        assertThatThrownBy(() -> one.obtain("x".repeat(300))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> TurnstileLockRegistry.builder(null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("turnstile is null");
        LockStore s = LockStores.open(url("sqlite"));
        Turnstile t = Turnstile.builder(s).build();
        opened.add(0, s);
        opened.add(0, t);
        assertThatThrownBy(() -> TurnstileLockRegistry.builder(t).prefix(null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("prefix is null");
        assertThatThrownBy(() -> TurnstileLockRegistry.builder(t).lockAtMostFor(null)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> TurnstileLockRegistry.builder(t).options(LockOptions.builder().lockAtMostFor(Duration.ofSeconds(5))
                .reentrant().build())).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("leave reentrant() out");
        assertThatThrownBy(() -> one.obtain(key()).newCondition()).isInstanceOf(UnsupportedOperationException.class);
    }
}
