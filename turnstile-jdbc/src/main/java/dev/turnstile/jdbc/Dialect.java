package dev.turnstile.jdbc;

import dev.turnstile.spi.AcquireRequest;
import dev.turnstile.spi.Grant;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Optional;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * What every dialect shares: statement shapes with the table name and the database's "now in
 * epoch milliseconds" filled in. Lock names and tokens are always bound parameters.
 */
abstract sealed class Dialect implements SqlDialect permits PostgresDialect, MariaDbDialect, H2Dialect, SqliteDialect {
    private static final Pattern IDENTIFIER =
            Pattern.compile("([A-Za-z_][A-Za-z0-9_]{0,62}\\.)?[A-Za-z_][A-Za-z0-9_]{0,62}");
    static final String DEFAULT_TABLE = "turnstile_locks";
    /** What a store says when {@link #isDiskFull} holds. */
    static final String DISK_FULL = "the disk that holds the database is full (or over quota), so nothing was written "
            + "(no lock was taken, extended or released): free space on it";

    /** The current time in epoch milliseconds, by the database's clock, as an SQL expression. */
    abstract String now();

    /**
     * Takes a free or expired lock: parameters (name, owner, token, ttl ms), returns (fence, acquired_at,
     * expires_at). A new row gets fence 0, which means "not set yet": the store then sets the first
     * fence above the floor of pruned names ({@code NamePruning}). A takeover adds 1, except to a row
     * whose fence was never set (its inserter died first), which stays at 0 for the new holder to set.
     */
    abstract String acquireSql();

    /** Parameters (ttl ms, name, token). */
    String extendSql() {
        return """
                UPDATE %1$s SET expires_at = %2$s + ?
                 WHERE name = ? AND token = ? AND expires_at > %2$s""";
    }

    /** Parameters (lockAtLeastFor ms, name, token): ends the lease now, or at acquired_at + lockAtLeastFor. */
    String releaseSql() {
        return """
                UPDATE %1$s SET expires_at = GREATEST(acquired_at + ?, %2$s)
                 WHERE name = ? AND token = ? AND expires_at > %2$s""";
    }

    /** Parameter (name). */
    String forceReleaseSql() {
        return "UPDATE %1$s SET expires_at = %2$s WHERE name = ? AND expires_at > %2$s";
    }

    /** Whether a lease is still held: (name, token). */
    String holdsSql() {
        return "SELECT 1 FROM %1$s WHERE name = ? AND token = ? AND expires_at > %2$s";
    }

    /**
     * The name of the row that holds the fence floor: the highest fence of every name pruned from the
     * table. It starts with a control character, which no lock name may contain, so no lock can be
     * taken or freed by that name. Its acquired_at and expires_at are the largest BIGINT, so that a
     * clean-up of old rows by either time (a habit from before pruning existed) never reaches it;
     * listings and prunes leave it out by name.
     */
    static final String FENCE_FLOOR_ROW = "\u0001fence-floor";

    /** The fence floor: parameter (the floor row's name); no row means 0. */
    String floorSql() {
        return "SELECT fence FROM %1$s WHERE name = ?";
    }

    /**
     * A name's first fence, after its row was inserted with fence 0: parameters (fence, name, token).
     * Only the holder that inserted the row (or took it over before anyone set its fence) sets it.
     */
    String firstFenceSql() {
        return "UPDATE %1$s SET fence = ? WHERE name = ? AND token = ? AND fence = 0";
    }

    /** Creates the floor row at 0 unless it exists: parameter (its name). */
    String insertFloorSql() {
        return """
                INSERT INTO %1$s (name, owner, token, fence, acquired_at, expires_at)
                VALUES (?, '', '', 0, 9223372036854775807, 9223372036854775807)
                ON CONFLICT (name) DO NOTHING""";
    }

    /** Raises the floor row: parameters (fence, its name). */
    String raiseFloorSql() {
        return "UPDATE %1$s SET fence = GREATEST(fence, ?) WHERE name = ?";
    }

    /**
     * Names that may be pruned, with their fences, at most {@code limit}: parameters (the floor row's
     * name, unusedFor ms, unusedFor ms). A plain read; the delete checks each row again.
     */
    String prunableSql(int limit) {
        return "SELECT name, fence FROM %1$s WHERE name <> ? AND expires_at <= %2$s - ? AND acquired_at <= %2$s - ? LIMIT "
                + limit;
    }

    /**
     * Deletes the given names if they still may be pruned and their fence is at most the floor this
     * transaction raises: parameters (the names, unusedFor ms, unusedFor ms, that floor). A row taken
     * again since it was read is kept.
     */
    String pruneSql(int names) {
        return "DELETE FROM %1$s WHERE name IN (" + String.join(", ", java.util.Collections.nCopies(names, "?"))
                + ") AND expires_at <= %2$s - ? AND acquired_at <= %2$s - ? AND fence <= ?";
    }

    /**
     * Whether the pruning transactions (and the first-fence step) run at READ COMMITTED whatever the
     * pool's default: their safety rests on the floor, not on a snapshot, and at REPEATABLE READ or
     * SERIALIZABLE they would fail with serialization errors beside running acquires (PostgreSQL) or
     * take gap locks that deadlock with them (MariaDB). SQLite has no such level; H2 keeps the pool's (see there).
     */
    boolean pruneAtReadCommitted() {
        return true;
    }

    /**
     * One statement that deletes up to {@code limit} prunable rows and returns their fences, for a
     * dialect where a read before the delete would make the transaction's write fail at once under
     * contention (SQLite); null where the read-then-delete of {@link #prunableSql} and
     * {@link #pruneSql} is used. Parameters (the floor row's name, unusedFor ms, unusedFor ms).
     */
    @Nullable String pruneReturningSql(int limit) {
        return null;
    }

    /** Parameter (the floor row's name, left out). */
    String listSql() {
        return "SELECT name, owner, fence, acquired_at, expires_at FROM %1$s WHERE expires_at > %2$s AND name <> ?";
    }

    /** The database's clock, in epoch milliseconds. */
    String clockSql() {
        return "SELECT %2$s";
    }

    /** Fills in the table and the clock expression. */
    final String sql(String template, String table) {
        return template.formatted(table, now());
    }

    /**
     * Runs the acquire statement; the default reads the grant from a RETURNING-style result set.
     * The result set is read to its end before the grant is returned: in autocommit, SQLite hands
     * out the RETURNING row before it commits, and commits only when the statement is stepped to
     * its end. A commit that fails there (SQLITE_FULL on a full disk) is then thrown here; closing
     * a statement that was not run to its end would drop that error and return a grant that no row
     * records.
     */
    Optional<Grant> acquire(Connection c, Statements sql, AcquireRequest r) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.acquire())) {
            bindAcquire(ps, r);
            try (ResultSet rs = ps.executeQuery()) {
                Optional<Grant> grant = rs.next() ? Optional.of(grant(rs)) : Optional.empty();
                while (rs.next()) {
                    // one row at most; this step runs the statement to its end, and its commit
                }
                return grant;
            }
        }
    }

    /** The acquire statement's parameters, the same in every dialect. */
    static void bindAcquire(PreparedStatement ps, AcquireRequest r) throws SQLException {
        ps.setString(1, r.name());
        ps.setString(2, r.owner());
        ps.setString(3, r.token());
        ps.setLong(4, r.ttl().toMillis());
    }

    static Grant grant(ResultSet rs) throws SQLException {
        return new Grant(rs.getLong(1), Instant.ofEpochMilli(rs.getLong(2)), Instant.ofEpochMilli(rs.getLong(3)));
    }

    /** A concurrent first insert of the same name lost the race: busy, not an error. */
    boolean isLostInsertRace(SQLException e) {
        return "23505".equals(e.getSQLState());
    }

    abstract boolean isMissingTable(SQLException e);

    /**
     * The statement does not fit the table (a column missing or of another type) or its grants:
     * SQLState class 42, "syntax error or access rule violation". Retrying never helps.
     */
    boolean isSchemaMismatch(SQLException e) {
        return e.getSQLState() != null && e.getSQLState().startsWith("42");
    }

    /**
     * A deadlock or serialization failure: the database rolled the statement (or its transaction)
     * back and trying again may succeed. SQLState class 40 is the standard's "transaction rollback";
     * MySQL/MariaDB report a deadlock as 40001 with error code 1213.
     */
    boolean isTransientConflict(SQLException e) {
        for (SQLException x : chain(e)) {
            if ("40001".equals(x.getSQLState()) || "40P01".equals(x.getSQLState())) {
                return true;
            }
        }
        return false;
    }

    /**
     * The database could not write because its disk (or its table space) is full. PostgreSQL
     * reports SQLState 53100; other drivers pass on the operating system's "No space left on device".
     */
    boolean isDiskFull(SQLException e) {
        for (SQLException x : chain(e)) {
            if ("53100".equals(x.getSQLState()) || (x.getMessage() != null && x.getMessage().contains("No space left on device"))) {
                return true;
            }
        }
        return false;
    }

    /** The statement waited for a row lock held by another transaction until the database gave up. */
    boolean isLockWaitTimeout(SQLException e) {
        return false;
    }

    /** The exception and its causes that are SQL exceptions (drivers wrap them). */
    static java.util.List<SQLException> chain(SQLException e) {
        java.util.List<SQLException> out = new java.util.ArrayList<>(2);
        for (Throwable t = e; t != null && out.size() < 8; t = t.getCause()) {
            if (t instanceof SQLException x) {
                out.add(x);
            }
        }
        return out;
    }

    @Override
    public final String createTable(String table) {
        String ddl;
        try (InputStream in = Dialect.class.getResourceAsStream("schema-" + id() + ".sql")) {
            ddl = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException | NullPointerException e) {
            throw new IllegalStateException("schema resource for " + id() + " is missing from the jar", e);
        }
        return ddl.replace(DEFAULT_TABLE, checkTable(table));
    }

    @Override
    public final String acquireStatement(String table) {
        return sql(acquireSql(), checkTable(table));
    }

    @Override
    public final String releaseStatement(String table) {
        return sql(releaseSql(), checkTable(table));
    }

    static String checkTable(String table) {
        if (table == null || !IDENTIFIER.matcher(table).matches()) {
            throw new IllegalArgumentException("table name '" + table + "' is not a plain SQL identifier: use letters, "
                    + "digits and underscores, starting with a letter or underscore, at most 63 characters, "
                    + "optionally prefixed by 'schema.'");
        }
        ReservedWords.check("table name", table, null);
        return table;
    }

    /** A column name spliced into a statement: a plain identifier that is not a reserved word anywhere. */
    static String checkColumn(String what, String column) {
        if (column == null || !IDENTIFIER.matcher(column).matches() || column.indexOf('.') >= 0) {
            throw new IllegalArgumentException(what + " '" + column + "' is not a plain SQL identifier: use letters, "
                    + "digits and underscores, starting with a letter or underscore, at most 63 characters (it is "
                    + "spliced into the statement, so nothing else is accepted)");
        }
        ReservedWords.check(what, column, null);
        return column;
    }

    @Override
    public String toString() {
        return id();
    }

    /** The statements of one store, built once for its table. */
    record Statements(String table, String acquire, String extend, String release, String forceRelease, String holds,
            String list, String clock, String floor, String firstFence) {
        static Statements of(Dialect d, String table) {
            return new Statements(table, d.sql(d.acquireSql(), table), d.sql(d.extendSql(), table), d.sql(d.releaseSql(), table),
                    d.sql(d.forceReleaseSql(), table), d.sql(d.holdsSql(), table), d.sql(d.listSql(), table),
                    d.sql(d.clockSql(), table), d.sql(d.floorSql(), table), d.sql(d.firstFenceSql(), table));
        }
    }
}
