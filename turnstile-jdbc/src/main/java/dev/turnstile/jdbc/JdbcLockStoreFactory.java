package dev.turnstile.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.turnstile.StoreUnavailableException;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStoreFactory;
import dev.turnstile.spi.StoreUrlOptions;
import dev.turnstile.spi.StoreUrls;
import java.util.List;
import java.util.Set;

/**
 * Opens JDBC stores from URLs, with a small HikariCP pool the store owns. Turnstile's own options
 * ride in the URL as {@code turnstile.*} parameters and are removed before the driver sees it:
 *
 * <ul>
 *   <li>{@code turnstile.table} — table name (default {@code turnstile_locks})
 *   <li>{@code turnstile.createTable} — create the table if missing (default {@code true} for the
 *       embedded SQLite and H2, {@code false} for server databases)
 *   <li>{@code turnstile.poolSize} — maximum connections (default 4)
 *   <li>{@code turnstile.connectTimeout} — milliseconds to wait for a connection (default 5000)
 * </ul>
 *
 * <p>PostgreSQL, MariaDB and MySQL connections get a 30 s socket timeout unless the URL sets the
 * driver's {@code socketTimeout}, so a database that stops answering cannot hang a lock call.
 * SQLite URLs get {@code journal_mode=WAL} and {@code busy_timeout=10000} unless they set them,
 * so several processes on one host can share the file.
 */
public final class JdbcLockStoreFactory implements LockStoreFactory {
    private static final Set<String> KNOWN = Set.of("table", "createTable", "poolSize", "connectTimeout");

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

    private JdbcLockStore open(String url, Boolean forceCreate) {
        Parsed p = parse(url);
        String table = p.options.get("table", Dialect.DEFAULT_TABLE);
        boolean embedded = p.dialect == SqlDialect.SQLITE || p.dialect == SqlDialect.H2;
        boolean create = forceCreate != null ? forceCreate : p.options.bool("createTable", embedded);
        int poolSize = p.options.integer("poolSize", 4, 1, 100);
        int connectTimeout = p.options.integer("connectTimeout", 5000, 250, 600_000);

        HikariConfig config = new HikariConfig();
        if (p.dialect == SqlDialect.SQLITE) {
            // Straight from the SQLite driver: the embedded store is what `turnstile run` opens by
            // default, and DriverManager would first load every other driver on the class path.
            String sqliteUrl = withSqliteDefaults(p.jdbcUrl);
            DirectDriverDataSource.of("org.sqlite.JDBC", sqliteUrl)
                    .ifPresentOrElse(config::setDataSource, () -> config.setJdbcUrl(sqliteUrl));
        } else {
            config.setJdbcUrl(p.jdbcUrl);
        }
        config.setPoolName("turnstile");
        config.setMaximumPoolSize(poolSize);
        config.setMinimumIdle(1);
        config.setConnectionTimeout(connectTimeout);
        config.setInitializationFailTimeout(1);
        // A database that stops answering (paused, partitioned) must not hang a lock call forever;
        // the driver's own socketTimeout in the URL, if given, wins.
        if (!p.jdbcUrl.contains("socketTimeout=")) {
            if (p.dialect == SqlDialect.POSTGRESQL) {
                config.addDataSourceProperty("socketTimeout", "30");
            } else if (p.dialect == SqlDialect.MARIADB) {
                config.addDataSourceProperty("socketTimeout", "30000");
            }
        }
        HikariDataSource pool;
        try {
            pool = new HikariDataSource(config);
        } catch (RuntimeException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            throw new StoreUnavailableException("cannot connect to " + StoreUrls.redact(p.jdbcUrl) + ": "
                    + cause.getMessage(), e);
        }
        return JdbcLockStore.builder(pool)
                .dialect(p.dialect)
                .tableName(table)
                .createTableIfMissing(create)
                .description(StoreUrls.redact(p.jdbcUrl))
                .owning(pool)
                .build();
    }

    private record Parsed(String jdbcUrl, SqlDialect dialect, StoreUrlOptions options) {}

    private static Parsed parse(String url) {
        SqlDialect dialect = SqlDialect.fromJdbcUrl(url);
        StoreUrlOptions options = StoreUrlOptions.parse(url, KNOWN, dialect == SqlDialect.H2);
        Dialect.checkTable(options.get("table", Dialect.DEFAULT_TABLE));
        return new Parsed(options.url(), dialect, options);
    }

    private static String withSqliteDefaults(String url) {
        String s = url;
        if (!s.contains("journal_mode=")) {
            s += (s.contains("?") ? "&" : "?") + "journal_mode=WAL";
        }
        if (!s.contains("busy_timeout=")) {
            s += "&busy_timeout=10000";
        }
        return s;
    }
}
