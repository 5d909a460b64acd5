package dev.turnstile.jdbc;

/**
 * H2: the same {@code UPDATE … WHERE id IN (SELECT … FOR UPDATE SKIP LOCKED)}, read back through
 * {@code FINAL TABLE}. The due condition is repeated outside the subquery: H2 re-checks the
 * condition of a row it had to wait for, so a row another transaction claimed meanwhile is left.
 */
final class H2ClaimSql extends ClaimSql {
    private static final Dialect DIALECT = (Dialect) SqlDialect.H2;

    @Override
    Dialect dialect() {
        return DIALECT;
    }

    @Override
    String claimSql() {
        return """
                SELECT {id}, {version}, {lockedAt} FROM FINAL TABLE (
                  UPDATE {table} SET {lockedAt} = {now}, {version} = {version} + 1
                   WHERE {id} IN (SELECT {id} FROM {table}
                                   WHERE {filter}{lockedAt} <= {now} - ?
                                   ORDER BY {lockedAt}, {updatedAt}
                                   LIMIT ? FOR UPDATE SKIP LOCKED)
                     AND {lockedAt} <= {now} - ?)""";
    }

    @Override
    java.util.List<dev.turnstile.claim.ClaimedRow> claim(java.sql.Connection c, dev.turnstile.claim.ClaimTable t, String sql,
            dev.turnstile.claim.ClaimFilter filter, long timeoutMillis, int max) throws java.sql.SQLException {
        try (java.sql.PreparedStatement ps = c.prepareStatement(sql)) {
            int i = bindFilter(ps, filter);
            ps.setLong(i++, timeoutMillis);
            ps.setInt(i++, max);
            ps.setLong(i, timeoutMillis);
            try (java.sql.ResultSet rs = ps.executeQuery()) {
                return rows(rs);
            }
        }
    }

    @Override
    String filterColumnType() {
        return "VARCHAR(64)";
    }
}
