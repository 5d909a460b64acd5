package dev.turnstile.redis;

import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import dev.turnstile.testkit.ClockStepContract;
import dev.turnstile.testkit.LockStoreContract;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;

/** Redlock over 5 independent redis-server processes started for this class. */
class RedlockLockStoreContractTest extends LockStoreContract {
    static RedisServers servers;
    static String url;

    @BeforeAll
    static void start() {
        servers = new RedisServers();
        List<String> hosts = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            hosts.add(servers.server().hostPort());
        }
        url = "redlock://" + String.join(",", hosts) + "?turnstile.nodeTimeout=200ms";
    }

    @AfterAll
    static void stop() {
        servers.close();
    }

    @Override protected LockStore newStore() { return LockStores.open(url); }
    @Override protected String storeUrl() { return url; }

    /** Redlock documents its fences as unsafe: each node counts on its own. */
    @Override protected boolean fencesAreSafe() { return false; }
    @Override protected boolean simultaneousTriesCanAllFail() { return true; }

    @Override
    protected LockStore unreachableStore() {
        return LockStores.open("redlock://127.0.0.1:1,127.0.0.1:2,127.0.0.1:3?turnstile.nodeTimeout=200ms");
    }

    /** lockAtLeastFor by the server's TIME on each Redlock node while the holder's wall clock is stepped. */
    @Nested
    class ClockStep extends ClockStepContract {
        @Override protected String storeUrl() { return url; }
        @Override protected LockStore newStore() { return LockStores.open(url); }
    }
}
