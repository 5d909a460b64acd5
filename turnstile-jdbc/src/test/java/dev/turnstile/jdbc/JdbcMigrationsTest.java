package dev.turnstile.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.turnstile.StoreSchemaException;
import dev.turnstile.spi.AcquireRequest;
import dev.turnstile.spi.Grant;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import javax.sql.DataSource;
import liquibase.command.CommandScope;
import liquibase.command.core.UpdateCommandStep;
import liquibase.command.core.helpers.DbUrlConnectionArgumentsCommandStep;
import liquibase.database.Database;
import liquibase.database.DatabaseFactory;
import liquibase.database.jvm.JdbcConnection;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.output.MigrateResult;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 28: the lock table shipped as Flyway migrations and a Liquibase changelog. Each is the
 * store's own DDL (no drift), and each is applied by the real tool to a fresh schema or database
 * of each kind, after which a store that does not create its table works on it.
 */
class JdbcMigrationsTest {
    static {
        // Liquibase 4.30+ sends usage data by default; nothing outside this machine answers here
        System.setProperty("liquibase.analytics.enabled", "false");
        System.setProperty("liquibase.showBanner", "false");
        // the second of two concurrent updates polls the lock every 10 s by default
        System.setProperty("liquibase.changelogLockPollRate", "1");
    }

    private static final List<String> DATABASES = List.of("postgresql", "mariadb", "h2", "sqlite");

    /** A fresh, empty schema (PostgreSQL), database (MariaDB, H2) or file (SQLite), dropped on close. */
    static final class FreshDb implements AutoCloseable {
        final String kind;
        final String name = "mig_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        final String url;
        final SqlDialect dialect;
        final HikariDataSource pool;
        private final Path file;

        FreshDb(String kind, Path dir) throws SQLException {
            this.kind = kind;
            Path f = null;
            switch (kind) {
                case "postgresql" -> {
                    exec(TestDatabases.POSTGRES, "CREATE SCHEMA " + name);
                    url = TestDatabases.with(TestDatabases.POSTGRES, "currentSchema=" + name);
                    dialect = SqlDialect.POSTGRESQL;
                }
                case "mariadb" -> {
                    exec(TestDatabases.MARIADB, "CREATE DATABASE " + name);
                    url = TestDatabases.MARIADB.replaceFirst("/[^/?]*(\\?|$)", "/" + name + "$1");
                    dialect = SqlDialect.MARIADB;
                }
                case "h2" -> {
                    url = "jdbc:h2:mem:" + name + ";DB_CLOSE_DELAY=-1";
                    dialect = SqlDialect.H2;
                }
                default -> {
                    f = dir.resolve(name + ".db");
                    url = "jdbc:sqlite:" + f;
                    dialect = SqlDialect.SQLITE;
                }
            }
            this.file = f;
            this.pool = JdbcLockStoreTest.pool(url, true);
        }

        void exec(String... sql) throws SQLException {
            try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
                for (String s : sql) {
                    st.execute(s);
                }
            }
        }

        long count(String sql) throws SQLException {
            try (Connection c = pool.getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
                rs.next();
                return rs.getLong(1);
            }
        }

        List<String> rows(String sql) throws SQLException {
            List<String> out = new ArrayList<>();
            try (Connection c = pool.getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
                while (rs.next()) {
                    out.add(rs.getString(1) + " " + rs.getString(2));
                }
            }
            return out;
        }

        /** Turnstile's Flyway history: "version success" per row, in order. */
        List<String> flywayHistory() throws SQLException {
            String q = kind.equals("h2") ? "\"" : "";
            List<String> out = new ArrayList<>();
            try (Connection c = pool.getConnection(); Statement st = c.createStatement();
                    ResultSet rs = st.executeQuery("SELECT " + q + "version" + q + ", " + q + "success" + q + " FROM " + q
                            + Migrations.FLYWAY_HISTORY_TABLE + q + " ORDER BY " + q + "installed_rank" + q)) {
                while (rs.next()) {
                    out.add(rs.getString(1) + " " + rs.getBoolean(2));
                }
            }
            return out;
        }

        Flyway turnstileFlyway() {
            return Flyway.configure(getClass().getClassLoader()).dataSource(pool)
                    .locations(Migrations.flywayLocation(dialect))
                    .table(Migrations.FLYWAY_HISTORY_TABLE)
                    .baselineOnMigrate(true).baselineVersion("0")
                    .failOnMissingLocations(true)
                    .load();
        }

        @Override
        public void close() throws Exception {
            pool.close();
            switch (kind) {
                case "h2" -> exec(url, "SHUTDOWN");
                case "postgresql" -> exec(TestDatabases.POSTGRES, "DROP SCHEMA " + name + " CASCADE");
                case "mariadb" -> exec(TestDatabases.MARIADB, "DROP DATABASE " + name);
                case "sqlite" -> Files.deleteIfExists(file);
                default -> { }
            }
        }

        private static void exec(String url, String sql) throws SQLException {
            try (Connection c = DriverManager.getConnection(url); Statement st = c.createStatement()) {
                st.execute(sql);
            }
        }
    }

    static void liquibaseUpdate(DataSource ds, String changelog) throws Exception {
        try (Connection c = ds.getConnection()) {
            Database db = DatabaseFactory.getInstance().findCorrectDatabaseImplementation(new JdbcConnection(c));
            new CommandScope(UpdateCommandStep.COMMAND_NAME)
                    .addArgumentValue(DbUrlConnectionArgumentsCommandStep.DATABASE_ARG, db)
                    .addArgumentValue(UpdateCommandStep.CHANGELOG_FILE_ARG, changelog)
                    .execute();
        }
    }

    /** Acquire, extend, release, acquire again: works, and the fence grew. Returns the last fence. */
    static long roundTrip(DataSource ds, String table, long fenceAbove) {
        try (JdbcLockStore store = JdbcLockStore.builder(ds).tableName(table).build()) {
            String name = "mig-" + UUID.randomUUID();
            String token = UUID.randomUUID().toString();
            Grant first = store.tryAcquire(new AcquireRequest(name, "test", token, Duration.ofSeconds(30))).orElseThrow();
            assertThat(first.fence()).isGreaterThan(fenceAbove);
            assertThat(store.tryAcquire(new AcquireRequest(name, "other", "t2", Duration.ofSeconds(30)))).isEmpty();
            assertThat(store.extend(name, token, Duration.ofSeconds(60))).isTrue();
            assertThat(store.release(name, token, Duration.ZERO)).isTrue();
            String again = UUID.randomUUID().toString();
            Grant second = store.tryAcquire(new AcquireRequest(name, "test", again, Duration.ofSeconds(30))).orElseThrow();
            assertThat(second.fence()).as("fences grow").isGreaterThan(first.fence());
            assertThat(store.release(name, again, Duration.ZERO)).isTrue();
            // a name that was there before the migration ran keeps its row and its fence
            Grant kept = store.tryAcquire(new AcquireRequest("mig-kept", "test", again, Duration.ofSeconds(30))).orElseThrow();
            assertThat(kept.fence()).isGreaterThan(fenceAbove);
            store.release("mig-kept", again, Duration.ZERO);
            return kept.fence();
        }
    }

    private static String resource(String path) throws IOException {
        try (InputStream in = JdbcMigrationsTest.class.getClassLoader().getResourceAsStream(path)) {
            assertThat(in).as(path + " is in the jar").isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /** The SQL without comments, whitespace runs made one space. */
    static String normalized(String sql) {
        return sql.replaceAll("(?m)--.*$", "").replaceAll("\\s+", " ").trim();
    }

    /**
     * Drift guard: each shipped Flyway migration is the dialect's DDL for the default table, and the
     * Liquibase changelog runs that same file for each database. When the DDL changes, V1 must not:
     * add a V2 (and a changeset) that brings a V1 table to the new shape, and compare the applied
     * result here instead.
     */
    @Test
    void eachMigrationIsTheDialectsOwnDdl() throws IOException {
        for (String folder : List.of("postgresql", "mariadb", "mysql", "h2", "sqlite")) {
            SqlDialect d = folder.equals("mysql") ? SqlDialect.MARIADB : (SqlDialect) Stream.of(SqlDialect.POSTGRESQL,
                    SqlDialect.MARIADB, SqlDialect.H2, SqlDialect.SQLITE).filter(x -> x.id().equals(folder)).findFirst().orElseThrow();
            String migration = resource("dev/turnstile/jdbc/flyway/" + folder + "/V1__turnstile_locks.sql");
            assertThat(normalized(migration)).as(folder).isEqualTo(normalized(d.createTable(Dialect.DEFAULT_TABLE)))
                    .startsWith("CREATE TABLE IF NOT EXISTS turnstile_locks (");
            if (!folder.equals("mysql")) {
                assertThat(Migrations.flywayLocation(d)).isEqualTo("classpath:dev/turnstile/jdbc/flyway/" + folder);
            }
        }
        String changelog = resource(Migrations.LIQUIBASE_CHANGELOG);
        for (String db : DATABASES) {
            assertThat(changelog).contains("<sqlFile path=\"dev/turnstile/jdbc/flyway/" + db + "/V1__turnstile_locks.sql\"/>");
        }
        assertThat(changelog).contains("logicalFilePath=\"" + Migrations.LIQUIBASE_CHANGELOG + "\"");
    }

    /**
     * Flyway, as the docs say: Turnstile's location with its own history table, beside the
     * application's own V1 in its own history table, on a schema that already holds the
     * application's table (baselineOnMigrate with baseline 0, so that V1 still runs). Twice: the
     * second run applies nothing. Then a store that does not create its table works.
     */
    @ParameterizedTest
    @ValueSource(strings = {"postgresql", "mariadb", "h2", "sqlite"})
    void flywayCreatesTheTableBesideTheApplicationsMigrations(String kind, @TempDir Path dir) throws Exception {
        try (FreshDb db = new FreshDb(kind, dir)) {
            MigrateResult app = Flyway.configure(getClass().getClassLoader()).dataSource(db.pool)
                    .locations("classpath:migrations/app").load().migrate();
            assertThat(app.migrationsExecuted).isEqualTo(1);

            MigrateResult first = db.turnstileFlyway().migrate();
            assertThat(first.migrationsExecuted).isEqualTo(1);
            assertThat(db.turnstileFlyway().migrate().migrationsExecuted).as("a second run").isZero();
            assertThat(db.flywayHistory())
                    .as("a baseline at 0 (H2: after Flyway's schema marker), then V1").endsWith("1 true")
                    .filteredOn(r -> r.startsWith("1 ")).hasSize(1);
            assertThat(db.count("SELECT COUNT(*) FROM " + q(db, "flyway_schema_history") + " WHERE " + q(db, "version")
                    + " = '1'")).as("the application's own V1, in its own history").isEqualTo(1);
            roundTrip(db.pool, Dialect.DEFAULT_TABLE, 0);

            // an empty schema gets no baseline row
            try (FreshDb empty = new FreshDb(kind, dir)) {
                assertThat(empty.turnstileFlyway().migrate().migrationsExecuted).isEqualTo(1);
                assertThat(empty.flywayHistory()).doesNotContain("0 true").endsWith("1 true");
                roundTrip(empty.pool, Dialect.DEFAULT_TABLE, 0);
            }
        }
    }

    /** Flyway's history table and its columns are quoted lower-case names on H2. */
    private static String q(FreshDb db, String column) {
        return db.kind.equals("h2") ? "\"" + column + "\"" : column;
    }

    /**
     * Liquibase, included from the application's master changelog: creates the table; a second run
     * records nothing more; the changesets carry the fixed ids, author and logical path.
     */
    @ParameterizedTest
    @ValueSource(strings = {"postgresql", "mariadb", "h2", "sqlite"})
    void liquibaseCreatesTheTableFromTheApplicationsMasterChangelog(String kind, @TempDir Path dir) throws Exception {
        try (FreshDb db = new FreshDb(kind, dir)) {
            liquibaseUpdate(db.pool, "migrations/master.xml");
            String turnstileRows = "SELECT id, exectype FROM DATABASECHANGELOG WHERE author = 'turnstile' ORDER BY orderexecuted";
            String dbms = kind.equals("mariadb") ? "mariadb" : kind;
            assertThat(db.rows(turnstileRows)).containsExactly("turnstile-locks-1-check EXECUTED",
                    "turnstile-locks-1-" + dbms + " EXECUTED");
            assertThat(db.count("SELECT COUNT(*) FROM DATABASECHANGELOG WHERE filename = '" + Migrations.LIQUIBASE_CHANGELOG
                    + "'")).isEqualTo(2);
            liquibaseUpdate(db.pool, "migrations/master.xml");
            assertThat(db.count("SELECT COUNT(*) FROM DATABASECHANGELOG")).as("a second run").isEqualTo(3);
            roundTrip(db.pool, Dialect.DEFAULT_TABLE, 0);
        }
    }

    /**
     * A table the store created earlier (createTableIfMissing, 'turnstile schema --apply'): Liquibase
     * marks the create ran, Flyway's V1 (CREATE TABLE IF NOT EXISTS) runs as a no-op; the rows and
     * their fences stay.
     */
    @ParameterizedTest
    @ValueSource(strings = {"postgresql", "mariadb", "h2", "sqlite"})
    void aTableTheStoreCreatedIsTakenAsItIs(String kind, @TempDir Path dir) throws Exception {
        try (FreshDb db = new FreshDb(kind, dir)) {
            long fence;
            try (JdbcLockStore store = JdbcLockStore.builder(db.pool).createTableIfMissing(true).build()) {
                fence = store.tryAcquire(new AcquireRequest("mig-kept", "before", "t0", Duration.ofMillis(1))).orElseThrow().fence();
            }
            liquibaseUpdate(db.pool, Migrations.LIQUIBASE_CHANGELOG);
            assertThat(db.rows("SELECT id, exectype FROM DATABASECHANGELOG ORDER BY orderexecuted"))
                    .containsExactly("turnstile-locks-1-check EXECUTED", "turnstile-locks-1-" + kind + " MARK_RAN");
            assertThat(db.turnstileFlyway().migrate().migrationsExecuted).isEqualTo(1);
            Thread.sleep(5);
            assertThat(roundTrip(db.pool, Dialect.DEFAULT_TABLE, 0)).as("mig-kept's fence went on").isGreaterThan(fence);
        }
    }

    /**
     * A table of that name that is not Turnstile's (a column missing): Liquibase stops before
     * recording anything. Flyway's V1 cannot tell (IF NOT EXISTS): the store's first statement
     * refuses it with StoreSchemaException.
     */
    @ParameterizedTest
    @ValueSource(strings = {"postgresql", "mariadb", "h2", "sqlite"})
    void aTableThatIsNotTurnstilesIsRefused(String kind, @TempDir Path dir) throws Exception {
        try (FreshDb db = new FreshDb(kind, dir)) {
            db.exec("CREATE TABLE turnstile_locks (name VARCHAR(255) NOT NULL PRIMARY KEY, owner VARCHAR(255) NOT NULL, "
                    + "fence BIGINT NOT NULL, acquired_at BIGINT NOT NULL, expires_at BIGINT NOT NULL)");
            assertThatThrownBy(() -> liquibaseUpdate(db.pool, Migrations.LIQUIBASE_CHANGELOG))
                    .hasStackTraceContaining("the table turnstile_locks exists but lacks one of the columns");
            assertThat(db.count("SELECT COUNT(*) FROM DATABASECHANGELOG")).isZero();
            db.turnstileFlyway().migrate();
            try (JdbcLockStore store = JdbcLockStore.builder(db.pool).build()) {
                assertThatThrownBy(() -> store.tryAcquire(new AcquireRequest("x", "o", "t", Duration.ofSeconds(1))))
                        .isInstanceOf(StoreSchemaException.class);
            }
        }
    }

    /**
     * MariaDB: a lock table whose name column has the database's default collation
     * (utf8mb4_general_ci: Report and report one lock) has every column, so Liquibase marks the
     * create ran; the store refuses it at start, with the ALTER that fixes it.
     */
    @Test
    void aMariaDbTableWithACaseInsensitiveNameIsRefusedByTheStore(@TempDir Path dir) throws Exception {
        try (FreshDb db = new FreshDb("mariadb", dir)) {
            db.exec(SqlDialect.MARIADB.createTable(Dialect.DEFAULT_TABLE).replace(" COLLATE utf8mb4_bin", ""));
            liquibaseUpdate(db.pool, Migrations.LIQUIBASE_CHANGELOG);
            assertThat(db.rows("SELECT id, exectype FROM DATABASECHANGELOG ORDER BY orderexecuted"))
                    .containsExactly("turnstile-locks-1-check EXECUTED", "turnstile-locks-1-mariadb MARK_RAN");
            try (JdbcLockStore store = JdbcLockStore.builder(db.pool).build()) {
                assertThatThrownBy(store::heldLocks).isInstanceOf(StoreSchemaException.class)
                        .hasMessageContaining("which is not binary").hasMessageContaining("COLLATE utf8mb4_bin");
            }
            // and the shipped DDL is what the check accepts on this server's defaults
            try (FreshDb fresh = new FreshDb("mariadb", dir)) {
                fresh.turnstileFlyway().migrate();
                assertThat(fresh.rows("SELECT column_name, collation_name FROM information_schema.columns WHERE "
                        + "table_schema = DATABASE() AND table_name = 'turnstile_locks' AND column_name IN ('name', 'token') "
                        + "ORDER BY column_name")).containsExactly("name utf8mb4_bin", "token ascii_bin");
                roundTrip(fresh.pool, Dialect.DEFAULT_TABLE, 0);
            }
        }
    }

    /**
     * PostgreSQL, a schema other than the connection's: Flyway's schemas(...) puts the table and
     * its history there, and the store reaches it by its qualified name.
     */
    @Test
    void postgresInASchemaOfItsOwn(@TempDir Path dir) throws Exception {
        try (FreshDb app = new FreshDb("postgresql", dir); FreshDb locks = new FreshDb("postgresql", dir)) {
            Flyway.configure(getClass().getClassLoader()).dataSource(app.pool).schemas(locks.name)
                    .locations(Migrations.flywayLocation(SqlDialect.POSTGRESQL)).table(Migrations.FLYWAY_HISTORY_TABLE)
                    .baselineOnMigrate(true).baselineVersion("0").load().migrate();
            assertThat(locks.count("SELECT COUNT(*) FROM " + Migrations.FLYWAY_HISTORY_TABLE)).isEqualTo(1);
            assertThat(app.count("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema()"))
                    .as("nothing in the connection's own schema").isZero();
            roundTrip(app.pool, locks.name + "." + Dialect.DEFAULT_TABLE, 0);
        }
    }

    /**
     * Two instances starting at once migrate the same database: Flyway's lock (PostgreSQL advisory
     * lock, MariaDB GET_LOCK) lets one apply V1, and the other then finds nothing to do. Before that
     * lock exists, both may create the history table: on MariaDB the loser fails ("… already exists,
     * and is empty", seen in CI), and a second try finds the winner's history, as docs/migrations.md
     * tells users to do (the starter does it itself).
     */
    @ParameterizedTest
    @ValueSource(strings = {"postgresql", "mariadb"})
    void twoInstancesRunningFlywayAtOnce(String kind, @TempDir Path dir) throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try (FreshDb db = new FreshDb(kind, dir)) {
            List<Callable<Integer>> both = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                both.add(() -> {
                    try (HikariDataSource own = JdbcLockStoreTest.pool(db.url, true)) { // an instance's own pool
                        Flyway flyway = Flyway.configure(getClass().getClassLoader()).dataSource(own)
                                .locations(Migrations.flywayLocation(db.dialect)).table(Migrations.FLYWAY_HISTORY_TABLE)
                                .baselineOnMigrate(true).baselineVersion("0").load();
                        for (int attempt = 1; ; attempt++) {
                            try {
                                return flyway.migrate().migrationsExecuted;
                            } catch (org.flywaydb.core.api.FlywayException e) {
                                if (attempt == 4) {
                                    throw e;
                                }
                                Thread.sleep(250L * attempt);
                            }
                        }
                    }
                });
            }
            int applied = 0;
            for (Future<Integer> f : threads.invokeAll(both)) {
                applied += f.get();
            }
            assertThat(applied).as("V1 applied once").isEqualTo(1);
            assertThat(db.flywayHistory()).containsExactly("1 true");
            roundTrip(db.pool, Dialect.DEFAULT_TABLE, 0);
        } finally {
            threads.shutdownNow();
        }
    }

    /**
     * Two instances (two JVMs: Liquibase keeps its lock state per JVM) start at once with
     * Turnstile's changelog newly included: DATABASECHANGELOGLOCK lets one run the changesets, and
     * the other then finds them ran. Liquibase's very first run on a database is another matter:
     * both create DATABASECHANGELOG, before its lock exists, and one fails (PostgreSQL: a duplicate
     * key in pg_type); docs/migrations.md says so.
     */
    @Test
    void twoInstancesRunningLiquibaseAtOnce(@TempDir Path dir) throws Exception {
        try (FreshDb db = new FreshDb("postgresql", dir)) {
            liquibaseUpdate(db.pool, "migrations/app-only.xml"); // the application's earlier deploys
            List<Process> both = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                both.add(new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-cp", System.getProperty("java.class.path"),
                        LiquibaseUpdateProcess.class.getName(), db.url, "migrations/master.xml")
                        .redirectErrorStream(true).redirectOutput(dir.resolve("instance" + i + ".log").toFile()).start());
            }
            for (int i = 0; i < 2; i++) {
                assertThat(both.get(i).waitFor(60, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
                assertThat(both.get(i).exitValue()).as(Files.readString(dir.resolve("instance" + i + ".log"))).isZero();
            }
            assertThat(db.rows("SELECT id, exectype FROM DATABASECHANGELOG ORDER BY orderexecuted"))
                    .containsExactly("app-1 EXECUTED", "turnstile-locks-1-check EXECUTED", "turnstile-locks-1-postgresql EXECUTED");
            roundTrip(db.pool, Dialect.DEFAULT_TABLE, 0);
        }
    }

    /** The store's missing-table message names the migrations, for the default table only. */
    @Test
    void theMissingTableMessageNamesTheMigrations() {
        try (JdbcLockStore store = JdbcLockStore.builder(TestDatabases.driverManager("jdbc:h2:mem:mig_missing")).build()) {
            assertThatThrownBy(store::heldLocks).isInstanceOf(StoreSchemaException.class)
                    .hasMessageContaining("does not exist")
                    .hasMessageContaining("Flyway location classpath:dev/turnstile/jdbc/flyway/h2")
                    .hasMessageContaining("Liquibase changelog " + Migrations.LIQUIBASE_CHANGELOG);
        }
        try (JdbcLockStore store = JdbcLockStore.builder(TestDatabases.driverManager("jdbc:h2:mem:mig_missing"))
                .tableName("other_locks").build()) {
            assertThatThrownBy(store::heldLocks).isInstanceOf(StoreSchemaException.class)
                    .hasMessageContaining("does not exist").message().asString().doesNotContain("Flyway");
        }
    }
}
