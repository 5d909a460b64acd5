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

    /**
     * Attack finding 10: legal ways of writing the column that a reading of the DDL missed. SQLite
     * reports the primary key's collation itself (PRAGMA index_xinfo), however the DDL is written.
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {
        "\"name\"TEXT NOT NULL PRIMARY KEY COLLATE NOCASE",
        "name/**/TEXT NOT NULL PRIMARY KEY COLLATE NOCASE",
        "name VARCHAR(255,1) NOT NULL PRIMARY KEY COLLATE NOCASE",
        "name TEXT NOT NULL DEFAULT 'a,b' PRIMARY KEY COLLATE NOCASE",
        "name TEXT NOT NULL PRIMARY KEY COLLATE[NOCASE]",
        "name TEXT NOT NULL PRIMARY KEY COLLATE RTRIM",
        "name TEXT NOT NULL COLLATE \"nocase\", PRIMARY KEY (name)"})
    void aSqliteKeyThatIsNotBinaryIsRefusedHoweverTheDdlIsWritten(String column,
            @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        String url = "jdbc:sqlite:" + dir.resolve("ddl.db");
        exec(url, "CREATE TABLE turnstile_locks (" + column.replace(", PRIMARY KEY (name)", "") + ", owner TEXT NOT NULL, "
                + "token TEXT NOT NULL, fence INTEGER NOT NULL, acquired_at INTEGER NOT NULL, expires_at INTEGER NOT NULL"
                + (column.endsWith(", PRIMARY KEY (name)") ? ", PRIMARY KEY (name)" : "") + ")");
        try (LockStore store = JdbcLockStoreTest.FACTORY.open(url)) {
            Turnstile t = Turnstile.builder(store).build();
            assertThatThrownBy(() -> t.tryAcquire("Report")).isInstanceOf(StoreSchemaException.class)
                    .hasMessageMatching("(?s).*compares column 'name' with COLLATE (NOCASE|RTRIM), which ignores.*create the table again.*");
        }
    }

    /** A separate unique index that ignores case merges names as much as the key would. */
    @Test
    void aSqliteUniqueIndexThatIgnoresCaseIsRefusedWithTheDrop(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        String url = "jdbc:sqlite:" + dir.resolve("index.db");
        try (LockStore store = JdbcLockStoreTest.FACTORY.open(url)) {
            assertThat(Turnstile.builder(store).build().tryAcquire("x")).isPresent(); // the shipped table
        }
        exec(url, "CREATE UNIQUE INDEX ci ON turnstile_locks (name COLLATE NOCASE)",
                "CREATE INDEX not_unique ON turnstile_locks (name COLLATE NOCASE, owner)");
        try (LockStore store = JdbcLockStoreTest.FACTORY.open(url)) {
            assertThatThrownBy(() -> Turnstile.builder(store).build().tryAcquire("Report")).isInstanceOf(StoreSchemaException.class)
                    .hasMessageContaining("with COLLATE NOCASE (unique index ci)").hasMessageContaining("DROP INDEX ci;");
        }
        exec(url, "DROP INDEX ci");
        try (LockStore store = JdbcLockStoreTest.FACTORY.open(url)) {
            Turnstile t = Turnstile.builder(store).build();
            assertThat(t.tryAcquire("Report")).isPresent();
            assertThat(t.tryAcquire("report")).isPresent();
        }
    }

    /**
     * A NOCASE column under a BINARY unique index: the upsert keeps Report and report apart, but
     * every WHERE name = ? compares without case, so releasing REPORT would free both.
     */
    @Test
    void aSqliteNocaseColumnUnderABinaryIndexIsRefused(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        String url = "jdbc:sqlite:" + dir.resolve("column.db");
        exec(url, "CREATE TABLE turnstile_locks (name TEXT NOT NULL COLLATE NOCASE, owner TEXT NOT NULL, "
                + "token TEXT NOT NULL, fence INTEGER NOT NULL, acquired_at INTEGER NOT NULL, expires_at INTEGER NOT NULL)",
                "CREATE UNIQUE INDEX b ON turnstile_locks (name COLLATE BINARY)");
        try (LockStore store = JdbcLockStoreTest.FACTORY.open(url)) {
            assertThatThrownBy(() -> Turnstile.builder(store).build().tryAcquire("Report")).isInstanceOf(StoreSchemaException.class)
                    .hasMessageContaining("compares column 'name' with COLLATE NOCASE, which ignores case");
        }
        exec(url, "DROP TABLE turnstile_locks");
        try (LockStore store = JdbcLockStoreTest.FACTORY.open(url)) {
            Turnstile t = Turnstile.builder(store).build();
            assertThat(t.tryAcquire("Report")).isPresent();
            assertThat(t.tryAcquire("report")).isPresent();
        }
    }

    /** citext compares case-insensitively under a deterministic collation, so collisdeterministic misses it. */
    @Test
    void aPostgresCitextKeyIsRefusedAlsoThroughADomain() throws Exception {
        String url = TestDatabases.POSTGRES;
        String table = JdbcLockStoreTest.table();
        String domain = table + "_name";
        exec(url, "CREATE EXTENSION IF NOT EXISTS citext",
                "CREATE TABLE " + table + " (name CITEXT NOT NULL PRIMARY KEY, " + LOCK_COLUMNS + ")",
                "CREATE DOMAIN " + domain + "_inner AS citext", "CREATE DOMAIN " + domain + " AS " + domain + "_inner",
                "CREATE TABLE " + table + "_d (name " + domain + " NOT NULL PRIMARY KEY, " + LOCK_COLUMNS + ")");
        try {
            for (String t : java.util.List.of(table, table + "_d")) {
                try (LockStore store = JdbcLockStoreTest.FACTORY.open(url + "&turnstile.table=" + t)) {
                    assertThatThrownBy(() -> Turnstile.builder(store).build().tryAcquire("Report"))
                            .isInstanceOf(StoreSchemaException.class)
                            .hasMessageContaining("of type " + (t.equals(table) ? "citext, which" : domain + " (a domain over citext)"))
                            .hasMessageContaining("ALTER TABLE " + t + " ALTER COLUMN name TYPE VARCHAR(255) COLLATE \"C\"");
                }
            }
            exec(url, "ALTER TABLE " + table + " ALTER COLUMN name TYPE VARCHAR(255) COLLATE \"C\"");
            try (LockStore store = JdbcLockStoreTest.FACTORY.open(url + "&turnstile.table=" + table)) {
                Turnstile t = Turnstile.builder(store).build();
                assertThat(t.tryAcquire("Report")).isPresent();
                assertThat(t.tryAcquire("report")).isPresent();
            }
        } finally {
            exec(url, "DROP TABLE IF EXISTS " + table, "DROP TABLE IF EXISTS " + table + "_d",
                    "DROP DOMAIN IF EXISTS " + domain, "DROP DOMAIN IF EXISTS " + domain + "_inner");
        }
    }

    /** latin1_bin is binary, so it passes the check; a name outside latin1 then gets the ALTER, not the driver's text. */
    @Test
    void aMariaDbNameOutsideTheColumnsCharacterSetGetsTheAlter() throws Exception {
        String url = TestDatabases.MARIADB;
        String table = JdbcLockStoreTest.table();
        exec(url, "CREATE TABLE " + table + " (name VARCHAR(255) CHARACTER SET latin1 COLLATE latin1_bin NOT NULL "
                + "PRIMARY KEY, " + LOCK_COLUMNS + ")");
        try (LockStore store = JdbcLockStoreTest.FACTORY.open(url + "&turnstile.table=" + table)) {
            Turnstile t = Turnstile.builder(store).build();
            assertThat(t.tryAcquire("Report")).isPresent();
            assertThatThrownBy(() -> t.tryAcquire("\u65e5\u672c")).isInstanceOf(StoreSchemaException.class)
                    .hasMessageContaining("cannot store this name")
                    .hasMessageContaining("ALTER TABLE " + table + " MODIFY name VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL;");
        } finally {
            exec(url, "DROP TABLE IF EXISTS " + table);
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
