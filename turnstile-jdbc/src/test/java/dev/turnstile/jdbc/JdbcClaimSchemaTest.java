package dev.turnstile.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.turnstile.StoreSchemaException;
import dev.turnstile.claim.ClaimFilter;
import dev.turnstile.claim.ClaimTable;
import dev.turnstile.claim.TaskClaimer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Bad input and the schema check at construction. */
class JdbcClaimSchemaTest {

    private static String url(String db) {
        return switch (db) {
            case "postgresql" -> TestDatabases.POSTGRES;
            case "mariadb" -> TestDatabases.MARIADB;
            case "sqlite" -> SqliteClaimTest.URL;
            case "h2" -> "jdbc:h2:mem:claimschema;DB_CLOSE_DELAY=-1";
            default -> throw new IllegalArgumentException(db);
        };
    }

    /** MariaDB's default collation compares case-insensitively, which the store refuses for the id column. */
    static String idType(String db) {
        return db.equals("mariadb") ? "VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin" : "VARCHAR(64)";
    }

    private static String name() {
        return "claims_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    }

    private static void exec(String url, String... sql) throws Exception {
        try (Connection c = DriverManager.getConnection(url); Statement st = c.createStatement()) {
            for (String s : sql) {
                st.execute(s);
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"postgresql", "mariadb", "sqlite", "h2"})
    void missingTableColumnAndIndexAreNamedWithTheirFix(String db) throws Exception {
        String url = url(db);
        String table = name();
        ClaimTable t = ClaimTable.builder(table).build();
        try (HikariDataSource pool = JdbcClaimContractSupport.pool(url, 1)) {
            assertThatThrownBy(() -> JdbcClaimStore.builder(pool, t).build())
                    .isInstanceOf(StoreSchemaException.class)
                    .hasMessageContaining("does not exist").hasMessageContaining("CREATE TABLE IF NOT EXISTS " + table);
            exec(url, "CREATE TABLE " + table + " (id " + idType(db) + " PRIMARY KEY, phase VARCHAR(64), updated_at BIGINT)");
            assertThatThrownBy(() -> JdbcClaimStore.builder(pool, t).build())
                    .isInstanceOf(StoreSchemaException.class)
                    .hasMessageContaining("no column 'locked_at'").hasMessageContaining("no column 'claim_version'")
                    .hasMessageContaining("ALTER TABLE " + table + " ADD COLUMN locked_at BIGINT NOT NULL DEFAULT 0");
            exec(url, "ALTER TABLE " + table + " ADD COLUMN locked_at BIGINT NOT NULL DEFAULT 0",
                    "ALTER TABLE " + table + " ADD COLUMN claim_version BIGINT NOT NULL DEFAULT 0");
            assertThatThrownBy(() -> JdbcClaimStore.builder(pool, t).build())
                    .isInstanceOf(StoreSchemaException.class)
                    .hasMessageContaining("no index that starts with the filter columns [phase] and then 'locked_at'")
                    .hasMessageContaining("CREATE INDEX " + table + "_claim_idx ON " + table + " (phase, locked_at, updated_at)");
            exec(url, "CREATE INDEX " + table + "_claim_idx ON " + table + " (phase, locked_at, updated_at)");
            assertThat(JdbcClaimStore.builder(pool, t).build().table()).isEqualTo(t);
        } finally {
            exec(url, "DROP TABLE IF EXISTS " + table);
        }
    }

    /**
     * Every guarded write finds its task by the id: without a unique id, two rows with one key (or
     * keys a PAD SPACE collation reads alike, 'job' and 'job ') share a claim, and a release freed both.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"postgresql", "mariadb", "sqlite", "h2"})
    void anIdThatIsNotUniqueIsRefusedWithTheIndexThatFixesIt(String db) throws Exception {
        String url = url(db);
        String table = name();
        exec(url, "CREATE TABLE " + table + " (id VARCHAR(64) NOT NULL, phase VARCHAR(64), locked_at BIGINT NOT NULL DEFAULT 0, "
                + "updated_at BIGINT NOT NULL DEFAULT 0, claim_version BIGINT NOT NULL DEFAULT 0)"
                + (db.equals("mariadb") ? " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin" : ""),
                "CREATE INDEX " + table + "_i ON " + table + " (phase, locked_at, updated_at)",
                "CREATE UNIQUE INDEX " + table + "_pair ON " + table + " (id, phase)");
        try (HikariDataSource pool = JdbcClaimContractSupport.pool(url, 1)) {
            assertThatThrownBy(() -> JdbcClaimStore.builder(pool, ClaimTable.builder(table).build()).build())
                    .isInstanceOf(StoreSchemaException.class)
                    .hasMessageContaining("no primary key or unique index on the id column 'id' alone")
                    .hasMessageContaining("CREATE UNIQUE INDEX " + table + "_id_uidx ON " + table + " (id);");
            exec(url, "CREATE UNIQUE INDEX " + table + "_id_uidx ON " + table + " (id)");
            assertThat(JdbcClaimStore.builder(pool, ClaimTable.builder(table).build()).build()).isNotNull();
        } finally {
            exec(url, "DROP TABLE IF EXISTS " + table);
        }
    }

    /** SQLite's metadata reports a partial unique index as unique: its DDL says otherwise. */
    @Test
    void aPartialUniqueIndexOnSqliteIsNotAUniqueId() throws Exception {
        String url = url("sqlite");
        String table = name();
        exec(url, "CREATE TABLE " + table + " (id TEXT NOT NULL, phase TEXT, locked_at INTEGER NOT NULL DEFAULT 0, "
                + "updated_at INTEGER NOT NULL DEFAULT 0, claim_version INTEGER NOT NULL DEFAULT 0)",
                "CREATE INDEX " + table + "_i ON " + table + " (phase, locked_at, updated_at)",
                "CREATE UNIQUE INDEX " + table + "_partial ON " + table + " (id)\n  WHERE phase = 'p'");
        try (HikariDataSource pool = JdbcClaimContractSupport.pool(url, 1)) {
            assertThatThrownBy(() -> JdbcClaimStore.builder(pool, ClaimTable.builder(table).build()).build())
                    .isInstanceOf(StoreSchemaException.class).hasMessageContaining("no primary key or unique index");
            exec(url, "CREATE UNIQUE INDEX " + table + "_whole ON " + table + " (id)");
            assertThat(JdbcClaimStore.builder(pool, ClaimTable.builder(table).build()).build()).isNotNull();
        } finally {
            exec(url, "DROP TABLE IF EXISTS " + table);
        }
    }

    /** A partial unique index keeps keys unique among some rows only; a release that meets two rows writes nothing. */
    @Test
    void aPartialUniqueIndexIsNotAUniqueIdAndAReleaseThatMeetsTwoRowsRollsBack() throws Exception {
        String url = TestDatabases.POSTGRES;
        String table = name();
        exec(url, "CREATE TABLE " + table + " (id VARCHAR(64) NOT NULL, phase VARCHAR(64), locked_at BIGINT NOT NULL DEFAULT 0, "
                + "updated_at BIGINT NOT NULL DEFAULT 0, claim_version BIGINT NOT NULL DEFAULT 0)",
                "CREATE INDEX " + table + "_i ON " + table + " (phase, locked_at, updated_at)",
                "CREATE UNIQUE INDEX " + table + "_partial ON " + table + " (id) WHERE phase = 'never'");
        try (HikariDataSource pool = JdbcClaimContractSupport.pool(url, 1)) {
            ClaimTable t = ClaimTable.builder(table).build();
            assertThatThrownBy(() -> JdbcClaimStore.builder(pool, t).build())
                    .isInstanceOf(StoreSchemaException.class).hasMessageContaining("no primary key or unique index");
            exec(url, "CREATE UNIQUE INDEX " + table + "_id_uidx ON " + table + " (id)");
            JdbcClaimStore store = JdbcClaimStore.builder(pool, t).build();
            // the index goes after the check: two rows with one key, both stuck at one version
            long old = System.currentTimeMillis() - 3_600_000;
            exec(url, "DROP INDEX " + table + "_id_uidx",
                    "INSERT INTO " + table + " VALUES ('dup', 'P', " + (old + 1000) + ", " + old + ", 3), ('dup', 'P', "
                            + (old + 1000) + ", " + old + ", 3)");
            dev.turnstile.claim.ClaimSummary s = store.summarize(java.time.Duration.ofMinutes(1), java.time.Duration.ofMinutes(10), 10);
            assertThat(s.stuck()).hasSize(2);
            assertThatThrownBy(() -> store.release(s.stuck().get(0)))
                    .isInstanceOf(StoreSchemaException.class).hasMessageContaining("matched 2 rows, so nothing was released");
            assertThat(store.summarize(java.time.Duration.ofMinutes(1), java.time.Duration.ofMinutes(10), 10).stuck())
                    .allSatisfy(x -> assertThat(x.version()).isEqualTo(3));
        } finally {
            exec(url, "DROP TABLE IF EXISTS " + table);
        }
    }

    @Test
    void timeColumnThatIsNotAnIntegerIsRejected() throws Exception {
        String url = TestDatabases.POSTGRES;
        String table = name();
        exec(url, "CREATE TABLE " + table + " (id VARCHAR(64) PRIMARY KEY, phase VARCHAR(64), locked_at TIMESTAMP, "
                + "updated_at BIGINT, claim_version BIGINT)");
        try (HikariDataSource pool = JdbcClaimContractSupport.pool(url, 1)) {
            assertThatThrownBy(() -> JdbcClaimStore.builder(pool, ClaimTable.builder(table).build()).build())
                    .isInstanceOf(StoreSchemaException.class)
                    .hasMessageContaining("column 'locked_at' is timestamp, not an integer");
        } finally {
            exec(url, "DROP TABLE IF EXISTS " + table);
        }
    }

    /**
     * Issue 23 item 14: a schema or programming error is not an outage. Before: every one of these
     * was a StoreUnavailableException (MariaDB even compared 'New' to an INTEGER phase as 0).
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"postgresql", "mariadb", "sqlite", "h2"})
    void valuesTheColumnsCannotHoldAreRefusedNamingTheColumn(String db) throws Exception {
        String url = url(db);
        String intPhase = name();
        String textPhase = name();
        String cols = " (id " + idType(db) + " PRIMARY KEY, phase %s, locked_at BIGINT NOT NULL DEFAULT 0, "
                + "updated_at BIGINT NOT NULL DEFAULT 0, claim_version BIGINT NOT NULL DEFAULT 0)";
        exec(url, "CREATE TABLE " + intPhase + cols.formatted("INTEGER"),
                "CREATE INDEX " + intPhase + "_i ON " + intPhase + " (phase, locked_at, updated_at)",
                "INSERT INTO " + intPhase + " (id, phase) VALUES ('a', 0)",
                "CREATE TABLE " + textPhase + cols.formatted("VARCHAR(8)"),
                "CREATE INDEX " + textPhase + "_i ON " + textPhase + " (phase, locked_at, updated_at)",
                "INSERT INTO " + textPhase + " (id, phase) VALUES ('a', 'New')");
        try (HikariDataSource pool = JdbcClaimContractSupport.pool(url, 2)) {
            JdbcClaimStore ints = JdbcClaimStore.builder(pool, ClaimTable.builder(intPhase).build()).build();
            TaskClaimer intClaimer = TaskClaimer.builder(ints).build();
            assertThatThrownBy(() -> intClaimer.claim(ClaimFilter.where("phase", "New"), 1))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("for column 'phase'").hasMessageContaining("not text");
            JdbcClaimStore texts = JdbcClaimStore.builder(pool, ClaimTable.builder(textPhase).build()).build();
            TaskClaimer claimer = TaskClaimer.builder(texts).build();
            assertThatThrownBy(() -> claimer.claim(ClaimFilter.where("phase", 5), 1))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("for column 'phase'").hasMessageContaining("not a number");
            var claims = claimer.claim(ClaimFilter.where("phase", "New"), 1);
            assertThat(claims).hasSize(1);
            var claim = claims.get(0);
            assertThatThrownBy(() -> claim.update(java.util.Map.of("no_such_column", "x")))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("column 'no_such_column' is not in the task table");
            if (!db.equals("sqlite")) { // SQLite does not enforce a declared length
                assertThatThrownBy(() -> claim.moveTo("Deleting-long"))
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("for column 'phase'").hasMessageContaining("13 characters long");
            }
            // nothing was written: the claim is still held and can end normally
            assertThat(claim.moveTo("Done").toString()).isEqualTo("APPLIED");
        } finally {
            exec(url, "DROP TABLE IF EXISTS " + intPhase, "DROP TABLE IF EXISTS " + textPhase);
        }
    }

    /**
     * Issue 23 item 2: names the database reads as SQL are refused before any statement runs. Before:
     * on PostgreSQL a filter column 'user' compared the login name (claiming nothing, or every task
     * for .and("user", "postgres")); 'group' and a MariaDB table 'order' passed the check and then
     * every claim failed as "store unavailable".
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"postgresql", "mariadb", "sqlite", "h2"})
    void namesTheDatabaseReadsAsSqlAreRefusedUpFront(String db) throws Exception {
        String url = url(db);
        try (HikariDataSource pool = JdbcClaimContractSupport.pool(url, 1)) {
            for (ClaimTable t : new ClaimTable[] {
                    ClaimTable.builder(name()).filterColumns("user").build(),
                    ClaimTable.builder(name()).filterColumns("current_user").build(),
                    ClaimTable.builder(name()).filterColumns("session_user").build(),
                    ClaimTable.builder(name()).phaseColumn("group").build(),
                    ClaimTable.builder("order").build()}) {
                assertThatThrownBy(() -> JdbcClaimStore.builder(pool, t).createTableIfMissing(true).build())
                        .as(t.toString()).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("is a reserved word").hasMessageContaining("rename it");
                SqlDialect d = switch (db) {
                    case "postgresql" -> SqlDialect.POSTGRESQL;
                    case "mariadb" -> SqlDialect.MARIADB;
                    case "sqlite" -> SqlDialect.SQLITE;
                    default -> SqlDialect.H2;
                };
                assertThatThrownBy(() -> JdbcClaimStore.createTable(d, t)).isInstanceOf(IllegalArgumentException.class);
            }
            assertThatThrownBy(() -> JdbcClaimStore.builder(pool, ClaimTable.builder(name()).filterColumns("user").build())
                    .build()).hasMessageContaining("read as a value (the login name");
            assertThatThrownBy(() -> JdbcLockStore.builder(pool).tableName("order"))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'order' is a reserved word");
            assertThatThrownBy(() -> JdbcLockStore.builder(pool).tableName("public.user"))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'user' is a reserved word");
        }
    }

    /** Issue 23 item 2: a table created with a quoted name the database does not fold to is found and named, with the rename. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"postgresql", "h2"})
    void aQuotedNameInAnotherCaseIsRefusedWithTheRename(String db) throws Exception {
        String url = url(db);
        String bare = name();
        String quoted = db.equals("postgresql") ? "Gw" + bare : bare.toLowerCase(java.util.Locale.ROOT);
        String given = db.equals("postgresql") ? "Gw" + bare : bare;
        exec(url, "CREATE TABLE \"" + quoted + "\" (id VARCHAR(64) PRIMARY KEY, phase VARCHAR(64), "
                + "locked_at BIGINT NOT NULL DEFAULT 0, updated_at BIGINT NOT NULL DEFAULT 0, claim_version BIGINT NOT NULL DEFAULT 0)");
        try (HikariDataSource pool = JdbcClaimContractSupport.pool(url, 1)) {
            assertThatThrownBy(() -> JdbcClaimStore.builder(pool, ClaimTable.builder(given).build()).build())
                    .isInstanceOf(StoreSchemaException.class)
                    .hasMessageContaining("created with a quoted name")
                    .hasMessageContaining("ALTER TABLE \"" + quoted + "\" RENAME TO");
        } finally {
            exec(url, "DROP TABLE IF EXISTS \"" + quoted + "\"");
        }
    }

    /**
     * The same when the name is given unquoted, as a user who typed the table's name would: the
     * table the statements reach does not exist, and the quoted one is named with the rename,
     * for the task table and the lock table alike. Once a table of the folded name exists (here
     * created by createTableIfMissing), the quoted one is no longer a problem.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"postgresql", "h2"})
    void aQuotedTwinOfAnUnquotedNameIsNamedWithTheRename(String db) throws Exception {
        String url = url(db);
        String given = name();
        String quoted = db.equals("postgresql") ? "Gw" + given.substring(2) : given.toLowerCase(java.util.Locale.ROOT);
        String unquoted = db.equals("postgresql") ? "gw" + given.substring(2) : given;
        String locks = db.equals("postgresql") ? "Lk" + given.substring(2) : given.toLowerCase(java.util.Locale.ROOT) + "_l";
        String locksUnquoted = db.equals("postgresql") ? "lk" + given.substring(2) : given + "_L";
        exec(url, "CREATE TABLE \"" + quoted + "\" (id VARCHAR(64) PRIMARY KEY, phase VARCHAR(64), "
                + "locked_at BIGINT NOT NULL DEFAULT 0, updated_at BIGINT NOT NULL DEFAULT 0, claim_version BIGINT NOT NULL DEFAULT 0)",
                "CREATE TABLE \"" + locks + "\" (name VARCHAR(255) PRIMARY KEY)");
        try (HikariDataSource pool = JdbcClaimContractSupport.pool(url, 2)) {
            assertThatThrownBy(() -> JdbcClaimStore.builder(pool, ClaimTable.builder(unquoted).build()).build())
                    .isInstanceOf(StoreSchemaException.class)
                    .hasMessageContaining("a table named \"" + quoted + "\" exists, created with a quoted name")
                    .hasMessageContaining("ALTER TABLE \"" + quoted + "\" RENAME TO");
            try (JdbcLockStore store = JdbcLockStore.builder(pool).tableName(locksUnquoted).build()) {
                assertThatThrownBy(() -> store.tryAcquire(new dev.turnstile.spi.AcquireRequest("k", "o", "t", Duration.ofSeconds(5))))
                        .isInstanceOf(StoreSchemaException.class)
                        .hasMessageContaining("does not exist")
                        .hasMessageContaining("a table named \"" + locks + "\" exists, created with a quoted name")
                        .hasMessageContaining("ALTER TABLE \"" + locks + "\" RENAME TO");
            }
            try (JdbcLockStore store = JdbcLockStore.builder(pool).tableName(locksUnquoted).createTableIfMissing(true).build()) {
                assertThat(store.tryAcquire(new dev.turnstile.spi.AcquireRequest("k", "o", "t", Duration.ofSeconds(5))))
                        .isPresent();
            }
        } finally {
            exec(url, "DROP TABLE IF EXISTS \"" + quoted + "\"", "DROP TABLE IF EXISTS \"" + locks + "\"",
                    "DROP TABLE IF EXISTS " + locksUnquoted);
        }
    }

    /**
     * The rename names the schema when the table name does: an unqualified ALTER TABLE acts on the
     * search path's table, which here is another one. A twin in another schema only is not named.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"postgresql", "h2"})
    void aQuotedTwinIsRenamedInItsOwnSchemaAndNeverInAnother(String db) throws Exception {
        String url = url(db);
        String r = UUID.randomUUID().toString().replace("-", "").substring(0, 8);
        String schema = "tq_" + r;
        String quoted = db.equals("postgresql") ? "Lk" + r : "lk" + r;
        String given = schema + ".lk" + r;
        String folded = db.equals("postgresql") ? "lk" + r : ("lk" + r).toUpperCase(java.util.Locale.ROOT);
        String ddl = " (name VARCHAR(255) PRIMARY KEY)";
        exec(url, "CREATE SCHEMA " + schema, "CREATE TABLE " + schema + ".\"" + quoted + "\"" + ddl, "CREATE TABLE \"" + quoted + "\"" + ddl);
        try (HikariDataSource pool = JdbcClaimContractSupport.pool(url, 2);
                JdbcLockStore store = JdbcLockStore.builder(pool).tableName(given).build()) {
            String rename = "ALTER TABLE " + schema + ".\"" + quoted + "\" RENAME TO " + folded;
            assertThatThrownBy(() -> store.tryAcquire(new dev.turnstile.spi.AcquireRequest("k", "o", "t", Duration.ofSeconds(5))))
                    .isInstanceOf(StoreSchemaException.class).hasMessageContaining("created with a quoted name")
                    .hasMessageContaining("rename it with " + rename);
            exec(url, rename); // the advice renames the table in the schema, not the default schema's twin
            try (Connection c = DriverManager.getConnection(url)) {
                assertThat(c.getMetaData().getTables(null, c.getSchema(), quoted, null).next()).as("the other schema's twin").isTrue();
            }
            exec(url, "DROP TABLE " + schema + "." + folded);
            assertThatThrownBy(() -> store.tryAcquire(new dev.turnstile.spi.AcquireRequest("k", "o", "t", Duration.ofSeconds(5))))
                    .isInstanceOf(StoreSchemaException.class).hasMessageContaining("does not exist")
                    .hasMessageNotContaining("quoted name");
        } finally {
            exec(url, "DROP TABLE IF EXISTS \"" + quoted + "\"", "DROP SCHEMA " + schema + " CASCADE");
        }
    }

    /**
     * {@code _} is a wildcard in metadata patterns: schema {@code tq_x} must not find {@code tqXx}'s
     * twin, and a missing task table {@code job_r} must not be taken to exist because {@code jobxr} does.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"postgresql", "h2", "mariadb"})
    void underscoresInNamesAreNotWildcards(String db) throws Exception {
        String url = url(db);
        String r = UUID.randomUUID().toString().replace("-", "").substring(0, 8);
        String schema = "tq_" + r;
        String lookalike = "tqx" + r;
        boolean mariadb = db.equals("mariadb");
        String create = mariadb ? "CREATE DATABASE " : "CREATE SCHEMA ";
        exec(url, create + schema, create + lookalike,
                "CREATE TABLE " + lookalike + (mariadb ? ".`Wild_" + r + "`" : ".\"Wild_" + r + "\"") + " (name VARCHAR(255) PRIMARY KEY)",
                "CREATE TABLE " + schema + ".jobx" + r + " (id BIGINT PRIMARY KEY, phase VARCHAR(64), updated_at BIGINT, "
                        + "locked_at BIGINT NOT NULL DEFAULT 0, claim_version BIGINT NOT NULL DEFAULT 0)",
                "CREATE INDEX jobx_claim_" + r + " ON " + schema + ".jobx" + r + " (phase, locked_at, updated_at)");
        try (HikariDataSource pool = JdbcClaimContractSupport.pool(url, 2)) {
            assertThatThrownBy(() -> JdbcClaimStore.builder(pool, ClaimTable.builder(schema + ".job_" + r).build()).build())
                    .isInstanceOf(StoreSchemaException.class).hasMessageContaining("does not exist");
            try (JdbcLockStore store = JdbcLockStore.builder(pool).tableName(schema + ".wild_" + r).build()) {
                assertThatThrownBy(() -> store.tryAcquire(new dev.turnstile.spi.AcquireRequest("k", "o", "t", Duration.ofSeconds(5))))
                        .isInstanceOf(StoreSchemaException.class).hasMessageContaining("does not exist")
                        .hasMessageNotContaining("quoted name");
            }
        } finally {
            exec(url, mariadb ? "DROP DATABASE " + schema : "DROP SCHEMA " + schema + " CASCADE",
                    mariadb ? "DROP DATABASE " + lookalike : "DROP SCHEMA " + lookalike + " CASCADE");
        }
    }

    /**
     * A schema created quoted ("AtkS"): an unquoted AtkS.locks means atks.locks, and renaming the
     * table in "AtkS" would not make it reachable, so no rename is advised.
     */
    @Test
    void aTwinInAQuotedSchemaIsNotAdvised() throws Exception {
        String url = url("postgresql");
        String r = UUID.randomUUID().toString().replace("-", "").substring(0, 8);
        String schema = "AtkS" + r;
        exec(url, "CREATE SCHEMA \"" + schema + "\"", "CREATE TABLE \"" + schema + "\".\"Locks\" (name VARCHAR(255) PRIMARY KEY)");
        try (HikariDataSource pool = JdbcClaimContractSupport.pool(url, 2);
                JdbcLockStore store = JdbcLockStore.builder(pool).tableName(schema + ".locks").build()) {
            assertThatThrownBy(() -> store.tryAcquire(new dev.turnstile.spi.AcquireRequest("k", "o", "t", Duration.ofSeconds(5))))
                    .isInstanceOf(StoreSchemaException.class).hasMessageContaining("does not exist")
                    .hasMessageNotContaining("quoted name");
        } finally {
            exec(url, "DROP SCHEMA \"" + schema + "\" CASCADE");
        }
    }

    /** Two quoted twins ("Two" and "TWO"): both are named, since the user must choose which to rename. */
    @Test
    void twoQuotedTwinsAreBothNamed() throws Exception {
        String url = url("postgresql");
        String r = UUID.randomUUID().toString().replace("-", "").substring(0, 8);
        String a = "Tw" + r;
        String b = ("TW" + r).toUpperCase(java.util.Locale.ROOT);
        exec(url, "CREATE TABLE \"" + a + "\" (name VARCHAR(255) PRIMARY KEY)", "CREATE TABLE \"" + b + "\" (name VARCHAR(255) PRIMARY KEY)");
        try (HikariDataSource pool = JdbcClaimContractSupport.pool(url, 2);
                JdbcLockStore store = JdbcLockStore.builder(pool).tableName("tw" + r).build()) {
            assertThatThrownBy(() -> store.tryAcquire(new dev.turnstile.spi.AcquireRequest("k", "o", "t", Duration.ofSeconds(5))))
                    .isInstanceOf(StoreSchemaException.class)
                    .hasMessageContaining("tables named \"" + b + "\", \"" + a + "\" exist, created with quoted names")
                    .hasMessageContaining("rename the one to use with ALTER TABLE \"" + b + "\" RENAME TO tw" + r + " (or the same for \"" + a + "\")");
        } finally {
            exec(url, "DROP TABLE IF EXISTS \"" + a + "\"", "DROP TABLE IF EXISTS \"" + b + "\"");
        }
    }

    /** H2 has INFORMATION_SCHEMA.LOCKS: an unqualified "locks" is looked up in the current schema only. */
    @Test
    void anH2TwinIsNotHiddenByATableOfTheSameNameInAnotherSchema() throws Exception {
        String url = "jdbc:h2:mem:twinlocks;DB_CLOSE_DELAY=-1";
        exec(url, "CREATE TABLE \"locks\" (name VARCHAR(255) PRIMARY KEY)");
        try (HikariDataSource pool = JdbcClaimContractSupport.pool(url, 2);
                JdbcLockStore store = JdbcLockStore.builder(pool).tableName("locks").build()) {
            assertThatThrownBy(() -> store.tryAcquire(new dev.turnstile.spi.AcquireRequest("k", "o", "t", Duration.ofSeconds(5))))
                    .isInstanceOf(StoreSchemaException.class)
                    .hasMessageContaining("rename it with ALTER TABLE \"locks\" RENAME TO LOCKS");
        } finally {
            exec(url, "DROP TABLE \"locks\"");
        }
    }

    /**
     * A lock table that exists but lacks Turnstile's columns is a schema error, not an outage: a
     * Spring application then fails its start-up with the fix instead of starting and skipping every
     * locked run as if the store were down (attack on the starter's start-up check).
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"postgresql", "mariadb", "h2"})
    void aLockTableWithoutTurnstilesColumnsIsASchemaError(String db) throws Exception {
        String url = url(db);
        String table = name().replace("claims_", "locks_");
        exec(url, "CREATE TABLE " + table + " (name VARCHAR(255) " + (db.equals("mariadb") ? "COLLATE utf8mb4_bin " : "")
                + "PRIMARY KEY)");
        try (HikariDataSource pool = JdbcClaimContractSupport.pool(url, 1);
                JdbcLockStore store = JdbcLockStore.builder(pool).tableName(table).build()) {
            assertThatThrownBy(() -> store.tryAcquire(new dev.turnstile.spi.AcquireRequest("k", "o", "t", Duration.ofSeconds(5))))
                    .isInstanceOf(StoreSchemaException.class)
                    .hasMessageContaining("do not fit")
                    .hasMessageContaining("turnstile schema");
        } finally {
            exec(url, "DROP TABLE IF EXISTS " + table);
        }
    }

    @Test
    void aSchemaErrorIsNotAnOutage() {
        assertThat(dev.turnstile.StoreUnavailableException.class.isAssignableFrom(StoreSchemaException.class)).isFalse();
        assertThat(dev.turnstile.TurnstileException.class.isAssignableFrom(StoreSchemaException.class)).isTrue();
    }

    @Test
    void namesThatAreNotIdentifiersAreRejected() {
        assertThatThrownBy(() -> ClaimTable.builder("tasks; DROP TABLE x"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("is not an identifier");
        assertThatThrownBy(() -> ClaimTable.builder("tasks").lockedAtColumn("locked at"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lockedAt column 'locked at' is not an identifier");
        assertThatThrownBy(() -> ClaimTable.builder("tasks").filterColumns("phase'--"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("filter column 'phase'--' is not an identifier");
        assertThatThrownBy(() -> ClaimFilter.where("1phase", "x"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("is not an identifier");
        assertThatThrownBy(() -> ClaimFilter.where("phase", new Object()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("give a String, Integer, Long or Boolean");
        assertThatThrownBy(() -> ClaimFilter.where("phase", null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("is null");
        assertThatThrownBy(() -> ClaimTable.builder("tasks").lockedAtColumn("updated_at").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("two roles");
    }

    @Test
    void timeoutsOfZeroOrLessAreRejected() throws Exception {
        String url = url("h2");
        ClaimTable t = ClaimTable.builder(name()).build();
        try (HikariDataSource pool = JdbcClaimContractSupport.pool(url, 1)) {
            JdbcClaimStore store = JdbcClaimStore.builder(pool, t).createTableIfMissing(true).build();
            assertThatThrownBy(() -> TaskClaimer.builder(store).lockTimeout(Duration.ZERO))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lock timeout is PT0S: it must be positive");
            assertThatThrownBy(() -> TaskClaimer.builder(store).lockTimeout(Duration.ofSeconds(-5)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must be positive");
            assertThatThrownBy(() -> TaskClaimer.builder(store).lockTimeout(null))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("is null");
            assertThatThrownBy(() -> TaskClaimer.builder(store).lockTimeout(Duration.ofSeconds(1)).relockFloor(Duration.ofSeconds(2)).build())
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("longer than the lock timeout");
            assertThatThrownBy(() -> TaskClaimer.builder(store).lockTimeout(Duration.ofSeconds(1)).keepAlive(Duration.ofSeconds(1)).build())
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not shorter than the lock timeout");
        } finally {
            exec(url, "DROP TABLE IF EXISTS " + t.table());
        }
    }

    @Test
    void ddlAndClaimStatementArePrintable() {
        ClaimTable t = ClaimTable.builder("gateways").phaseColumn("state").filterColumns("region").build();
        for (SqlDialect d : new SqlDialect[] {SqlDialect.POSTGRESQL, SqlDialect.MARIADB, SqlDialect.SQLITE, SqlDialect.H2}) {
            assertThat(JdbcClaimStore.createTable(d, t)).contains("gateways_claim_idx").contains("(state, region, locked_at, updated_at)")
                    .contains("region").doesNotContain("{");
            assertThat(JdbcClaimStore.claimStatement(d, t, ClaimFilter.where("state", "Deleting").and("region", "eu")))
                    .contains("state = ? AND region = ? AND locked_at <=").contains("ORDER BY locked_at, updated_at");
        }
        assertThat(JdbcClaimStore.claimStatement(SqlDialect.POSTGRESQL, t, ClaimFilter.where("state", "x")))
                .contains("FOR UPDATE SKIP LOCKED").contains("RETURNING id, claim_version, locked_at");
    }
}
