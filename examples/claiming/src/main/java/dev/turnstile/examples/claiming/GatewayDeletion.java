package dev.turnstile.examples.claiming;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.turnstile.claim.Claim;
import dev.turnstile.claim.ClaimFilter;
import dev.turnstile.claim.ClaimOutcome;
import dev.turnstile.claim.ClaimStore;
import dev.turnstile.claim.ClaimTable;
import dev.turnstile.claim.TaskClaimer;
import dev.turnstile.jdbc.JdbcClaimStore;
import dev.turnstile.jdbc.SqlDialect;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A gateway's deletion in stages, worked by several processes at once. Every worker ticks, claims
 * due gateways phase by phase, does one step and moves the gateway on:
 *
 * <pre>
 * ReleasingResources --(its IP is free; else relock and retry with backoff)--&gt; DeletingRecords
 * DeletingRecords    --(its records deleted, fenced by the claim version)--&gt;    MarkingDeleted
 * MarkingDeleted     --&gt; Deleted
 * </pre>
 *
 * <p>On MongoDB ({@code mongodb://} URLs, {@link MongoGateways}) the same state machine runs over a
 * collection through {@code MongoClaimStore}.
 *
 * <p>{@code setup URL N} creates the tables and N gateways; {@code worker URL NAME} works until
 * nothing has been due for a few seconds; {@code report URL} prints the phases.
 */
public final class GatewayDeletion {
    static final ClaimTable GATEWAYS = ClaimTable.builder("example_gateways").build();
    static final List<String> PHASES = List.of("ReleasingResources", "DeletingRecords", "MarkingDeleted", "Deleted");

    private GatewayDeletion() {}

    /**
     * Runs one command.
     *
     * @param args {@code setup URL N}, {@code worker URL NAME} or {@code report URL}; the URL is a
     *     JDBC URL or a {@code mongodb://host:port/database} connection string
     * @throws Exception on errors
     */
    public static void main(String[] args) throws Exception {
        String url = args[1];
        if (url.startsWith("mongodb://") || url.startsWith("mongodb+srv://")) {
            MongoGateways.main(args[0], url, args.length > 2 ? args[2] : null);
            return;
        }
        try (HikariDataSource db = pool(url)) {
            switch (args[0]) {
                case "setup" -> setup(db, url, Integer.parseInt(args[2]));
                case "worker" -> work(JdbcClaimStore.builder(db, GATEWAYS).build(), args[2], gateway -> deleteRecords(db, gateway));
                case "report" -> report(db);
                default -> throw new IllegalArgumentException("usage: setup URL N | worker URL NAME | report URL");
            }
        }
    }

    /** The one store-specific step: delete a gateway's records, fenced by its claim. */
    interface RecordDeleter {
        void deleteRecords(Claim gateway) throws Exception;
    }

    /** The state machine, the same on every store. */
    static void work(ClaimStore store, String name, RecordDeleter records) throws Exception {
        try (TaskClaimer claimer = TaskClaimer.builder(store)
                .lockTimeout(Duration.ofSeconds(30))      // a worker that dies frees its gateways after 30 s
                .relockFloor(Duration.ofMillis(300))
                .build()) {
            long idleSince = System.nanoTime();
            while (System.nanoTime() - idleSince < Duration.ofSeconds(4).toNanos()) {   // one "tick"
                for (int p = 0; p < PHASES.size() - 1; p++) {
                    for (Claim gateway : claimer.claim(ClaimFilter.where("phase", PHASES.get(p)), 3)) {
                        idleSince = System.nanoTime();
                        try (gateway) {                   // an exception relocks: retried after the backoff
                            step(records, name, gateway, p);
                        }
                    }
                }
                Thread.sleep(100);
            }
        }
    }

    /** One step of one gateway; the claim's version fences every write. */
    private static void step(RecordDeleter records, String worker, Claim gateway, int phase) throws Exception {
        String from = PHASES.get(phase);
        String to = PHASES.get(phase + 1);
        switch (from) {
            case "ReleasingResources" -> {
                if (ThreadLocalRandom.current().nextInt(3) == 0) {       // the IP pool says "not yet"
                    gateway.relock();
                    System.out.printf("%-9s %s %-18s waiting on the IP pool: relocked (v%d)%n", worker, gateway.id(), from,
                            gateway.version());
                    return;
                }
            }
            case "DeletingRecords" -> records.deleteRecords(gateway);
            default -> { }
        }
        ClaimOutcome outcome = gateway.moveTo(to);
        System.out.printf("%-9s %s %-18s -> %-15s %s (v%d)%n", worker, gateway.id(), from, to, outcome, gateway.version());
    }

    /** Our own write, fenced like the claim's: it only happens while this claim still holds the gateway. */
    private static void deleteRecords(HikariDataSource db, Claim gateway) throws SQLException {
        try (Connection c = db.getConnection(); PreparedStatement ps = c.prepareStatement(
                "DELETE FROM example_gateway_records WHERE gateway_id = ? AND EXISTS "
                        + "(SELECT 1 FROM example_gateways WHERE id = ? AND claim_version = ?)")) {
            ps.setString(1, gateway.id());
            ps.setString(2, gateway.id());
            ps.setLong(3, gateway.version());
            ps.executeUpdate();
        }
    }

    static void setup(HikariDataSource db, String url, int n) throws SQLException {
        try (Connection c = db.getConnection(); Statement st = c.createStatement()) {
            st.execute("DROP TABLE IF EXISTS example_gateways");
            st.execute("DROP TABLE IF EXISTS example_gateway_records");
            // The shipped DDL: the table with its claiming index (JdbcClaimStore.createTable prints it).
            for (String ddl : JdbcClaimStore.createTable(SqlDialect.fromJdbcUrl(url), GATEWAYS).split(";\\s*\n")) {
                String sql = ddl.lines().filter(l -> !l.strip().startsWith("--")).reduce("", (a, b) -> a + b + "\n");
                if (!sql.isBlank()) {
                    st.execute(sql);
                }
            }
            st.execute("CREATE TABLE example_gateway_records (gateway_id VARCHAR(64) NOT NULL, n INTEGER NOT NULL)");
            try (PreparedStatement gw = c.prepareStatement(
                    "INSERT INTO example_gateways (id, phase, locked_at, updated_at, claim_version) VALUES (?, ?, 0, ?, 0)");
                    PreparedStatement rec = c.prepareStatement("INSERT INTO example_gateway_records VALUES (?, ?)")) {
                for (int i = 1; i <= n; i++) {
                    String id = String.format("gw-%02d", i);
                    gw.setString(1, id);
                    gw.setString(2, PHASES.get(0));
                    gw.setLong(3, System.currentTimeMillis());
                    gw.executeUpdate();
                    for (int r = 0; r < 3; r++) {
                        rec.setString(1, id);
                        rec.setInt(2, r);
                        rec.executeUpdate();
                    }
                }
            }
        }
        System.out.println("created " + n + " gateways in phase " + PHASES.get(0));
    }

    static void report(HikariDataSource db) throws SQLException {
        try (Connection c = db.getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT phase, COUNT(*) FROM example_gateways GROUP BY phase ORDER BY phase")) {
            while (rs.next()) {
                System.out.println("phase " + rs.getString(1) + ": " + rs.getInt(2) + " gateways");
            }
        }
        try (Connection c = db.getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM example_gateway_records")) {
            rs.next();
            System.out.println("records left: " + rs.getInt(1));
        }
    }

    private static HikariDataSource pool(String url) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(2);
        return new HikariDataSource(config);
    }
}
