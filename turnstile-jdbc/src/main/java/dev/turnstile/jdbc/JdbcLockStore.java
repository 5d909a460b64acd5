package dev.turnstile.jdbc;

import dev.turnstile.LockInfo;
import dev.turnstile.StoreUnavailableException;
import dev.turnstile.spi.AcquireRequest;
import dev.turnstile.spi.Grant;
import dev.turnstile.spi.LeaseProof;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.PrunesNames;
import dev.turnstile.spi.ReleaseWatch;
import dev.turnstile.spi.StoreCapability;
import dev.turnstile.spi.StoreClock;
import dev.turnstile.spi.WatchesLeases;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A lock store in one SQL table, over any {@link DataSource}: SQLite, PostgreSQL, MariaDB/MySQL
 * and H2. Acquire, extend and release are one statement each (MariaDB/MySQL acquire adds a read
 * by token), expiry is judged by the database's clock, and each row's fence column only grows. Each
 * database's statements, and what they guarantee, for users: {@code docs/stores/sql.md}.
 *
 * <pre>{@code
 * LockStore store = JdbcLockStore.builder(dataSource).build();
 * }</pre>
 *
 * <p>The table ({@code turnstile_locks} by default) must exist: create it with the DDL from
 * {@code turnstile schema} or {@link SqlDialect#createTable}, or let the store create it with
 * {@link Builder#createTableIfMissing(boolean)}. Each operation borrows a connection and works in
 * autocommit (it commits itself if the pool hands out connections with autocommit off).
 *
 * <p>A deadlock or serialization failure (PostgreSQL SQLState {@code 40001}/{@code 40P01}, MariaDB and
 * MySQL error 1213, H2 {@code 40001}: contention on the lock's row, typical under
 * {@code SERIALIZABLE} or with other transactions touching the table) is rolled back by the database,
 * so nothing was taken: the statement is retried a few times after a short jittered pause, and an
 * acquire that still conflicts reports the lock busy. A lock wait timeout (MariaDB/MySQL 1205,
 * PostgreSQL {@code 55P03}: another transaction holds the row) is busy at once. Neither is reported
 * as {@link StoreUnavailableException}; an extend or release that keeps conflicting is.
 *
 * <p>Each database's SQL is in its dialect class ({@code PostgresDialect} and the others); errors are
 * named by {@code LockTableErrors}. Past 400 lines only by its public {@link Builder}.
 */
public final class JdbcLockStore implements LockStore, WatchesLeases, StoreClock, PrunesNames {
    private static final Logger log = LoggerFactory.getLogger(JdbcLockStore.class);
    /** Attempts of one statement that meets a deadlock or serialization failure. */
    static final int CONFLICT_ATTEMPTS = 4;
    private final DataSource dataSource;
    private final String table;
    private final boolean createTable;
    private final String description;
    private final @Nullable AutoCloseable owned;
    /** Turns a driver's exception into the store's, naming the fix. */
    private final LockTableErrors errors;
    private final java.util.Set<String> notApplied = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private volatile @Nullable Dialect dialect;
    private volatile Dialect.@Nullable Statements sql;
    private volatile boolean closed;
    private final boolean notifyForcedReleases;
    private final @Nullable DataSource noticeSource;
    private @Nullable PgReleaseNotices notices; // guarded by this

    private JdbcLockStore(Builder b) {
        this.dataSource = b.dataSource;
        this.table = b.table;
        this.createTable = b.createTable;
        this.owned = b.owned;
        this.notifyForcedReleases = b.notifyForcedReleases;
        this.noticeSource = b.noticeSource;
        this.description = (b.description != null ? b.description : "JDBC store") + " (table " + table + ")";
        this.dialect = (Dialect) b.dialect;
        this.errors = new LockTableErrors(dataSource, table, description, b.scrub);
    }

    /**
     * Starts a builder over a data source (a pool, preferably).
     *
     * @param dataSource where connections come from
     * @return a builder
     * @throws IllegalArgumentException if {@code dataSource} is null
     */
    public static Builder builder(DataSource dataSource) {
        if (dataSource == null) {
            throw new IllegalArgumentException("dataSource is null: give the DataSource (a pool, preferably) of the database "
                    + "that holds the lock table");
        }
        return new Builder(dataSource);
    }

    @Override
    public Optional<Grant> tryAcquire(AcquireRequest request) {
        Exception firstFenceFailure;
        try {
            return acquireWithRetries(request);
        } catch (FirstFenceFailed e) {
            firstFenceFailure = e.cause;
        }
        // the connection is back in the pool: the give-back must not wait for a second one (pool size 1)
        releaseQuietly(request.name(), request.token());
        if (firstFenceFailure instanceof SQLException e) {
            throw translate("set the first fence of lock '" + request.name() + "'", e);
        }
        throw (RuntimeException) firstFenceFailure;
    }

    /** The first-fence step failed after the lease was taken: the caller gives the lease back, then throws the cause. */
    private static final class FirstFenceFailed extends RuntimeException {
        private static final long serialVersionUID = 1L;
        @SuppressWarnings("serial") // never serialized: caught in tryAcquire
        final Exception cause;

        FirstFenceFailed(Exception cause) {
            super(null, null, false, false);
            this.cause = cause;
        }
    }

    private Optional<Grant> acquireWithRetries(AcquireRequest request) {
        for (int attempt = 1; ; attempt++) {
            SQLException conflict;
            try (Connection c = connection()) {
                try {
                    Optional<Grant> grant = detected().acquire(c, statements(), request);
                    JdbcCalls.commitIfNeeded(c);
                    if (grant.isPresent() && grant.get().fence() == 0) {
                        return firstFence(c, request, grant.get());
                    }
                    return grant;
                } catch (SQLException e) {
                    JdbcCalls.rollbackQuietly(c);
                    if (detected().isLostInsertRace(e)) {
                        return Optional.empty();
                    }
                    if (detected().isLockWaitTimeout(e)) {
                        log.debug("lock '{}': its row stayed locked by another transaction ({}): busy", request.name(), e.toString());
                        return Optional.empty();
                    }
                    if (!detected().isTransientConflict(e)) {
                        if (JdbcCalls.isSqliteBusy(detected(), e)) {
                            // SQLite refused the write lock: the upsert never ran, so the caller's undo of
                            // this "ambiguous" acquire need not wait for the lock a second time.
                            notApplied.add(request.token());
                        }
                        throw e;
                    }
                    conflict = e;
                }
            } catch (SQLException e) {
                throw translate("acquire lock '" + request.name() + "'", e);
            }
            if (attempt == CONFLICT_ATTEMPTS) {
                log.debug("lock '{}': {} attempts met a deadlock or serialization failure ({}): busy", request.name(),
                        attempt, conflict.toString());
                // The database rolled each attempt back; only MariaDB's read-back could have failed after a
                // committed upsert, and then this token holds the row: give it back.
                releaseQuietly(request.name(), request.token());
                return Optional.empty();
            }
            JdbcCalls.pauseAfterConflict(attempt);
        }
    }

    /**
     * A new row (or one whose inserter died before setting it) is at fence 0: set its first fence
     * above the floor of pruned names ({@link NamePruning}), retried on conflicts. If that fails,
     * {@link FirstFenceFailed} makes {@link #tryAcquire} give the lease back once this connection is
     * closed, so no holder ever runs with fence 0.
     */
    private Optional<Grant> firstFence(Connection c, AcquireRequest request, Grant unset) {
        for (int attempt = 1; ; attempt++) {
            try {
                return NamePruning.setFirstFence(c, detected(), statements(), request.name(), request.token(), unset);
            } catch (SQLException e) {
                if (attempt < CONFLICT_ATTEMPTS && detected().isTransientConflict(e)) {
                    JdbcCalls.pauseAfterConflict(attempt);
                    continue;
                }
                throw new FirstFenceFailed(e);
            } catch (RuntimeException e) {
                throw new FirstFenceFailed(e);
            }
        }
    }

    /**
     * Deletes the rows of names that nobody has acquired, and whose lease ended, at least
     * {@code unusedFor} ago by the database's clock, in transactions of {@value NamePruning#BATCH}
     * names, raising the table's fence floor in the same transaction ({@link NamePruning}). Safe
     * beside running acquires and other prunes. On SQLite a release without a minimum hold ends the
     * lease at 0, so there the period counts from the last acquire.
     */
    @Override
    public long pruneUnused(Duration unusedFor) {
        long millis = unusedFor.toMillis();
        long pruned = 0;
        try (Connection c = connection()) {
            NamePruning.ensureFloorRow(c, detected(), table);
            for (int attempt = 1; ; ) {
                long[] batch;
                try {
                    batch = NamePruning.pruneBatch(c, detected(), table, millis);
                } catch (SQLException e) {
                    if (attempt++ < CONFLICT_ATTEMPTS
                            && (detected().isTransientConflict(e) || JdbcCalls.isSqliteBusy(detected(), e))) {
                        JdbcCalls.pauseAfterConflict(attempt);
                        continue;
                    }
                    throw e;
                }
                attempt = 1; // conflicts count per batch, not per prune
                pruned += batch[1];
                if (batch[0] < NamePruning.BATCH || batch[1] == 0) {
                    return pruned;
                }
            }
        } catch (SQLException e) {
            throw translate("prune unused lock names (" + pruned + " pruned before the failure)", e);
        }
    }

    private void releaseQuietly(String name, String token) {
        try {
            release(name, token, Duration.ZERO);
        } catch (RuntimeException e) {
            log.debug("could not give back token of lock '{}' after conflicts: {}", name, e.toString());
        }
    }

    @Override
    public boolean extend(String name, String token, Duration ttl) {
        return update("extend lock '" + name + "'", Dialect.Statements::extend, ttl.toMillis(), name, token) == 1;
    }

    @Override
    public boolean release(String name, String token, Duration lockAtLeastFor) {
        if (notApplied.remove(token)) {
            return false;
        }
        return update("release lock '" + name + "'", Dialect.Statements::release, lockAtLeastFor.toMillis(), name, token) == 1;
    }

    @Override
    public boolean forceRelease(String name) {
        boolean freed = update("force-release lock '" + name + "'", Dialect.Statements::forceRelease, null, name, null) == 1;
        if (freed && dialect instanceof PostgresDialect) {
            // Best effort: a holder that misses the notice finds the release at its next renewal.
            try (Connection c = connection()) {
                PgReleaseNotices.notify(c, table, name);
                JdbcCalls.commitIfNeeded(c);
            } catch (SQLException e) {
                log.debug("cannot notify the forced release of '{}': {}", name, e.toString());
            }
        }
        return freed;
    }

    /**
     * On PostgreSQL, when the store may hold a connection for it ({@link Builder#notifyForcedReleases}),
     * a forced release is told to this process's holder of the name at once (LISTEN/NOTIFY); the holder
     * checks its lease then, since a notice may be an earlier holder's. Elsewhere nothing is watched,
     * and the holder finds the release at its next renewal.
     */
    @Override
    public ReleaseWatch watchLease(String name, String token, LeaseProof proof) {
        PgReleaseNotices n = notices();
        if (n == null) {
            return ReleaseWatch.NONE;
        }
        return n.watch(name, () -> {
            if (!holds(name, token)) {
                proof.ended("it was force-released (told by PostgreSQL)");
            }
        });
    }

    /** Leases are watched on PostgreSQL only, and only when the store may hold a connection for it. */
    @Override
    public <C extends StoreCapability> Optional<C> capability(Class<C> type) {
        if (type == WatchesLeases.class && !(notifyForcedReleases && dialect instanceof PostgresDialect)) {
            return Optional.empty();
        }
        return LockStore.super.capability(type);
    }

    private @Nullable PgReleaseNotices notices() {
        if (!notifyForcedReleases || !(dialect instanceof PostgresDialect) || closed) {
            return null;
        }
        synchronized (this) {
            if (notices == null) {
                notices = new PgReleaseNotices(noticeSource != null ? noticeSource : dataSource, table, description);
            }
            return notices;
        }
    }

    /** Whether the lease is still held, by the database's clock; a failed read says nothing (true). */
    private boolean holds(String name, String token) {
        try (Connection c = connection(); PreparedStatement ps = c.prepareStatement(statements().holds())) {
            ps.setString(1, name);
            ps.setString(2, token);
            try (ResultSet rs = ps.executeQuery()) {
                boolean held = rs.next();
                JdbcCalls.commitIfNeeded(c);
                return held;
            }
        } catch (SQLException | RuntimeException e) {
            log.debug("cannot check lock '{}' after a forced-release notice: {}", name, e.toString());
            return true;
        }
    }

    @Override
    public List<LockInfo> heldLocks() {
        try (Connection c = connection();
                PreparedStatement ps = listStatement(c);
                ResultSet rs = ps.executeQuery()) {
            List<LockInfo> out = new ArrayList<>();
            while (rs.next()) {
                out.add(new LockInfo(rs.getString(1), rs.getString(2), rs.getLong(3),
                        Instant.ofEpochMilli(rs.getLong(4)), Instant.ofEpochMilli(rs.getLong(5))));
            }
            JdbcCalls.commitIfNeeded(c);
            out.sort(Comparator.comparing(LockInfo::name));
            return out;
        } catch (SQLException e) {
            throw translate("list locks", e);
        }
    }

    private PreparedStatement listStatement(Connection c) throws SQLException {
        PreparedStatement ps = c.prepareStatement(statements().list());
        ps.setString(1, Dialect.FENCE_FLOOR_ROW);
        return ps;
    }

    /**
     * Reads the database's clock, the one every lease's times are by.
     *
     * @return the database's time, to the millisecond
     * @throws dev.turnstile.StoreUnavailableException if the database cannot be reached
     */
    @Override
    public Instant now() {
        try (Connection c = connection();
                PreparedStatement ps = c.prepareStatement(statements().clock());
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            long millis = rs.getLong(1);
            JdbcCalls.commitIfNeeded(c);
            return Instant.ofEpochMilli(millis);
        } catch (SQLException e) {
            throw translate("read the clock", e);
        }
    }

    /** The connections this store uses, for a claim store over the same database ({@link JdbcClaimStore#builder(JdbcLockStore, dev.turnstile.claim.ClaimTable)}). */
    DataSource dataSource() {
        return dataSource;
    }

    @Override
    public String description() {
        return description;
    }

    /**
     * Returns the dialect in use, detecting it from the database on first use.
     *
     * @return the dialect
     * @throws StoreUnavailableException if detection needs the database and it cannot be reached
     */
    @SuppressWarnings("try") // the connection is opened for what opening does: it detects the dialect
    public SqlDialect dialect() {
        try (Connection c = connection()) {
            return detected();
        } catch (SQLException e) {
            throw translate("connect", e);
        }
    }

    @Override
    public void close() {
        closed = true;
        synchronized (this) {
            if (notices != null) {
                notices.close();
            }
        }
        if (owned != null) {
            try {
                owned.close();
            } catch (Exception e) {
                throw new StoreUnavailableException("closing " + description + " failed: " + e.getMessage(), e);
            }
        }
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    /** Parameters: (long or absent, name, token or absent). Retried on a deadlock or serialization failure. */
    private int update(String what, Function<Dialect.Statements, String> statement, @Nullable Long millis, String name, @Nullable String token) {
        for (int attempt = 1; ; attempt++) {
            try (Connection c = connection(); PreparedStatement ps = c.prepareStatement(statement.apply(statements()))) {
                int i = 1;
                if (millis != null) {
                    ps.setLong(i++, millis);
                }
                ps.setString(i++, name);
                if (token != null) {
                    ps.setString(i, token);
                }
                try {
                    int rows = ps.executeUpdate();
                    JdbcCalls.commitIfNeeded(c);
                    return rows;
                } catch (SQLException e) {
                    JdbcCalls.rollbackQuietly(c);
                    if (attempt == CONFLICT_ATTEMPTS || !detected().isTransientConflict(e)) {
                        throw e;
                    }
                    log.debug("cannot {} yet: {}; retrying", what, e.toString());
                }
            } catch (SQLException e) {
                throw translate(what, e);
            }
            JdbcCalls.pauseAfterConflict(attempt);
        }
    }

    /** The database's dialect: set by the first {@link #connection()}, before any statement runs. */
    private Dialect detected() {
        Dialect d = dialect;
        if (d == null) {
            throw new IllegalStateException("the dialect of " + description + " is read before a connection detected it");
        }
        return d;
    }

    /** The statements on the lock table: set by the first {@link #connection()}, once the table checked out. */
    private Dialect.Statements statements() {
        Dialect.Statements s = sql;
        if (s == null) {
            throw new IllegalStateException("the statements of " + description + " are read before a connection prepared them");
        }
        return s;
    }

    private Connection connection() throws SQLException {
        if (closed) {
            throw new IllegalStateException("the LockStore " + description + " is closed: build a new one, and keep it "
                    + "open while a Turnstile uses it");
        }
        Connection c = dataSource.getConnection();
        if (sql == null) {
            try {
                initialise(c);
            } catch (SQLException | RuntimeException e) {
                c.close();
                throw e;
            }
        }
        return c;
    }

    private synchronized void initialise(Connection c) throws SQLException {
        if (sql != null) {
            return;
        }
        Dialect d = dialect != null ? dialect : (Dialect) SqlDialect.detect(c.getMetaData());
        if (createTable && !(d instanceof SqliteDialect && sqliteTableExists(c))) {
            try (Statement st = c.createStatement()) {
                st.execute(d.createTable(table));
            }
            JdbcCalls.commitIfNeeded(c);
        }
        dialect = d; // from here on, errors are translated by this database's codes
        Collations.check(c, d.id(), table, "name", "lock table", "VARCHAR(255)");
        // Every column the statements use, read once: a table of this name that is not Turnstile's
        // (a column missing, made by hand or by a migration that only checked the table exists)
        // fails here, at start, as a schema error, rather than at the first acquire.
        try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT name, owner, token, fence, acquired_at, expires_at FROM " + table
                        + " WHERE 1 = 0")) {
            rs.next();
        }
        // The table exists: its name column must be unique by itself, or two acquires can each
        // insert a row for one name and both hold the lock.
        UniqueKeys.check(c, d.id(), table, "name", "lock table");
        JdbcCalls.commitIfNeeded(c);
        sql = Dialect.Statements.of(d, table);
    }

    /**
     * SQLite's CREATE TABLE IF NOT EXISTS takes the write lock even when the table exists, so a
     * run would wait once more for another process's write transaction; a read does not wait.
     */
    private boolean sqliteTableExists(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?")) {
            ps.setString(1, table);
            try (ResultSet rs = ps.executeQuery()) {
                boolean exists = rs.next();
                JdbcCalls.commitIfNeeded(c);
                return exists;
            }
        }
    }

    private dev.turnstile.TurnstileException translate(String what, SQLException e) {
        return errors.translate(dialect, what, e);
    }

    /** Builds a {@link JdbcLockStore}. Not thread-safe. */
    public static final class Builder {
        private final DataSource dataSource;
        private String table = Dialect.DEFAULT_TABLE;
        private @Nullable SqlDialect dialect;
        private boolean createTable;
        private boolean notifyForcedReleases;
        private @Nullable DataSource noticeSource;
        private @Nullable String description;
        private @Nullable AutoCloseable owned;
        private @Nullable UnaryOperator<String> scrub;

        private Builder(DataSource dataSource) {
            this.dataSource = dataSource;
        }

        /**
         * Sets the lock table's name. Default {@code turnstile_locks}.
         *
         * @param table a plain identifier, optionally {@code schema.table}
         * @return this builder
         * @throws IllegalArgumentException if it is not a plain identifier (it is spliced into SQL)
         */
        public Builder tableName(String table) {
            this.table = Dialect.checkTable(table);
            return this;
        }

        /**
         * Sets the dialect instead of detecting it from the first connection.
         *
         * @param dialect the dialect
         * @return this builder
         * @throws IllegalArgumentException if {@code dialect} is null
         */
        public Builder dialect(SqlDialect dialect) {
            if (dialect == null) {
                throw new IllegalArgumentException("dialect is null: give one of the SqlDialect constants, or do not set it "
                        + "to detect it from the database");
            }
            this.dialect = dialect;
            return this;
        }

        /**
         * Creates the table on first use if it is missing ({@code CREATE TABLE IF NOT EXISTS}).
         * Default off: production schemas are usually migrated separately.
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
         * On PostgreSQL, tells a holder in this process of a forced release at once (LISTEN/NOTIFY)
         * rather than at its next renewal: a kept-alive lease with an {@code onLost} callback (a
         * scheduled job, {@code turnstile run}) then stops its work within a round trip. While any
         * such lease is held, the store keeps one connection of the pool listening, so the pool
         * needs room for it beside the renewals (two connections or more). Default off for a store
         * built on your DataSource; on for one opened from a URL whose pool has two or more. Other
         * databases ignore it.
         *
         * @param notify {@code true} to listen for forced releases
         * @return this builder
         */
        public Builder notifyForcedReleases(boolean notify) {
            this.notifyForcedReleases = notify;
            return this;
        }

        /** Listens for forced releases on connections from here rather than from the pool (a URL store). */
        Builder noticesFrom(DataSource unpooled) {
            this.noticeSource = unpooled;
            this.notifyForcedReleases = true;
            return this;
        }

        /** Removes the URL's secrets from driver messages (the store was opened from a URL). */
        Builder scrubbing(UnaryOperator<String> scrub) {
            this.scrub = scrub;
            return this;
        }

        /** The store closes this (a pool it made) on close. */
        Builder owning(AutoCloseable resource) {
            this.owned = resource;
            return this;
        }

        /**
         * Builds the store. Does not connect: the first operation detects the dialect and, if
         * asked, creates the table.
         *
         * @return the store
         */
        public JdbcLockStore build() {
            return new JdbcLockStore(this);
        }
    }
}
