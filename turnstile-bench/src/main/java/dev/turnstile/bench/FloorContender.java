package dev.turnstile.bench;

import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Base64;
import javax.sql.DataSource;

/**
 * The raw floor: exactly the statements Turnstile's JDBC dialect runs for acquire and release,
 * over plain JDBC on the same pool, one borrowed connection per statement as
 * {@code JdbcLockStore} does. Whatever Turnstile costs above this is library overhead.
 *
 * <p>The SQL is copied, not shared, because the dialect classes are package-private in
 * turnstile-jdbc; keep it in step with {@code PostgresDialect}, {@code SqliteDialect} and
 * {@code Dialect.releaseSql()}.
 */
final class FloorContender implements Contender {

    // From PostgresDialect.now() / acquireSql(); %1$s = table, %2$s = now in epoch ms.
    private static final String PG_NOW = "(extract(epoch from clock_timestamp()) * 1000)::bigint";
    private static final String PG_ACQUIRE = """
            INSERT INTO %1$s AS t (name, owner, token, fence, acquired_at, expires_at)
            VALUES (?, ?, ?, 1, %2$s, %2$s + ?)
            ON CONFLICT (name) DO UPDATE
               SET owner = EXCLUDED.owner, token = EXCLUDED.token, fence = t.fence + 1,
                   acquired_at = EXCLUDED.acquired_at, expires_at = EXCLUDED.expires_at
             WHERE t.expires_at <= EXCLUDED.acquired_at
            RETURNING fence, acquired_at, expires_at""";
    // From Dialect.releaseSql().
    private static final String PG_RELEASE = """
            UPDATE %1$s SET expires_at = GREATEST(acquired_at + ?, %2$s)
             WHERE name = ? AND token = ? AND expires_at > %2$s""";

    // From SqliteDialect.now() / acquireSql() / releaseSql().
    private static final String SQLITE_NOW = "CAST(unixepoch('subsec') * 1000 AS INTEGER)";
    private static final String SQLITE_ACQUIRE = """
            INSERT INTO %1$s (name, owner, token, fence, acquired_at, expires_at)
            VALUES (?, ?, ?, 1, %2$s, %2$s + ?)
            ON CONFLICT (name) DO UPDATE
               SET owner = excluded.owner, token = excluded.token, fence = %1$s.fence + 1,
                   acquired_at = excluded.acquired_at, expires_at = excluded.expires_at
             WHERE %1$s.expires_at <= excluded.acquired_at
            RETURNING fence, acquired_at, expires_at""";
    private static final String SQLITE_RELEASE = """
            UPDATE %1$s SET expires_at = MAX(acquired_at + ?, %2$s)
             WHERE name = ? AND token = ? AND expires_at > %2$s""";

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
        if (db == BenchDatabase.POSTGRESQL) {
            this.acquireSql = PG_ACQUIRE.formatted(table, PG_NOW);
            this.releaseSql = PG_RELEASE.formatted(table, PG_NOW);
        } else {
            this.acquireSql = SQLITE_ACQUIRE.formatted(table, SQLITE_NOW);
            this.releaseSql = SQLITE_RELEASE.formatted(table, SQLITE_NOW);
        }
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
