package dev.turnstile.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.turnstile.Lease;
import dev.turnstile.LockOptions;
import dev.turnstile.StoreUnavailableException;
import dev.turnstile.Turnstile;
import dev.turnstile.spi.AcquireRequest;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** What the contract does not cover: the node layout, the fence across a re-created parent, URLs. */
class ZooKeeperLockStoreTest {

    private static String unique(String what) {
        return what + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static CuratorFramework curator() {
        CuratorFramework c = CuratorFrameworkFactory.builder().connectString(ZooKeeperServers.shared().getConnectString())
                .retryPolicy(new RetryNTimes(1, 100)).build();
        c.start();
        return c;
    }

    @Test
    void theFenceKeepsRisingWhenTheLockParentIsDeletedAndRecreated() throws Exception {
        try (CuratorFramework c = curator(); ZooKeeperLockStore store = ZooKeeperLockStore.builder(c).basePath("/fence-test").build()) {
            String name = unique("parent");
            long first = store.tryAcquire(new AcquireRequest(name, "me", "t1", Duration.ofSeconds(30))).orElseThrow().fence();
            assertThat(store.release(name, "t1", Duration.ZERO)).isTrue();
            String parent = store.lockPath(name);
            // Sequence numbers restart in a re-created parent: the creation zxid does not.
            c.delete().deletingChildrenIfNeeded().forPath(parent);
            long second = store.tryAcquire(new AcquireRequest(name, "me", "t2", Duration.ofSeconds(30))).orElseThrow().fence();
            List<String> children = c.getChildren().forPath(parent);
            assertThat(children).hasSize(1);
            assertThat(LockNodes.sequence(children.get(0))).as("the sequence restarted").isZero();
            assertThat(second).isGreaterThan(first);
        }
    }

    /** A lease node of JSON without an owner (not written by Turnstile) is listed as held by nobody known. */
    @Test
    void aForeignLeaseNodeWithoutAnOwnerIsListedWithAnUnknownOwner() throws Exception {
        try (CuratorFramework c = curator(); ZooKeeperLockStore store = ZooKeeperLockStore.builder(c).basePath("/foreign-test").build()) {
            String name = unique("foreign");
            c.create().creatingParentsIfNeeded().forPath(store.lockPath(name) + "/someone-lock-0000000000",
                    "{\"ttl_ms\":600000}".getBytes(java.nio.charset.StandardCharsets.UTF_8));
            assertThat(store.heldLocks()).filteredOn(l -> l.name().equals(name)).singleElement()
                    .satisfies(l -> assertThat(l.owner()).isEqualTo("?"));
        }
    }

    @Test
    void theHolderNodeIsReadableJsonWithOwnerAndTimes() throws Exception {
        try (CuratorFramework c = curator(); ZooKeeperLockStore store = ZooKeeperLockStore.builder(c).build();
                Turnstile t = Turnstile.builder(store).owner("billing-7").build()) {
            String name = "nightly report/" + UUID.randomUUID().toString().substring(0, 6);
            Lease lease = t.tryAcquire(name, LockOptions.lockAtMostFor(Duration.ofSeconds(30))).orElseThrow();
            String parent = "/turnstile/locks/" + LockNodes.encode(name);
            assertThat(parent).as("one node per name, percent-encoded").doesNotContain(" ").endsWith("%2F" + name.substring(name.length() - 6));
            List<String> children = c.getChildren().forPath(parent);
            assertThat(children).hasSize(1);
            JsonNode data = new ObjectMapper().readTree(c.getData().forPath(parent + "/" + children.get(0)));
            assertThat(data.get("owner").asText()).isEqualTo("billing-7");
            assertThat(data.get("ttl_ms").asLong()).isEqualTo(30_000);
            assertThat(data.get("acquired_at").asText()).matches("\\d{4}-\\d\\d-\\d\\dT.*Z");
            assertThat(data.get("expires_at").asText()).matches("\\d{4}-\\d\\d-\\d\\dT.*Z");
            assertThat(c.checkExists().forPath(parent + "/" + children.get(0)).getCzxid()).isEqualTo(lease.fence());
            lease.release();
        }
    }

    @Test
    void anEarlyReleaseLeavesAPersistentHoldMarkerThatOutlivesTheSession() throws Exception {
        String name = unique("atleast-exit");
        String url = ZooKeeperServers.url();
        try (LockStore holder = LockStores.open(url)) {
            holder.tryAcquire(new AcquireRequest(name, "me", "t1", Duration.ofSeconds(30))).orElseThrow();
            assertThat(holder.release(name, "t1", Duration.ofSeconds(3))).isTrue();
        } // the holder's session ends here, as when the process exits
        try (LockStore other = LockStores.open(url)) {
            assertThat(other.tryAcquire(new AcquireRequest(name, "you", "u1", Duration.ofSeconds(30)))).as("still held").isEmpty();
            assertThat(other.heldLocks()).anySatisfy(i -> assertThat(i.name()).isEqualTo(name));
        }
    }

    @Test
    void anEarlyReleaseThatRacesTheRemovalOfAStaleHoldMarkerStillReleases() throws Exception {
        try (CuratorFramework real = curator()) {
            // Another client removes the stale marker between the release's look and its transaction.
            AtomicReference<String> removeFirst = new AtomicReference<>();
            CuratorFramework racing = (CuratorFramework) Proxy.newProxyInstance(getClass().getClassLoader(),
                    new Class<?>[] {CuratorFramework.class}, (proxy, method, args) -> {
                        String marker = method.getName().equals("transaction") ? removeFirst.getAndSet(null) : null;
                        if (marker != null) {
                            real.delete().quietly().forPath(marker);
                        }
                        try {
                            return method.invoke(real, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
            try (ZooKeeperLockStore store = ZooKeeperLockStore.builder(racing).build()) {
                String name = unique("stale-hold");
                String hold = store.lockPath(name) + "/" + LockNodes.HOLD;
                store.tryAcquire(new AcquireRequest(name, "me", "t1", Duration.ofSeconds(30))).orElseThrow();
                assertThat(store.release(name, "t1", Duration.ofMillis(100))).isTrue();
                byte[] expired = real.getData().forPath(hold);
                Thread.sleep(300);
                store.tryAcquire(new AcquireRequest(name, "me", "t2", Duration.ofSeconds(30))).orElseThrow();
                if (real.checkExists().forPath(hold) == null) {
                    real.create().forPath(hold, expired); // the stale marker, beside the running lease
                }
                removeFirst.set(hold);
                assertThat(store.release(name, "t2", Duration.ofSeconds(5))).as("released").isTrue();
                assertThat(removeFirst.get()).as("the race was played").isNull();
                assertThat(real.getChildren().forPath(store.lockPath(name))).as("the lease node swapped for a new marker")
                        .containsExactly(LockNodes.HOLD);
                assertThat(store.tryAcquire(new AcquireRequest(name, "you", "u1", Duration.ofSeconds(30))))
                        .as("held until lockAtLeastFor ends").isEmpty();
            }
        }
    }

    /**
     * A release that finds its session expired (the JVM was frozen past the session timeout, and
     * the client has not yet learnt it) is told "not held", not "the store is unavailable": the
     * server removed the session's nodes with it, so the lock is already free (seen by an attack on
     * `turnstile run`, which warned that the lock "frees itself when its TTL passes").
     */
    @Test
    void aReleaseWhoseSessionExpiredSaysNotHeldInsteadOfUnavailable() throws Exception {
        try (CuratorFramework real = curator()) {
            java.util.concurrent.atomic.AtomicBoolean expired = new java.util.concurrent.atomic.AtomicBoolean();
            CuratorFramework expiring = (CuratorFramework) Proxy.newProxyInstance(getClass().getClassLoader(),
                    new Class<?>[] {CuratorFramework.class}, (proxy, method, args) -> {
                        if (expired.get() && java.util.Set.of("delete", "transaction", "getChildren", "getData", "setData",
                                "checkExists", "create").contains(method.getName())) {
                            throw new KeeperException.SessionExpiredException();
                        }
                        try {
                            return method.invoke(real, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
            try (ZooKeeperLockStore store = ZooKeeperLockStore.builder(expiring).build()) {
                String name = unique("expired-session");
                store.tryAcquire(new AcquireRequest(name, "me", "t1", Duration.ofSeconds(30))).orElseThrow();
                store.tryAcquire(new AcquireRequest(name, "me", "t2", Duration.ofSeconds(30)));
                expired.set(true);
                assertThat(store.release(name, "t1", Duration.ZERO)).as("no lease: its session took it").isFalse();
                assertThat(store.release(name, "t1", Duration.ofSeconds(5))).isFalse();
                assertThatThrownBy(() -> store.extend(name, "t1", Duration.ofSeconds(1))).as("an extend still fails loudly")
                        .isInstanceOf(dev.turnstile.StoreUnavailableException.class);
                expired.set(false);
            }
        }
    }

    /** Every node left under a base path's lock parents: parents and their children. */
    private static int nodesLeft(CuratorFramework c, String base) throws Exception {
        if (c.checkExists().forPath(base + "/locks") == null) {
            return 0;
        }
        int n = 0;
        for (String parent : c.getChildren().forPath(base + "/locks")) {
            try {
                n += 1 + c.getChildren().forPath(base + "/locks/" + parent).size();
            } catch (KeeperException.NoNodeException removedMeanwhile) {
                // counted as gone
            }
        }
        return n;
    }

    private static final int NAMES = 40;

    /** Takes {@link #NAMES} names once each and releases them early with a 3 s hold. */
    private static void useOnceWithAHold(ZooKeeperLockStore store) {
        for (int i = 0; i < NAMES; i++) {
            String name = "once-" + i;
            store.tryAcquire(new AcquireRequest(name, "me", "t" + i, Duration.ofSeconds(30))).orElseThrow();
            assertThat(store.release(name, "t" + i, Duration.ofSeconds(3))).isTrue();
        }
    }

    @Test
    void holdMarkersAndTheirParentsAreRemovedWhenTheHoldEnds() throws Exception {
        String base = "/" + unique("holds-same");
        try (CuratorFramework c = curator(); ZooKeeperLockStore store = ZooKeeperLockStore.builder(c).basePath(base)
                .holdSweepInterval(Duration.ofMinutes(10)).build()) {
            useOnceWithAHold(store);
            assertThat(nodesLeft(c, base)).as("held until lockAtLeastFor ends").isEqualTo(2 * NAMES);
            assertThat(store.tryAcquire(new AcquireRequest("once-0", "you", "u", Duration.ofSeconds(30)))).isEmpty();
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(nodesLeft(c, base))
                    .as("the store that made the markers removes them, and the empty parents, as each hold ends").isZero());
            assertThat(store.tryAcquire(new AcquireRequest("once-0", "you", "u", Duration.ofSeconds(30)))).isPresent();
        }
    }

    @Test
    void holdMarkersLeftByAProcessThatIsGoneAreSweptByAnotherStore() throws Exception {
        String base = "/" + unique("holds-gone");
        try (CuratorFramework maker = curator()) {
            try (ZooKeeperLockStore store = ZooKeeperLockStore.builder(maker).basePath(base).build()) {
                useOnceWithAHold(store);
            } // closed at once: its own removals never run
            maker.getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();
        }
        try (CuratorFramework c = curator()) {
            assertThat(nodesLeft(c, base)).as("the markers outlive their maker until their hold ends").isEqualTo(2 * NAMES);
            try (ZooKeeperLockStore sweeper = ZooKeeperLockStore.builder(c).basePath(base).holdSweepInterval(Duration.ofMillis(200)).build()) {
                await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(nodesLeft(c, base))
                        .as("a new store's periodic sweep removes the ended markers and their parents").isZero());
            }
        }
    }

    @Test
    void aSweepLeavesAMarkerWhoseHoldIsStillOn() throws Exception {
        String base = "/" + unique("holds-on");
        try (CuratorFramework c = curator(); ZooKeeperLockStore maker = ZooKeeperLockStore.builder(c).basePath(base).build();
                ZooKeeperLockStore sweeper = ZooKeeperLockStore.builder(c).basePath(base).holdSweepInterval(Duration.ofMillis(100)).build()) {
            maker.tryAcquire(new AcquireRequest("long", "me", "t1", Duration.ofSeconds(30))).orElseThrow();
            assertThat(maker.release("long", "t1", Duration.ofSeconds(20))).isTrue();
            Thread.sleep(600);
            assertThat(c.checkExists().forPath(maker.lockPath("long") + "/" + LockNodes.HOLD)).as("still on").isNotNull();
            assertThat(sweeper.tryAcquire(new AcquireRequest("long", "you", "u1", Duration.ofSeconds(30)))).isEmpty();
        }
    }

    @Test
    void aReleaseThatFindsAPromotedPlaceByAScanHoldsFromThePromotionNotTheQueueing() throws Exception {
        try (CuratorFramework c = curator(); ZooKeeperLockStore holder = ZooKeeperLockStore.builder(c).build();
                ZooKeeperLockStore waiter = ZooKeeperLockStore.builder(c).build();
                ZooKeeperLockStore other = ZooKeeperLockStore.builder(c).build()) {
            String name = unique("promoted");
            holder.tryAcquire(new AcquireRequest(name, "a", "a1", Duration.ofSeconds(30))).orElseThrow();
            assertThat(waiter.tryAcquire(new AcquireRequest(name, "b", "b1", Duration.ofSeconds(30), true))).as("queued").isEmpty();
            Thread.sleep(1_000); // queued for a second before it is promoted
            holder.release(name, "a1", Duration.ZERO);
            await().atMost(Duration.ofSeconds(5)).until(() -> waiter.tryAcquire(
                    new AcquireRequest(name, "b", "b1", Duration.ofSeconds(30), true)).isPresent());
            assertThat(waiter.extend(name, "b1", Duration.ofSeconds(30))).isTrue(); // an extend rewrites the node
            String node = c.getChildren().forPath(holder.lockPath(name)).get(0);
            Stat promoted = new Stat();
            c.getData().storingStatIn(promoted).forPath(holder.lockPath(name) + "/" + node);
            // A store that does not know the node (another process with the token) finds it by a scan.
            assertThat(other.release(name, "b1", Duration.ofSeconds(10))).isTrue();
            JsonNode marker = new ObjectMapper().readTree(c.getData().forPath(holder.lockPath(name) + "/" + LockNodes.HOLD));
            assertThat(marker.get("acquired_at_ms").asLong()).as("the lease started at its promotion")
                    .isGreaterThanOrEqualTo(promoted.getCtime() + 900).isLessThanOrEqualTo(promoted.getMtime());
            assertThat(marker.get("until_ms").asLong()).isEqualTo(marker.get("acquired_at_ms").asLong() + 10_000);
        }
    }

    @Test
    void anAcquireThatAnInterruptCutOffLeavesNoLeaseBehind() throws Exception {
        try (CuratorFramework c = curator(); CuratorFramework own = curator(); ZooKeeperLockStore holder = ZooKeeperLockStore.builder(c).build();
                ZooKeeperLockStore cut = ZooKeeperLockStore.builder(own).build();
                ZooKeeperLockStore other = ZooKeeperLockStore.builder(c).build()) {
            String name = unique("cut-acquire");
            holder.tryAcquire(new AcquireRequest(name, "a", "a1", Duration.ofSeconds(30))).orElseThrow();
            cut.tryAcquire(new AcquireRequest(name, "warm", "w1", Duration.ofSeconds(30))); // connected, the parent made
            // The flag is up before the try: ZooKeeper's client sends the create, then gives up
            // waiting for its answer, so the server makes a lease node whose path nobody learns.
            Thread.currentThread().interrupt();
            try {
                assertThat(cut.tryAcquire(new AcquireRequest(name, "cut", "c1", Duration.ofSeconds(30)))).isEmpty();
            } catch (StoreUnavailableException e) {
                try {
                    cut.release(name, "c1", Duration.ZERO); // core's undo of a failed try, on the same thread
                } catch (RuntimeException undoFailed) {
                    // core ignores it: what counts is what is left on the server
                }
            } finally {
                assertThat(Thread.interrupted()).as("the interrupt is kept").isTrue();
            }
            assertThat(c.getChildren().forPath(holder.lockPath(name))).as("right after the try").hasSize(1);
            holder.release(name, "a1", Duration.ZERO);
            assertThat(other.tryAcquire(new AcquireRequest(name, "b", "b1", Duration.ofSeconds(30))))
                    .as("free at once after its holder's release, not after the cut try's TTL").isPresent();
        }
    }

    @Test
    void aReleaseOnAnInterruptedThreadStillReleasesAndKeepsTheInterrupt() throws Exception {
        try (CuratorFramework c = curator(); CuratorFramework own = curator(); ZooKeeperLockStore store = ZooKeeperLockStore.builder(c).build();
                ZooKeeperLockStore other = ZooKeeperLockStore.builder(own).build()) {
            String name = unique("interrupted-release");
            store.tryAcquire(new AcquireRequest(name, "a", "a1", Duration.ofSeconds(30))).orElseThrow();
            Thread.currentThread().interrupt(); // a job interrupted, releasing its lock in a finally block
            boolean released;
            try {
                released = store.release(name, "a1", Duration.ZERO);
            } finally {
                assertThat(Thread.interrupted()).as("the interrupt is kept").isTrue();
            }
            assertThat(released).isTrue();
            assertThat(other.tryAcquire(new AcquireRequest(name, "b", "b1", Duration.ofSeconds(30)))).isPresent();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"zookeeper://", "zookeeper:///chroot", "zookeeper://h1:2181,,h2:2181", "zookeeper://h1:99999",
            "zookeeper://h1:2181/a/../b", "zookeeper://h1:2181/zookeeper", "zookeeper://h 1:2181",
            "zookeeper://h1:2181?turnstile.sessionTimeout=forever", "zookeeper://h1:2181?turnstile.bogus=1",
            "zookeeper://h1:2181?turnstile.queueTimeout=soon"})
    void malformedUrlsAreRejectedWithAMessage(String url) {
        assertThatThrownBy(() -> LockStores.open(url)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("store URL");
    }

    /** Issue 23's hostile ZooKeeper URLs: each refused with what to fix, none echoing the password. */
    @ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.CsvSource(delimiter = '|', value = {
        "zookeeper://h1:2181?turnstile.sessionTimeout=4294968s   | turnstile.sessionTimeout=4294968s in the store URL is out of range: give 100ms to 10m",
        "zookeeper://h1:2181?turnstile.sessionTimeout=999999999s | out of range: give 100ms to 10m",
        "zookeeper://h1:2181?turnstile.sessionTimeout=50ms       | out of range: give 100ms to 10m",
        "zookeeper://h1:2181?turnstile.connectTimeout=3000000s   | turnstile.connectTimeout=3000000s in the store URL is out of range: give 10ms to 10m",
        "zookeeper://admin:pa%ZZss@h1:2181/x                     | is not a percent escape: write % as %25",
        "zookeeper://[::1]:99999/x                               | port 99999 is out of range",
        "zookeeper://127.0.0.1:99999999999                       | port 99999999999 is out of range (1-65535)",
        "zookeeper://[::1]:-1/x                                  | port -1 is out of range (1-65535)",
        "zookeeper://h1:0,h2:2181                                | port 0 is out of range (1-65535)",
        "zookeeper://h1:2181,h2:/x                               | 'h2:' has an empty port: give 1-65535",
        "zookeeper://h1:abc                                      | port 'abc' of 'h1:abc' is not a number: give 1-65535",
        "zookeeper://h1:٦٣٧٩                 | is not a number: give 1-65535",
        "zookeeper://h1:2181?turnstile.basePath=/zookeeper        | inside /zookeeper, which ZooKeeper keeps for itself",
        "zookeeper://h1:2181?turnstile.basePath=/zookeeper/quota  | inside /zookeeper, which ZooKeeper keeps for itself",
    })
    void hostileUrlsAreRefusedNamingWhatToFix(String url, String message) {
        assertThatThrownBy(() -> LockStores.open(url)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(message).message().doesNotContain("ZZ").doesNotContain("pa%");
    }

    /**
     * Issue 23 item 7: a server that cannot be reached costs one connect timeout, closing included
     * (ZooKeeper's close waited 10 s and more for a silent port), and the message says why.
     */
    @ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.CsvSource(delimiter = '|', value = {
        "127.0.0.1:1                  | connection refused by 127.0.0.1:1",
        "no-such-host.invalid:2181    | unknown host no-such-host.invalid",
        "127.0.0.1:6379               | 127.0.0.1:6379 accepted a connection but did not answer as a ZooKeeper server",
        "SILENT                       | accepted a connection but did not answer as a ZooKeeper server",
    })
    void anUnreachableServerCostsOneConnectTimeoutAndSaysWhy(String server, String cause) throws Exception {
        try (java.net.ServerSocket silent = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            String hostPort = server.equals("SILENT") ? "127.0.0.1:" + silent.getLocalPort() : server;
            long start = System.nanoTime();
            LockStore store = LockStores.open("zookeeper://" + hostPort + "/x?turnstile.connectTimeout=1s");
            try {
                assertThatThrownBy(store::heldLocks).isInstanceOf(StoreUnavailableException.class)
                        .hasMessageContaining("within 1000 ms").hasMessageContaining(cause);
            } finally {
                store.close();
            }
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("connect timeout, probe, close: at most 1 s over")
                    .isLessThan(Duration.ofMillis(2000));
        }
    }

    /**
     * Attack finding 4: six silent servers and two refusing ones are looked at side by side, each
     * named, within one second after the connect timeout, closing included; servers past the eighth
     * are counted.
     */
    @Test
    void manyUnreachableServersCostOneConnectTimeoutAndAreAllNamed() throws Exception {
        List<java.net.ServerSocket> silent = new java.util.ArrayList<>();
        try {
            List<String> servers = new java.util.ArrayList<>();
            for (int i = 0; i < 6; i++) {
                silent.add(new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress()));
                servers.add("127.0.0.1:" + silent.get(i).getLocalPort());
            }
            servers.addAll(List.of("127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3", "127.0.0.1:4"));
            long start = System.nanoTime();
            LockStore store = LockStores.open("zookeeper://" + String.join(",", servers) + "/x?turnstile.connectTimeout=1s");
            try {
                assertThatThrownBy(store::heldLocks).isInstanceOf(StoreUnavailableException.class)
                        .hasMessageContaining(String.join(", ", servers.subList(0, 6)) + " accepted a connection")
                        .hasMessageContaining("connection refused by 127.0.0.1:1, 127.0.0.1:2 (")
                        .hasMessageContaining("; and 2 more servers not looked at");
            } finally {
                store.close();
            }
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("connect timeout, probes, close: at most 1 s over")
                    .isLessThan(Duration.ofMillis(2000));
        } finally {
            for (java.net.ServerSocket s : silent) {
                s.close();
            }
        }
    }

    /**
     * Attack finding 5: a serving ZooKeeper that was only slower than the connect timeout is not
     * called "not ZooKeeper"; the probe's session is closed again at once.
     */
    @Test
    void aHealthyServerThatWasOnlySlowIsToldApart() throws Exception {
        String why = Unreachable.diagnose(ZooKeeperServers.shared().getConnectString());
        assertThat(why).contains("answered as a ZooKeeper server, but not within turnstile.connectTimeout")
                .doesNotContain("not ZooKeeper").doesNotContain("wrong port");
    }

    /**
     * Attack finding 5: the last member of a three-server ensemble whose peers are gone has no
     * quorum; it accepts connections and refuses sessions ("ZooKeeperServer not running"), and is
     * named as such, not as "wrong port".
     */
    @Test
    void anEnsembleMemberWithoutQuorumIsToldApart() throws Exception {
        try (org.apache.curator.test.TestingCluster cluster = new org.apache.curator.test.TestingCluster(3)) {
            cluster.start();
            List<org.apache.curator.test.InstanceSpec> specs = new java.util.ArrayList<>(cluster.getInstances());
            cluster.killServer(specs.get(0));
            cluster.killServer(specs.get(1));
            int port = specs.get(2).getPort();
            await().atMost(Duration.ofSeconds(20)).until(() -> !List.of("leader", "follower", "standalone")
                    .contains(ZooKeeperEnsembleTest.mode(port)));
            LockStore store = LockStores.open("zookeeper://127.0.0.1:" + port + "/x?turnstile.connectTimeout=1s");
            try {
                assertThatThrownBy(store::heldLocks).isInstanceOf(StoreUnavailableException.class)
                        .hasMessageContaining("127.0.0.1:" + port + " closed the connection on ZooKeeper's connect request")
                        .hasMessageContaining("not serving (no quorum");
            } finally {
                store.close();
            }
        }
    }

    /** Attack finding 17: the reserved tree is judged on the path the server sees, namespace and chroot included. */
    @ParameterizedTest(name = "{0} {1} {2}")
    @org.junit.jupiter.params.provider.CsvSource(delimiter = '|', value = {
        "127.0.0.1:1           | zookeeper       |            | /zookeeper/turnstile (the client's namespace 'zookeeper'",
        "127.0.0.1:1           | zookeeper/quota | /t         | /zookeeper/quota/t (the client's namespace 'zookeeper/quota' with base path '/t')",
        "127.0.0.1:1           | zookeeper       | /zookeeper | /zookeeper/zookeeper",
        "127.0.0.1:1/zookeeper |                 |            | /zookeeper/turnstile (the connect string's chroot '/zookeeper')",
        "127.0.0.1:1/zookeeper | quota           | /t         | /zookeeper/quota/t (the connect string's chroot '/zookeeper')",
    })
    void aNamespaceOrChrootInsideTheReservedTreeIsRefused(String connect, String namespace, String basePath, String message) {
        try (CuratorFramework c = CuratorFrameworkFactory.builder().connectString(connect).namespace(namespace)
                .retryPolicy(new RetryNTimes(0, 10)).build()) {
            ZooKeeperLockStore.Builder b = ZooKeeperLockStore.builder(c);
            if (basePath != null) {
                b.basePath(basePath);
            }
            assertThatThrownBy(b::build).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("the store's nodes would go to " + message).hasMessageContaining("keeps for itself");
            assertThat(c.getState()).as("the client was not started")
                    .isEqualTo(org.apache.curator.framework.imps.CuratorFrameworkState.LATENT);
        }
    }

    /**
     * Attack finding (2026-11-28): over a Curator client whose connect string ends in a chroot, the
     * store took a lock about once in a hundred tries and left nodes behind: the path a transaction's
     * create returns carries the chroot, which the client does not strip from it.
     */
    @Test
    void aClientWithAChrootTakesWaitsAndReleasesAndLeavesNothing() throws Exception {
        String chroot = "/" + unique("chroot");
        try (CuratorFramework plain = curator()) {
            plain.create().forPath(chroot);
            String connect = ZooKeeperServers.shared().getConnectString() + chroot;
            try (CuratorFramework a = CuratorFrameworkFactory.builder().connectString(connect).retryPolicy(new RetryNTimes(1, 100)).build();
                    CuratorFramework b = CuratorFrameworkFactory.builder().connectString(connect).retryPolicy(new RetryNTimes(1, 100)).build()) {
                a.start();
                b.start();
                try (Turnstile first = Turnstile.builder(ZooKeeperLockStore.builder(a).build()).build();
                        Turnstile second = Turnstile.builder(ZooKeeperLockStore.builder(b).build()).build()) {
                    LockOptions options = LockOptions.lockAtMostFor(Duration.ofSeconds(30));
                    for (int i = 0; i < 20; i++) {
                        Lease held = first.tryAcquire("job", options).orElseThrow();
                        assertThat(second.tryAcquire("job", options)).as("busy while held").isEmpty();
                        java.util.concurrent.CompletableFuture<Optional<Lease>> waiting = java.util.concurrent.CompletableFuture
                                .supplyAsync(() -> {
                                    try {
                                        return second.acquire("job", options, Duration.ofSeconds(10));
                                    } catch (InterruptedException e) {
                                        throw new IllegalStateException(e);
                                    }
                                });
                        await().atMost(Duration.ofSeconds(10)).until(() -> plain.getChildren().forPath(chroot + "/turnstile/locks/job").size() == 2);
                        held.release();
                        waiting.get(15, java.util.concurrent.TimeUnit.SECONDS).orElseThrow().release();
                    }
                }
            }
            assertThat(plain.getChildren().forPath(chroot + "/turnstile/locks/job")).as("lock nodes left under the chroot").isEmpty();
        }
    }

    /**
     * Past 2^31 children made and deleted under one parent, ZooKeeper names the next sequential node
     * with a negative number ({@code %010d} of a signed int), which the store refuses
     * ({@code LockNodes.create}): such a node would sort ahead of the line. Only the parsing is tested
     * here; making 2^31 nodes is not a unit test.
     */
    @Test
    void aSequenceNumberPastTheCountersEndReadsNegative() {
        assertThat(LockNodes.sequence("/t/locks/x/" + LockNodes.nodePrefix("tok") + String.format(java.util.Locale.ROOT, "%010d", Integer.MIN_VALUE)))
                .isNegative();
        assertThat(LockNodes.sequence("/t/locks/x/" + LockNodes.nodePrefix("tok") + String.format(java.util.Locale.ROOT, "%010d", Integer.MAX_VALUE)))
                .isEqualTo(Integer.MAX_VALUE);
    }

    @Test
    void aNamespaceThatOnlyStartsLikeZookeeperIsAnOrdinaryPath() {
        try (CuratorFramework c = CuratorFrameworkFactory.builder().connectString("127.0.0.1:1").namespace("zookeeper2")
                .retryPolicy(new RetryNTimes(0, 10)).build()) {
            ZooKeeperLockStore.builder(c).build().close();
        }
    }

    @Test
    void theBuilderTakesADescriptionAndRefusesANullOne() {
        try (CuratorFramework c = CuratorFrameworkFactory.builder().connectString("127.0.0.1:1")
                .retryPolicy(new RetryNTimes(0, 10)).build()) {
            assertThatThrownBy(() -> ZooKeeperLockStore.builder(c).description(null))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("description is null");
            try (ZooKeeperLockStore store = ZooKeeperLockStore.builder(c).description("zk-main").build()) {
                assertThat(store.description()).isEqualTo("zk-main");
            }
            try (ZooKeeperLockStore store = ZooKeeperLockStore.builder(c).build()) {
                assertThat(store.description()).isEqualTo("zookeeper (127.0.0.1:1, /turnstile)");
            }
        }
    }

    @Test
    void aBasePathNamedZookeeperInsideAChrootIsAnOrdinaryPath() {
        try (LockStore store = LockStores.open("zookeeper://127.0.0.1:1/apps?turnstile.basePath=/zookeeper&turnstile.connectTimeout=300ms")) {
            assertThat(store.description()).contains("/apps");
        }
    }

    @Test
    void optionsWithoutTheTurnstilePrefixAreNamedInTheMessage() {
        assertThatThrownBy(() -> LockStores.open("zookeeper://h1:2181?sessionTimeout=10s&password=s3cret"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown option(s) sessionTimeout, password")
                .hasMessageContaining("turnstile.sessionTimeout")
                .message().doesNotContain("s3cret");
    }

    @Test
    void passwordsNeverShow() {
        assertThatThrownBy(() -> LockStores.open("zookeeper://admin:s3cret@h1:99999/x")).isInstanceOf(IllegalArgumentException.class)
                .message().doesNotContain("s3cret");
        try (LockStore store = LockStores.open("zookeeper://admin:s3cret@127.0.0.1:1/x?turnstile.connectTimeout=300ms")) {
            assertThat(store.description()).doesNotContain("s3cret").doesNotContain("admin");
            assertThatThrownBy(store::heldLocks).isInstanceOf(StoreUnavailableException.class).message().doesNotContain("s3cret");
        }
    }

    @Test
    void theUrlGivesHostsChrootAndOptions() {
        ZooKeeperLockStoreFactory.Parsed p = ZooKeeperLockStoreFactory.parse(
                "zookeeper://zk1,zk2:2182/apps/billing?turnstile.sessionTimeout=15s&turnstile.basePath=/locks");
        assertThat(p.connect()).isEqualTo("zk1:2181,zk2:2182");
        assertThat(p.namespace()).isEqualTo("apps/billing");
        assertThat(p.sessionTimeout()).isEqualTo(Duration.ofSeconds(15));
        assertThat(p.basePath()).isEqualTo("/locks");
        assertThat(p.queueTimeout()).isEqualTo(ZooKeeperLockStore.DEFAULT_QUEUE_TIMEOUT);
        assertThat(ZooKeeperLockStoreFactory.parse("zookeeper://zk1?turnstile.queueTimeout=1500ms").queueTimeout())
                .isEqualTo(Duration.ofMillis(1500));
    }

    @Test
    void aQueueTimeoutTooShortToTouchPlacesInTimeIsRefused() {
        assertThatThrownBy(() -> LockStores.open("zookeeper://127.0.0.1:1?turnstile.queueTimeout=50ms"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("queue timeout PT0.05S is invalid: give at least 100 ms");
        try (CuratorFramework c = CuratorFrameworkFactory.builder().connectString("127.0.0.1:1").retryPolicy(new RetryNTimes(0, 10)).build()) {
            assertThatThrownBy(() -> ZooKeeperLockStore.builder(c).queueTimeout(null))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least 100 ms");
        }
    }
}
