package dev.turnstile.jdbc;

import dev.turnstile.claim.ClaimFilter;
import dev.turnstile.claim.ClaimedRow;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * MariaDB (10.6 or later) and MySQL 8: neither has {@code UPDATE … RETURNING}, and neither allows
 * {@code SKIP LOCKED} in an UPDATE's subquery, so a claim is a short transaction: select the due
 * rows {@code FOR UPDATE SKIP LOCKED} (with the database's now), update exactly those by key, commit.
 * Three round trips, no waiting on rows other workers are claiming, and the returned version is
 * the selected one plus one because the rows stay locked until the commit.
 */
final class MariaDbClaimSql extends ClaimSql {
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

    /** Step 2: parameters (the now of step 1, key…). */
    private static final String MARK = "UPDATE %s SET %s = ?, %s = %s + 1 WHERE %s IN (%s)";

    /** MariaDB's "/" gives a decimal: DIV keeps integer milliseconds. */
    @Override
    String relockSql() {
        return """
                UPDATE {table} SET {lockedAt} = {now} - ? + LEAST(?, GREATEST(?, ({now} - {updatedAt}) DIV 10))
                 WHERE {id} = ? AND {version} = ?""";
    }

    @Override
    List<ClaimedRow> claim(Connection c, dev.turnstile.claim.ClaimTable t, String sql, ClaimFilter filter, long timeoutMillis, int max) throws SQLException {
        boolean auto = c.getAutoCommit();
        if (auto) {
            c.setAutoCommit(false);
        }
        try {
            List<Object> keys = new ArrayList<>();
            List<Long> versions = new ArrayList<>();
            long now = 0;
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                int i = bindFilter(ps, filter);
                ps.setLong(i++, timeoutMillis);
                ps.setInt(i, max);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        keys.add(rs.getObject(1));
                        versions.add(rs.getLong(2));
                        now = rs.getLong(3);
                    }
                }
            }
            List<ClaimedRow> out = new ArrayList<>(keys.size());
            if (!keys.isEmpty()) {
                try (PreparedStatement ps = c.prepareStatement(markSql(t, keys.size()))) {
                    ps.setLong(1, now);
                    for (int k = 0; k < keys.size(); k++) {
                        ps.setObject(k + 2, keys.get(k));
                    }
                    ps.executeUpdate();
                }
                for (int k = 0; k < keys.size(); k++) {
                    out.add(new ClaimedRow(keys.get(k), versions.get(k) + 1, Instant.ofEpochMilli(now)));
                }
            }
            c.commit();
            return out;
        } catch (SQLException | RuntimeException e) {
            try {
                c.rollback();
            } catch (SQLException ignored) {
                // the connection goes back to the pool; the database rolls back a broken one
            }
            throw e;
        } finally {
            if (auto) {
                c.setAutoCommit(true);
            }
        }
    }

    /** Step 2 for n rows: {@code UPDATE table SET lockedAt = ?, version = version + 1 WHERE id IN (?, …)}. */
    private static String markSql(dev.turnstile.claim.ClaimTable t, int n) {
        return MARK.formatted(t.table(), t.lockedAtColumn(), t.versionColumn(), t.versionColumn(), t.idColumn(),
                String.join(", ", java.util.Collections.nCopies(n, "?")));
    }

    @Override
    String filterColumnType() {
        return "VARCHAR(64)";
    }
}
