package dev.turnstile.mongo;

import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import dev.turnstile.testkit.ClockStepContract;

/**
 * MongoDB: lockedAt and renewedAt are $currentDate and expiry compares with $$NOW. The server is
 * mongo-java-server in this JVM, which evaluates both on this JVM's clock: the server's clock here.
 */
class MongoClockStepTest extends ClockStepContract {
    @Override protected String storeUrl() { return MongoTestServer.url(); }
    @Override protected LockStore newStore() { return LockStores.open(storeUrl()); }
}
