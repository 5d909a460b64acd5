package dev.turnstile.jdbc;

import dev.turnstile.claim.ClaimFilter;
import dev.turnstile.claim.ClaimTable;
import dev.turnstile.claim.ClaimedRow;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;

/**
 * H2: a short transaction like MariaDB's. H2 evaluates an {@code UPDATE … WHERE id IN (SELECT …
 * LIMIT n)} subquery against rows the same UPDATE already changed, so a batch came back short;
 * selecting {@code FOR UPDATE SKIP LOCKED} first and then updating those keys does not.
 */
final class H2ClaimSql extends ClaimSql {
    private static final Dialect DIALECT = (Dialect) SqlDialect.H2;

    @Override
    Dialect dialect() {
        return DIALECT;
    }

    /** Step 1: parameters (filter values…, lock timeout ms, limit); returns ({id}, {version}, now). */
    @Override
    String claimSql() {
        return """
                SELECT {id}, {version}, {now} FROM {table}
                 WHERE {filter}{lockedAt} <= {now} - ?
                 ORDER BY {lockedAt}, {updatedAt}
                 LIMIT ? FOR UPDATE SKIP LOCKED""";
    }

    @Override
    List<ClaimedRow> claim(Connection c, ClaimTable t, String sql, ClaimFilter filter, long timeoutMillis, int max)
            throws SQLException {
        return claimInTwoSteps(c, t, sql, filter, timeoutMillis, max);
    }

    @Override
    String filterColumnType() {
        return "VARCHAR(64)";
    }
}
