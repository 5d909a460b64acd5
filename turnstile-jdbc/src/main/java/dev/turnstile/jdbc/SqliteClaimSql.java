package dev.turnstile.jdbc;

/**
 * SQLite (3.35 or later): one {@code UPDATE … WHERE id IN (SELECT … LIMIT n) RETURNING}. SQLite
 * runs one writer at a time, so the choice and the update are atomic without row locks.
 */
final class SqliteClaimSql extends ClaimSql {
    private static final Dialect DIALECT = (Dialect) SqlDialect.SQLITE;

    @Override
    Dialect dialect() {
        return DIALECT;
    }

    @Override
    String claimSql() {
        return """
                UPDATE {table} SET {lockedAt} = {now}, {version} = {version} + 1
                 WHERE {id} IN (SELECT {id} FROM {table}
                                 WHERE {filter}{lockedAt} <= {now} - ?
                                 ORDER BY {lockedAt}, {updatedAt}
                                 LIMIT ?)
                RETURNING {id}, {version}, {lockedAt}""";
    }

    /** SQLite's LEAST and GREATEST are the scalar MIN and MAX. */
    @Override
    String relockSql() {
        return """
                UPDATE {table} SET {lockedAt} = {now} - ? + MIN(?, MAX(?, %s))
                 WHERE {id} = ? AND {version} = ?""".formatted(waitedTenth("/"));
    }

    @Override
    String filterColumnType() {
        return "TEXT";
    }
}
