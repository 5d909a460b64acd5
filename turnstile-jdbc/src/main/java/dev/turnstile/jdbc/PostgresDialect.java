package dev.turnstile.jdbc;

import java.sql.SQLException;

/**
 * All of PostgreSQL's SQL: the lock store's (acquire is one upsert whose update only fires when the
 * current lease has expired) and, in {@link Claims}, work claiming's. The DDL is in
 * {@code schema-postgresql.sql} and {@code claim-schema-postgresql.sql} beside this class.
 */
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
                SELECT ?, ?, ?, 0, c.now_ms, c.now_ms + ? FROM (SELECT %2$s AS now_ms) c
                ON CONFLICT (name) DO UPDATE
                   SET owner = EXCLUDED.owner, token = EXCLUDED.token, fence = CASE WHEN t.fence = 0 THEN 0 ELSE t.fence + 1 END,
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

    /**
     * PostgreSQL: one {@code UPDATE … WHERE id IN (SELECT … FOR UPDATE SKIP LOCKED LIMIT n) RETURNING}.
     * Rows another worker is claiming at the same moment are skipped, not waited for.
     */
    static final class Claims extends ClaimSql {
        private static final Dialect DIALECT = (Dialect) SqlDialect.POSTGRESQL;

        @Override
        Dialect dialect() {
            return DIALECT;
        }

        /**
         * statement_timestamp(), not clock_timestamp(): it is stable, so the due condition is an index
         * range, and it is the same everywhere in the statement. (The lock store's clock_timestamp() is
         * volatile: as a claim condition it would make the scan read every row of the phase.)
         */
        @Override
        String now() {
            return "(extract(epoch from statement_timestamp()) * 1000)::bigint";
        }

        @Override
        String claimSql() {
            return """
                    UPDATE {table} SET {lockedAt} = {now}, {version} = {version} + 1
                     WHERE {id} IN (SELECT {id} FROM {table}
                                     WHERE {filter}{lockedAt} <= {now} - ?
                                     ORDER BY {lockedAt}, {updatedAt}
                                     LIMIT ? FOR UPDATE SKIP LOCKED)
                    RETURNING {id}, {version}, {lockedAt}""";
        }

        @Override
        String filterColumnType() {
            return "VARCHAR(64)";
        }
    }
}
