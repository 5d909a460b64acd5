package dev.turnstile.jdbc;

import java.sql.SQLException;

/**
 * SQLite (3.42 or later): the same upsert as PostgreSQL. Expiry is judged by this host's clock,
 * which is right for a database file that only processes on this host open. All of SQLite's SQL is
 * here: the lock store's, and in {@link Claims} work claiming's (DDL: {@code schema-sqlite.sql},
 * {@code claim-schema-sqlite.sql}).
 */
final class SqliteDialect extends Dialect {

    @Override
    public String id() {
        return "sqlite";
    }

    @Override
    String now() {
        return "CAST(unixepoch('subsec') * 1000 AS INTEGER)";
    }

    @Override
    String acquireSql() {
        return """
                INSERT INTO %1$s (name, owner, token, fence, acquired_at, expires_at)
                VALUES (?, ?, ?, 0, %2$s, %2$s + ?)
                ON CONFLICT (name) DO UPDATE
                   SET owner = excluded.owner, token = excluded.token,
                       fence = CASE WHEN %1$s.fence = 0 THEN 0 ELSE %1$s.fence + 1 END,
                       acquired_at = excluded.acquired_at, expires_at = excluded.expires_at
                 WHERE %1$s.expires_at <= excluded.acquired_at
                RETURNING fence, acquired_at, expires_at""";
    }

    /**
     * A release without a minimum hold sets {@code expires_at} to 0 rather than to this host's now:
     * {@code acquired_at} and now are the releasing process's clock, and a process whose clock runs
     * ahead would otherwise leave the lock taken, for every process with a right clock, for as
     * long as its clock is ahead. With a minimum hold the hold is counted from {@code acquired_at},
     * as on the other stores, and a hold that is over by the releasing process's clock also sets 0
     * (not that clock's now, which for the same reason would keep the lock for its lead).
     */
    @Override
    String releaseSql() {
        return """
                UPDATE %1$s SET expires_at = CASE WHEN ?1 > 0 AND acquired_at + ?1 > %2$s THEN acquired_at + ?1 ELSE 0 END
                 WHERE name = ?2 AND token = ?3 AND expires_at > %2$s""";
    }

    /**
     * SQLite upgrades a transaction that read first to a writer only if no other writer came in
     * between, and fails at once (no busy wait) if one did; a delete first waits for the write lock as
     * any write does. The whole statement runs under that lock, so nothing changes between its read and
     * its delete.
     */
    @Override
    String pruneReturningSql(int limit) {
        return "DELETE FROM %1$s WHERE name IN (SELECT name FROM %1$s WHERE name <> ? AND expires_at <= %2$s - ? "
                + "AND acquired_at <= %2$s - ? LIMIT " + limit + ") RETURNING fence";
    }

    @Override
    boolean pruneAtReadCommitted() {
        return false;
    }

    /** SQLite's two-argument max() is its GREATEST. */
    @Override
    String raiseFloorSql() {
        return "UPDATE %1$s SET fence = max(fence, ?) WHERE name = ?";
    }

    @Override
    boolean isMissingTable(SQLException e) {
        return e.getMessage() != null && e.getMessage().contains("no such table");
    }

    /** The SQLite driver sets no SQLState: a column missing is SQLITE_ERROR with these words. */
    @Override
    boolean isSchemaMismatch(SQLException e) {
        String m = e.getMessage();
        return super.isSchemaMismatch(e) || (m != null && (m.contains("no such column") || m.contains("has no column named")));
    }

    /**
     * SQLITE_FULL: a write (in WAL mode, usually the commit's append to the -wal file) found the disk
     * full. SQLITE_IOERR_SHMSIZE: the -shm file, which the first connection creates, could not be
     * grown (SQLite writes to it to allocate its pages, which fails only when no space is left).
     */
    @Override
    boolean isDiskFull(SQLException e) {
        return super.isDiskFull(e) || chain(e).stream().anyMatch(x -> x.getMessage() != null
                && (x.getMessage().contains("SQLITE_FULL") || x.getMessage().contains("SQLITE_IOERR_SHMSIZE")));
    }

    @Override
    boolean isLostInsertRace(SQLException e) {
        return false; // SQLite serialises writers: the upsert cannot race itself.
    }

    /**
     * SQLite (3.35 or later): one {@code UPDATE … WHERE id IN (SELECT … LIMIT n) RETURNING}. SQLite
     * runs one writer at a time, so the choice and the update are atomic without row locks.
     */
    static final class Claims extends ClaimSql {
        private static final Dialect DIALECT = (Dialect) SqlDialect.SQLITE;

        @Override
        Dialect dialect() {
            return DIALECT;
        }

        @Override
        String claimSql() {
            return """
                    UPDATE {table} SET {lockedAt} = {now}, {version} = {version} + 1
                     WHERE {id} IN (SELECT {id} FROM {table}
                                     WHERE {filter}{lockedAt} <= {now} - ?
                                     ORDER BY {lockedAt}, {updatedAt}
                                     LIMIT ?)
                    RETURNING {id}, {version}, {lockedAt}""";
        }

        /** SQLite's LEAST and GREATEST are the scalar MIN and MAX. */
        @Override
        String relockSql() {
            return """
                    UPDATE {table} SET {lockedAt} = {now} - ? + MIN(?, MAX(?, %s))
                     WHERE {id} = ? AND {version} = ?""".formatted(waitedTenth("/"));
        }

        @Override
        String filterColumnType() {
            return "TEXT";
        }
    }
}
