package dev.turnstile.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import dev.turnstile.Lease;
import dev.turnstile.LockOptions;
import dev.turnstile.Turnstile;
import dev.turnstile.spi.AcquireRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** session expiry while waiting in line and while holding; close with waiters in line. */
class ZooKeeperExpiryInLineTest {
    private static final Duration SESSION = Duration.ofSeconds(4);
    private static final LockOptions OPTIONS = LockOptions.lockAtMostFor(Duration.ofSeconds(30));
    private final List<AutoCloseable> open = new ArrayList<>();

    private static String unique(String what) {
        return what + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private CuratorFramework curator() {
        CuratorFramework c = CuratorFrameworkFactory.builder().connectString(ZooKeeperServers.shared().getConnectString())
                .sessionTimeoutMs((int) SESSION.toMillis()).connectionTimeoutMs(2_000).retryPolicy(new RetryNTimes(3, 100)).build();
        c.start();
        open.add(c);
        return c;
    }

    private ZooKeeperLockStore store(CuratorFramework c, Duration queueTimeout) {
        ZooKeeperLockStore s = ZooKeeperLockStore.builder(c).basePath("/atk-expiry").sessionTimeout(SESSION)
                .queueTimeout(queueTimeout).build();
        open.add(0, s);
        return s;
    }

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable c : open) {
            try {
                c.close();
            } catch (Exception ignored) {
                // best effort
            }
        }
    }

    @Test
    void closingAStoreOverTheApplicationsClientTakesItsWaitersOutOfLine() throws Exception {
        String name = unique("closeline");
        CuratorFramework shared = curator();
        ZooKeeperLockStore holder = store(curator(), Duration.ofSeconds(30));
        holder.tryAcquire(new AcquireRequest(name, "holder", "h", Duration.ofSeconds(60))).orElseThrow();
        ZooKeeperLockStore early = store(shared, Duration.ofSeconds(30));
        assertThat(early.tryAcquire(new AcquireRequest(name, "early", "e", Duration.ofSeconds(30), true))).isEmpty();
        assertThat(early.places()).isEqualTo(1);
        early.close(); // before any Turnstile over it: stopWaiting is never called
        ZooKeeperLockStore late = store(curator(), Duration.ofSeconds(30));
        assertThat(late.tryAcquire(new AcquireRequest(name, "late", "l", Duration.ofSeconds(30), true))).isEmpty();
        holder.release(name, "h", Duration.ZERO);
        long freed = System.nanoTime();
        // The place of the closed store is gone: the late waiter is first in line at once (with a
        // queue timeout of 30 s, a place left behind would hold it up for that long).
        Optional<dev.turnstile.spi.Grant> got = Optional.empty();
        while (got.isEmpty() && System.nanoTime() - freed < TimeUnit.SECONDS.toNanos(5)) {
            got = late.tryAcquire(new AcquireRequest(name, "late", "l", Duration.ofSeconds(30), true));
            if (got.isEmpty()) {
                Thread.sleep(50);
            }
        }
        assertThat(got).as("the late waiter, within 5 s of the release").isPresent();
        assertThat(shared.getChildren().forPath("/atk-expiry/locks/" + LockNodes.encode(name)))
                .noneMatch(child -> child.startsWith(LockNodes.nodePrefix("e")));
    }

    @Test
    void aWaiterWhoseSessionExpiredInLineIsStillServedWhenTheLockIsFreed() throws Exception {
        String name = unique("wexp");
        ZooKeeperLockStore holder = store(curator(), Duration.ofSeconds(30));
        holder.tryAcquire(new AcquireRequest(name, "holder", "h", Duration.ofSeconds(60))).orElseThrow();
        CuratorFramework waiterClient = curator();
        ZooKeeperLockStore waiterStore = store(waiterClient, Duration.ofSeconds(30));
        Turnstile waiter = Turnstile.builder(waiterStore).build();
        open.add(0, waiter);
        CompletableFuture<Optional<Lease>> got = CompletableFuture.supplyAsync(() -> {
            try {
                return waiter.acquire(name, OPTIONS, Duration.ofSeconds(40));
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        });
        await("the waiter has its place", () -> waiterStore.places() == 1);
        waiterClient.getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();
        Thread.sleep(1_000);
        long freed = System.nanoTime();
        holder.release(name, "h", Duration.ZERO);
        Optional<Lease> lease = got.get(45, TimeUnit.SECONDS);
        long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - freed);
        assertThat(lease).as("the waiter, after the lock was freed (%d ms)", took).isPresent();
        assertThat(took).as("ms from the release to the waiter's grant (the session timeout is 4 s)").isLessThan(12_000);
    }

    @Test
    void closingAStoreWithAWaiterInLineEndsTheWaitAndLeavesNoPlaceThatHoldsTheLineUp() throws Exception {
        String name = unique("wclose");
        ZooKeeperLockStore holder = store(curator(), Duration.ofSeconds(30));
        holder.tryAcquire(new AcquireRequest(name, "holder", "h", Duration.ofSeconds(60))).orElseThrow();
        CuratorFramework shared = curator();                      // stays open: the application's client
        ZooKeeperLockStore closing = store(shared, Duration.ofSeconds(30));
        Turnstile t = Turnstile.builder(closing).build();
        CompletableFuture<Object> first = CompletableFuture.supplyAsync(() -> {
            try {
                return t.acquire(name, OPTIONS, Duration.ofSeconds(40));
            } catch (Throwable e) {
                return e;
            }
        });
        await("the first waiter has its place", () -> closing.places() == 1);
        ZooKeeperLockStore later = store(curator(), Duration.ofSeconds(30));
        Turnstile laterT = Turnstile.builder(later).build();
        open.add(0, laterT);
        CompletableFuture<Optional<Lease>> second = CompletableFuture.supplyAsync(() -> {
            try {
                return laterT.acquire(name, OPTIONS, Duration.ofSeconds(40));
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        });
        await("the second waiter has its place", () -> later.places() == 1);
        long closedAt = System.nanoTime();
        t.close();
        closing.close();
        Object outcome = first.get(45, TimeUnit.SECONDS);
        long firstEnded = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - closedAt);
        long freed = System.nanoTime();
        holder.release(name, "h", Duration.ZERO);
        Optional<Lease> lease = second.get(45, TimeUnit.SECONDS);
        long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - freed);
        assertThat(firstEnded).as("ms for a wait on a closed store to end (outcome %s)", outcome).isLessThan(5_000);
        assertThat(lease).isPresent();
        assertThat(took).as("ms from the release to the next waiter's grant, behind a closed store's place")
                .isLessThan(3_000);
    }

    @Test
    void aHolderWhoseSessionExpiredLeavesNothingBehindThatBlocksTheNext() throws Exception {
        String name = unique("hexp");
        CuratorFramework holderClient = curator();
        ZooKeeperLockStore holder = store(holderClient, Duration.ofSeconds(30));
        long fence = holder.tryAcquire(new AcquireRequest(name, "holder", "h", Duration.ofSeconds(60))).orElseThrow().fence();
        ZooKeeperLockStore other = store(curator(), Duration.ofSeconds(30));
        Turnstile otherT = Turnstile.builder(other).build();
        open.add(0, otherT);
        holderClient.getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();
        long start = System.nanoTime();
        Optional<Lease> next = otherT.acquire(name, OPTIONS, Duration.ofSeconds(30));
        long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertThat(next).isPresent();
        assertThat(next.get().fence()).isGreaterThan(fence);
        assertThat(took).as("ms until the lock of an expired holder is taken (session 4 s)").isLessThan(10_000);
        // the old holder's store, on its new session, must not think it still holds
        assertThat(holder.release(name, "h", Duration.ZERO)).as("release by the expired holder").isFalse();
        assertThat(holder.extend(name, "h", Duration.ofSeconds(10))).as("extend by the expired holder").isFalse();
        assertThat(next.get().isHeld()).isTrue();
        // and the old holder can queue and be served again after the new one releases
        CompletableFuture<Optional<dev.turnstile.spi.Grant>> again = CompletableFuture.supplyAsync(() ->
                holder.tryAcquire(new AcquireRequest(name, "holder", "h2", Duration.ofSeconds(10))));
        next.get().release();
        assertThat(again.get(10, TimeUnit.SECONDS).isPresent()
                || holder.tryAcquire(new AcquireRequest(name, "holder", "h3", Duration.ofSeconds(10))).isPresent()).isTrue();
    }

    private static void await(String what, java.util.function.BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("timed out waiting until " + what);
            }
            Thread.sleep(5);
        }
    }
}
