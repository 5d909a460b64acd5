package dev.turnstile.jdbc;

import dev.turnstile.FenceGate;
import dev.turnstile.StaleFenceException;
import dev.turnstile.StoreUnavailableException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTransientException;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;

/**
 * Fenced writes on PostgreSQL, MariaDB/MySQL, SQLite and H2: a write applies only if its fence is
 * at least the highest fence the resource has seen, and the fence is recorded with it, so a holder
 * whose lease was superseded (paused, partitioned, expired) cannot overwrite a newer holder's work.
 * A refused write throws {@link StaleFenceException} and writes nothing; it is never a silent no-op.
 * Every statement of this helper is in this class.
 *
 * <p>Two ways, both in the database the protected data lives in:
 *
 * <ul>
 *   <li><b>A fence column on the row</b> ({@link #updateRow}): add {@code turnstile_fence BIGINT NOT
 *       NULL DEFAULT 0} to the table; the update and the fence test are one statement, so it costs
 *       nothing beyond the write itself. For writes to one row by its key.
 *   <li><b>A named resource</b> ({@link #check}): one row per resource in a fence table
 *       ({@link #createTable}). Called inside the transaction of the write, it records the fence and
 *       keeps that row locked until the transaction ends: the transaction's writes, whatever they
 *       are, are ordered by fence, and a stale transaction is refused before it writes. For writes
 *       that touch several rows or tables.
 * </ul>
 *
 * <p>Both work on a {@link Connection} the caller owns, so they fit plain JDBC, a pool, Spring's
 * {@code JdbcTemplate.execute(ConnectionCallback)} and {@code DataSourceUtils.getConnection} inside
 * a Spring transaction. {@link #gate(DataSource)} wraps the second for code that is not SQL (an
 * HTTP request, a file write).
 *
 * <p>What it guarantees depends on the fences: on every store but Redlock, fences of one lock name
 * strictly increase, and a write with a lower fence than one already written is refused. Redlock's
 * fences can repeat or go back after a node restart (see the Redis store's documentation): there the
 * helper still refuses every fence lower than one recorded, but two holders may carry the same fence.
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class SqlFences {
    /** The fence table {@link #create()} uses. */
    public static final String DEFAULT_TABLE = "turnstile_fences";
    /** The fence column {@link #updateRow} expects on the caller's table unless told otherwise. */
    public static final String DEFAULT_COLUMN = "turnstile_fence";

    /** How long {@link #check} waits for another transaction's uncommitted first row of a resource. */
    private static final Duration CONTENTION_LIMIT = Duration.ofSeconds(10);

    private final String table;
    private final String column;
    /** "URL table.column" keys already found unique; shared by copies, as it only ever grows. */
    private final java.util.Set<String> verified;

    private SqlFences(String table, String column, java.util.Set<String> verified) {
        this.table = table;
        this.column = column;
        this.verified = verified;
    }

    /**
     * Returns the helper with the fence table {@value #DEFAULT_TABLE} and the row fence column
     * {@value #DEFAULT_COLUMN}.
     *
     * @return the helper
     */
    public static SqlFences create() {
        return new SqlFences(DEFAULT_TABLE, DEFAULT_COLUMN, java.util.concurrent.ConcurrentHashMap.newKeySet());
    }

    /**
     * Returns a copy that keeps named resources' fences in another table.
     *
     * @param fenceTable a plain identifier, optionally {@code schema.table}
     * @return the copy
     * @throws IllegalArgumentException if it is not a plain identifier or is a reserved word
     */
    public SqlFences withTable(String fenceTable) {
        return new SqlFences(Dialect.checkTable(fenceTable), column, verified);
    }

    /**
     * Returns a copy whose {@link #updateRow} reads and writes the fence in another column.
     *
     * @param fenceColumn a plain identifier
     * @return the copy
     * @throws IllegalArgumentException if it is not a plain identifier or is a reserved word
     */
    public SqlFences withFenceColumn(String fenceColumn) {
        return new SqlFences(table, Dialect.checkColumn("fence column", fenceColumn), verified);
    }

    /**
     * Returns the DDL of the fence table for a database, idempotent ({@code CREATE TABLE IF NOT
     * EXISTS}). Rows are never deleted by Turnstile: a resource's fence must only grow.
     *
     * @param dialect the database
     * @return the DDL
     */
    public String createTable(SqlDialect dialect) {
        String ddl = switch (dialect.id()) {
            case "postgresql" -> """
                    CREATE TABLE IF NOT EXISTS %s (
                        resource VARCHAR(255) NOT NULL PRIMARY KEY,
                        fence    BIGINT       NOT NULL,
                        writes   BIGINT       NOT NULL
                    )""";
            case "mariadb" -> """
                    CREATE TABLE IF NOT EXISTS %s (
                        resource VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL PRIMARY KEY,
                        fence    BIGINT NOT NULL,
                        writes   BIGINT NOT NULL
                    ) ENGINE = InnoDB""";
            // H2 counts VARCHAR lengths in UTF-16 units: 510 hold 255 code points.
            case "h2" -> """
                    CREATE TABLE IF NOT EXISTS %s (
                        resource VARCHAR(510) NOT NULL PRIMARY KEY,
                        fence    BIGINT       NOT NULL,
                        writes   BIGINT       NOT NULL
                    )""";
            default -> """
                    CREATE TABLE IF NOT EXISTS %s (
                        resource TEXT    NOT NULL PRIMARY KEY,
                        fence    INTEGER NOT NULL,
                        writes   INTEGER NOT NULL
                    )""";
        };
        return ddl.formatted(table);
    }

    /**
     * Creates the fence table if it does not exist, on the database of {@code c}.
     *
     * @param c a connection; its auto-commit setting is respected
     * @throws SQLException if the DDL fails
     */
    public void createTable(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(createTable(SqlDialect.detect(c.getMetaData())));
        }
    }

    /**
     * Admits a transaction's writes for {@code resource} under {@code fence}: records the fence if it
     * is at least the highest recorded, and keeps the resource's row locked until the transaction
     * ends, so a newer fence waits for this transaction and a stale one is refused. Call it before
     * the writes, in their transaction.
     *
     * <p>One statement when the resource has been written before (an {@code UPDATE … WHERE fence <=
     * ?}), and an insert for its first write; on MariaDB/MySQL one upsert that hands back the
     * resource's fence ({@code LAST_INSERT_ID(x)}), as an update of a missing row there takes a gap
     * lock on which two first writes would deadlock. There it sets the session's {@code
     * LAST_INSERT_ID()}: read an id of your own before the check, or through {@code getGeneratedKeys}.
     *
     * @param c a connection inside the transaction of the writes (auto-commit off)
     * @param resource the resource, named like a lock; usually the lock name
     * @param fence the writer's fence ({@code Lease.fence()})
     * @throws StaleFenceException if a higher fence was recorded; roll the transaction back and stop
     * @throws IllegalStateException if the connection is in auto-commit mode: the check would be
     *     committed alone and protect nothing
     * @throws IllegalArgumentException if the resource or fence is invalid
     * @throws SQLException if the database fails (a missing table says so; {@link #createTable}), or
     *     ({@link SQLTransientException}) another transaction kept the resource's first row
     *     uncommitted for 10 s
     */
    public void check(Connection c, String resource, long fence) throws SQLException {
        String name = FenceGate.checkResource(resource);
        FenceGate.checkFence(fence);
        if (c.getAutoCommit()) {
            throw new IllegalStateException("SqlFences.check needs the transaction of the write it guards, but the "
                    + "connection is in auto-commit mode (the check would commit alone and protect nothing): call "
                    + "connection.setAutoCommit(false) first, or run it inside a Spring transaction");
        }
        Dialect d = (Dialect) SqlDialect.detect(c.getMetaData());
        try {
            // SQLite: a read before the first write of a deferred transaction can deadlock with
            // another writer (SQLITE_BUSY at once), so there the table is checked after the write.
            boolean sqlite = d.id().equals("sqlite");
            if (!sqlite) {
                verifyKey(c, d, table, "resource", "fence table");
            }
            admit(c, d, name, fence);
            if (sqlite) {
                verifyKey(c, d, table, "resource", "fence table");
            }
        } catch (SQLException e) {
            if (d.isMissingTable(e)) {
                throw new SQLException("the fence table " + table + " does not exist: create it with SqlFences.createTable("
                        + "connection), or put the DDL of createTable(SqlDialect) in your migrations (" + e.getMessage() + ")",
                        e.getSQLState(), e.getErrorCode(), e);
            }
            throw e;
        }
    }

    private void admit(Connection c, Dialect d, String name, long fence) throws SQLException {
        String fenceColumn = d.id().equals("sqlite") ? "CAST(fence AS INTEGER)" : "fence";
        String seenSql = lockingRead(d, "SELECT " + fenceColumn + " FROM " + table + " WHERE resource = ?");
        if (d.id().equals("mariadb")) {
            // InnoDB at REPEATABLE READ gap-locks a missing row on UPDATE, and two first writes of one
            // resource would then deadlock on their inserts; one upsert takes the row or waits for it.
            // LAST_INSERT_ID(x) hands back the row's fence after the statement in its OK reply, with
            // no second statement, whichever way the driver counts rows. Anything but our own fence
            // back (a table with an AUTO_INCREMENT column answers with its id) is read again, locked.
            long seen = upsertReturningFence(c, name, fence);
            if (seen != fence) {
                Long read = recordedOrNull(c, seenSql, name);
                seen = read == null ? fence : read;
            }
            if (seen > fence) {
                throw new StaleFenceException(name, fence, seen);
            }
            return;
        }
        long deadline = System.nanoTime() + CONTENTION_LIMIT.toNanos();
        for (int round = 0;; round++) {
            // Where the resource has a row: one statement, and the row stays locked till commit.
            if (update(c, "UPDATE " + table + " SET fence = ?, writes = writes + 1 WHERE resource = ? AND " + fenceColumn + " <= ?",
                    fence, name, fence) >= 1) {
                return;
            }
            boolean[] duplicate = {false};
            if (insertIfAbsent(c, d, name, fence, duplicate)) {
                return;
            }
            Long seen = recordedOrNull(c, seenSql, name);
            if (seen != null && seen > fence) {
                throw new StaleFenceException(name, fence, seen);
            }
            if (seen == null && duplicate[0] && c.getTransactionIsolation() >= Connection.TRANSACTION_REPEATABLE_READ) {
                // H2 at REPEATABLE READ and above: the row was committed after this transaction's
                // snapshot, which will never show it. Only a new transaction can decide.
                throw new SQLTransientException("the fence row of '" + name + "' in " + table + " was written by another "
                        + "transaction after this transaction began (isolation REPEATABLE READ or above): nothing was "
                        + "recorded; roll back and retry the transaction");
            }
            // Another transaction's first write of this resource is not committed yet (H2 neither
            // shows nor waits for it): wait for it, then decide.
            if (System.nanoTime() > deadline) {
                throw new SQLTransientException("the fence row of '" + name + "' in " + table + " stayed uncommitted in "
                        + "another transaction for " + CONTENTION_LIMIT.toSeconds() + " s; nothing was recorded: retry the "
                        + "transaction");
            }
            sleep(Math.min(50, 1L << Math.min(round, 5)));
        }
    }

    /**
     * Refuses, once per table and column, a key column that does not identify one row: a second row
     * with the same key would carry its own fence, and a stale write could pass on it beside a newer
     * fence on the first.
     */
    private void verifyKey(Connection c, Dialect d, String t, String column, String what) throws SQLException {
        // Per database (its URL) and table name: a schema chosen by search_path or USE is not told
        // apart (the URL is the same), and a key dropped later is not seen until the JVM restarts.
        String checked = c.getMetaData().getURL() + " " + t + "." + column;
        if (verified.contains(checked)) {
            return;
        }
        try {
            UniqueKeys.check(c, d.id(), t, column, what);
        } catch (dev.turnstile.StoreSchemaException e) {
            throw new IllegalArgumentException("the " + what + " " + t + " has no valid primary key or unique index on "
                    + column + " alone (a view has none): each key must name one row, else a stale fence could pass on a second "
                    + "row with the same key beside a newer fence on the first. Add a primary key or unique index on " + column
                    + " (if rows share a key already, merge them first); for a view, fence the table under it", e);
        }
        verified.add(checked);
    }

    /** MariaDB/MySQL: records the fence if it passes, and returns the resource's fence after the statement. */
    private long upsertReturningFence(Connection c, String name, long fence) throws SQLException {
        String sql = "INSERT INTO " + table + " (resource, fence, writes) VALUES (?, LAST_INSERT_ID(?), 1) ON DUPLICATE KEY UPDATE"
                + " writes = writes + IF(fence <= VALUES(fence), 1, 0), fence = LAST_INSERT_ID(GREATEST(fence, VALUES(fence)))";
        try (PreparedStatement ps = c.prepareStatement(sql, Statement.RETURN_GENERATED_KEYS)) {
            ps.setString(1, name);
            ps.setLong(2, fence);
            ps.executeUpdate();
            try (ResultSet keys = ps.getGeneratedKeys()) {
                if (keys.next() && keys.getLong(1) > 0) {
                    return keys.getLong(1);
                }
            }
        }
        // A driver that did not pass the reply's id on: ask for it (same connection, same value).
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT LAST_INSERT_ID()")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** Inserts the resource's first row; false if a row exists (or, on H2, is being inserted). */
    private boolean insertIfAbsent(Connection c, Dialect d, String name, long fence, boolean[] duplicate) throws SQLException {
        String sql = switch (d.id()) {
            case "postgresql" -> "INSERT INTO " + table + " (resource, fence, writes) VALUES (?, ?, 1) ON CONFLICT (resource) DO NOTHING";
            case "h2" -> "MERGE INTO " + table + " t USING (VALUES (CAST(? AS VARCHAR(510)), CAST(? AS BIGINT))) s (resource, fence)"
                    + " ON t.resource = s.resource WHEN NOT MATCHED THEN INSERT (resource, fence, writes) VALUES (s.resource, s.fence, 1)";
            default -> "INSERT OR IGNORE INTO " + table + " (resource, fence, writes) VALUES (?, ?, 1)";
        };
        try {
            return update(c, sql, name, fence) == 1;
        } catch (SQLException e) {
            if (d.id().equals("h2") && d.isLostInsertRace(e)) {
                duplicate[0] = true;
                return false;
            }
            throw e;
        }
    }

    /** A read of the latest committed row, locked, where the database has it; SQLite's writer lock is already held. */
    private static String lockingRead(Dialect d, String select) {
        return d.id().equals("sqlite") ? select : select + " FOR UPDATE";
    }

    private static void sleep(long millis) throws SQLException {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SQLTransientException("interrupted while waiting for another transaction's fence row", e);
        }
    }

    /**
     * Updates one row by its key if {@code fence} is at least the row's fence column, and writes the
     * fence into that column in the same statement: {@code UPDATE table SET <set>, turnstile_fence = ?
     * WHERE key = ? AND turnstile_fence <= ?}. Works in auto-commit mode or inside a transaction.
     * Add the column with {@code ALTER TABLE t ADD COLUMN turnstile_fence BIGINT NOT NULL DEFAULT 0}
     * (a NULL counts as 0).
     *
     * <p>{@code set} and the identifiers are SQL written by the program, as in any JDBC call; values
     * go in {@code params}, bound in order. Never build {@code set} from user input.
     *
     * @param c a connection
     * @param table the table, a plain identifier (optionally {@code schema.table})
     * @param keyColumn the key column, a plain identifier
     * @param key the row's key
     * @param fence the writer's fence
     * @param set the assignments, e.g. {@code "balance = balance - ?, note = ?"}
     * @param params the values of the {@code ?} in {@code set}, in order
     * @return the rows updated: 1, or 0 if no row has that key
     * @throws StaleFenceException if the row holds a higher fence; nothing was written
     * @throws IllegalArgumentException if an identifier, the fence or {@code set} is invalid
     * @throws SQLException if the database fails
     */
    public int updateRow(Connection c, String table, String keyColumn, Object key, long fence, String set, Object... params)
            throws SQLException {
        String t = Dialect.checkTable(table);
        String k = Dialect.checkColumn("key column", keyColumn);
        FenceGate.checkFence(fence);
        if (set == null || set.isBlank()) {
            throw new IllegalArgumentException("set is empty: give the assignments of the update, e.g. \"balance = ?\"");
        }
        Dialect d = (Dialect) SqlDialect.detect(c.getMetaData());
        verifyKey(c, d, t, k, "table");
        // SQLite compares by storage class: a fence kept as text would compare as text.
        String recorded = d.id().equals("sqlite") ? "COALESCE(CAST(" + column + " AS INTEGER), 0)" : "COALESCE(" + column + ", 0)";
        String sql = "UPDATE " + t + " SET " + set + ", " + column + " = ? WHERE " + k + " = ? AND " + recorded + " <= ?";
        Object[] values = new Object[params.length + 3];
        System.arraycopy(params, 0, values, 0, params.length);
        values[params.length] = fence;
        values[params.length + 1] = key;
        values[params.length + 2] = fence;
        String seenSql = lockingRead(d, "SELECT " + recorded + " FROM " + t + " WHERE " + k + " = ?");
        for (int i = 0;; i++) {
            int rows = update(c, sql, values);
            if (rows > 0) {
                return rows;
            }
            Long seen = recordedOrNull(c, seenSql, key);
            if (seen == null) {
                return 0;
            }
            if (seen > fence) {
                throw new StaleFenceException(t + "." + k + "=" + key, fence, seen);
            }
            if (i == 1) {
                // The row is there with a fence we pass, twice. On MariaDB/MySQL the update matched it
                // and changed nothing, which a driver counting changed rows (useAffectedRows) reports
                // as 0 (their triggers cannot skip a row). Elsewhere a trigger or a row security
                // policy skipped it: nothing was written, and 0 says so.
                return d.id().equals("mariadb") ? 1 : 0;
            }
            // Or the row appeared after the update looked: once more.
        }
    }

    /**
     * Returns a gate that admits work for a resource on {@code dataSource}: {@link #check} in a
     * transaction committed at once (the record, which nothing after can lose), then {@link #check}
     * again in a second transaction that holds the resource's row while the work runs, committed
     * after it. Work for one resource is serialised across every process that uses the same fence
     * table, in fence order, and a stale fence is refused before its work runs. The gate holds one
     * connection of {@code dataSource} while the work runs: if the work uses the same pool, size it
     * for both, or give the gate a DataSource of its own. On SQLite the whole database file is
     * locked while the work runs: keep the fence table in a file of its own there.
     *
     * @param dataSource where the fence table is
     * @return the gate
     */
    public FenceGate gate(DataSource dataSource) {
        return new FenceGate() {
            @Override
            public <T, E extends Exception> T admit(String resource, long fence, Work<T, E> work) throws E {
                return admitInTransaction(dataSource, resource, fence, work);
            }

            @Override
            public String toString() {
                return "SqlFences.gate(" + table + ")";
            }
        };
    }

    private <T, E extends Exception> T admitInTransaction(DataSource dataSource, String resource, long fence, FenceGate.Work<T, E> work)
            throws E {
        String name = FenceGate.checkResource(resource);
        FenceGate.checkFence(fence);
        Connection c;
        try {
            c = dataSource.getConnection();
        } catch (SQLException e) {
            throw unavailable("cannot connect to the fence table's database", e);
        }
        try (c) {
            try {
                c.setAutoCommit(false);
                // First the record, committed on its own: whatever happens to the transaction that
                // holds the row while the work runs, the fence stays recorded.
                check(c, name, fence);
                c.commit();
                // Then the hold: the same fence passes again unless a newer one came in between.
                check(c, name, fence);
            } catch (SQLException e) {
                rollback(c);
                throw unavailable("cannot record fence " + fence + " of '" + name + "' in " + table, e);
            } catch (RuntimeException e) {
                rollback(c);
                throw e;
            }
            try {
                return work.run();
            } finally {
                try {
                    c.commit(); // ends the hold; the record is committed already
                } catch (SQLException e) {
                    rollback(c);
                }
            }
        } catch (SQLException e) {
            throw unavailable("cannot close the fence table's connection", e);
        }
    }

    private static void rollback(Connection c) {
        try {
            c.rollback();
        } catch (SQLException ignored) {
            // the connection is closed next; the database rolls back what it did not commit
        }
    }

    private static StoreUnavailableException unavailable(String what, SQLException e) {
        return new StoreUnavailableException(what + ": " + e.getMessage() + " (nothing was admitted)", e);
    }

    private static int update(Connection c, String sql, Object... values) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < values.length; i++) {
                ps.setObject(i + 1, values[i]);
            }
            return ps.executeUpdate();
        }
    }

    private static @org.jspecify.annotations.Nullable Long recordedOrNull(Connection c, String sql, Object key) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setObject(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getLong(1) : null;
            }
        }
    }

    @Override
    public String toString() {
        return "SqlFences[table=" + table + ", column=" + column + "]";
    }
}
