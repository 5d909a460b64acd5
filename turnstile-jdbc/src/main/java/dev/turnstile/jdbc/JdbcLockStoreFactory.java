package dev.turnstile.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.turnstile.StoreUnavailableException;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStoreFactory;
import dev.turnstile.spi.StoreUrlOptions;
import dev.turnstile.spi.StoreUrls;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.InvalidPathException;
import java.nio.file.attribute.BasicFileAttributes;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Opens JDBC stores from URLs, with a small HikariCP pool the store owns. Turnstile's own options
 * ride in the URL as {@code turnstile.*} parameters and are removed before the driver sees it:
 *
 * <ul>
 *   <li>{@code turnstile.table} — table name (default {@code turnstile_locks})
 *   <li>{@code turnstile.createTable} — create the table if missing (default {@code true} for the
 *       embedded SQLite and H2, {@code false} for server databases)
 *   <li>{@code turnstile.poolSize} — maximum connections (default 4)
 *   <li>{@code turnstile.connectTimeout} — how long to wait for a connection, including a server
 *       that accepts it and never answers: a duration ({@code 5s}, {@code 1m}) or a bare number of
 *       milliseconds, 250ms to 10m (default 5s); PostgreSQL, MariaDB and MySQL get
 *       it as the driver's connect and login timeouts unless the URL sets them
 *   <li>{@code turnstile.busyTimeout} — SQLite: how long a statement waits for another process's
 *       write transaction on the file before failing ({@code 250ms}, {@code 10s}; default 10s),
 *       and how long an open that loses a race with another connection creating the same file
 *       is tried again
 *   <li>{@code turnstile.createFile} — SQLite: create the database file if it does not exist
 *       (default {@code true}); with {@code false} a missing file fails with a message, and
 *       nothing is created
 * </ul>
 *
 * <p>PostgreSQL, MariaDB and MySQL connections get a 30 s socket timeout unless the URL sets the
 * driver's {@code socketTimeout}, so a database that stops answering cannot hang a lock call.
 * SQLite URLs get {@code journal_mode=WAL} and the busy timeout unless they set them, so several
 * processes on one host can share the file. Error messages never show the URL's password, even
 * where the driver echoes it.
 *
 * <p>Past 400 lines by the URL forms of four databases, each parsed and checked here, with the
 * messages that name the fix.
 */
public final class JdbcLockStoreFactory implements LockStoreFactory {
    private static final Set<String> KNOWN = Set.of("table", "createTable", "poolSize", "connectTimeout",
            "busyTimeout", "createFile");
    /** SQLITE_OPEN_READWRITE without SQLITE_OPEN_CREATE: an existing file only. */
    private static final int SQLITE_OPEN_EXISTING = 0x2;

    @Override
    public List<String> schemes() {
        return List.of("jdbc:sqlite:", "jdbc:postgresql:", "jdbc:mariadb:", "jdbc:mysql:", "jdbc:h2:");
    }

    @Override
    public String schema(String url) {
        Parsed p = parse(url);
        return p.dialect.createTable(p.options.get("table", Dialect.DEFAULT_TABLE));
    }

    @Override
    public void applySchema(String url) {
        try (JdbcLockStore store = open(url, true)) {
            store.dialect(); // first use runs CREATE TABLE IF NOT EXISTS
        }
    }

    @Override
    public LockStore open(String url) {
        return open(url, null);
    }

    @Override
    public @Nullable String processLocalReason(String url) {
        Parsed p = parse(url);
        String u = p.jdbcUrl.toLowerCase(Locale.ROOT);
        if (p.dialect == SqlDialect.H2 && u.startsWith("jdbc:h2:mem:")) {
            return "jdbc:h2:mem: is an in-memory database of one process";
        }
        if (p.dialect == SqlDialect.SQLITE) {
            String reason = SqliteUrl.parse(p.jdbcUrl).processLocalReason();
            if (reason == null && (u.contains(":memory:") || u.contains("mode=memory"))) {
                reason = "jdbc:sqlite::memory: is an in-memory database of one process";
            }
            return reason;
        }
        return null;
    }

    private JdbcLockStore open(String url, @Nullable Boolean forceCreate) {
        Parsed p = parse(url);
        String table = p.options.get("table", Dialect.DEFAULT_TABLE);
        boolean embedded = p.dialect == SqlDialect.SQLITE || p.dialect == SqlDialect.H2;
        boolean create = forceCreate != null ? forceCreate : p.options.bool("createTable", embedded);
        int poolSize = p.options.integer("poolSize", 4, 1, 100);
        // a bare number is milliseconds, as it always was; with a unit it is a duration like every other store's
        String rawConnect = p.options.get("connectTimeout", "");
        int connectTimeout = rawConnect.isEmpty() || !rawConnect.chars().allMatch(c -> c >= '0' && c <= '9')
                ? (int) p.options.duration("connectTimeout", Duration.ofSeconds(5), Duration.ofMillis(250), Duration.ofMinutes(10)).toMillis()
                : p.options.integer("connectTimeout", 5000, 250, 600_000);
        // SQLite's busy_timeout is an int of milliseconds; the CLI passes --wait (up to about 11.6 days) here
        Duration busyTimeout = p.options.duration("busyTimeout", Duration.ofSeconds(10), Duration.ofMillis(1), Duration.ofDays(20));
        boolean createFile = p.options.bool("createFile", true);

        HikariConfig config = new HikariConfig();
        String jdbcUrl = p.jdbcUrl;
        // SQLite connections come straight from its driver: the embedded store is what `turnstile
        // run` opens by default, and DriverManager would first load every other driver there is.
        javax.sql.DataSource direct = null;
        if (p.dialect == SqlDialect.SQLITE) {
            jdbcUrl = withSqliteDefaults(jdbcUrl, busyTimeout, createFile);
            direct = DirectDriverDataSource.of("org.sqlite.JDBC", jdbcUrl, busyTimeout).orElse(null);
        }
        if (direct == null) {
            checkDriverAccepts(jdbcUrl, url);
        }
        java.util.Properties driverProperties = new java.util.Properties();
        config.setPoolName("turnstile");
        config.setMaximumPoolSize(poolSize);
        config.setMinimumIdle(1);
        config.setConnectionTimeout(connectTimeout);
        config.setInitializationFailTimeout(1);
        // A server that accepts the connection and never answers must cost one connect timeout,
        // not the driver's own defaults (PostgreSQL's 10 s login timeout, MariaDB's socket timeout).
        int connectSeconds = Math.max(1, (connectTimeout + 999) / 1000);
        if (p.dialect == SqlDialect.POSTGRESQL) {
            setUnlessInUrl(driverProperties, p.jdbcUrl, "connectTimeout", Integer.toString(connectSeconds));
            setUnlessInUrl(driverProperties, p.jdbcUrl, "loginTimeout", Integer.toString(connectSeconds));
        } else if (p.dialect == SqlDialect.MARIADB) {
            setUnlessInUrl(driverProperties, p.jdbcUrl, "connectTimeout", Integer.toString(connectTimeout));
        }
        // A database that stops answering (paused, partitioned) must not hang a lock call forever;
        // the driver's own socketTimeout in the URL, if given, wins.
        if (p.dialect == SqlDialect.POSTGRESQL) {
            setUnlessInUrl(driverProperties, p.jdbcUrl, "socketTimeout", "30");
        } else if (p.dialect == SqlDialect.MARIADB) {
            setUnlessInUrl(driverProperties, p.jdbcUrl, "socketTimeout", "30000");
        }
        javax.sql.DataSource unpooled = direct != null ? direct
                : new com.zaxxer.hikari.util.DriverDataSource(jdbcUrl, null, driverProperties, null, null);
        config.setDataSource(new FailFastFirstConnection(unpooled));
        HikariDataSource pool;
        try {
            pool = new HikariDataSource(config);
        } catch (RuntimeException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            throw new StoreUnavailableException("cannot connect to " + StoreUrls.redact(p.jdbcUrl) + ": "
                    + (diskFull(p.dialect, e) ? Dialect.DISK_FULL + ". Cause: " : "")
                    + StoreUrls.scrub(cause.getMessage(), url), new ScrubbedException(e, text -> StoreUrls.scrub(text, url)));
        }
        JdbcLockStore.Builder builder = JdbcLockStore.builder(pool);
        if (p.dialect == SqlDialect.POSTGRESQL) {
            builder.noticesFrom(unpooled); // a forced release reaches a holder at once, on its own connection
        }
        return builder
                .dialect(p.dialect)
                .tableName(table)
                .createTableIfMissing(create)
                .description(StoreUrls.redact(p.jdbcUrl))
                .scrubbing(text -> StoreUrls.scrub(text, url))
                .owning(pool)
                .build();
    }

    /** SQLite opening its -wal or -shm file on a full disk, for example. */
    private static boolean diskFull(SqlDialect dialect, Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SQLException x && ((Dialect) dialect).isDiskFull(x)) {
                return true;
            }
        }
        return false;
    }

    private static void setUnlessInUrl(java.util.Properties driverProperties, String jdbcUrl, String property, String value) {
        if (!jdbcUrl.toLowerCase(Locale.ROOT).contains(property.toLowerCase(Locale.ROOT) + "=")) {
            driverProperties.setProperty(property, value);
        }
    }

    /** A malformed URL is a usage error, said before connecting; the driver is the judge of its form. */
    private static void checkDriverAccepts(String jdbcUrl, String url) {
        try {
            DriverManager.getDriver(jdbcUrl);
        } catch (SQLException e) {
            throw new IllegalArgumentException("store URL '" + StoreUrls.redact(url) + "' is not a URL the "
                    + SqlDialect.fromJdbcUrl(jdbcUrl) + " driver accepts (or the driver is not on the class path): "
                    + "check its form and give one such as " + example(SqlDialect.fromJdbcUrl(jdbcUrl)));
        }
    }

    private static String example(SqlDialect d) {
        return switch (d.id()) {
            case "postgresql" -> "jdbc:postgresql://host:5432/database?user=name";
            case "mariadb" -> "jdbc:mariadb://host:3306/database?user=name";
            case "h2" -> "jdbc:h2:tcp://host/path or jdbc:h2:/path/locks";
            default -> "jdbc:sqlite:/path/locks.db";
        };
    }

    /**
     * Hikari sleeps one second after a failed first connection before it gives up
     * ({@code HikariPool.checkFailFast}), so an unreachable store would cost a connect timeout plus
     * a second. A failure of the very first connection is handed to it as a connection whose
     * set-up fails instead, which it reports at once, with the driver's exception as the cause.
     */
    static final class FailFastFirstConnection implements javax.sql.DataSource {
        private final javax.sql.DataSource driver;
        private final java.util.concurrent.atomic.AtomicBoolean first = new java.util.concurrent.atomic.AtomicBoolean(true);

        FailFastFirstConnection(javax.sql.DataSource driver) {
            this.driver = driver;
        }

        @Override
        public java.sql.Connection getConnection() throws SQLException {
            try {
                java.sql.Connection c = driver.getConnection();
                first.set(false);
                return c;
            } catch (SQLException e) {
                if (first.getAndSet(false)) {
                    return failing(e);
                }
                throw e;
            }
        }

        private static java.sql.Connection failing(SQLException e) {
            return (java.sql.Connection) java.lang.reflect.Proxy.newProxyInstance(JdbcLockStoreFactory.class.getClassLoader(),
                    new Class<?>[] {java.sql.Connection.class}, (proxy, method, args) -> switch (method.getName()) {
                        case "close", "abort" -> null;
                        case "isClosed" -> true;
                        case "hashCode" -> System.identityHashCode(proxy);
                        case "equals" -> proxy == args[0];
                        case "toString" -> "failed connection";
                        default -> throw e;
                    });
        }

        @Override
        public java.sql.Connection getConnection(String user, String password) throws SQLException {
            return getConnection();
        }

        @Override
        public java.io.PrintWriter getLogWriter() throws SQLException {
            return driver.getLogWriter();
        }

        @Override
        public void setLogWriter(java.io.PrintWriter out) throws SQLException {
            driver.setLogWriter(out);
        }

        @Override
        public void setLoginTimeout(int seconds) throws SQLException {
            driver.setLoginTimeout(seconds);
        }

        @Override
        public int getLoginTimeout() throws SQLException {
            return driver.getLoginTimeout();
        }

        @Override
        public java.util.logging.Logger getParentLogger() throws java.sql.SQLFeatureNotSupportedException {
            return driver.getParentLogger();
        }

        @Override
        public <T> T unwrap(Class<T> iface) throws SQLException {
            return driver.unwrap(iface);
        }

        @Override
        public boolean isWrapperFor(Class<?> iface) throws SQLException {
            return driver.isWrapperFor(iface);
        }
    }

    /**
     * Keeps a driver's exception as the cause without its message: drivers put the URL, or pieces
     * of the password, in their messages, and a cause's message ends up in logs.
     */
    static final class ScrubbedException extends RuntimeException {
        ScrubbedException(Throwable original, java.util.function.UnaryOperator<String> scrub) {
            super(original.getClass().getName() + ": " + scrub.apply(original.getMessage()),
                    original.getCause() == null || original.getCause() == original ? null
                            : new ScrubbedException(original.getCause(), scrub), false, false);
            setStackTrace(original.getStackTrace());
        }
    }

    private record Parsed(String jdbcUrl, SqlDialect dialect, StoreUrlOptions options) {}

    private static Parsed parse(String url) {
        SqlDialect dialect = SqlDialect.fromJdbcUrl(url);
        StoreUrlOptions options = StoreUrlOptions.parse(url, KNOWN, dialect == SqlDialect.H2);
        Dialect.checkTable(options.get("table", Dialect.DEFAULT_TABLE));
        checkServerUrl(dialect, options.url(), url, options.get("table", Dialect.DEFAULT_TABLE).contains("."));
        if (dialect == SqlDialect.SQLITE) {
            // options that switch off SQLite's file locking: refused by the library too, since every
            // process (and every pooled connection) would take the same lock
            String problem = SqliteUrl.parse(options.url()).lockingProblem();
            if (problem != null) {
                throw new IllegalArgumentException("store URL '" + StoreUrls.redact(url) + "': " + problem);
            }
        }
        return new Parsed(options.url(), dialect, options);
    }

    /**
     * {@code jdbc:postgresql://} with no host, or no database, is a typo or an unset variable: say
     * so, rather than connect to a default and report a missing table.
     */
    private static void checkServerUrl(SqlDialect dialect, String jdbcUrl, String url, boolean qualifiedTable) {
        if (dialect != SqlDialect.POSTGRESQL && dialect != SqlDialect.MARIADB) {
            return;
        }
        int scheme = jdbcUrl.indexOf("//");
        if (scheme < 0) {
            String rest = jdbcUrl.substring(jdbcUrl.indexOf(':', 5) + 1).split("[?#]", 2)[0];
            if (rest.isEmpty()) {
                throw new IllegalArgumentException("store URL '" + StoreUrls.redact(url)
                        + "' has no host or database (an unset variable?): give one such as " + example(dialect));
            }
            return; // the jdbc:postgresql:database form (localhost): the driver decides
        }
        String rest = jdbcUrl.substring(scheme + 2);
        int end = indexOfAny(rest, "/?#");
        String authority = end < 0 ? rest : rest.substring(0, end);
        String host = authority.substring(authority.lastIndexOf('@') + 1);
        String database = end < 0 || rest.charAt(end) != '/' ? "" : rest.substring(end + 1).split("[?#]", 2)[0];
        // MariaDB/MySQL need no database in the URL when the table names its own (db.table)
        boolean noDatabase = database.isEmpty() && !(dialect == SqlDialect.MARIADB && qualifiedTable);
        if (host.isEmpty() || host.startsWith(":") || noDatabase) {
            throw new IllegalArgumentException("store URL '" + StoreUrls.redact(url) + "' has no "
                    + (host.isEmpty() || host.startsWith(":") ? "host" : "database")
                    + " (an unset variable?): give one such as " + example(dialect));
        }
    }

    private static int indexOfAny(String s, String chars) {
        for (int i = 0; i < s.length(); i++) {
            if (chars.indexOf(s.charAt(i)) >= 0) {
                return i;
            }
        }
        return -1;
    }

    /**
     * A path that exists must be a regular file (or a link to one): SQLite would write its journal
     * beside a device ({@code /dev/null-journal}), and a directory or a FIFO fails later as a "disk
     * I/O error" that names neither.
     */
    static void checkSqliteFileKind(String path) {
        Path file;
        try {
            file = Path.of(path);
        } catch (InvalidPathException e) {
            return; // the driver says what is wrong with it
        }
        // One stat, not exists() then isRegularFile(): stores opening one new file together saw it
        // between the two calls as existing and then as no regular file (a CI failure).
        BasicFileAttributes attributes;
        try {
            attributes = Files.readAttributes(file, BasicFileAttributes.class);
        } catch (IOException e) {
            return; // absent (SQLite creates it) or unreadable: the driver says what is wrong
        }
        if (!attributes.isRegularFile()) {
            boolean directory = attributes.isDirectory();
            throw new IllegalArgumentException("SQLite path " + path + (Files.isSymbolicLink(file) ? " (a symbolic link)" : "")
                    + (directory ? " is a directory: give the path of a database file in it, for example "
                            + file.resolve("locks.db")
                    : " is not a regular file (a device such as /dev/null, a FIFO or a socket): give the path of a database file"));
        }
    }

    /**
     * The file a {@code jdbc:sqlite:} URL opens, read as SQLite reads it: a {@code file:} URI loses
     * its {@code //localhost} authority and is percent-decoded ({@code file:/dev/nul%6C} is
     * {@code /dev/null}). Checks on the path (relative, a device) must read this, not the URL's text.
     *
     * @param url a {@code jdbc:sqlite:} URL
     * @return the path, or an empty string for SQLite's private temporary database
     */
    public static String sqliteFile(String url) {
        return SqliteUrl.parse(url).path();
    }

    /** The file part of a SQLite URL: after {@code jdbc:sqlite:}, before its parameters, decoded. */
    static String sqlitePath(String jdbcUrl) {
        return SqliteUrl.parse(jdbcUrl).path();
    }

    private static String withSqliteDefaults(String url, Duration busyTimeout, boolean createFile) {
        String s = url;
        checkSqliteFileKind(sqlitePath(url));
        if (!createFile) {
            String path = sqlitePath(url);
            boolean exists;
            try {
                exists = Files.isRegularFile(Path.of(path));
            } catch (InvalidPathException e) {
                exists = false;
            }
            if (!exists) {
                throw new StoreUnavailableException("no SQLite database at " + path
                        + ": nothing was created (check the path; 'turnstile run' or 'turnstile schema --apply' creates it)",
                        null);
            }
            // and a file deleted between the check and the open is not created either
            s += (s.contains("?") ? "&" : "?") + "open_mode=" + SQLITE_OPEN_EXISTING;
        }
        if (!s.contains("journal_mode=")) {
            s += (s.contains("?") ? "&" : "?") + "journal_mode=WAL";
        }
        if (!s.contains("busy_timeout=")) {
            s += "&busy_timeout=" + busyTimeout.toMillis();
        }
        return s;
    }
}
