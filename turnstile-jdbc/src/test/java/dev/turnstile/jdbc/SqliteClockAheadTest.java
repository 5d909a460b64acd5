package dev.turnstile.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.turnstile.Lease;
import dev.turnstile.LockOptions;
import dev.turnstile.Turnstile;
import dev.turnstile.spi.LockStore;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * SQLite judges time by each process's own clock. A holder whose clock runs ahead writes its
 * {@code acquired_at} in the future; its release must still free the lock at once for processes
 * whose clock is right (the long chaos run found it blocked for the clock's lead).
 */
class SqliteClockAheadTest {

    @Test
    void aReleaseByAHolderWhoseClockRunsAheadFreesTheLockAtOnce() throws Exception {
        String table = JdbcLockStoreTest.table();
        String url = TestDatabases.with(TestDatabases.with(TestDatabases.SQLITE, "turnstile.createTable=true"), "turnstile.table=" + table);
        try (LockStore store = new JdbcLockStoreFactory().open(url);
                Turnstile turnstile = Turnstile.builder(store).build()) {
            Lease lease = turnstile.tryAcquire("ahead", LockOptions.lockAtMostFor(Duration.ofSeconds(30))).orElseThrow();
            shiftIntoTheFuture(table, "ahead", Duration.ofMinutes(5));

            lease.release();

            Optional<Lease> next = turnstile.tryAcquire("ahead");
            assertThat(next).as("the lock after the ahead holder's release").isPresent();
            next.get().release();
        }
    }

    @Test
    void aMinimumHoldIsStillCountedFromTheAcquire() throws Exception {
        String table = JdbcLockStoreTest.table();
        String url = TestDatabases.with(TestDatabases.with(TestDatabases.SQLITE, "turnstile.createTable=true"), "turnstile.table=" + table);
        try (LockStore store = new JdbcLockStoreFactory().open(url);
                Turnstile turnstile = Turnstile.builder(store).build()) {
            Lease lease = turnstile.tryAcquire("held", LockOptions.lockAtMostFor(Duration.ofSeconds(30))).orElseThrow();

            lease.release(Duration.ofSeconds(20));

            assertThat(turnstile.tryAcquire("held")).as("the lock inside its minimum hold").isEmpty();
        }
    }

    /** Does what a holder whose clock is {@code lead} ahead would have written. */
    private static void shiftIntoTheFuture(String table, String name, Duration lead) throws Exception {
        try (Connection c = DriverManager.getConnection(TestDatabases.SQLITE); Statement s = c.createStatement()) {
            long ms = lead.toMillis();
            int rows = s.executeUpdate("UPDATE " + table + " SET acquired_at = acquired_at + " + ms + ", expires_at = expires_at + " + ms
                    + " WHERE name = '" + name + "'");
            assertThat(rows).isEqualTo(1);
        }
    }
}
