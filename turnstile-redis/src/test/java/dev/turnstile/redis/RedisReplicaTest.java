package dev.turnstile.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.turnstile.StoreUnavailableException;

import dev.turnstile.spi.AcquireRequest;
import dev.turnstile.spi.Grant;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import io.lettuce.core.RedisClient;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A real master and replica, started for each test: failover, lost writes, replica acknowledgement. */
class RedisReplicaTest {
    RedisServers servers;
    RedisServers.Node master;
    RedisServers.Node replica;

    @BeforeEach
    void start() throws Exception {
        servers = new RedisServers();
        master = servers.server();
        replica = servers.server("--replicaof", "127.0.0.1", Integer.toString(master.port));
        awaitInSync();
    }

    @AfterEach
    void stop() throws Exception {
        RedisServers.signal(replica, "CONT");
        servers.close();
    }

    static String name() {
        return "f-" + UUID.randomUUID().toString().substring(0, 8);
    }

    static AcquireRequest request(String name) {
        return new AcquireRequest(name, "o", UUID.randomUUID().toString(), Duration.ofSeconds(30));
    }

    private String cli(RedisServers.Node n, String... args) throws Exception {
        List<String> cmd = new java.util.ArrayList<>(List.of("redis-cli", "-p", Integer.toString(n.port)));
        cmd.addAll(List.of(args));
        return RedisServers.exec(cmd).trim();
    }

    /**
     * The precondition of the tests that then freeze the replica: one acquire the replica did
     * acknowledge. Before {@link #awaitInSync} waited on one connection, a fresh client's first
     * acquire right after the sync was seen (in CI) to get no acknowledgement in time; that refusal
     * is correct, and should it happen again it is only retried here.
     */
    private static void acquiredWithTheReplica(LockStore store, AcquireRequest request) {
        Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100))
                .ignoreException(dev.turnstile.StoreUnavailableException.class)
                .until(() -> store.tryAcquire(request).isPresent());
    }

    private void awaitInSync() {
        Awaitility.await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50)).until(() -> {
            String info = cli(master, "INFO", "replication");
            return info.contains("connected_slaves:1") && info.contains("state=online");
        });
        // and acknowledging: the tests start once a write has been acknowledged within their own
        // ack timeouts (redis-cli's SET and WAIT as two processes proved nothing)
        RedisServers.awaitAcknowledgingReplica(master);
    }

    @Test
    void aPromotedReplicaThatMissedTheLastAcquireIssuesAGreaterFence() throws Exception {
        String name = name();
        long before;
        long lost;
        // Not waiting for the replica, so that the acquire can be lost (WAIT makes that rarer, not impossible).
        try (LockStore onMaster = LockStores.open("redis://" + master.hostPort() + "?turnstile.replicaAcks=0")) {
            before = onMaster.tryAcquire(request(name + "-warm")).orElseThrow().fence();
            Grant a = onMaster.tryAcquire(request(name)).orElseThrow(); // replicated
            Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> cli(replica, "GET", "turnstile:{" + name + "}:fence")
                    .equals(Long.toString(a.fence())));
            onMaster.forceRelease(name);
            Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> cli(replica, "EXISTS", "turnstile:{" + name + "}").equals("0"));
            // The replica misses what follows: frozen, and cut off by the master (a frozen replica
            // would still find what the master sent in its socket buffer when it wakes up).
            RedisServers.signal(replica, "STOP");
            cli(master, "CLIENT", "KILL", "TYPE", "replica");
            lost = onMaster.tryAcquire(request(name)).orElseThrow().fence();
            assertThat(lost).isGreaterThan(a.fence()).isGreaterThan(before);
        }
        servers.kill(master); // the acquire dies with the master
        RedisServers.signal(replica, "CONT");
        cli(replica, "REPLICAOF", "NO", "ONE");
        try (LockStore onPromoted = LockStores.open("redis://" + replica.hostPort())) {
            long next = onPromoted.tryAcquire(request(name)).orElseThrow().fence();
            assertThat(next).as("the fence after the failover is above the one lost with the old master").isGreaterThan(lost);
        }
    }

    private long waitCalls() throws Exception {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("cmdstat_wait:calls=(\\d+)").matcher(cli(master, "INFO", "commandstats"));
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }

    @Test
    void byDefaultAnAcquireWaitsForTheReplicaAndIsOnItWhenItReturns() throws Exception {
        try (LockStore store = LockStores.open("redis://" + master.hostPort())) {
            long waits = waitCalls();
            for (int i = 0; i < 20; i++) {
                String name = name();
                Grant g = store.tryAcquire(request(name)).orElseThrow();
                assertThat(cli(replica, "GET", "turnstile:{" + name + "}")).as("acknowledged by the replica")
                        .contains("fence=" + g.fence() + " ");
            }
            assertThat(waitCalls() - waits).isGreaterThanOrEqualTo(20);
            cli(master, "SCRIPT", "FLUSH"); // the script and its WAIT are sent again after NOSCRIPT
            String name = name();
            Grant g = store.tryAcquire(request(name)).orElseThrow();
            assertThat(cli(replica, "GET", "turnstile:{" + name + "}")).contains("fence=" + g.fence() + " ");
        }
    }

    /**
     * Threads sharing the store's one connection: none of their acquires returns before the replica
     * has it. (This test caught a group commit of WAITs, tried on 2026-11-28 and withdrawn: a WAIT
     * sent from the connection's I/O thread went out ahead of writes other threads had queued.)
     */
    @Test
    void concurrentAcquiresAreEachOnTheReplicaWhenTheyReturn() throws Exception {
        int threads = 8;
        int each = 50;
        RedisClient onReplica = RedisClient.create("redis://" + replica.hostPort());
        try (LockStore store = LockStores.open("redis://" + master.hostPort());
                var replicaConnection = onReplica.connect()) {
            store.tryAcquire(request(name())).orElseThrow(); // connected, replicas counted
            long waits = waitCalls();
            java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(threads);
            java.util.concurrent.CountDownLatch start = new java.util.concurrent.CountDownLatch(1);
            List<java.util.concurrent.Future<Integer>> done = new java.util.ArrayList<>();
            for (int t = 0; t < threads; t++) {
                done.add(pool.submit(() -> {
                    start.await();
                    int missing = 0;
                    for (int i = 0; i < each; i++) {
                        String name = name();
                        Grant g = store.tryAcquire(request(name)).orElseThrow();
                        String onIt = replicaConnection.sync().get("turnstile:{" + name + "}");
                        if (onIt == null || !onIt.contains("fence=" + g.fence() + " ")) {
                            missing++;
                        }
                    }
                    return missing;
                }));
            }
            start.countDown();
            int missing = 0;
            for (java.util.concurrent.Future<Integer> f : done) {
                missing += f.get(60, java.util.concurrent.TimeUnit.SECONDS);
            }
            pool.shutdown();
            assertThat(missing).as("acquires that returned before the replica had them").isZero();
            assertThat(waitCalls() - waits).as("WAITs for %d acquires on %d threads", threads * each, threads)
                    .isGreaterThanOrEqualTo(threads * each);
        } finally {
            onReplica.shutdown();
        }
    }

    @Test
    void withoutAReplicaAckTheAcquireFailsAndGivesTheLockBack() throws Exception {
        String name = name();
        try (LockStore store = LockStores.open("redis://" + master.hostPort() + "?turnstile.replicaAckTimeout=300ms");
                LockStore noWait = LockStores.open("redis://" + master.hostPort() + "?turnstile.replicaAcks=0")) {
            AcquireRequest held = request(name + "-held");
            acquiredWithTheReplica(store, held);
            RedisServers.signal(replica, "STOP");
            long start = System.nanoTime();
            assertThatThrownBy(() -> store.tryAcquire(request(name))).isInstanceOf(StoreUnavailableException.class)
                    .hasMessageContaining("0 of 1 replicas acknowledged").hasMessageContaining("gave it back");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isBetween(Duration.ofMillis(250), Duration.ofSeconds(3));
            assertThat(cli(master, "EXISTS", "turnstile:{" + name + "}")).as("given back").isEqualTo("0");
            assertThatThrownBy(() -> store.extend(held.name(), held.token(), Duration.ofSeconds(60)))
                    .isInstanceOf(StoreUnavailableException.class).hasMessageContaining("extended");
            assertThat(noWait.tryAcquire(request(name))).as("replicaAcks=0 does not wait").isPresent();
        }
    }

    @Test
    void aMasterCutOffFromItsReplicaStopsGrantingEvenWhenItReportsNoReplica() throws Exception {
        try (LockStore store = LockStores.open("redis://" + master.hostPort() + "?turnstile.replicaAckTimeout=200ms")) {
            acquiredWithTheReplica(store, request(name()));
            RedisServers.signal(replica, "STOP");
            cli(master, "CLIENT", "KILL", "TYPE", "replica");
            Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> cli(master, "INFO", "replication").contains("connected_slaves:0"));
            for (int i = 0; i < 3; i++) {
                // the first failure has the store read the replica count again: 0, but it had one
                assertThatThrownBy(() -> store.tryAcquire(request(name()))).isInstanceOf(StoreUnavailableException.class)
                        .hasMessageContaining("0 of 1 replicas");
                Thread.sleep(300);
            }
        }
    }

    @Test
    void anExplicitCountIsWaitedForEvenWithoutReplicas() throws Exception {
        RedisServers.Node alone = servers.server();
        try (LockStore auto = LockStores.open("redis://" + alone.hostPort());
                LockStore strict = LockStores.open("redis://" + alone.hostPort() + "?turnstile.replicaAcks=1&turnstile.replicaAckTimeout=200ms")) {
            assertThat(auto.tryAcquire(request(name()))).as("auto: no replica, no wait").isPresent();
            assertThatThrownBy(() -> strict.tryAcquire(request(name()))).isInstanceOf(StoreUnavailableException.class)
                    .hasMessageContaining("0 of 1 replicas");
        }
    }

    @Test
    void aHandOverThatNoReplicaAcknowledgesLeavesTheLockFree() throws Exception {
        String name = name();
        RedisClient client = RedisClient.create("redis://" + master.hostPort());
        try (RedisLockStore store = RedisLockStore.builder(client).replicaAckTimeout(Duration.ofMillis(300)).build()) {
            acquiredWithTheReplica(store, new AcquireRequest(name, "o", "t1", Duration.ofSeconds(30)));
            RedisServers.signal(replica, "STOP");
            dev.turnstile.spi.HandOver h = store.handOver(name, "t1", new AcquireRequest(name, "o", "t2", Duration.ofSeconds(30), true));
            assertThat(h).as("the old lease ended; the new one was not acknowledged, so it was given back")
                    .isEqualTo(dev.turnstile.spi.HandOver.releasedOnly());
            assertThat(cli(master, "EXISTS", "turnstile:{" + name + "}")).isEqualTo("0");
        } finally {
            client.shutdown();
        }
    }
}
