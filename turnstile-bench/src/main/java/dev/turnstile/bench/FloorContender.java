package dev.turnstile.bench;

import dev.turnstile.jdbc.SqlDialect;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Base64;
import javax.sql.DataSource;

/**
 * The raw floor: exactly the statements Turnstile's JDBC dialect runs for acquire and release
 * ({@link SqlDialect#acquireStatement}, {@link SqlDialect#releaseStatement}), over plain JDBC on the
 * same pool, one borrowed connection per statement as {@code JdbcLockStore} does. Whatever Turnstile
 * costs above this is library overhead.
 */
final class FloorContender implements Contender {

    private static final long TTL_MILLIS = 30_000;
    private static final long LOCK_AT_LEAST_FOR_MILLIS = 0;
    // Same shape and length as Turnstile's default owner (host:pid:random).
    private static final String OWNER = "bench-host:" + ProcessHandle.current().pid() + ":floor0";
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();

    private final DataSource dataSource;
    private final String acquireSql;
    private final String releaseSql;

    FloorContender(DataSource dataSource, BenchDatabase db) {
        this.dataSource = dataSource;
        String table = BenchDatabase.TURNSTILE_TABLE;
        SqlDialect dialect = db == BenchDatabase.POSTGRESQL ? SqlDialect.POSTGRESQL : SqlDialect.SQLITE;
        this.acquireSql = dialect.acquireStatement(table);
        this.releaseSql = dialect.releaseStatement(table);
    }

    @Override
    public String id() {
        return "FLOOR";
    }

    @Override
    public boolean acquireRelease(String lockName) throws SQLException {
        String token = newToken();
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(acquireSql)) {
            ps.setString(1, lockName);
            ps.setString(2, OWNER);
            ps.setString(3, token);
            ps.setLong(4, TTL_MILLIS);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return false;
                }
                // Read the grant as Turnstile does, so both pay for the same result decoding.
                rs.getLong(1);
                rs.getLong(2);
                rs.getLong(3);
            }
        }
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(releaseSql)) {
            ps.setLong(1, LOCK_AT_LEAST_FOR_MILLIS);
            ps.setString(2, lockName);
            ps.setString(3, token);
            return ps.executeUpdate() == 1;
        }
    }

    /** 128 random bits from SecureRandom, as Turnstile's tokens: the floors pay the same cost. */
    static String newToken() {
        byte[] t = new byte[16];
        RANDOM.nextBytes(t);
        return B64.encodeToString(t);
    }
}
