package dev.turnstile.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.turnstile.Lease;
import dev.turnstile.LeaseLoss;
import dev.turnstile.LockOptions;
import dev.turnstile.Turnstile;
import dev.turnstile.spi.SessionBoundLeases;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;

/**
 * The session is the lease's heartbeat: a lost session ends the lease at once, a suspended one by
 * the time the server could expire it, and a dead holder frees the lock when its session expires.
 */
class ZooKeeperSessionTest {
    private static final Duration SESSION = Duration.ofSeconds(4);

    private static CuratorFramework curator(String connect) {
        CuratorFramework c = CuratorFrameworkFactory.builder().connectString(connect).namespace("turnstile-session-test")
                .sessionTimeoutMs((int) SESSION.toMillis()).connectionTimeoutMs(2_000).retryPolicy(new RetryNTimes(1, 100)).build();
        c.start();
        return c;
    }

    private static String unique(String what) {
        return what + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    @Test
    void anExpiredSessionEndsTheLeaseAtOnceAndFreesTheLock() throws Exception {
        String connect = ZooKeeperServers.shared().getConnectString();
        try (CuratorFramework holderClient = curator(connect); CuratorFramework otherClient = curator(connect);
                ZooKeeperLockStore holderStore = ZooKeeperLockStore.builder(holderClient).sessionTimeout(SESSION).build();
                ZooKeeperLockStore otherStore = ZooKeeperLockStore.builder(otherClient).sessionTimeout(SESSION).build();
                Turnstile holder = Turnstile.builder(holderStore).build();
                Turnstile other = Turnstile.builder(otherStore).build()) {
            String name = unique("expiry");
            CompletableFuture<LeaseLoss> lost = new CompletableFuture<>();
            Lease lease = holder.tryAcquire(name, LockOptions.builder().lockAtMostFor(Duration.ofMinutes(5)).keepAlive(true)
                    .onLost(lost::complete).build()).orElseThrow();
            assertThat(other.tryAcquire(name, LockOptions.lockAtMostFor(Duration.ofSeconds(10)))).isEmpty();

            long expired = System.nanoTime();
            holderClient.getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();
            LeaseLoss loss = lost.get(5, TimeUnit.SECONDS);
            assertThat(Duration.ofNanos(System.nanoTime() - expired)).as("reported at once").isLessThan(Duration.ofSeconds(2));
            assertThat(loss.reason()).contains("session");
            assertThat(lease.isHeld()).isFalse();
            Lease next = await().atMost(Duration.ofSeconds(10)).until(
                    () -> other.tryAcquire(name, LockOptions.lockAtMostFor(Duration.ofSeconds(10))).orElse(null), l -> l != null);
            assertThat(next.fence()).isGreaterThan(lease.fence());
        }
    }

    @Test
    void aSuspendedConnectionEndsTheLeaseBeforeTheServerCanExpireTheSession() throws Exception {
        try (TestingServer server = new TestingServer(true)) {
            String connect = server.getConnectString();
            CuratorFramework holderClient = curator(connect);
            try (ZooKeeperLockStore store = ZooKeeperLockStore.builder(holderClient).sessionTimeout(SESSION).build();
                    Turnstile holder = Turnstile.builder(store).build()) {
                String name = unique("suspended");
                CompletableFuture<LeaseLoss> lost = new CompletableFuture<>();
                Lease lease = holder.tryAcquire(name, LockOptions.builder().lockAtMostFor(Duration.ofMinutes(5))
                        .onLost(lost::complete).build()).orElseThrow();
                Thread.sleep(1_500); // the store's heartbeat keeps its proof of the session recent
                long stopped = System.nanoTime();
                server.stop();
                LeaseLoss loss = lost.get(10, TimeUnit.SECONDS);
                Duration after = Duration.ofNanos(System.nanoTime() - stopped);
                assertThat(after).as("within the session timeout of the last answered request, not at the 5 min TTL")
                        .isLessThan(SESSION);
                assertThat(loss.reason()).contains("session");
                assertThat(lease.isHeld()).isFalse();
            } finally {
                holderClient.close();
            }
        }
    }

    @Test
    void aShortSuspensionInTheSameSessionKeepsTheLease() throws Exception {
        try (TestingServer server = new TestingServer(true)) {
            CuratorFramework c = CuratorFrameworkFactory.builder().connectString(server.getConnectString())
                    .sessionTimeoutMs(20_000).connectionTimeoutMs(2_000).retryPolicy(new RetryNTimes(1, 100)).build();
            c.start();
            try (ZooKeeperLockStore store = ZooKeeperLockStore.builder(c).sessionTimeout(Duration.ofSeconds(20)).build();
                    Turnstile t = Turnstile.builder(store).build()) {
                CompletableFuture<LeaseLoss> lost = new CompletableFuture<>();
                Lease lease = t.tryAcquire(unique("blip"), LockOptions.builder().lockAtMostFor(Duration.ofMinutes(1))
                        .keepAlive(true).onLost(lost::complete).build()).orElseThrow();
                server.restart(); // the server keeps its sessions across the restart
                await().atMost(Duration.ofSeconds(15)).until(() -> c.getZookeeperClient().isConnected());
                Thread.sleep(500);
                assertThat(lost).isNotDone();
                assertThat(lease.isHeld()).isTrue();
                lease.extend(Duration.ofMinutes(1));
            } finally {
                c.close();
            }
        }
    }

    @Test
    void aLeaseDeadlineIsBoundedByTheSessionTimeoutFromTheStartAndWhileHeld() throws Exception {
        String connect = ZooKeeperServers.shared().getConnectString();
        try (CuratorFramework c = curator(connect); ZooKeeperLockStore store = ZooKeeperLockStore.builder(c).sessionTimeout(SESSION).build();
                Turnstile t = Turnstile.builder(store).build()) {
            CompletableFuture<LeaseLoss> lost = new CompletableFuture<>();
            Lease lease = t.tryAcquire(unique("bounded"), LockOptions.builder().lockAtMostFor(Duration.ofMinutes(5))
                    .onLost(lost::complete).build()).orElseThrow();
            assertThat(lease.timeLeft()).as("a frozen process loses the lease before the server can expire its session")
                    .isPositive().isLessThanOrEqualTo(SESSION);
            Duration negotiated = Duration.ofMillis(store.sessionTimeoutMs());
            assertThat(store.capability(SessionBoundLeases.class).map(SessionBoundLeases::sessionBound))
                    .as("what the CLI fits its grace period into").contains(negotiated.minus(negotiated.dividedBy(10)));
            assertThat(lease.timeLeft()).isLessThanOrEqualTo(store.sessionBound());
            long until = System.nanoTime() + 2 * SESSION.toNanos();
            while (System.nanoTime() < until) { // the heartbeat moves the bound on: held past the session timeout
                Thread.sleep(250);
                assertThat(lease.isHeld()).isTrue();
                assertThat(lease.timeLeft()).isPositive().isLessThanOrEqualTo(SESSION);
            }
            assertThat(lost).isNotDone();
            lease.release();
        }
    }

    @Test
    void aStalledHeartbeatEndsTheLeaseBeforeTheServerCouldExpireTheSession() throws Exception {
        String connect = ZooKeeperServers.shared().getConnectString();
        CountDownLatch unstall = new CountDownLatch(1);
        AtomicBoolean stall = new AtomicBoolean();
        try (CuratorFramework real = curator(connect)) {
            // The store's watch thread hangs in its heartbeat, as a frozen process would: nothing
            // proves the session from then on (Curator's own pings go on, but prove nothing to the lease).
            CuratorFramework stalling = (CuratorFramework) Proxy.newProxyInstance(getClass().getClassLoader(),
                    new Class<?>[] {CuratorFramework.class}, (proxy, method, args) -> {
                        if (stall.get() && method.getName().equals("checkExists")
                                && Thread.currentThread().getName().equals("turnstile-zookeeper-watch")) {
                            unstall.await();
                        }
                        try {
                            return method.invoke(real, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
            try (ZooKeeperLockStore store = ZooKeeperLockStore.builder(stalling).sessionTimeout(SESSION).build();
                    Turnstile t = Turnstile.builder(store).build()) {
                CompletableFuture<LeaseLoss> lost = new CompletableFuture<>();
                Lease lease = t.tryAcquire(unique("stalled"), LockOptions.builder().lockAtMostFor(Duration.ofMinutes(5))
                        .onLost(lost::complete).build()).orElseThrow();
                long stalled = System.nanoTime();
                stall.set(true);
                LeaseLoss loss = lost.get(2 * SESSION.toMillis(), TimeUnit.MILLISECONDS);
                assertThat(Duration.ofNanos(System.nanoTime() - stalled)).as("before the session timeout, not at the 5 min TTL")
                        .isLessThan(SESSION);
                assertThat(loss.reason()).contains("session");
                assertThat(lease.isHeld()).isFalse();
            } finally {
                unstall.countDown();
            }
        }
    }
}
