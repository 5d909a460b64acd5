package dev.turnstile.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.turnstile.StoreSchemaException;
import dev.turnstile.Turnstile;
import dev.turnstile.claim.ClaimTable;
import dev.turnstile.spi.LockStore;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

/**
 * Issue 23 item 5: a key column whose collation merges names (case- or accent-insensitive) is
 * refused at start with the statement that fixes it. Before: on MariaDB a lock table created
 * without COLLATE (utf8mb4_general_ci) made Report and report one lock, and cafe and café too.
 */
class JdbcCollationTest {

    private static void exec(String url, String... sql) throws Exception {
        try (Connection c = DriverManager.getConnection(url); Statement st = c.createStatement()) {
            for (String s : sql) {
                st.execute(s);
            }
        }
    }

    private static final String LOCK_COLUMNS = "owner VARCHAR(255) NOT NULL, token VARCHAR(64) NOT NULL, "
            + "fence BIGINT NOT NULL, acquired_at BIGINT NOT NULL, expires_at BIGINT NOT NULL";

    @Test
    void aSqliteLockTableWithCollateNocaseIsRefused(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        String url = "jdbc:sqlite:" + dir.resolve("nocase.db");
        exec(url, "CREATE TABLE turnstile_locks (name TEXT NOT NULL COLLATE NOCASE PRIMARY KEY, owner TEXT NOT NULL, "
                + "token TEXT NOT NULL, fence INTEGER NOT NULL, acquired_at INTEGER NOT NULL, expires_at INTEGER NOT NULL)");
        try (LockStore store = JdbcLockStoreTest.FACTORY.open(url)) {
            Turnstile t = Turnstile.builder(store).build();
            assertThatThrownBy(() -> t.tryAcquire("Report")).isInstanceOf(StoreSchemaException.class)
                    .hasMessageContaining("with COLLATE NOCASE").hasMessageContaining("create the table again");
        }
        String plain = "jdbc:sqlite:" + dir.resolve("plain.db");
        try (LockStore store = JdbcLockStoreTest.FACTORY.open(plain)) {
            Turnstile t = Turnstile.builder(store).build();
            assertThat(t.tryAcquire("Report")).isPresent();
            assertThat(t.tryAcquire("report")).as("the shipped table compares bytes").isPresent();
        }
    }

    @Test
    void aMariaDbLockTableWithACaseInsensitiveCollationIsRefusedWithTheAlter() throws Exception {
        String url = TestDatabases.MARIADB;
        String table = JdbcLockStoreTest.table();
        exec(url, "CREATE TABLE " + table + " (name VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci NOT NULL "
                + "PRIMARY KEY, " + LOCK_COLUMNS + ")");
        try {
            try (LockStore store = JdbcLockStoreTest.FACTORY.open(url + "&turnstile.table=" + table)) {
                Turnstile t = Turnstile.builder(store).build();
                assertThatThrownBy(() -> t.tryAcquire("Report")).isInstanceOf(StoreSchemaException.class)
                        .hasMessageContaining("utf8mb4_general_ci, which is not binary")
                        .hasMessageContaining("ALTER TABLE " + table
                                + " MODIFY name VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL");
            }
            exec(url, "ALTER TABLE " + table + " MODIFY name VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL");
            try (LockStore store = JdbcLockStoreTest.FACTORY.open(url + "&turnstile.table=" + table)) {
                Turnstile t = Turnstile.builder(store).build();
                assertThat(t.tryAcquire("Report")).isPresent();
                assertThat(t.tryAcquire("report")).as("another lock once the collation is binary").isPresent();
                assertThat(t.tryAcquire("cafe")).isPresent();
                assertThat(t.tryAcquire("café")).isPresent();
            }
        } finally {
            exec(url, "DROP TABLE IF EXISTS " + table);
        }
    }

    @Test
    void aPostgresLockTableWithANonDeterministicCollationIsRefused() throws Exception {
        String url = TestDatabases.POSTGRES;
        String table = JdbcLockStoreTest.table();
        exec(url, "CREATE COLLATION IF NOT EXISTS turnstile_test_ci (provider = icu, locale = 'und-u-ks-level2', "
                + "deterministic = false)",
                "CREATE TABLE " + table + " (name VARCHAR(255) COLLATE turnstile_test_ci NOT NULL PRIMARY KEY, " + LOCK_COLUMNS + ")");
        try {
            try (LockStore store = JdbcLockStoreTest.FACTORY.open(url + "&turnstile.table=" + table)) {
                Turnstile t = Turnstile.builder(store).build();
                assertThatThrownBy(() -> t.tryAcquire("Report")).isInstanceOf(StoreSchemaException.class)
                        .hasMessageContaining("non-deterministic collation turnstile_test_ci")
                        .hasMessageContaining("ALTER TABLE " + table + " ALTER COLUMN name TYPE VARCHAR(255) COLLATE \"C\"");
            }
            exec(url, "ALTER TABLE " + table + " ALTER COLUMN name TYPE VARCHAR(255) COLLATE \"C\"");
            try (LockStore store = JdbcLockStoreTest.FACTORY.open(url + "&turnstile.table=" + table)) {
                Turnstile t = Turnstile.builder(store).build();
                assertThat(t.tryAcquire("Report")).isPresent();
                assertThat(t.tryAcquire("report")).isPresent();
            }
        } finally {
            exec(url, "DROP TABLE IF EXISTS " + table);
        }
    }

    @Test
    void aClaimTableWhoseIdComparesCaseInsensitivelyIsRefused() throws Exception {
        String url = TestDatabases.MARIADB;
        String table = JdbcLockStoreTest.table();
        exec(url, "CREATE TABLE " + table + " (id VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci PRIMARY KEY, "
                + "phase VARCHAR(64), locked_at BIGINT NOT NULL DEFAULT 0, updated_at BIGINT NOT NULL DEFAULT 0, "
                + "claim_version BIGINT NOT NULL DEFAULT 0)",
                "CREATE INDEX " + table + "_i ON " + table + " (phase, locked_at, updated_at)");
        try (HikariDataSource pool = JdbcClaimContractSupport.pool(url, 1)) {
            assertThatThrownBy(() -> JdbcClaimStore.builder(pool, ClaimTable.builder(table).build()).build())
                    .isInstanceOf(StoreSchemaException.class)
                    .hasMessageContaining("column 'id' with the collation utf8mb4_general_ci")
                    .hasMessageContaining("MODIFY id VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL");
            exec(url, "ALTER TABLE " + table + " MODIFY id VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL");
            assertThat(JdbcClaimStore.builder(pool, ClaimTable.builder(table).build()).build()).isNotNull();
        } finally {
            exec(url, "DROP TABLE IF EXISTS " + table);
        }
    }
}
