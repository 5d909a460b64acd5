package dev.turnstile.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.turnstile.claim.Claim;
import dev.turnstile.claim.ClaimFilter;
import dev.turnstile.claim.ClaimTable;
import dev.turnstile.claim.TaskClaimer;
import com.zaxxer.hikari.HikariDataSource;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
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
                    ps.setString(2, ClaimWorkerProcess.PHASES.get(0));
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
                workers.add(ClaimWorkerProcess.start(List.of("work", url, t.table(), dir.toString(), "30000"),
                        dir.resolve("worker-" + w + ".log")));
            }
            for (Process p : workers) {
                assertThat(p.waitFor(90, TimeUnit.SECONDS)).as("worker finished").isTrue();
                assertThat(p.exitValue()).as("worker exit code; logs:\n%s", logs()).isZero();
            }
            Map<String, Integer> steps = new HashMap<>();
            try (Stream<Path> files = Files.list(dir)) {
                for (Path f : files.filter(p -> p.getFileName().toString().startsWith("steps-")).toList()) {
                    for (String line : Files.readAllLines(f)) {
                        steps.merge(line, 1, Integer::sum);
                    }
                }
            }
            assertThat(steps).hasSize(tasks * 3);
            assertThat(steps.values()).allMatch(n -> n == 1);
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
            Process holder = ClaimWorkerProcess.start(List.of("hold", url, t.table(), dir.toString(), Long.toString(timeoutMs)), log);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!Files.readString(log).contains("CLAIMED") && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            String line = Files.readString(log).lines().filter(l -> l.startsWith("CLAIMED")).findFirst().orElseThrow();
            long killedAt = System.nanoTime();
            holder.destroyForcibly(); // SIGKILL
            assertThat(holder.waitFor(10, TimeUnit.SECONDS)).isTrue();
            long heldVersion = Long.parseLong(line.split(" ")[2]);
            assertThat(claimer.claimNext(ClaimFilter.where("phase", ClaimWorkerProcess.PHASES.get(0))))
                    .as("still claimed right after the kill").isEmpty();
            Claim resumed = null;
            while (resumed == null && System.nanoTime() - killedAt < TimeUnit.MILLISECONDS.toNanos(timeoutMs * 5)) {
                resumed = claimer.claimNext(ClaimFilter.where("phase", ClaimWorkerProcess.PHASES.get(0))).orElse(null);
                Thread.sleep(50);
            }
            assertThat(resumed).as("resumed after the timeout").isNotNull();
            assertThat(resumed.version()).isGreaterThan(heldVersion);
            assertThat(resumed.moveTo("DeletingRecords")).isEqualTo(dev.turnstile.claim.ClaimOutcome.APPLIED);
        } finally {
            drop(url, t);
        }
    }

    private String logs() throws Exception {
        StringBuilder b = new StringBuilder();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".log")).toList()) {
                b.append("--- ").append(f.getFileName()).append('\n').append(Files.readString(f));
            }
        }
        return b.toString();
    }
}
