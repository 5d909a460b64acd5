package dev.turnstile.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/** What the lock store and the claim store do alike around a statement: commit, roll back, back off. */
final class JdbcCalls {
    private JdbcCalls() {}

    /** A few milliseconds, growing and jittered, so the transactions that collided do not collide again. */
    static void pauseAfterConflict(int attempt) {
        long maxMicros = 1000L << attempt; // 2, 4, 8 ms
        LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(ThreadLocalRandom.current().nextLong(maxMicros / 4, maxMicros + 1)));
    }

    /** SQLite's "database is locked": another process's transaction held the file past the busy timeout. */
    static boolean isSqliteBusy(@Nullable Dialect dialect, SQLException e) {
        return dialect instanceof SqliteDialect && e.getMessage() != null && e.getMessage().contains("SQLITE_BUSY");
    }

    static void commitIfNeeded(Connection c) throws SQLException {
        if (!c.getAutoCommit()) {
            c.commit();
        }
    }

    static void rollbackQuietly(Connection c) {
        try {
            if (!c.getAutoCommit()) {
                c.rollback();
            }
        } catch (SQLException ignored) {
            // the connection is going back to the pool anyway
        }
    }
}
