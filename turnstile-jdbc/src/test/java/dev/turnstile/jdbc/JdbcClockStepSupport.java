package dev.turnstile.jdbc;

import dev.turnstile.spi.LockStore;
import dev.turnstile.testkit.ClockStepContract;

/** Runs the client-clock-step test on a JDBC URL; the watching client creates the table if missing. */
abstract class JdbcClockStepSupport extends ClockStepContract {

    /** The database under test. */
    abstract String jdbcUrl();

    @Override
    protected String storeUrl() {
        return jdbcUrl();
    }

    @Override
    protected LockStore newStore() {
        return new JdbcLockStoreFactory().open(TestDatabases.with(TestDatabases.with(jdbcUrl(),
                "turnstile.createTable=true"), "turnstile.poolSize=2"));
    }
}
