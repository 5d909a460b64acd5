package dev.turnstile.redis;

import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import dev.turnstile.testkit.LockStoreContract;

/** Standalone Redis: the machine's server on 6379. */
class RedisLockStoreContractTest extends LockStoreContract {
    @Override protected LockStore newStore() { return LockStores.open(storeUrl()); }
    @Override protected String storeUrl() { return RedisServers.STANDALONE; }
    @Override protected LockStore unreachableStore() { return LockStores.open("redis://127.0.0.1:1?turnstile.timeout=2s"); }
}
