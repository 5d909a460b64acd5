package dev.turnstile.redis;

import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import dev.turnstile.testkit.ClockStepContract;
import dev.turnstile.testkit.LockStoreContract;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;

/** A 3-master Redis Cluster started for this class. */
class RedisClusterLockStoreContractTest extends LockStoreContract {
    static RedisServers servers;
    static String url;

    @BeforeAll
    static void startCluster() throws Exception {
        servers = new RedisServers();
        List<RedisServers.Node> masters = servers.cluster(3);
        url = "redis-cluster://" + masters.stream().map(RedisServers.Node::hostPort).collect(Collectors.joining(","));
    }

    @AfterAll
    static void stopCluster() {
        servers.close();
    }

    @Override protected LockStore newStore() { return LockStores.open(url); }
    @Override protected String storeUrl() { return url; }
    @Override protected LockStore unreachableStore() { return LockStores.open("redis-cluster://127.0.0.1:1?turnstile.timeout=2s"); }

    /** lockAtLeastFor by the server's TIME on the Cluster while the holder's wall clock is stepped. */
    @Nested
    class ClockStep extends ClockStepContract {
        @Override protected String storeUrl() { return url; }
        @Override protected LockStore newStore() { return LockStores.open(url); }
    }
}
