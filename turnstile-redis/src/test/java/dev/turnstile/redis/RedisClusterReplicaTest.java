package dev.turnstile.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.turnstile.StoreUnavailableException;
import dev.turnstile.spi.AcquireRequest;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.stream.Collectors;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** A Redis Cluster of 3 masters with a replica each: the WAIT goes to the master of the key's slot. */
class RedisClusterReplicaTest {
    static RedisServers servers;
    static List<RedisServers.Node> nodes;
    static String url;

    @BeforeAll
    static void startCluster() throws Exception {
        servers = new RedisServers();
        nodes = servers.cluster(3, 1);
        url = "redis-cluster://" + nodes.stream().map(RedisServers.Node::hostPort).collect(Collectors.joining(","))
                + "?turnstile.replicaAckTimeout=300ms";
        // every master sees its replica in sync
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> nodes.stream().allMatch(n -> {
            String info = cli(n, "INFO", "replication");
            return info.contains("role:slave") ? info.contains("master_link_status:up") : info.contains("state=online");
        }));
        // and acknowledges writes (see RedisServers.awaitAcknowledgingReplica); the cluster is still empty
        for (RedisServers.Node n : nodes) {
            if (cli(n, "INFO", "replication").contains("role:master")) {
                RedisServers.awaitAcknowledgingReplica(n);
            }
        }
    }

    @AfterAll
    static void stopCluster() throws Exception {
        for (RedisServers.Node n : nodes) {
            RedisServers.signal(n, "CONT");
        }
        servers.close();
    }

    static String cli(RedisServers.Node n, String... args) {
        try {
            List<String> cmd = new java.util.ArrayList<>(List.of("redis-cli", "-p", Integer.toString(n.port)));
            cmd.addAll(List.of(args));
            return RedisServers.exec(cmd).trim();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** The replica of the master that serves this key's slot. */
    static RedisServers.Node replicaOf(String key) {
        int slot = Integer.parseInt(cli(nodes.get(0), "CLUSTER", "KEYSLOT", key));
        String masterId = null;
        String table = cli(nodes.get(0), "CLUSTER", "NODES");
        for (String line : table.split("\n")) {
            String[] f = line.trim().split(" ");
            if (f[2].contains("master")) {
                for (int i = 8; i < f.length; i++) {
                    String[] range = f[i].split("-");
                    int lo = Integer.parseInt(range[0]);
                    int hi = range.length > 1 ? Integer.parseInt(range[1]) : lo;
                    if (slot >= lo && slot <= hi) {
                        masterId = f[0];
                    }
                }
            }
        }
        for (String line : table.split("\n")) {
            String[] f = line.trim().split(" ");
            if (f[2].contains("slave") && f[3].equals(masterId)) {
                int port = Integer.parseInt(f[1].substring(f[1].indexOf(':') + 1, f[1].indexOf('@')));
                return nodes.stream().filter(n -> n.port == port).findFirst().orElseThrow();
            }
        }
        throw new IllegalStateException("no replica for slot " + slot + " in " + table);
    }

    @Test
    void anAcquireWaitsForTheReplicaOfItsOwnSlotsMaster() throws Exception {
        try (LockStore store = LockStores.open(url)) {
            String name = "c-" + UUID.randomUUID().toString().substring(0, 8);
            String other = null;
            RedisServers.Node replica = replicaOf("turnstile:{" + name + "}");
            for (int i = 0; other == null; i++) {
                String candidate = "c-other-" + i;
                if (replicaOf("turnstile:{" + candidate + "}") != replica) {
                    other = candidate;
                }
            }
            assertThat(store.tryAcquire(new AcquireRequest(name + "-warm", "o", "t0", Duration.ofSeconds(30)))).isPresent();
            RedisServers.signal(replica, "STOP");
            try {
                assertThatThrownBy(() -> store.tryAcquire(new AcquireRequest(name, "o", "t1", Duration.ofSeconds(30))))
                        .isInstanceOf(StoreUnavailableException.class).hasMessageContaining("0 of 1 replicas");
                assertThat(store.tryAcquire(new AcquireRequest(other, "o", "t2", Duration.ofSeconds(30))))
                        .as("a slot whose master's replica is up").isPresent();
            } finally {
                RedisServers.signal(replica, "CONT");
            }
        }
    }
}
