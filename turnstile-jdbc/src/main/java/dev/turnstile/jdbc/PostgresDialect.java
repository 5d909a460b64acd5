package dev.turnstile.jdbc;

import java.sql.SQLException;

/** PostgreSQL: acquire is one upsert whose update only fires when the current lease has expired. */
final class PostgresDialect extends Dialect {

    @Override
    public String id() {
        return "postgresql";
    }

    @Override
    String now() {
        // clock_timestamp(), not now(): now() is frozen at the start of the caller's transaction.
        return "(extract(epoch from clock_timestamp()) * 1000)::bigint";
    }

    /**
     * The clock is read once: {@code clock_timestamp()} changes within a statement, so reading it for
     * {@code acquired_at} and again for {@code expires_at} could make a lease one millisecond longer
     * than its TTL (CI saw a 60.001 s lease with a 60 s TTL).
     */
    @Override
    String acquireSql() {
        return """
                INSERT INTO %1$s AS t (name, owner, token, fence, acquired_at, expires_at)
                SELECT ?, ?, ?, 1, c.now_ms, c.now_ms + ? FROM (SELECT %2$s AS now_ms) c
                ON CONFLICT (name) DO UPDATE
                   SET owner = EXCLUDED.owner, token = EXCLUDED.token, fence = t.fence + 1,
                       acquired_at = EXCLUDED.acquired_at, expires_at = EXCLUDED.expires_at
                 WHERE t.expires_at <= EXCLUDED.acquired_at
                RETURNING fence, acquired_at, expires_at""";
    }

    @Override
    boolean isMissingTable(SQLException e) {
        return "42P01".equals(e.getSQLState());
    }

    /** lock_not_available: the row stayed locked past the session's lock_timeout. */
    @Override
    boolean isLockWaitTimeout(SQLException e) {
        return chain(e).stream().anyMatch(x -> "55P03".equals(x.getSQLState()));
    }
}
