package dev.turnstile.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.turnstile.claim.Claim;
import dev.turnstile.claim.ClaimTable;
import dev.turnstile.claim.TaskClaimer;
import dev.turnstile.testkit.ClaimWorker;
import com.zaxxer.hikari.HikariDataSource;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Claiming across JVMs: several worker processes on one table, and a worker killed with SIGKILL. */
class JdbcClaimProcessTest {
    @TempDir
    Path dir;

    private static String url(String db) {
        return switch (db) {
            case "postgresql" -> TestDatabases.POSTGRES;
            case "mariadb" -> TestDatabases.MARIADB;
            case "sqlite" -> SqliteClaimTest.URL;
            default -> throw new IllegalArgumentException(db);
        };
    }

    private static ClaimTable createTable(String url, int tasks) throws Exception {
        ClaimTable t = ClaimTable.builder("claimp_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12)).build();
        try (Connection c = DriverManager.getConnection(url); Statement st = c.createStatement()) {
            for (String ddl : JdbcClaimStore.statements(JdbcClaimStore.createTable(SqlDialect.fromJdbcUrl(url), t))) {
                st.execute(ddl);
            }
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + t.table()
                    + " (id, phase, locked_at, updated_at, claim_version) VALUES (?, ?, 0, ?, 0)")) {
                for (int i = 0; i < tasks; i++) {
                    ps.setString(1, "task" + i);
                    ps.setString(2, ClaimWorker.PHASES.get(0));
                    ps.setLong(3, System.currentTimeMillis());
                    ps.executeUpdate();
                }
            }
        }
        return t;
    }

    private static void drop(String url, ClaimTable t) throws Exception {
        try (Connection c = DriverManager.getConnection(url); Statement st = c.createStatement()) {
            st.execute("DROP TABLE IF EXISTS " + t.table());
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"postgresql", "mariadb", "sqlite"})
    void workerProcessesNeverOverlap(String db) throws Exception {
        String url = url(db);
        int tasks = 40;
        ClaimTable t = createTable(url, tasks);
        try {
            List<Process> workers = new ArrayList<>();
            for (int w = 0; w < 3; w++) {
                workers.add(ClaimWorker.start(ClaimWorkerProcess.class, List.of("work", url, t.table(), dir.toString(), "30000"),
                        dir.resolve("worker-" + w + ".log")));
            }
            ClaimWorker.assertEveryStepOnce(workers, dir, tasks);
            try (Connection c = DriverManager.getConnection(url); Statement st = c.createStatement();
                    ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM " + t.table() + " WHERE phase = 'Deleted'")) {
                rs.next();
                assertThat(rs.getInt(1)).isEqualTo(tasks);
            }
        } finally {
            drop(url, t);
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"postgresql", "mariadb", "sqlite"})
    void sigkilledWorkersTaskIsResumedAfterTheTimeout(String db) throws Exception {
        String url = url(db);
        ClaimTable t = createTable(url, 1);
        long timeoutMs = 2000;
        try (HikariDataSource pool = JdbcClaimContractSupport.pool(url, 2);
                TaskClaimer claimer = TaskClaimer.builder(JdbcClaimStore.builder(pool, t).build())
                        .lockTimeout(Duration.ofMillis(timeoutMs)).build()) {
            Path log = dir.resolve("holder.log");
            Process holder = ClaimWorker.start(ClaimWorkerProcess.class,
                    List.of("hold", url, t.table(), dir.toString(), Long.toString(timeoutMs)), log);
            Claim resumed = ClaimWorker.killAndResume(holder, log, claimer);
            assertThat(resumed.moveTo("DeletingRecords")).isEqualTo(dev.turnstile.claim.ClaimOutcome.APPLIED);
        } finally {
            drop(url, t);
        }
    }
}
