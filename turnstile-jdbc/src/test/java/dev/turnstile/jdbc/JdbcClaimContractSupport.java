package dev.turnstile.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.turnstile.claim.Claim;
import dev.turnstile.claim.ClaimFilter;
import dev.turnstile.claim.ClaimOutcome;
import dev.turnstile.claim.ClaimStore;
import dev.turnstile.claim.ClaimTable;
import dev.turnstile.claim.TaskClaimer;
import dev.turnstile.testkit.ClaimStoreContract;
import dev.turnstile.testkit.PartitionProxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Runs the claiming contract on a JDBC URL: each client is a store over its own small pool. */
abstract class JdbcClaimContractSupport extends ClaimStoreContract {
    private final List<HikariDataSource> pools = new ArrayList<>();

    /** The database under test. */
    abstract String jdbcUrl();

    static HikariDataSource pool(String url, int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(0);
        return new HikariDataSource(config);
    }

    @Override
    protected ClaimStore newStore(ClaimTable table) {
        HikariDataSource pool = pool(jdbcUrl(), 2);
        pools.add(pool);
        return JdbcClaimStore.builder(pool, table).createTableIfMissing(true).build();
    }

    /** Through a {@link PartitionProxy} for the servers reached over TCP; null for H2 in memory and SQLite. */
    @Override
    protected Partitionable partitionableStore(ClaimTable table) {
        Matcher m = SERVER.matcher(jdbcUrl());
        if (!m.find()) {
            return null;
        }
        PartitionProxy proxy = new PartitionProxy(m.group(1), Integer.parseInt(m.group(2)));
        HikariDataSource pool = pool(m.replaceFirst("//127.0.0.1:" + proxy.port() + "/"), 2);
        pools.add(pool);
        return new Partitionable(JdbcClaimStore.builder(pool, table).createTableIfMissing(true).build(), proxy);
    }

    private static final Pattern SERVER = Pattern.compile("//([^/:?]+):(\\d+)/");

    /** Leaves updated_at out, so the table's DEFAULT gives it. */
    @Override
    protected void insertTaskWithoutUpdatedAt(ClaimTable t, String phase, String id) {
        try (Connection c = DriverManager.getConnection(jdbcUrl());
                PreparedStatement ps = c.prepareStatement("INSERT INTO " + t.table() + " (id, phase) VALUES (?, ?)")) {
            ps.setString(1, id);
            ps.setString(2, phase);
            ps.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    @DisplayName("relock of a task whose updated_at is NULL (a table of your own that allows it) waits the floor")
    void relockWithNullUpdatedAt() throws SQLException {
        ClaimTable t = freshTable();
        try (Connection c = DriverManager.getConnection(jdbcUrl()); Statement st = c.createStatement()) {
            // MariaDB's default collation compares case-insensitively, which the store refuses for the id
            String id = jdbcUrl().contains(":mariadb:") || jdbcUrl().contains(":mysql:")
                    ? "VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin" : "VARCHAR(64)";
            st.execute("CREATE TABLE " + t.table() + " (id " + id + " NOT NULL PRIMARY KEY, phase VARCHAR(64) NOT NULL, "
                    + "locked_at BIGINT NOT NULL DEFAULT 0, updated_at BIGINT, claim_version BIGINT NOT NULL DEFAULT 0)");
            st.execute("CREATE INDEX " + t.table() + "_idx ON " + t.table() + " (phase, locked_at, updated_at)");
            st.execute("INSERT INTO " + t.table() + " (id, phase, updated_at) VALUES ('n', 'Waiting', NULL)");
        }
        HikariDataSource pool = pool(jdbcUrl(), 2);
        pools.add(pool);
        Duration timeout = Duration.ofMinutes(1);
        Duration floor = Duration.ofSeconds(2);
        try (TaskClaimer c = TaskClaimer.builder(JdbcClaimStore.builder(pool, t).build()).lockTimeout(timeout)
                .relockFloor(floor).build()) {
            Claim claim = c.claimNext(ClaimFilter.where("phase", "Waiting")).orElseThrow();
            long before = System.currentTimeMillis();
            assertThat(claim.relock()).isEqualTo(ClaimOutcome.APPLIED);
            long after = System.currentTimeMillis();
            long due = lockedAtOf(t, "n") + timeout.toMillis();
            assertThat(due).as("due time (floor %s ms)", floor.toMillis())
                    .isBetween(before + floor.toMillis() - 1000, after + floor.toMillis() + 1000);
        }
    }

    @AfterEach
    void closePools() {
        pools.forEach(HikariDataSource::close);
        pools.clear();
    }

    @Override
    protected void insertTasks(ClaimTable t, String phase, long updatedAtMillis, List<String> ids) {
        try (Connection c = DriverManager.getConnection(jdbcUrl());
                PreparedStatement ps = c.prepareStatement("INSERT INTO " + t.table()
                        + " (id, phase, locked_at, updated_at, claim_version) VALUES (?, ?, 0, ?, 0)")) {
            for (String id : ids) {
                ps.setString(1, id);
                ps.setString(2, phase);
                ps.setLong(3, updatedAtMillis);
                ps.executeUpdate();
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    protected String phaseOf(ClaimTable t, String id) {
        return (String) read("SELECT phase FROM " + t.table() + " WHERE id = ?", id);
    }

    @Override
    protected long lockedAtOf(ClaimTable t, String id) {
        return ((Number) read("SELECT locked_at FROM " + t.table() + " WHERE id = ?", id)).longValue();
    }

    private Object read(String sql, String id) {
        try (Connection c = DriverManager.getConnection(jdbcUrl()); PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw new IllegalStateException("no task " + id);
                }
                return rs.getObject(1);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    protected void dropTable(ClaimTable t) {
        try (Connection c = DriverManager.getConnection(jdbcUrl()); Statement st = c.createStatement()) {
            st.execute("DROP TABLE IF EXISTS " + t.table());
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
