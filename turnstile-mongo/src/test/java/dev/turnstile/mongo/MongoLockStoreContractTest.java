package dev.turnstile.mongo;

import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import dev.turnstile.testkit.LockStoreContract;

/** The whole contract against mongo-java-server (see MongoTestServer), each client from the URL. */
class MongoLockStoreContractTest extends LockStoreContract {
    @Override protected LockStore newStore() { return LockStores.open(storeUrl()); }
    @Override protected String storeUrl() { return MongoTestServer.url(); }
    @Override protected LockStore unreachableStore() { return LockStores.open("mongodb://127.0.0.1:1/turnstile_test?turnstile.timeout=1s"); }
}
