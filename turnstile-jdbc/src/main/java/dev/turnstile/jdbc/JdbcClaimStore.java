package dev.turnstile.jdbc;

import dev.turnstile.StoreSchemaException;
import dev.turnstile.StoreUnavailableException;
import dev.turnstile.TurnstileException;
import dev.turnstile.claim.ClaimFilter;
import dev.turnstile.claim.ClaimStore;
import dev.turnstile.claim.ClaimSummary;
import dev.turnstile.claim.ClaimTable;
import dev.turnstile.claim.ClaimedRow;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Work claiming over the user's own SQL table: PostgreSQL, MariaDB 10.6+/MySQL 8, SQLite 3.35+
 * and H2. A claim is one statement ({@code UPDATE … RETURNING} over a {@code SELECT … FOR UPDATE
 * SKIP LOCKED}; on MariaDB/MySQL a short transaction of a {@code SELECT … FOR UPDATE SKIP LOCKED}
 * and an {@code UPDATE}), every later write one {@code UPDATE … WHERE id = ? AND version = ?}, and
 * time is the database's clock. Each database's statements are in one class, beside its lock SQL
 * ({@code PostgresDialect}, {@code MariaDbDialect}, {@code SqliteDialect}, {@code H2Dialect}); print
 * them with {@link #claimStatement} and the DDL with {@link #createTable}.
 *
 * <pre>{@code
 * ClaimTable table = ClaimTable.builder("gateways").build();
 * ClaimStore store = JdbcClaimStore.builder(dataSource, table).build();   // checks the table
 * TaskClaimer claimer = TaskClaimer.builder(store).lockTimeout(Duration.ofMinutes(1)).build();
 * }</pre>
 *
 * <p>The {@code lockedAt}, {@code updatedAt} and version columns hold integers (epoch
 * milliseconds; {@code BIGINT}). {@link Builder#build()} connects once and checks that the table
 * has every column and an index that starts with the filter columns and {@code lockedAt}; what is
 * missing is reported with the statement that adds it.
 *
 * <p>A deadlock or serialization failure while claiming is rolled back by the database and
 * reported as nothing claimed; a guarded write that meets one is retried a few times.
 *
 * <p>Past 400 lines by its value checks before a write and its public {@link Builder}; the table
 * check at build time is {@code ClaimTableCheck}.
 */
public final class JdbcClaimStore implements ClaimStore {
    private static final Logger log = LoggerFactory.getLogger(JdbcClaimStore.class);
    private final DataSource dataSource;
    private final ClaimTable table;
    private final ClaimSql sql;
    private final String description;
    private final String heartbeat;
    private final String relock;
    private final String release;
    private final String clock;
    private final String summary;
    private final String stuck;
    private final Map<ClaimFilter, String> claims = new ConcurrentHashMap<>();
    private final Map<String, String> writes = new ConcurrentHashMap<>();
    /** Lower-case column name to its type, read once by the check at construction. */
    private volatile Map<String, ColumnType> columnTypes = Map.of();

    private JdbcClaimStore(Builder b, ClaimSql sql) {
        this.dataSource = b.dataSource;
        this.table = b.table;
        this.sql = sql;
        this.description = (b.description != null ? b.description : "JDBC " + sql.dialect().id()) + " (table "
                + table.table() + ")";
        this.heartbeat = sql.fill(sql.heartbeatSql(), table, "", "");
        this.relock = sql.fill(sql.relockSql(), table, "", "");
        this.release = sql.fill(sql.releaseSql(), table, "", "");
        this.clock = sql.fillWithPhase(sql.clockSql(), table);
        this.summary = sql.fillWithPhase(sql.summarySql(), table);
        this.stuck = sql.fillWithPhase(sql.stuckSql(), table);
    }

    /**
     * Starts a builder over a data source (a pool, preferably) and a task table.
     *
     * @param dataSource where connections come from
     * @param table the task table and its column names
     * @return a builder
     * @throws IllegalArgumentException if either is null
     */
    public static Builder builder(DataSource dataSource, ClaimTable table) {
        if (dataSource == null) {
            throw new IllegalArgumentException("dataSource is null: give the DataSource of the database that holds the "
                    + "task table");
        }
        if (table == null) {
            throw new IllegalArgumentException("table is null: give ClaimTable.builder(\"tasks\").build()");
        }
        return new Builder(dataSource, table);
    }

    /**
     * Starts a builder over the database of a lock store, sharing its connections: for a task
     * table that lives beside the lock table (what {@code turnstile console --claim-table} uses).
     * The claim store does not close the lock store; close the lock store after it.
     *
     * @param lockStore the lock store whose database holds the task table
     * @param table the task table and its column names
     * @return a builder
     * @throws IllegalArgumentException if either is null
     */
    public static Builder builder(JdbcLockStore lockStore, ClaimTable table) {
        if (lockStore == null) {
            throw new IllegalArgumentException("lockStore is null: give the JdbcLockStore whose database holds the task table");
        }
        return builder(lockStore.dataSource(), table);
    }

    /**
     * Returns the DDL that creates a task table with the claiming index, idempotent ({@code IF NOT
     * EXISTS}); statements end with {@code ;}. For a table of your own, add the columns and the
     * index it shows.
     *
     * @param dialect the database family
     * @param table the task table
     * @return the DDL
     * @throws IllegalArgumentException if an argument is null
     */
    public static String createTable(SqlDialect dialect, ClaimTable table) {
        if (dialect == null || table == null) {
            throw new IllegalArgumentException("dialect and table are required");
        }
        checkNames(dialect, table);
        return ClaimSql.of(dialect).createTable(table);
    }

    /**
     * Returns the claiming statement exactly as the store runs it, for reviews, {@code EXPLAIN} and
     * benchmarks. Parameters: the filter's values in order, the lock timeout in milliseconds, the
     * batch size. On PostgreSQL and SQLite it is the whole claim and returns (id, version,
     * lockedAt); on MariaDB/MySQL and H2 it is the first step of a short transaction and returns
     * (id, version, now), and the store then updates those rows by key and commits.
     *
     * @param dialect the database family
     * @param table the task table
     * @param filter the filter whose columns the statement tests
     * @return the SQL
     * @throws IllegalArgumentException if an argument is null or the filter is not allowed by the table
     */
    public static String claimStatement(SqlDialect dialect, ClaimTable table, ClaimFilter filter) {
        if (dialect == null || table == null || filter == null) {
            throw new IllegalArgumentException("dialect, table and filter are required");
        }
        checkNames(dialect, table);
        filter.columns().forEach(c -> ReservedWords.check("filter column", c, dialect.id()));
        ClaimSql s = ClaimSql.of(dialect);
        return s.fill(s.claimSql(), table, ClaimSql.filterClause(filter), "");
    }

    /** Names the database would read as SQL (a keyword, or PostgreSQL's {@code user}) are refused up front. */
    private static void checkNames(SqlDialect dialect, ClaimTable t) {
        ReservedWords.check("task table", t.table(), dialect.id());
        ReservedWords.check("id column", t.idColumn(), dialect.id());
        for (String c : t.filterColumns()) {
            ReservedWords.check(c.equals(t.phaseColumn()) ? "phase column" : "filter column", c, dialect.id());
        }
        ReservedWords.check("lockedAt column", t.lockedAtColumn(), dialect.id());
        ReservedWords.check("updatedAt column", t.updatedAtColumn(), dialect.id());
        ReservedWords.check("claim version column", t.versionColumn(), dialect.id());
    }

    @Override
    public ClaimTable table() {
        return table;
    }

    @Override
    public List<ClaimedRow> claim(ClaimFilter filter, int max, Duration lockTimeout) {
        filter.conditions().forEach((column, value) -> checkValue("filter value", column, value));
        String statement = claims.computeIfAbsent(filter.columns().isEmpty() ? ClaimFilter.all() : shape(filter),
                f -> sql.fill(sql.claimSql(), table, ClaimSql.filterClause(f), ""));
        for (int attempt = 1; ; attempt++) {
            try (Connection c = dataSource.getConnection()) {
                try {
                    List<ClaimedRow> rows = sql.claim(c, table, statement, filter, lockTimeout.toMillis(), max);
                    JdbcCalls.commitIfNeeded(c);
                    return rows;
                } catch (SQLException e) {
                    JdbcCalls.rollbackQuietly(c);
                    Dialect d = sql.dialect();
                    if (d.isLockWaitTimeout(e)) {
                        return List.of();
                    }
                    if (!d.isTransientConflict(e) && !JdbcCalls.isSqliteBusy(sql.dialect(), e)) {
                        throw e;
                    }
                    if (attempt == JdbcLockStore.CONFLICT_ATTEMPTS) {
                        log.debug("claim on {}: {} attempts met a conflict ({}): nothing claimed", description, attempt,
                                e.toString());
                        return List.of();
                    }
                }
            } catch (SQLException e) {
                throw translate("claim tasks", e);
            }
            JdbcCalls.pauseAfterConflict(attempt);
        }
    }

    /** One cached statement per set of filter columns: the values do not change the SQL. */
    private static ClaimFilter shape(ClaimFilter f) {
        ClaimFilter out = ClaimFilter.all();
        for (String c : f.columns()) {
            out = out.and(c, "");
        }
        return out;
    }

    @Override
    public boolean heartbeat(Object key, long version) {
        return write("keep task '" + key + "' claimed", heartbeat, List.of(), key, version);
    }

    @Override
    public boolean unlock(Object key, long version, Map<String, Object> values) {
        values.forEach((column, value) -> checkValue("value", column, value));
        String statement = writes.computeIfAbsent("unlock:" + String.join(",", values.keySet()),
                k -> sql.fill(sql.unlockSql(), table, "", ClaimSql.setClause(values)));
        return write("unlock task '" + key + "'", statement, new ArrayList<>(values.values()), key, version);
    }

    @Override
    public boolean relock(Object key, long version, Duration floor, Duration lockTimeout) {
        List<Object> params = List.of(lockTimeout.toMillis(), lockTimeout.toMillis(), floor.toMillis());
        return write("relock task '" + key + "'", relock, params, key, version);
    }

    @Override
    public boolean update(Object key, long version, Map<String, Object> values) {
        values.forEach((column, value) -> checkValue("value", column, value));
        String statement = writes.computeIfAbsent("update:" + String.join(",", values.keySet()),
                k -> sql.fill(sql.updateSql(), table, "", ClaimSql.setClause(values).replaceAll(", $", "")));
        return write("update task '" + key + "'", statement, new ArrayList<>(values.values()), key, version);
    }

    @Override
    public ClaimSummary summarize(Duration lockTimeout, Duration stuckAfter, int maxStuck) {
        ClaimSummary.checkRequest(lockTimeout, stuckAfter, maxStuck);
        try (Connection c = dataSource.getConnection()) {
            try {
                long now;
                try (PreparedStatement ps = c.prepareStatement(clock);
                        ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    now = rs.getLong(1);
                }
                long dueAt = now - lockTimeout.toMillis();
                List<ClaimSummary.PhaseCounts> phases = new ArrayList<>();
                boolean more = false;
                try (PreparedStatement ps = c.prepareStatement(summary)) {
                    ps.setLong(1, dueAt);
                    ps.setLong(2, dueAt);
                    ps.setLong(3, dueAt);
                    ps.setInt(4, ClaimSummary.MAX_PHASES + 1);
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            if (phases.size() == ClaimSummary.MAX_PHASES) {
                                more = true;
                                break;
                            }
                            long oldest = rs.getLong(6);
                            Instant since = rs.wasNull() ? null : Instant.ofEpochMilli(oldest + lockTimeout.toMillis());
                            phases.add(new ClaimSummary.PhaseCounts(rs.getString(1), rs.getLong(2), rs.getLong(3), rs.getLong(4),
                                    rs.getLong(5), since));
                        }
                    }
                }
                List<ClaimSummary.StuckTask> stuckTasks = new ArrayList<>();
                if (maxStuck > 0) {
                    try (PreparedStatement ps = c.prepareStatement(stuck)) {
                        ps.setLong(1, now - stuckAfter.toMillis());
                        ps.setInt(2, maxStuck);
                        try (ResultSet rs = ps.executeQuery()) {
                            while (rs.next()) {
                                if (rs.getObject(1) == null) {
                                    continue; // a row without a key (a nullable id column) cannot be named or released
                                }
                                stuckTasks.add(new ClaimSummary.StuckTask(rs.getObject(1), rs.getString(2),
                                        Instant.ofEpochMilli(rs.getLong(3)), Instant.ofEpochMilli(rs.getLong(4)), rs.getLong(5)));
                            }
                        }
                    }
                }
                JdbcCalls.commitIfNeeded(c);
                return new ClaimSummary(Instant.ofEpochMilli(now), lockTimeout, stuckAfter, phases, more, stuckTasks);
            } catch (SQLException e) {
                JdbcCalls.rollbackQuietly(c);
                throw e;
            }
        } catch (SQLException e) {
            throw translate("summarize the task table", e);
        }
    }

    /**
     * In a transaction of its own: a key that matches more than one row (a table whose id is not
     * unique after all, which the metadata check cannot always see) is rolled back, not committed.
     */
    @Override
    public boolean release(ClaimSummary.StuckTask task) {
        if (task == null) {
            throw new IllegalArgumentException("task is null: give a stuck task the summary returned");
        }
        try (Connection c = dataSource.getConnection()) {
            boolean auto = c.getAutoCommit();
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement(release)) {
                ps.setObject(1, task.key());
                ps.setLong(2, task.version());
                ps.setLong(3, task.updatedAt().toEpochMilli());
                int rows = ps.executeUpdate();
                if (rows > 1) {
                    c.rollback();
                    throw new StoreSchemaException("release of task '" + task.keyText() + "' in " + description + " matched "
                            + rows + " rows, so nothing was released: give the id column '" + table.idColumn()
                            + "' a unique index of its own (" + table.table() + ")", null);
                }
                c.commit();
                return rows == 1;
            } catch (SQLException | RuntimeException e) {
                JdbcCalls.rollbackQuietly(c);
                throw e;
            } finally {
                c.setAutoCommit(auto);
            }
        } catch (SQLException e) {
            throw translate("release the claim on task '" + task.keyText() + "'", e);
        }
    }

    private boolean write(String what, String statement, List<Object> params, Object key, long version) {
        for (int attempt = 1; ; attempt++) {
            try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(statement)) {
                int i = 1;
                for (Object p : params) {
                    ps.setObject(i++, p);
                }
                ps.setObject(i++, key);
                ps.setLong(i, version);
                try {
                    int rows = ps.executeUpdate();
                    JdbcCalls.commitIfNeeded(c);
                    return rows == 1;
                } catch (SQLException e) {
                    JdbcCalls.rollbackQuietly(c);
                    if (attempt == JdbcLockStore.CONFLICT_ATTEMPTS
                            || !(sql.dialect().isTransientConflict(e) || JdbcCalls.isSqliteBusy(sql.dialect(), e))) {
                        throw e;
                    }
                }
            } catch (SQLException e) {
                throw translate(what, e);
            }
            JdbcCalls.pauseAfterConflict(attempt);
        }
    }

    @Override
    public String description() {
        return description;
    }

    /** The data source belongs to the caller: nothing to close. */
    @Override
    public void close() {
        // nothing owned
    }

    /**
     * A value the column cannot hold, or a column the table does not have, is the caller's mistake:
     * refused before any SQL runs, naming the column, instead of failing as an outage (or, on
     * MariaDB, comparing 'New' to an INTEGER column as 0). Types the metadata does not classify
     * are left to the database.
     */
    private void checkValue(String what, String column, Object value) {
        Map<String, ColumnType> types = columnTypes;
        if (types.isEmpty()) {
            return;
        }
        ReservedWords.check("column", column, sql.dialect().id());
        ColumnType type = types.get(column.toLowerCase(Locale.ROOT));
        if (type == null) {
            throw new IllegalArgumentException("column '" + column + "' is not in the task table '" + table.table() + "' of "
                    + description + " (its columns: " + types.keySet() + "): add it, or write only columns it has");
        }
        String problem = type.refuses(value, sql instanceof SqliteDialect.Claims);
        if (problem != null) {
            throw new IllegalArgumentException(what + " " + shown(value) + " for column '" + column + "' of task table '"
                    + table.table() + "': " + problem);
        }
    }

    private static String shown(Object value) {
        String s = String.valueOf(value);
        return (value instanceof String ? "'" + (s.length() > 40 ? s.substring(0, 40) + "…" : s) + "'" : s)
                + " (" + value.getClass().getSimpleName() + ")";
    }

    /** A column as the metadata describes it: its JDBC type, type name and, for text, its length. */
    record ColumnType(int jdbcType, String name, int size) {
        boolean isText() {
            return switch (jdbcType) {
                case java.sql.Types.CHAR, java.sql.Types.VARCHAR, java.sql.Types.LONGVARCHAR, java.sql.Types.NCHAR,
                        java.sql.Types.NVARCHAR, java.sql.Types.LONGNVARCHAR, java.sql.Types.CLOB, java.sql.Types.NCLOB -> true;
                default -> false;
            };
        }

        boolean isNumber() {
            return switch (jdbcType) {
                case java.sql.Types.TINYINT, java.sql.Types.SMALLINT, java.sql.Types.INTEGER, java.sql.Types.BIGINT,
                        java.sql.Types.NUMERIC, java.sql.Types.DECIMAL -> true;
                default -> false;
            };
        }

        boolean isBoolean() {
            return jdbcType == java.sql.Types.BOOLEAN || jdbcType == java.sql.Types.BIT;
        }

        /** Why the column cannot hold {@code value}, or null. SQLite does not enforce a declared length. */
        @Nullable String refuses(Object value, boolean sqlite) {
            if (value instanceof String s) {
                if (isNumber() || isBoolean()) {
                    return "the column is " + name + ", not text: give an Integer or Long (a Boolean for a boolean column), "
                            + "or change the column's type";
                }
                if (isText() && !sqlite && size > 0 && s.codePointCount(0, s.length()) > size) {
                    return "it is " + s.codePointCount(0, s.length()) + " characters long and the column is " + name + "("
                            + size + "): give a shorter value or widen the column";
                }
            } else if (value instanceof Integer || value instanceof Long) {
                if (isText() || isBoolean()) {
                    return "the column is " + name + ", not a number: give a " + (isText() ? "String" : "Boolean")
                            + ", or change the column's type";
                }
            } else if (value instanceof Boolean && isText()) {
                return "the column is " + name + ", not a boolean: give a String, or change the column's type";
            }
            return null;
        }
    }

    private TurnstileException translate(String what, SQLException e) {
        if (sql.dialect().isMissingTable(e)) {
            return new StoreSchemaException("cannot " + what + ": the task table '" + table.table() + "' does not exist in "
                    + description + ". Create it with:\n" + sql.createTable(table), e);
        }
        String state = e.getSQLState();
        if (state != null && (state.startsWith("22") || state.startsWith("42"))) {
            // a data exception or a statement the table refuses (unknown column, type mismatch): not an
            // outage, retrying never helps
            return new StoreSchemaException("cannot " + what + ": the task table '" + table.table() + "' in " + description
                    + " refused the statement: " + e.getMessage() + " (SQLState " + state + "); check its columns "
                    + "against " + table, e);
        }
        return new StoreUnavailableException("cannot " + what + " on " + description + ": " + e.getMessage()
                + (e.getSQLState() != null ? " (SQLState " + e.getSQLState() + ")" : ""), e);
    }

    /** Creates the table if asked, and checks it ({@link ClaimTableCheck}). */
    private void validate(boolean create) {
        try (Connection c = dataSource.getConnection()) {
            this.columnTypes = new ClaimTableCheck(table, sql, description).check(c, create);
        } catch (SQLException e) {
            throw translate("check the task table", e);
        }
    }

    /** The DDL script's statements, without comment lines. */
    static List<String> statements(String script) {
        return ClaimTableCheck.statements(script);
    }

    /** Builds a {@link JdbcClaimStore}. Not thread-safe. */
    public static final class Builder {
        private final DataSource dataSource;
        private final ClaimTable table;
        private @Nullable SqlDialect dialect;
        private boolean createTable;
        private @Nullable String description;

        private Builder(DataSource dataSource, ClaimTable table) {
            this.dataSource = dataSource;
            this.table = table;
        }

        /**
         * Sets the dialect instead of detecting it from the database.
         *
         * @param dialect the dialect
         * @return this builder
         * @throws IllegalArgumentException if {@code dialect} is null
         */
        public Builder dialect(SqlDialect dialect) {
            if (dialect == null) {
                throw new IllegalArgumentException("dialect is null: give one of the SqlDialect constants, or do not set "
                        + "it to detect it from the database");
            }
            this.dialect = dialect;
            return this;
        }

        /**
         * Creates the task table and its index at build time if missing, with the DDL of
         * {@link JdbcClaimStore#createTable}. Default off: the table is usually the application's.
         *
         * @param create {@code true} to create it
         * @return this builder
         */
        public Builder createTableIfMissing(boolean create) {
            this.createTable = create;
            return this;
        }

        /**
         * Sets how the store names itself in messages and logs. Must not contain secrets.
         *
         * @param description for example {@code postgresql://db:5432/app}
         * @return this builder
         * @throws IllegalArgumentException if {@code description} is null
         */
        public Builder description(String description) {
            if (description == null) {
                throw new IllegalArgumentException("description is null: give a text that names the database without "
                        + "secrets, or do not set it");
            }
            this.description = description;
            return this;
        }

        /**
         * Connects once, detects the dialect if it was not set, creates the table if asked, and
         * checks that the table has what claiming needs.
         *
         * @return the store
         * @throws StoreSchemaException if the table is missing, lacks a column, has a time or
         *     version column that is not an integer, or lacks the claiming index; the message gives
         *     the statements that add what is missing
         * @throws StoreUnavailableException if the database cannot be reached
         * @throws IllegalArgumentException if the database is not supported
         */
        public JdbcClaimStore build() {
            SqlDialect d = dialect;
            if (d == null) {
                try (Connection c = dataSource.getConnection()) {
                    d = SqlDialect.detect(c.getMetaData());
                } catch (SQLException e) {
                    throw new StoreUnavailableException("cannot connect to detect the database for task table '"
                            + table.table() + "': " + e.getMessage(), e);
                }
            }
            checkNames(d, table);
            JdbcClaimStore store = new JdbcClaimStore(this, ClaimSql.of(d));
            store.validate(createTable);
            return store;
        }
    }
}
