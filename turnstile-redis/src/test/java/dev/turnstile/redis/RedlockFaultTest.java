package dev.turnstile.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.turnstile.Lease;
import dev.turnstile.LockOptions;
import dev.turnstile.StoreUnavailableException;
import dev.turnstile.Turnstile;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Redlock over 5 nodes while nodes die or hang. */
class RedlockFaultTest {
    RedisServers servers;
    List<RedisServers.Node> nodes = new ArrayList<>();
    String url;

    @BeforeEach
    void start() {
        servers = new RedisServers();
        List<String> hosts = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            RedisServers.Node n = servers.server();
            nodes.add(n);
            hosts.add(n.hostPort());
        }
        url = "redlock://" + String.join(",", hosts) + "?turnstile.nodeTimeout=150ms";
    }

    @AfterEach
    void stop() throws Exception {
        for (RedisServers.Node n : nodes) {
            RedisServers.signal(n, "CONT");
        }
        servers.close();
    }

    static String name() {
        return "rl-" + UUID.randomUUID().toString().substring(0, 8);
    }

    @Test
    void oneOrTwoNodesDownStillLockAndExclude() throws Exception {
        try (LockStore a = LockStores.open(url); LockStore b = LockStores.open(url)) {
            Turnstile ta = Turnstile.builder(a).build();
            Turnstile tb = Turnstile.builder(b).build();
            servers.kill(nodes.get(0));
            String n1 = name();
            Lease l1 = ta.tryAcquire(n1).orElseThrow();
            assertThat(tb.tryAcquire(n1)).isEmpty();
            servers.kill(nodes.get(1));
            String n2 = name();
            Lease l2 = ta.tryAcquire(n2, LockOptions.lockAtMostFor(Duration.ofSeconds(10))).orElseThrow();
            assertThat(tb.tryAcquire(n2)).isEmpty();
            l2.extend(Duration.ofSeconds(20));
            assertThat(l2.release()).hasToString("RELEASED");
            assertThat(tb.tryAcquire(n2)).isPresent();
            assertThat(l1.release()).hasToString("RELEASED");
        }
    }

    @Test
    void threeNodesDownFailFastWithTheUnavailableError() throws Exception {
        try (LockStore a = LockStores.open(url)) {
            Turnstile t = Turnstile.builder(a).build();
            for (int i = 0; i < 3; i++) {
                servers.kill(nodes.get(i));
            }
            long start = System.nanoTime();
            assertThatThrownBy(() -> t.tryAcquire(name())).isInstanceOf(StoreUnavailableException.class)
                    .hasMessageContaining("2 of 5").hasMessageContaining("3 are needed");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("bounded by the node timeout, not the TTL")
                    .isLessThan(Duration.ofSeconds(2));
        }
    }

    @Test
    void aPausedNodeCostsAtMostTheNodeTimeout() throws Exception {
        try (LockStore a = LockStores.open(url)) {
            Turnstile t = Turnstile.builder(a).build();
            t.tryAcquire(name()).orElseThrow().release(); // connections warm
            RedisServers.signal(nodes.get(2), "STOP");
            long worst = 0;
            for (int i = 0; i < 5; i++) {
                long start = System.nanoTime();
                Lease lease = t.tryAcquire(name(), LockOptions.lockAtMostFor(Duration.ofSeconds(10))).orElseThrow();
                worst = Math.max(worst, System.nanoTime() - start);
                lease.release();
            }
            assertThat(Duration.ofNanos(worst)).as("node timeout 150 ms plus slack").isLessThan(Duration.ofMillis(1500));
        }
    }

    @Test
    void aBusyMinorityDoesNotBlockButABusyMajorityDoes() throws Exception {
        try (LockStore redlock = LockStores.open(url)) {
            Turnstile t = Turnstile.builder(redlock).build();
            String name = name();
            // Another client holds the name on two nodes directly: a majority of three is still free.
            for (int i = 0; i < 2; i++) {
                try (LockStore single = LockStores.open("redis://" + nodes.get(i).hostPort())) {
                    Turnstile.builder(single).build().tryAcquire(name, LockOptions.lockAtMostFor(Duration.ofSeconds(30))).orElseThrow();
                }
            }
            assertThat(t.tryAcquire(name)).isPresent();
            String other = name();
            for (int i = 0; i < 3; i++) {
                try (LockStore single = LockStores.open("redis://" + nodes.get(i).hostPort())) {
                    Turnstile.builder(single).build().tryAcquire(other, LockOptions.lockAtMostFor(Duration.ofSeconds(30))).orElseThrow();
                }
            }
            assertThat(t.tryAcquire(other)).as("busy, not unavailable").isEmpty();
            // The failed attempt gave back what it took on the two free nodes.
            try (LockStore single = LockStores.open("redis://" + nodes.get(4).hostPort())) {
                assertThat(single.heldLocks()).extracting(i -> i.name()).doesNotContain(other);
            }
        }
    }
}
