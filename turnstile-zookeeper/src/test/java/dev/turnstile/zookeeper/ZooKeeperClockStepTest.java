package dev.turnstile.zookeeper;

import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import dev.turnstile.testkit.ClockStepContract;

/**
 * ZooKeeper: leases end at their node's ctime/mtime plus the TTL and the hold marker at the lease's
 * start plus lockAtLeastFor, all server times. The server is Curator's TestingServer in this JVM;
 * the holder's JVM is the one whose clock is stepped.
 */
class ZooKeeperClockStepTest extends ClockStepContract {
    @Override protected String storeUrl() { return ZooKeeperServers.url(); }
    @Override protected LockStore newStore() { return LockStores.open(storeUrl()); }
}
