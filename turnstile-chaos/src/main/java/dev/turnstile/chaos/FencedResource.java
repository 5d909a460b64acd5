package dev.turnstile.chaos;

import dev.turnstile.StaleFenceException;
import dev.turnstile.jdbc.SqlDialect;
import dev.turnstile.jdbc.SqlFences;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * The protected resource: a PostgreSQL resource fenced by the shipped helper, {@link SqlFences#check}
 * (the fence table {@code chaos_fences}), and an append-only log of the writes it admitted,
 * written in the same transaction, with a serial id that gives their order. So every chaos cell
 * tests the helper users get, not a statement of the harness's own.
 *
 * <p>The helper admits a fence equal to the highest (a holder writes twice under one fence, early
 * and late in its hold, and its second write must pass) while every write of an older holder
 * fails. Two different holders never share a fence on a store with safe fences, and the checker
 * flags it when they do.
 */
public final class FencedResource implements AutoCloseable {
    /** The resource database: the machine's PostgreSQL, reached directly (never through a fault proxy). */
    public static final String DEFAULT_URL = System.getProperty("turnstile.chaos.resource",
            "jdbc:postgresql://127.0.0.1:5432/test?user=postgres");

    static final SqlFences FENCES = SqlFences.create().withTable("chaos_fences");
    static final String LOG = "INSERT INTO chaos_log (resource_id, fence, worker, phase, nanos) VALUES (?, ?, ?, ?, ?)";

    /**
     * One accepted write, as the resource logged it.
     *
     * @param seq the serial id: commit order
     * @param fence the writer's fence
     * @param worker the writer
     * @param phase 1 for the write right after acquire, 2 for the one late in the hold
     * @param nanos the writer's monotonic clock when it wrote
     */
    public record LogRow(long seq, long fence, int worker, int phase, long nanos) {}

    private final String url;
    private final String resourceId;
    private final int worker;
    private Connection connection;

    /**
     * A worker's handle on the resource; connects on first write and again after an error.
     *
     * @param url the PostgreSQL JDBC URL
     * @param resourceId the row this run writes
     * @param worker the writer's id
     */
    public FencedResource(String url, String resourceId, int worker) {
        this.url = withTimeouts(url);
        this.resourceId = resourceId;
        this.worker = worker;
    }

    /** Bounded connects and reads: a resource write must never hang a worker for good. */
    static String withTimeouts(String url) {
        String u = url;
        if (!u.contains("connectTimeout=")) {
            u += (u.contains("?") ? "&" : "?") + "connectTimeout=3";
        }
        if (!u.contains("socketTimeout=")) {
            u += "&socketTimeout=15";
        }
        return u;
    }

    /**
     * Creates the tables if missing and (re)sets this run's row to fence 0 with an empty log.
     *
     * @param url the PostgreSQL JDBC URL
     * @param resourceId the row
     * @throws SQLException if the database refuses
     */
    public static void setUp(String url, String resourceId) throws SQLException {
        try (Connection c = DriverManager.getConnection(withTimeouts(url)); Statement st = c.createStatement()) {
            createIfMissing(st, FENCES.createTable(SqlDialect.POSTGRESQL));
            createIfMissing(st, "CREATE TABLE IF NOT EXISTS chaos_log (seq bigserial PRIMARY KEY, resource_id text NOT NULL, "
                    + "fence bigint NOT NULL, worker int NOT NULL, phase int NOT NULL, nanos bigint NOT NULL)");
            createIfMissing(st, "CREATE INDEX IF NOT EXISTS chaos_log_resource ON chaos_log (resource_id, seq)");
            try (PreparedStatement ps = c.prepareStatement("DELETE FROM chaos_fences WHERE resource = ?")) {
                ps.setString(1, resourceId);
                ps.executeUpdate();
            }
            try (PreparedStatement ps = c.prepareStatement("DELETE FROM chaos_log WHERE resource_id = ?")) {
                ps.setString(1, resourceId);
                ps.executeUpdate();
            }
        }
    }

    private static void createIfMissing(Statement st, String ddl) throws SQLException {
        try {
            st.execute(ddl);
        } catch (SQLException e) {
            // Two runs creating at once race in the catalog (23505/42P07): the table exists, which is all we need.
            if (!"23505".equals(e.getSQLState()) && !"42P07".equals(e.getSQLState())) {
                throw e;
            }
        }
    }

    /**
     * Writes under a fence: one transaction that {@link SqlFences#check checks} the fence (refused
     * if older than the highest admitted) and logs the write if it was admitted.
     *
     * @param fence the writer's fence
     * @param phase 1 or 2
     * @return {@link Event#ACCEPTED} or {@link Event#REJECTED}
     * @throws SQLException if the database cannot be reached; the outcome is then unknown
     */
    public String write(long fence, int phase) throws SQLException {
        Connection c = connection();
        try {
            try {
                FENCES.check(c, resourceId, fence);
            } catch (StaleFenceException e) {
                c.rollback();
                return Event.REJECTED;
            }
            try (PreparedStatement ps = c.prepareStatement(LOG)) {
                ps.setString(1, resourceId);
                ps.setLong(2, fence);
                ps.setInt(3, worker);
                ps.setInt(4, phase);
                ps.setLong(5, System.nanoTime());
                ps.executeUpdate();
            }
            c.commit();
            return Event.ACCEPTED;
        } catch (SQLException e) {
            drop();
            throw e;
        }
    }

    private Connection connection() throws SQLException {
        if (connection == null) {
            connection = DriverManager.getConnection(url);
            connection.setAutoCommit(false);
        }
        return connection;
    }

    private void drop() {
        if (connection != null) {
            try {
                connection.close();
            } catch (SQLException ignored) {
                // it is broken anyway
            }
            connection = null;
        }
    }

    /**
     * Reads the accepted writes of a run in commit order.
     *
     * @param url the PostgreSQL JDBC URL
     * @param resourceId the row
     * @return the log
     * @throws SQLException if the database refuses
     */
    public static List<LogRow> readLog(String url, String resourceId) throws SQLException {
        List<LogRow> rows = new ArrayList<>();
        try (Connection c = DriverManager.getConnection(withTimeouts(url));
                PreparedStatement ps = c.prepareStatement(
                        "SELECT seq, fence, worker, phase, nanos FROM chaos_log WHERE resource_id = ? ORDER BY seq")) {
            ps.setString(1, resourceId);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    rows.add(new LogRow(rs.getLong(1), rs.getLong(2), rs.getInt(3), rs.getInt(4), rs.getLong(5)));
                }
            }
        }
        return rows;
    }

    @Override
    public void close() {
        drop();
    }
}
