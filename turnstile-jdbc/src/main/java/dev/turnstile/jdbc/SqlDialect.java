package dev.turnstile.jdbc;

import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.util.Locale;

/**
 * The SQL of one database family. Each dialect keeps all of its statements in one class and its
 * DDL in a resource ({@code schema-<id>.sql}); {@link #createTable} returns that DDL for a table name.
 * Usually detected from the connection; set it explicitly with
 * {@link JdbcLockStore.Builder#dialect(SqlDialect)} to skip detection.
 */
public sealed interface SqlDialect permits Dialect {

    /** PostgreSQL: one {@code INSERT … ON CONFLICT DO UPDATE … WHERE expired RETURNING}. */
    SqlDialect POSTGRESQL = new PostgresDialect();
    /** MariaDB and MySQL: {@code INSERT … ON DUPLICATE KEY UPDATE} with conditional columns. */
    SqlDialect MARIADB = new MariaDbDialect();
    /** H2: {@code MERGE … USING} read back through {@code FINAL TABLE}. */
    SqlDialect H2 = new H2Dialect();
    /** SQLite: upsert with {@code RETURNING}; expiry by this host's clock. */
    SqlDialect SQLITE = new SqliteDialect();

    /**
     * Returns the dialect's short id: {@code postgresql}, {@code mariadb}, {@code h2} or {@code sqlite}.
     *
     * @return the id
     */
    String id();

    /**
     * Returns the DDL that creates the lock table, idempotent ({@code CREATE TABLE IF NOT EXISTS}).
     *
     * @param table the table name, validated as an identifier
     * @return the DDL
     * @throws IllegalArgumentException if the table name is not a plain identifier
     */
    String createTable(String table);

    /**
     * Returns the statement that takes a free or expired lock, exactly as the store runs it; for
     * reviews and for benchmarks that measure the raw floor. Parameters: name, owner, token, TTL in
     * milliseconds. PostgreSQL, SQLite and H2 return (fence, acquired_at, expires_at); MariaDB/MySQL
     * returns nothing and the store reads the row back by token. A new row's fence is 0 ("not set"):
     * the store then sets it above the floor of pruned names with two more statements (a read of the
     * floor row, an update of its own row), which this statement does not include.
     *
     * @param table the table name, validated as an identifier
     * @return the SQL
     * @throws IllegalArgumentException if the table name is not a plain identifier
     */
    String acquireStatement(String table);

    /**
     * Returns the statement that releases a lease, exactly as the store runs it. Parameters:
     * lockAtLeastFor in milliseconds (0 for none), name, token. One row updated means released.
     *
     * @param table the table name, validated as an identifier
     * @return the SQL
     * @throws IllegalArgumentException if the table name is not a plain identifier
     */
    String releaseStatement(String table);

    /**
     * Picks the dialect for a connected database.
     *
     * @param metaData the connection's metadata
     * @return the dialect
     * @throws SQLException if the metadata cannot be read
     * @throws IllegalArgumentException if the database is not supported
     */
    static SqlDialect detect(DatabaseMetaData metaData) throws SQLException {
        String product = metaData.getDatabaseProductName().toLowerCase(Locale.ROOT);
        if (product.contains("postgres")) {
            return POSTGRESQL;
        }
        if (product.contains("mariadb") || product.contains("mysql")) {
            return MARIADB;
        }
        if (product.contains("h2")) {
            return H2;
        }
        if (product.contains("sqlite")) {
            return SQLITE;
        }
        throw new IllegalArgumentException("database '" + metaData.getDatabaseProductName()
                + "' is not supported: Turnstile's JDBC store speaks PostgreSQL, MariaDB/MySQL, H2 and SQLite");
    }

    /**
     * Picks the dialect from a JDBC URL without connecting.
     *
     * @param jdbcUrl a URL such as {@code jdbc:postgresql://host/db}
     * @return the dialect
     * @throws IllegalArgumentException if the URL names no supported database
     */
    static SqlDialect fromJdbcUrl(String jdbcUrl) {
        String u = jdbcUrl == null ? "" : jdbcUrl.toLowerCase(Locale.ROOT);
        if (u.startsWith("jdbc:postgresql:")) {
            return POSTGRESQL;
        }
        if (u.startsWith("jdbc:mariadb:") || u.startsWith("jdbc:mysql:")) {
            return MARIADB;
        }
        if (u.startsWith("jdbc:h2:")) {
            return H2;
        }
        if (u.startsWith("jdbc:sqlite:")) {
            return SQLITE;
        }
        throw new IllegalArgumentException("JDBC URL '" + dev.turnstile.spi.StoreUrls.redact(jdbcUrl)
                + "' names no supported database: use jdbc:sqlite:, jdbc:postgresql:, jdbc:mariadb:, jdbc:mysql: or jdbc:h2:");
    }
}
