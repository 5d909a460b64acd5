package dev.turnstile.zookeeper;

import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import dev.turnstile.testkit.LockStoreContract;

/** The whole contract against Curator's in-JVM testing server; child JVMs reach it by URL. */
class ZooKeeperLockStoreContractTest extends LockStoreContract {
    @Override protected LockStore newStore() { return LockStores.open(storeUrl()); }
    @Override protected String storeUrl() { return ZooKeeperServers.url(); }
    @Override protected LockStore unreachableStore() {
        return LockStores.open("zookeeper://127.0.0.1:1/x?turnstile.connectTimeout=500ms");
    }
}
