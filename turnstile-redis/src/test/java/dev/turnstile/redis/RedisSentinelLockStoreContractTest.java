package dev.turnstile.redis;

import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import dev.turnstile.testkit.ClockStepContract;
import dev.turnstile.testkit.LockStoreContract;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;

/** A master watched by a Sentinel, reached through the Sentinel, started for this class. */
class RedisSentinelLockStoreContractTest extends LockStoreContract {
    static RedisServers servers;
    static String url;

    @BeforeAll
    static void start() throws Exception {
        servers = new RedisServers();
        RedisServers.Node master = servers.server();
        RedisServers.Node sentinel = servers.sentinel(master, "locks");
        url = "redis-sentinel://127.0.0.1:" + sentinel.port + "#locks";
    }

    @AfterAll
    static void stop() {
        servers.close();
    }

    @Override protected LockStore newStore() { return LockStores.open(url); }
    @Override protected String storeUrl() { return url; }
    @Override protected LockStore unreachableStore() { return LockStores.open("redis-sentinel://127.0.0.1:1?turnstile.timeout=2s#locks"); }

    /** lockAtLeastFor by the server's TIME through the Sentinel while the holder's wall clock is stepped. */
    @Nested
    class ClockStep extends ClockStepContract {
        @Override protected String storeUrl() { return url; }
        @Override protected LockStore newStore() { return LockStores.open(url); }
    }
}
