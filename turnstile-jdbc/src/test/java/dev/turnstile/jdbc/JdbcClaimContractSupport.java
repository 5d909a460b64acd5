package dev.turnstile.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.turnstile.claim.ClaimStore;
import dev.turnstile.claim.ClaimTable;
import dev.turnstile.testkit.ClaimStoreContract;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;

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
