package dev.turnstile.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.turnstile.jdbc.SqlDialect;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;

/**
 * A database the contenders run against: how to pool it and which tables every contender needs.
 * All contenders of one run share one pool, so none gets a warmer or bigger pool than another.
 */
enum BenchDatabase {
    POSTGRESQL(SqlDialect.POSTGRESQL) {
        @Override
        String jdbcUrl() {
            return BenchConfig.postgresUrl();
        }
    },
    /** Only the fenced-write benchmark runs here (the other tables' DDL is PostgreSQL's and SQLite's). */
    MARIADB(SqlDialect.MARIADB) {
        @Override
        String jdbcUrl() {
            return System.getProperty("bench.mariadbUrl", "jdbc:mariadb://127.0.0.1:3306/test?user=root");
        }
    },
    SQLITE(SqlDialect.SQLITE) {
        @Override
        String jdbcUrl() {
            Path file = BenchConfig.workDir().resolve("bench.sqlite");
            try {
                Files.createDirectories(file.getParent());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            // The same settings Turnstile's URL factory applies, so SQLite is measured as Turnstile ships it.
            return "jdbc:sqlite:" + file + "?journal_mode=WAL&busy_timeout=10000";
        }
    };

    /** Turnstile's default table, shared with its tests: bench rows use lock names starting {@code bench-}. */
    static final String TURNSTILE_TABLE = "turnstile_locks";
    static final String SHEDLOCK_TABLE = "shedlock";

    /** ShedLock's documented table (its JDBC provider does not create it). */
    private static final String SHEDLOCK_DDL = """
            CREATE TABLE IF NOT EXISTS shedlock (
                name       VARCHAR(64)  NOT NULL PRIMARY KEY,
                lock_until TIMESTAMP    NOT NULL,
                locked_at  TIMESTAMP    NOT NULL,
                locked_by  VARCHAR(255) NOT NULL
            )""";

    /**
     * The prefix of Spring Integration's lock table here: {@code BENCH_SI7_LOCK}, not the default
     * {@code INT_LOCK}, because 7.x added a column (EXPIRED_AFTER) that an INT_LOCK made for 6.x by
     * an earlier bench run (or another checkout's) lacks; {@code CREATE TABLE IF NOT EXISTS} would
     * keep the old one, and every Spring acquire would fail.
     */
    static final String SPRING_PREFIX = "BENCH_SI7_";

    /**
     * Spring Integration 7.1's INT_LOCK under {@link #SPRING_PREFIX}, as in its schema-postgresql.sql
     * (it ships no SQLite schema; this DDL works on both).
     */
    private static final String SPRING_DDL = """
            CREATE TABLE IF NOT EXISTS BENCH_SI7_LOCK (
                LOCK_KEY      CHAR(36)     NOT NULL,
                REGION        VARCHAR(100) NOT NULL,
                CLIENT_ID     CHAR(36),
                CREATED_DATE  TIMESTAMP    NOT NULL,
                EXPIRED_AFTER TIMESTAMP    NOT NULL,
                CONSTRAINT BENCH_SI7_LOCK_PK PRIMARY KEY (LOCK_KEY, REGION)
            )""";

    private final SqlDialect dialect;

    BenchDatabase(SqlDialect dialect) {
        this.dialect = dialect;
    }

    abstract String jdbcUrl();

    SqlDialect dialect() {
        return dialect;
    }

    String id() {
        return dialect.id();
    }

    HikariDataSource openPool(int size, String poolName) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl());
        config.setPoolName(poolName);
        config.setMaximumPoolSize(size);
        // A fixed-size pool: no connection is opened inside a timed slice.
        config.setMinimumIdle(size);
        config.setConnectionTimeout(10_000);
        return new HikariDataSource(config);
    }

    /** Creates the three lock tables if missing and removes rows left by earlier bench runs. */
    void prepare(DataSource ds) throws SQLException {
        try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
            st.execute(dialect.createTable(TURNSTILE_TABLE));
            st.execute(SHEDLOCK_DDL);
            st.execute(SPRING_DDL);
        }
        deleteBenchRows(ds);
    }

    /**
     * Deletes the bench's rows (lock names starting {@code bench-}, Spring region {@code bench}),
     * before a run and after it, so that tests sharing {@code turnstile_locks} never see them.
     */
    void deleteBenchRows(DataSource ds) throws SQLException {
        try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
            st.executeUpdate("DELETE FROM " + TURNSTILE_TABLE + " WHERE name LIKE 'bench-%'");
            st.executeUpdate("DELETE FROM " + SHEDLOCK_TABLE + " WHERE name LIKE 'bench-%'");
            st.executeUpdate("DELETE FROM " + SPRING_PREFIX + "LOCK WHERE REGION = '" + SpringContender.REGION + "'");
        }
    }
}
