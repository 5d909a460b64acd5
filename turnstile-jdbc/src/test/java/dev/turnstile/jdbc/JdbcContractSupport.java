package dev.turnstile.jdbc;

import dev.turnstile.spi.LockStore;
import dev.turnstile.testkit.LockStoreContract;

/** Runs the contract on a JDBC URL: each client is a store opened from the URL with its own small pool. */
abstract class JdbcContractSupport extends LockStoreContract {

    /** The database under test; the tests create the table if missing. */
    abstract String jdbcUrl();

    /** The same database type at an address where nothing listens. */
    abstract String unreachableJdbcUrl();

    @Override
    protected LockStore newStore() {
        return new JdbcLockStoreFactory().open(TestDatabases.with(TestDatabases.with(jdbcUrl(),
                "turnstile.createTable=true"), "turnstile.poolSize=2"));
    }

    @Override
    protected String storeUrl() {
        return jdbcUrl();
    }

    @Override
    protected LockStore unreachableStore() {
        String url = unreachableJdbcUrl();
        return JdbcLockStore.builder(TestDatabases.driverManager(url)).dialect(SqlDialect.fromJdbcUrl(url)).build();
    }
}
