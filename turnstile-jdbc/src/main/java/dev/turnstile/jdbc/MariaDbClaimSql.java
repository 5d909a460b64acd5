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
