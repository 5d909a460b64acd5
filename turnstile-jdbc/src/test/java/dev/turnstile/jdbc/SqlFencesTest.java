package dev.turnstile.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.turnstile.FenceGate;
import dev.turnstile.StaleFenceException;
import dev.turnstile.StoreUnavailableException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Fenced writes on every SQL database, on the real servers (issue 26). */
@Timeout(120)
class SqlFencesTest {
    private static final String H2 = "jdbc:h2:mem:fences;DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000";

    static String url(String db) {
        return switch (db) {
            case "postgresql" -> TestDatabases.POSTGRES;
            case "mariadb" -> TestDatabases.MARIADB;
            // MariaDB's driver counting changed rows rather than found rows, and MySQL's driver
            case "mariadb-affected" -> TestDatabases.MARIADB + "&useAffectedRows=true";
            case "mysql" -> "jdbc:mysql://127.0.0.1:3306/test?user=root";
            case "h2" -> H2;
            default -> TestDatabases.SQLITE;
        };
    }

    private static Connection connect(String db) throws SQLException {
        return DriverManager.getConnection(url(db));
    }

    /** A fresh fence table and a data table with a fence column, named per test. */
    private static String fresh(String db, String suffix) throws SQLException {
        String t = "tsf_" + suffix + "_" + db.replace('-', '_');
        try (Connection c = connect(db); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + t);
            s.execute("DROP TABLE IF EXISTS " + t + "_data");
            SqlFences.create().withTable(t).createTable(c);
            s.execute("CREATE TABLE " + t + "_data (id INTEGER NOT NULL PRIMARY KEY, val INTEGER NOT NULL, "
                    + "turnstile_fence BIGINT DEFAULT 0)");
            s.execute("INSERT INTO " + t + "_data (id, val, turnstile_fence) VALUES (1, 0, 0)");
            s.execute("INSERT INTO " + t + "_data (id, val, turnstile_fence) VALUES (2, 0, NULL)");
        }
        return t;
    }

    private static long seen(String db, String table, String resource) throws SQLException {
        try (Connection c = connect(db); PreparedStatement ps = c.prepareStatement("SELECT fence FROM " + table + " WHERE resource = ?")) {
            ps.setString(1, resource);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getLong(1) : -1;
            }
        }
    }

    private static long val(String db, String table, int id) throws SQLException {
        try (Connection c = connect(db); Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT val FROM " + table + "_data WHERE id = " + id)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** One transaction: check, then write {@code val = fence}; returns whether it committed. */
    private static boolean fencedWrite(SqlFences f, Connection c, String table, String resource, long fence) throws SQLException {
        c.setAutoCommit(false);
        try {
            f.check(c, resource, fence);
            try (PreparedStatement ps = c.prepareStatement("UPDATE " + table + "_data SET val = ? WHERE id = 1")) {
                ps.setLong(1, fence);
                ps.executeUpdate();
            }
            c.commit();
            return true;
        } catch (StaleFenceException e) {
            c.rollback();
            return false;
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"postgresql", "mariadb", "mariadb-affected", "mysql", "h2", "sqlite"})
    void checkAdmitsEqualAndHigherFencesAndRefusesLowerOnes(String db) throws SQLException {
        String t = fresh(db, "order");
        SqlFences f = SqlFences.create().withTable(t);
        try (Connection c = connect(db)) {
            assertThat(fencedWrite(f, c, t, "report", 5)).isTrue();
            assertThat(fencedWrite(f, c, t, "report", 5)).as("the same holder writes again").isTrue();
            assertThat(fencedWrite(f, c, t, "report", 9)).isTrue();
            c.setAutoCommit(false);
            assertThatThrownBy(() -> f.check(c, "report", 7))
                    .isInstanceOfSatisfying(StaleFenceException.class, e -> {
                        assertThat(e.resource()).isEqualTo("report");
                        assertThat(e.fence()).isEqualTo(7);
                        assertThat(e.highestSeen()).isEqualTo(9);
                    })
                    .hasMessageContaining("fence 7").hasMessageContaining("accepted fence 9").hasMessageContaining("stop this work");
            c.rollback();
            assertThat(fencedWrite(f, c, t, "other", 1)).as("fences are per resource").isTrue();
        }
        assertThat(seen(db, t, "report")).isEqualTo(9);
        assertThat(val(db, t, 1)).isEqualTo(1);
    }

    @ParameterizedTest
    @ValueSource(strings = {"postgresql", "mariadb", "h2", "sqlite"})
    void aNewerFenceWaitsForTheOlderTransactionAndTheOlderFenceIsRefusedAfterIt(String db) throws Exception {
        String t = fresh(db, "wait");
        SqlFences f = SqlFences.create().withTable(t);
        try (Connection older = connect(db); Connection newer = connect(db)) {
            older.setAutoCommit(false);
            f.check(older, "report", 5);
            AtomicBoolean olderCommitted = new AtomicBoolean();
            CompletableFuture<Boolean> newerWrite = CompletableFuture.supplyAsync(() -> {
                try {
                    newer.setAutoCommit(false);
                    f.check(newer, "report", 6);
                    boolean afterOlder = olderCommitted.get();
                    newer.commit();
                    return afterOlder;
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
            });
            Thread.sleep(300);
            assertThat(newerWrite).as("the newer fence waits on the resource's row").isNotDone();
            olderCommitted.set(true);
            older.commit();
            assertThat(newerWrite.get(20, TimeUnit.SECONDS)).isTrue();
            assertThatThrownBy(() -> {
                older.setAutoCommit(false);
                f.check(older, "report", 5);
            }).isInstanceOf(StaleFenceException.class);
            older.rollback();
        }
    }

    /**
     * Holders take increasing fences and then pause for a random while before writing, so their
     * writes arrive out of fence order, as a paused holder's do. Through {@code check}, every write
     * that lands sees only lower or equal fences before it; without it, some would not.
     */
    @ParameterizedTest
    @ValueSource(strings = {"postgresql", "mariadb", "h2", "sqlite"})
    void writesThatArriveOutOfFenceOrderNeverOverwriteANewerOne(String db) throws Exception {
        String t = fresh(db, "race");
        SqlFences f = SqlFences.create().withTable(t);
        AtomicLong fences = new AtomicLong();
        AtomicInteger regressions = new AtomicInteger();
        AtomicInteger refused = new AtomicInteger();
        AtomicInteger written = new AtomicInteger();
        List<CompletableFuture<Void>> writers = new ArrayList<>();
        for (int w = 0; w < 4; w++) {
            writers.add(CompletableFuture.runAsync(() -> {
                try (Connection c = connect(db)) {
                    c.setAutoCommit(false);
                    for (int i = 0; i < 40; i++) {
                        long fence = fences.incrementAndGet();
                        Thread.sleep(ThreadLocalRandom.current().nextInt(4));
                        try {
                            f.check(c, "counter", fence);
                        } catch (StaleFenceException e) {
                            c.rollback();
                            refused.incrementAndGet();
                            continue;
                        }
                        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT val FROM " + t + "_data WHERE id = 1")) {
                            rs.next();
                            if (rs.getLong(1) > fence) {
                                regressions.incrementAndGet();
                            }
                        }
                        try (PreparedStatement ps = c.prepareStatement("UPDATE " + t + "_data SET val = ? WHERE id = 1")) {
                            ps.setLong(1, fence);
                            ps.executeUpdate();
                        }
                        c.commit();
                        written.incrementAndGet();
                    }
                } catch (SQLException | InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }));
        }
        CompletableFuture.allOf(writers.toArray(CompletableFuture[]::new)).get(100, TimeUnit.SECONDS);
        assertThat(regressions).as("a write saw a newer fence's value before it").hasValue(0);
        assertThat(written.get() + refused.get()).isEqualTo(160);
        assertThat(val(db, t, 1)).isEqualTo(seen(db, t, "counter"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"postgresql", "mariadb", "mariadb-affected", "mysql", "h2", "sqlite"})
    void updateRowWritesTheFenceWithTheRowAndRefusesALowerOne(String db) throws SQLException {
        String t = fresh(db, "row");
        SqlFences f = SqlFences.create();
        try (Connection c = connect(db)) {
            assertThat(f.updateRow(c, t + "_data", "id", 1, 4, "val = ?", 40)).isEqualTo(1);
            assertThat(f.updateRow(c, t + "_data", "id", 1, 4, "val = ?", 40)).as("same fence, same value").isEqualTo(1);
            assertThat(f.updateRow(c, t + "_data", "id", 1, 6, "val = val + ?", 2)).isEqualTo(1);
            assertThatThrownBy(() -> f.updateRow(c, t + "_data", "id", 1, 5, "val = ?", 50))
                    .isInstanceOfSatisfying(StaleFenceException.class, e -> assertThat(e.highestSeen()).isEqualTo(6));
            assertThat(f.updateRow(c, t + "_data", "id", 3, 9, "val = ?", 1)).as("no such row").isZero();
            assertThat(f.updateRow(c, t + "_data", "id", 2, 1, "val = ?", 7)).as("a NULL fence counts as 0").isEqualTo(1);
        }
        assertThat(val(db, t, 1)).isEqualTo(42);
        assertThat(val(db, t, 2)).isEqualTo(7);
    }

    @ParameterizedTest
    @ValueSource(strings = {"postgresql", "sqlite"})
    void theGateRunsAdmittedWorkOnlyAndSaysWhenItCannotReachTheDatabase(String db) throws Exception {
        String t = fresh(db, "gate");
        FenceGate gate = SqlFences.create().withTable(t).gate(TestDatabases.driverManager(url(db)));
        assertThat(gate.admit("job", 3, () -> "ran")).isEqualTo("ran");
        AtomicBoolean ran = new AtomicBoolean();
        assertThatThrownBy(() -> gate.admit("job", 2, () -> ran.getAndSet(true))).isInstanceOf(StaleFenceException.class);
        assertThat(ran).isFalse();
        assertThatThrownBy(() -> gate.admit("job", 4, () -> {
            throw new java.io.IOException("the work's own failure");
        })).isInstanceOf(java.io.IOException.class);
        assertThat(seen(db, t, "job")).as("the failed work's fence stays recorded").isEqualTo(4);

        FenceGate nowhere = SqlFences.create().gate(TestDatabases.driverManager("jdbc:postgresql://127.0.0.1:1/none?connectTimeout=2"));
        assertThatThrownBy(() -> nowhere.admit("job", 5, () -> ran.getAndSet(true)))
                .isInstanceOf(StoreUnavailableException.class).hasMessageContaining("nothing was admitted");
        assertThat(ran).isFalse();
    }

    /** Attack finding: the hold's commit failing used to lose the fence's record, and an older fence got in after. */
    @Test
    void aGateWhoseHoldIsCutOffKeepsTheFenceRecorded() throws Exception {
        String t = fresh("postgresql", "cut");
        FenceGate gate = SqlFences.create().withTable(t).gate(TestDatabases.driverManager(url("postgresql")));
        assertThat(gate.admit("res", 6, () -> {
            try (Connection k = connect("postgresql"); Statement st = k.createStatement()) {
                st.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() "
                        + "AND state = 'idle in transaction' AND query LIKE '%" + t + "%'");
            }
            return "ran";
        })).isEqualTo("ran");
        assertThat(seen("postgresql", t, "res")).isEqualTo(6);
        AtomicBoolean ran = new AtomicBoolean();
        assertThatThrownBy(() -> gate.admit("res", 5, () -> ran.getAndSet(true))).isInstanceOf(StaleFenceException.class);
        assertThat(ran).isFalse();
    }

    @ParameterizedTest
    @ValueSource(strings = {"postgresql", "mariadb", "h2", "sqlite"})
    void aKeyThatDoesNotNameOneRowIsRefusedBeforeAnythingIsWritten(String db) throws SQLException {
        String t = "tsf_nokey_" + db;
        try (Connection c = connect(db); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + t);
            s.execute("CREATE TABLE " + t + " (name VARCHAR(20) NOT NULL, val INTEGER NOT NULL, turnstile_fence BIGINT DEFAULT 0)");
            s.execute("INSERT INTO " + t + " VALUES ('k', 0, 10)");
            s.execute("INSERT INTO " + t + " VALUES ('k', 0, 5)");
            if (db.equals("postgresql")) {
                // an index the database could not build (the duplicates) is left behind invalid: no key
                try {
                    s.execute("CREATE UNIQUE INDEX CONCURRENTLY " + t + "_name ON " + t + " (name)");
                } catch (SQLException expected) {
                    // 23505: it stays, marked invalid
                }
            }
            assertThatThrownBy(() -> SqlFences.create().updateRow(c, t, "name", "k", 7, "val = ?", 1))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("primary key or unique index on name");
            s.execute("DROP TABLE IF EXISTS " + t + "_f");
            s.execute("CREATE TABLE " + t + "_f (resource VARCHAR(255) NOT NULL, fence BIGINT NOT NULL, writes BIGINT NOT NULL)");
            s.execute("INSERT INTO " + t + "_f VALUES ('k', 10, 1)");
            s.execute("INSERT INTO " + t + "_f VALUES ('k', 5, 1)");
            c.setAutoCommit(false);
            assertThatThrownBy(() -> SqlFences.create().withTable(t + "_f").check(c, "k", 7))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("fence table");
            c.rollback();
            c.setAutoCommit(true);
            s.execute("DROP TABLE " + t + "_f");
            try (ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM " + t + " WHERE val = 1")) {
                rs.next();
                assertThat(rs.getLong(1)).isZero();
            }
            s.execute("DROP TABLE " + t);
        }
    }

    @Test
    void anUpdateATriggerSkipsIsReportedAsNotWritten() throws SQLException {
        String t = fresh("postgresql", "trig");
        try (Connection c = connect("postgresql"); Statement s = c.createStatement()) {
            s.execute("CREATE OR REPLACE FUNCTION " + t + "_skip() RETURNS trigger AS $$ BEGIN RETURN NULL; END $$ LANGUAGE plpgsql");
            s.execute("CREATE TRIGGER " + t + "_skip BEFORE UPDATE ON " + t + "_data FOR EACH ROW EXECUTE FUNCTION " + t + "_skip()");
            assertThat(SqlFences.create().updateRow(c, t + "_data", "id", 1, 3, "val = ?", 9)).isZero();
            s.execute("DROP TABLE " + t + "_data");
            s.execute("DROP FUNCTION " + t + "_skip()");
        }
    }

    @Test
    void aFenceTableWithAnAutoIncrementColumnStillJudgesRightOnMariaDb() throws SQLException {
        for (String db : List.of("mariadb", "mariadb-affected", "mysql")) {
            String t = "tsf_auto_" + db.replace('-', '_');
            try (Connection c = connect(db); Statement s = c.createStatement()) {
                s.execute("DROP TABLE IF EXISTS " + t);
                s.execute("CREATE TABLE " + t + " (id BIGINT AUTO_INCREMENT, resource VARCHAR(255) NOT NULL PRIMARY KEY, "
                        + "fence BIGINT NOT NULL, writes BIGINT NOT NULL, KEY (id))");
                s.execute("INSERT INTO " + t + " (resource, fence, writes) VALUES ('other', 5, 1), ('more', 5, 1)");
                SqlFences f = SqlFences.create().withTable(t);
                c.setAutoCommit(false);
                f.check(c, "new", 2);
                f.check(c, "new", 3);
                assertThatThrownBy(() -> f.check(c, "new", 1)).isInstanceOf(StaleFenceException.class);
                c.commit();
                c.setAutoCommit(true);
                s.execute("DROP TABLE " + t);
            }
        }
    }

    @Test
    void onSqliteAFenceKeptAsTextStillComparesAsANumber() throws SQLException {
        String t = "tsf_text_sqlite";
        try (Connection c = connect("sqlite"); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + t);
            s.execute("CREATE TABLE " + t + " (resource VARCHAR(255) PRIMARY KEY, fence VARCHAR(20) NOT NULL, writes INTEGER NOT NULL)");
            s.execute("CREATE TABLE IF NOT EXISTS " + t + "_rows (id INTEGER PRIMARY KEY, val INTEGER, turnstile_fence VARCHAR(20))");
            s.execute("INSERT OR REPLACE INTO " + t + "_rows VALUES (1, 0, '10')");
            SqlFences f = SqlFences.create().withTable(t);
            c.setAutoCommit(false);
            f.check(c, "r", 10);
            c.commit();
            assertThatThrownBy(() -> f.check(c, "r", 9)).isInstanceOf(StaleFenceException.class);
            c.rollback();
            c.setAutoCommit(true);
            assertThatThrownBy(() -> f.updateRow(c, t + "_rows", "id", 1, 9, "val = ?", 1)).isInstanceOf(StaleFenceException.class);
        }
    }

    @Test
    void aMissingFenceTableSaysHowToCreateIt() throws SQLException {
        try (Connection c = connect("postgresql")) {
            c.setAutoCommit(false);
            assertThatThrownBy(() -> SqlFences.create().withTable("tsf_never_created").check(c, "x", 1))
                    .isInstanceOf(SQLException.class).hasMessageContaining("does not exist: create it with SqlFences.createTable");
            c.rollback();
        }
    }

    /** Attack finding: at REPEATABLE READ, H2 never shows a first row committed after the snapshot; it waited 10 s for it. */
    @Test
    void onH2ARowCommittedAfterTheSnapshotIsSaidAtOnce() throws Exception {
        String t = fresh("h2", "snap");
        SqlFences f = SqlFences.create().withTable(t);
        try (Connection a = connect("h2"); Connection b = connect("h2")) {
            b.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            b.setAutoCommit(false);
            try (Statement s = b.createStatement(); ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM " + t)) {
                rs.next(); // the snapshot starts
            }
            a.setAutoCommit(false);
            f.check(a, "snap", 10);
            a.commit();
            long start = System.nanoTime();
            assertThatThrownBy(() -> f.check(b, "snap", 7)).isInstanceOf(java.sql.SQLTransientException.class)
                    .hasMessageContaining("after this transaction began");
            assertThat(System.nanoTime() - start).isLessThan(TimeUnit.SECONDS.toNanos(3));
            b.rollback();
        }
    }

    @Test
    void checkRefusesAutoCommitBecauseItWouldProtectNothing() throws SQLException {
        String t = fresh("sqlite", "auto");
        try (Connection c = connect("sqlite")) {
            assertThatThrownBy(() -> SqlFences.create().withTable(t).check(c, "x", 1))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("setAutoCommit(false)");
        }
        assertThat(seen("sqlite", t, "x")).as("nothing recorded").isEqualTo(-1);
    }

    @Test
    void badInputIsRefusedWithWhatToFix() throws SQLException {
        SqlFences f = SqlFences.create();
        assertThatThrownBy(() -> f.withTable("t; DROP TABLE x")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("plain SQL identifier");
        assertThatThrownBy(() -> f.withTable("user")).hasMessageContaining("reserved word");
        assertThatThrownBy(() -> f.withFenceColumn("a.b")).hasMessageContaining("fence column 'a.b'");
        assertThatThrownBy(() -> f.withFenceColumn("fence = 0 --")).hasMessageContaining("not a plain SQL identifier");
        try (Connection c = connect("sqlite")) {
            c.setAutoCommit(false);
            assertThatThrownBy(() -> f.check(c, "", 1)).hasMessageContaining("fenced resource: lock name is empty");
            assertThatThrownBy(() -> f.check(c, "x", 0)).hasMessageContaining("fence 0 is not positive");
            assertThatThrownBy(() -> f.check(c, "x", -3)).hasMessageContaining("fence -3 is not positive");
            assertThatThrownBy(() -> f.check(c, "x".repeat(256), 1)).hasMessageContaining("the limit is 255");
            assertThatThrownBy(() -> f.updateRow(c, "t", "id", 1, 1, " ")).hasMessageContaining("set is empty");
            assertThatThrownBy(() -> f.updateRow(c, "t", "id = 1 OR 1", 1, 1, "v = 1")).hasMessageContaining("key column");
            assertThatThrownBy(() -> f.updateRow(c, "t x", "id", 1, 1, "v = 1")).hasMessageContaining("table name");
            c.rollback();
        }
    }
}
