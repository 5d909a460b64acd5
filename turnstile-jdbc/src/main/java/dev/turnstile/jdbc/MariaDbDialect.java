package dev.turnstile.jdbc;

import dev.turnstile.claim.ClaimFilter;
import dev.turnstile.claim.ClaimedRow;
import dev.turnstile.spi.AcquireRequest;
import dev.turnstile.spi.Grant;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * MariaDB and MySQL: a conditional {@code INSERT … ON DUPLICATE KEY UPDATE}, then a read by token.
 * MySQL has no RETURNING, and the affected-row count cannot tell a fresh insert from a refused
 * takeover when the driver reports found rows, so the grant is read back by its token. Works with
 * the MariaDB and the MySQL drivers. All of this family's SQL is here: the lock store's, and in
 * {@link Claims} work claiming's (DDL: {@code schema-mariadb.sql}, {@code claim-schema-mariadb.sql}).
 */
final class MariaDbDialect extends Dialect {

    @Override
    public String id() {
        return "mariadb";
    }

    @Override
    String now() {
        // UTC_TIMESTAMP does not depend on the session time zone, so no DST fold can move the clock.
        return "(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(3)) DIV 1000)";
    }

    @Override
    String acquireSql() {
        // MySQL applies assignments left to right: expires_at, which the condition reads, goes last.
        return """
                INSERT INTO %1$s (name, owner, token, fence, acquired_at, expires_at)
                VALUES (?, ?, ?, 0, %2$s, %2$s + ?)
                ON DUPLICATE KEY UPDATE
                  owner       = IF(expires_at <= VALUES(acquired_at), VALUES(owner), owner),
                  token       = IF(expires_at <= VALUES(acquired_at), VALUES(token), token),
                  fence       = IF(expires_at <= VALUES(acquired_at) AND fence <> 0, fence + 1, fence),
                  acquired_at = IF(expires_at <= VALUES(acquired_at), VALUES(acquired_at), acquired_at),
                  expires_at  = IF(expires_at <= VALUES(acquired_at), VALUES(expires_at), expires_at)""";
    }

    private static final String READ_BACK = "SELECT fence, acquired_at, expires_at FROM %1$s WHERE name = ? AND token = ?";

    @Override
    Optional<Grant> acquire(Connection c, Statements sql, AcquireRequest r) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.acquire())) {
            bindAcquire(ps, r);
            ps.executeUpdate();
        }
        try (PreparedStatement ps = c.prepareStatement(sql(READ_BACK, sql.table()))) {
            ps.setString(1, r.name());
            ps.setString(2, r.token());
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(grant(rs)) : Optional.empty();
            }
        }
    }

    /** No ON CONFLICT: IGNORE skips the duplicate key (and only that can happen with these values). */
    @Override
    String insertFloorSql() {
        return "INSERT IGNORE INTO %1$s (name, owner, token, fence, acquired_at, expires_at) "
                + "VALUES (?, '', '', 0, 9223372036854775807, 9223372036854775807)";
    }

    @Override
    boolean isMissingTable(SQLException e) {
        return "42S02".equals(e.getSQLState()) || e.getErrorCode() == 1146;
    }

    @Override
    boolean isTransientConflict(SQLException e) {
        return super.isTransientConflict(e) || chain(e).stream().anyMatch(x -> x.getErrorCode() == 1213);
    }

    @Override
    boolean isLockWaitTimeout(SQLException e) {
        return chain(e).stream().anyMatch(x -> x.getErrorCode() == 1205);
    }

    /** 1021 ER_DISK_FULL, 1114 ER_RECORD_FILE_FULL ("The table is full"), or errno 28 in a file error. */
    @Override
    boolean isDiskFull(SQLException e) {
        return super.isDiskFull(e) || chain(e).stream().anyMatch(x -> x.getErrorCode() == 1021 || x.getErrorCode() == 1114
                || (x.getMessage() != null && x.getMessage().contains("Errcode: 28")));
    }

    @Override
    boolean isLostInsertRace(SQLException e) {
        return false; // the upsert handles the duplicate key itself
    }

    /**
     * MariaDB (10.6 or later) and MySQL 8: neither has {@code UPDATE … RETURNING}, and neither allows
     * {@code SKIP LOCKED} in an UPDATE's subquery, so a claim is a short transaction: select the due
     * rows {@code FOR UPDATE SKIP LOCKED} (with the database's now), update exactly those by key, commit.
     * Three round trips, no waiting on rows other workers are claiming, and the returned version is
     * the selected one plus one because the rows stay locked until the commit.
     */
    static final class Claims extends ClaimSql {
        private static final Dialect DIALECT = (Dialect) SqlDialect.MARIADB;

        @Override
        Dialect dialect() {
            return DIALECT;
        }

        /** Step 1 of the claim: parameters (filter values…, lock timeout ms, limit); returns ({id}, {version}, now). */
        @Override
        String claimSql() {
            return """
                    SELECT {id}, {version}, {now} FROM {table}
                     WHERE {filter}{lockedAt} <= {now} - ?
                     ORDER BY {lockedAt}, {updatedAt}
                     LIMIT ? FOR UPDATE SKIP LOCKED""";
        }

        /** MariaDB's "/" gives a decimal: DIV keeps integer milliseconds. */
        @Override
        String relockSql() {
            return """
                    UPDATE {table} SET {lockedAt} = {now} - ? + LEAST(?, GREATEST(?, %s))
                     WHERE {id} = ? AND {version} = ?""".formatted(waitedTenth("DIV"));
        }

        @Override
        List<ClaimedRow> claim(Connection c, dev.turnstile.claim.ClaimTable t, String sql, ClaimFilter filter, long timeoutMillis,
                int max) throws SQLException {
            return claimInTwoSteps(c, t, sql, filter, timeoutMillis, max);
        }

        @Override
        String filterColumnType() {
            return "VARCHAR(64)";
        }
    }
}
