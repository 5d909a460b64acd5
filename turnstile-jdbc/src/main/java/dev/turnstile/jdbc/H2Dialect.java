package dev.turnstile.jdbc;

import java.sql.SQLException;

/**
 * H2: a conditional MERGE, read back through FINAL TABLE so acquire stays one statement. H2 counts
 * a VARCHAR's length in UTF-16 units and its CAST cuts a longer value short without a word, so the
 * casts are as wide as the columns of {@code schema-h2.sql}: 510 units hold the 255 code points a
 * name may have. (A narrower column, from a table made before, refuses a longer name with an error
 * rather than storing a cut one: two names cut to the same text would otherwise be one lock.)
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
                    UPDATE SET owner = s.owner, token = s.token, fence = t.fence + 1,
                               acquired_at = s.now_ms, expires_at = s.now_ms + s.ttl
                  WHEN NOT MATCHED THEN
                    INSERT (name, owner, token, fence, acquired_at, expires_at)
                    VALUES (s.name, s.owner, s.token, 1, s.now_ms, s.now_ms + s.ttl))""";
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
}
