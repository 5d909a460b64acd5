package dev.turnstile.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.turnstile.Lease;
import dev.turnstile.LockOptions;
import dev.turnstile.StoreSchemaException;
import dev.turnstile.Turnstile;
import dev.turnstile.spi.LockStore;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** What is particular to the SQL stores, beyond the shared contract. */
class JdbcLockStoreTest {
    static final JdbcLockStoreFactory FACTORY = new JdbcLockStoreFactory();

    static String table() {
        return "t_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    }

    static String url(String db) {
        return switch (db) {
            case "postgres" -> TestDatabases.POSTGRES;
            case "mariadb" -> TestDatabases.MARIADB;
            case "sqlite" -> TestDatabases.SQLITE;
            default -> "jdbc:h2:mem:detect;DB_CLOSE_DELAY=-1";
        };
    }

    static HikariDataSource pool(String url, boolean autoCommit) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(url);
        c.setMaximumPoolSize(2);
        c.setAutoCommit(autoCommit);
        return new HikariDataSource(c);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "1abc", "a-b", "x; DROP TABLE y", "a b", "tbl\"", "a.b.c",
        "x234567890123456789012345678901234567890123456789012345678901234"})
    void tableNamesMustBePlainIdentifiers(String bad) {
        assertThatThrownBy(() -> JdbcLockStore.builder(TestDatabases.driverManager("jdbc:h2:mem:x")).tableName(bad))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("identifier");
        assertThatThrownBy(() -> SqlDialect.POSTGRESQL.createTable(bad)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theStatementsAreBoundToTheTableAndValidateIt() {
        assertThat(SqlDialect.POSTGRESQL.acquireStatement("my_locks")).contains("INSERT INTO my_locks").contains("RETURNING fence");
        assertThat(SqlDialect.SQLITE.releaseStatement("my_locks")).startsWith("UPDATE my_locks SET expires_at");
        assertThatThrownBy(() -> SqlDialect.H2.acquireStatement("x;drop")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void schemaQualifiedTableNamesAreAccepted() {
        assertThat(SqlDialect.POSTGRESQL.createTable("public.my_locks")).contains("CREATE TABLE IF NOT EXISTS public.my_locks");
    }

    @ParameterizedTest
    @ValueSource(strings = {"postgres", "mariadb"})
    void aMissingTableIsASchemaErrorThatPointsAtTurnstileSchema(String db) {
        String url = url(db);
        String table = table();
        try (LockStore store = FACTORY.open(url + "&turnstile.table=" + table)) {
            Turnstile t = Turnstile.builder(store).build();
            assertThatThrownBy(() -> t.tryAcquire("x")).isInstanceOf(StoreSchemaException.class)
                    .hasMessageContaining(table).hasMessageContaining("turnstile schema");
        }
    }

    @Test
    void aMissingSqliteTableIsASchemaErrorToo() {
        try (LockStore store = FACTORY.open(TestDatabases.SQLITE + "?turnstile.createTable=false&turnstile.table=" + table())) {
            assertThatThrownBy(() -> Turnstile.builder(store).build().tryAcquire("x")).isInstanceOf(StoreSchemaException.class);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"postgres", "mariadb", "sqlite", "h2"})
    void theDialectIsDetectedAndACustomTableCreated(String db) throws Exception {
        String url = url(db);
        String table = table();
        try (HikariDataSource ds = pool(url, true)) {
            JdbcLockStore store = JdbcLockStore.builder(ds).tableName(table).createTableIfMissing(true).build();
            assertThat(store.dialect()).isEqualTo(SqlDialect.fromJdbcUrl(url));
            Lease lease = Turnstile.builder(store).build().tryAcquire("x").orElseThrow();
            try (Connection c = ds.getConnection(); Statement st = c.createStatement();
                    ResultSet rs = st.executeQuery("SELECT fence, token FROM " + table + " WHERE name = 'x'")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getLong(1)).isEqualTo(lease.fence());
                assertThat(rs.getString(2)).isEqualTo(lease.token());
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"postgres", "mariadb"})
    void aPoolWithAutocommitOffStillCommitsEveryOperation(String db) {
        String url = url(db);
        try (HikariDataSource off = pool(url, false); HikariDataSource on = pool(url, true)) {
            Turnstile a = Turnstile.builder(JdbcLockStore.builder(off).createTableIfMissing(true).build()).build();
            Turnstile b = Turnstile.builder(JdbcLockStore.builder(on).build()).build();
            String name = "ac-" + UUID.randomUUID();
            Lease lease = a.tryAcquire(name).orElseThrow();
            assertThat(b.tryAcquire(name)).as("the other pool sees the committed lease").isEmpty();
            lease.release();
            assertThat(b.tryAcquire(name)).isPresent();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"postgres", "mariadb", "sqlite"})
    void leaseTimesComeFromTheDatabaseClockInMilliseconds(String db) {
        String url = url(db);
        try (LockStore store = FACTORY.open(url + (url.contains("?") ? "&" : "?") + "turnstile.createTable=true")) {
            Instant before = Instant.now().minusSeconds(5);
            Lease lease = Turnstile.builder(store).build()
                    .tryAcquire("clock-" + UUID.randomUUID(), LockOptions.lockAtMostFor(Duration.ofSeconds(30))).orElseThrow();
            assertThat(lease.acquiredAt()).isBetween(before, Instant.now().plusSeconds(5));
            assertThat(Duration.between(lease.acquiredAt(), lease.expiresAt())).isBetween(Duration.ofSeconds(29), Duration.ofSeconds(31));
        }
    }

    @Test
    void factoryRejectsUnknownOrBadOptionsAndKeepsThePasswordOut() {
        assertThatThrownBy(() -> FACTORY.open(TestDatabases.POSTGRES + "&turnstile.tabel=x&password=s3cret"))
                .hasMessageContaining("turnstile.tabel").hasMessageContaining("turnstile.table").hasMessageNotContaining("s3cret");
        assertThatThrownBy(() -> FACTORY.open(TestDatabases.POSTGRES + "&turnstile.poolSize=0")).hasMessageContaining("1 to 100");
        assertThatThrownBy(() -> FACTORY.open(TestDatabases.POSTGRES + "&turnstile.createTable=yes")).hasMessageContaining("true or false");
        assertThatThrownBy(() -> FACTORY.open("jdbc:db2://h/x")).hasMessageContaining("jdbc:postgresql:");
    }

    @Test
    void h2SettingsStyleOptionsAreParsed() {
        assertThat(FACTORY.schema("jdbc:h2:mem:x;turnstile.table=h2_locks;DB_CLOSE_DELAY=-1"))
                .contains("CREATE TABLE IF NOT EXISTS h2_locks");
        try (LockStore store = FACTORY.open("jdbc:h2:mem:opts;turnstile.table=h2_locks;DB_CLOSE_DELAY=-1")) {
            assertThat(Turnstile.builder(store).build().tryAcquire("x")).isPresent();
            assertThat(store.description()).doesNotContain("turnstile.table").contains("h2_locks");
        }
    }
}
