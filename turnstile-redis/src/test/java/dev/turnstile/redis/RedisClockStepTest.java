package dev.turnstile.redis;

import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import dev.turnstile.testkit.ClockStepContract;

/** Standalone Redis: lockAtLeastFor by the server's TIME while the holder's wall clock is stepped. */
class RedisClockStepTest extends ClockStepContract {
    @Override protected String storeUrl() { return RedisServers.STANDALONE; }
    @Override protected LockStore newStore() { return LockStores.open(storeUrl()); }
}
