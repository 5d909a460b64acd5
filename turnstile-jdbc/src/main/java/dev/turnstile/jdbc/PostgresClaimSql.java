package dev.turnstile.jdbc;

/**
 * PostgreSQL: one {@code UPDATE … WHERE id IN (SELECT … FOR UPDATE SKIP LOCKED LIMIT n) RETURNING}.
 * Rows another worker is claiming at the same moment are skipped, not waited for.
 */
final class PostgresClaimSql extends ClaimSql {
    private static final Dialect DIALECT = (Dialect) SqlDialect.POSTGRESQL;

    @Override
    Dialect dialect() {
        return DIALECT;
    }

    /**
     * statement_timestamp(), not clock_timestamp(): it is stable, so the due condition is an index
     * range, and it is the same everywhere in the statement. (The lock store's clock_timestamp() is
     * volatile: as a claim condition it would make the scan read every row of the phase.)
     */
    @Override
    String now() {
        return "(extract(epoch from statement_timestamp()) * 1000)::bigint";
    }

    @Override
    String claimSql() {
        return """
                UPDATE {table} SET {lockedAt} = {now}, {version} = {version} + 1
                 WHERE {id} IN (SELECT {id} FROM {table}
                                 WHERE {filter}{lockedAt} <= {now} - ?
                                 ORDER BY {lockedAt}, {updatedAt}
                                 LIMIT ? FOR UPDATE SKIP LOCKED)
                RETURNING {id}, {version}, {lockedAt}""";
    }

    @Override
    String filterColumnType() {
        return "VARCHAR(64)";
    }
}
