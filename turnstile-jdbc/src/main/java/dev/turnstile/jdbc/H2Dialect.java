package dev.turnstile.jdbc;

import dev.turnstile.claim.ClaimFilter;
import dev.turnstile.claim.ClaimTable;
import dev.turnstile.claim.ClaimedRow;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;

/**
 * H2: a conditional MERGE, read back through FINAL TABLE so acquire stays one statement. H2 counts
 * a VARCHAR's length in UTF-16 units and its CAST cuts a longer value short without a word, so the
 * casts are as wide as the columns of {@code schema-h2.sql}: 510 units hold the 255 code points a
 * name may have. (A narrower column, from a table made before, refuses a longer name with an error
 * rather than storing a cut one: two names cut to the same text would otherwise be one lock.)
 * All of H2's SQL is here: the lock store's, and in {@link Claims} work claiming's (DDL:
 * {@code schema-h2.sql}, {@code claim-schema-h2.sql}).
 */
final class H2Dialect extends Dialect {

    @Override
    public String id() {
        return "h2";
    }

    @Override
    String now() {
        return "CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP(3)) * 1000 AS BIGINT)";
    }

    @Override
    String acquireSql() {
        return """
                SELECT fence, acquired_at, expires_at FROM FINAL TABLE (
                  MERGE INTO %1$s t
                  USING (SELECT CAST(? AS VARCHAR(510)) AS name, CAST(? AS VARCHAR(510)) AS owner,
                                CAST(? AS VARCHAR(64)) AS token, %2$s AS now_ms, CAST(? AS BIGINT) AS ttl) s
                     ON t.name = s.name
                  WHEN MATCHED AND t.expires_at <= s.now_ms THEN
                    UPDATE SET owner = s.owner, token = s.token, fence = CASE WHEN t.fence = 0 THEN 0 ELSE t.fence + 1 END,
                               acquired_at = s.now_ms, expires_at = s.now_ms + s.ttl
                  WHEN NOT MATCHED THEN
                    INSERT (name, owner, token, fence, acquired_at, expires_at)
                    VALUES (s.name, s.owner, s.token, 0, s.now_ms, s.now_ms + s.ttl))""";
    }

    /**
     * H2 keeps the pool's level: reading it over H2's TCP server ({@code INFORMATION_SCHEMA.SESSIONS})
     * failed now and then inside H2 2.3.232 (a NullPointerException in the server) while other sessions
     * came and went, which failed an acquire, and H2 sessions run at READ COMMITTED unless told otherwise.
     */
    @Override
    boolean pruneAtReadCommitted() {
        return false;
    }

    /** H2 has no ON CONFLICT; a MERGE that only inserts. Two at once: the loser's duplicate key is ignored. */
    @Override
    String insertFloorSql() {
        return """
                MERGE INTO %1$s t USING (SELECT CAST(? AS VARCHAR(510)) AS name) s ON t.name = s.name
                  WHEN NOT MATCHED THEN INSERT (name, owner, token, fence, acquired_at, expires_at)
                    VALUES (s.name, '', '', 0, 9223372036854775807, 9223372036854775807)""";
    }

    @Override
    boolean isMissingTable(SQLException e) {
        // 42103: not found, "candidates are" others of the name in another case (a quoted twin)
        return e.getErrorCode() == 42102 || e.getErrorCode() == 42103 || e.getErrorCode() == 42104;
    }

    @Override
    boolean isLostInsertRace(SQLException e) {
        // 23505: two first inserts raced; 90131: a concurrent transaction changed the row first.
        return super.isLostInsertRace(e) || e.getErrorCode() == 90131;
    }

    /**
     * H2: a short transaction like MariaDB's. H2 evaluates an {@code UPDATE … WHERE id IN (SELECT …
     * LIMIT n)} subquery against rows the same UPDATE already changed, so a batch came back short;
     * selecting {@code FOR UPDATE SKIP LOCKED} first and then updating those keys does not.
     */
    static final class Claims extends ClaimSql {
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
}
