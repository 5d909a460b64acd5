package dev.turnstile.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.turnstile.Lease;
import dev.turnstile.LockOptions;
import dev.turnstile.Turnstile;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Pruning unused names on the real databases (issue 24): what goes, what stays, and the fences after. */
@Timeout(120)
class JdbcPruneTest {
    private static final LockOptions TEN_SECONDS = LockOptions.lockAtMostFor(Duration.ofSeconds(10));

    private static String url(String db) {
        return switch (db) {
            case "postgresql" -> TestDatabases.POSTGRES;
            case "mariadb" -> TestDatabases.MARIADB;
            case "h2" -> "jdbc:h2:mem:prune;DB_CLOSE_DELAY=-1";
            default -> TestDatabases.SQLITE;
        };
    }

    private static String freshTable(String db) throws SQLException {
        String table = "tsp_locks_" + db;
        try (Connection c = DriverManager.getConnection(url(db)); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + table);
        }
        return table;
    }

    private static Turnstile turnstile(String db, String table) {
        return Turnstile.builder(JdbcLockStore.builder(TestDatabases.driverManager(url(db))).tableName(table)
                .createTableIfMissing(true).build()).build();
    }

    private static long rows(String db, String table, String name) throws SQLException {
        try (Connection c = DriverManager.getConnection(url(db));
                PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM " + table + " WHERE name = ?")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    private static void sql(String db, String statement) throws SQLException {
        try (Connection c = DriverManager.getConnection(url(db)); Statement s = c.createStatement()) {
            s.execute(statement);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"postgresql", "mariadb", "h2", "sqlite"})
    void aNameFreeForThePeriodGoesAndComesBackWithAHigherFence(String db) throws Exception {
        String table = freshTable(db);
        try (Turnstile t = turnstile(db, table)) {
            Lease first = t.tryAcquire("gone", TEN_SECONDS).orElseThrow();
            assertThat(first.fence()).as("a name's first fence is the database's clock").isEqualTo(first.acquiredAt().toEpochMilli());
            first.release();
            Lease second = t.tryAcquire("gone", TEN_SECONDS).orElseThrow();
            assertThat(second.fence()).as("a kept row counts up").isEqualTo(first.fence() + 1);
            second.release();
            Thread.sleep(300);
            assertThat(t.pruneUnused(Duration.ofMillis(100))).isEqualTo(1);
            assertThat(rows(db, table, "gone")).isZero();
            Lease third = t.tryAcquire("gone", TEN_SECONDS).orElseThrow();
            assertThat(third.fence()).isGreaterThan(second.fence()).isEqualTo(third.acquiredAt().toEpochMilli());
            third.release();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"postgresql", "mariadb", "h2"})
    void aNameReleasedWithinThePeriodStays(String db) throws Exception {
        String table = freshTable(db);
        try (Turnstile t = turnstile(db, table)) {
            t.tryAcquire("recent", TEN_SECONDS).orElseThrow().release();
            Thread.sleep(300);
            assertThat(t.pruneUnused(Duration.ofMinutes(1))).isZero();
            assertThat(rows(db, table, "recent")).isEqualTo(1);
        }
    }

    /** Fences counted up faster than the clock ran: the row stays until the clock has passed them by the period. */
    @ParameterizedTest
    @ValueSource(strings = {"postgresql", "mariadb", "h2", "sqlite"})
    void aNameWhoseFenceIsAheadOfTheClockStays(String db) throws Exception {
        String table = freshTable(db);
        try (Turnstile t = turnstile(db, table)) {
            Lease lease = t.tryAcquire("ahead", TEN_SECONDS).orElseThrow();
            long ahead = lease.fence() + 600_000;
            lease.release();
            sql(db, "UPDATE " + table + " SET fence = " + ahead + " WHERE name = 'ahead'");
            Thread.sleep(300);
            assertThat(t.pruneUnused(Duration.ofMillis(100))).isZero();
            assertThat(rows(db, table, "ahead")).isEqualTo(1);
            assertThat(t.tryAcquire("ahead", TEN_SECONDS).orElseThrow().fence()).isEqualTo(ahead + 1);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"postgresql", "mariadb", "h2", "sqlite"})
    void manyNamesGoInBatchesAndHeldOnesStay(String db) throws Exception {
        String table = freshTable(db);
        try (Turnstile t = turnstile(db, table)) {
            Lease held = t.tryAcquire("held", TEN_SECONDS).orElseThrow();
            try (Connection c = DriverManager.getConnection(url(db))) {
                c.setAutoCommit(false);
                try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + table
                        + " (name, owner, token, fence, acquired_at, expires_at) VALUES (?, 'old', 'tok', 5, 1000, 2000)")) {
                    for (int i = 0; i < 1_234; i++) {
                        ps.setString(1, "tenant-" + i);
                        ps.addBatch();
                    }
                    ps.executeBatch();
                }
                c.commit();
            }
            assertThat(t.pruneUnused(Duration.ofMillis(100))).isEqualTo(1_234);
            assertThat(held.isHeld()).isTrue();
            assertThat(rows(db, table, "held")).isEqualTo(1);
            assertThat(t.tryAcquire("tenant-7", TEN_SECONDS).orElseThrow().fence()).isGreaterThan(5);
            held.release();
        }
    }
}
