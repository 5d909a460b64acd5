package dev.turnstile.jdbc;

import dev.turnstile.claim.ClaimFilter;
import dev.turnstile.claim.ClaimTable;
import dev.turnstile.claim.ClaimedRow;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The claiming SQL of one database family. Each subclass keeps all of its claiming statements in
 * one place as templates; the placeholders are the {@link ClaimTable}'s validated identifiers:
 * <ul>
 *   <li>{@code {table} {id} {lockedAt} {updatedAt} {version}} — the table and its columns;
 *   <li>{@code {filter}} — {@code col = ? AND } for each filter condition (values are bound);
 *   <li>{@code {set}} — {@code col = ?, } for each column a write sets;
 *   <li>{@code {now}} — the database's now in epoch milliseconds.
 * </ul>
 * Times are epoch milliseconds by the database's clock; the guard of every write is
 * {@code WHERE {id} = ? AND {version} = ?}.
 */
abstract sealed class ClaimSql permits PostgresDialect.Claims, MariaDbDialect.Claims, SqliteDialect.Claims, H2Dialect.Claims {

    static ClaimSql of(SqlDialect dialect) {
        return switch (dialect.id()) {
            case "postgresql" -> new PostgresDialect.Claims();
            case "mariadb" -> new MariaDbDialect.Claims();
            case "sqlite" -> new SqliteDialect.Claims();
            case "h2" -> new H2Dialect.Claims();
            default -> throw new IllegalArgumentException("no claiming SQL for " + dialect);
        };
    }

    /** The lock-store dialect of the same family: its clock and its error classification. */
    abstract Dialect dialect();

    /** Now in epoch milliseconds, fixed for the whole statement, so an index range can use it. */
    String now() {
        return dialect().now();
    }

    /**
     * Claims: parameters (filter values…, lock timeout ms, limit); returns ({id}, {version}, {lockedAt}).
     * Dialects that cannot do it in one statement override {@link #claim}.
     */
    abstract String claimSql();

    /** Keeps the claim. Parameters (key, version). */
    String heartbeatSql() {
        return "UPDATE {table} SET {lockedAt} = {now} WHERE {id} = ? AND {version} = ?";
    }

    /** Ends the claim, due at once. Parameters (set values…, key, version). */
    String unlockSql() {
        return "UPDATE {table} SET {set}{lockedAt} = 0, {updatedAt} = {now} WHERE {id} = ? AND {version} = ?";
    }

    /**
     * Ends the claim, due after clamp((now - updatedAt) / 10, floor, timeout): stored as
     * lockedAt = now - timeout + delay, so the claim query's "lockedAt older than the timeout"
     * becomes true exactly at the due time. Parameters (timeout, timeout, floor, key, version).
     * An updatedAt that was never set (0, the column's default, or NULL) counts as no time waited,
     * so the delay is the floor, as on MongoDB where the field is missing: without the CASE, 0
     * would count as 56 years waited and the task would wait the whole timeout, and NULL would
     * make the new lockedAt NULL on the databases whose GREATEST returns NULL for it.
     */
    String relockSql() {
        return """
                UPDATE {table} SET {lockedAt} = {now} - ? + LEAST(?, GREATEST(?, %s))
                 WHERE {id} = ? AND {version} = ?""".formatted(waitedTenth("/"));
    }

    /** A tenth of the time waited since updatedAt, 0 if it was never set; {@code divide} is the integer division. */
    static String waitedTenth(String divide) {
        return "CASE WHEN {updatedAt} > 0 THEN ({now} - {updatedAt}) " + divide + " 10 ELSE 0 END";
    }

    /** Writes columns, keeps the claim. Parameters (set values…, key, version). */
    String updateSql() {
        return "UPDATE {table} SET {set} WHERE {id} = ? AND {version} = ?";
    }

    /** The database's now, once: the summary judges every task by this one reading. */
    String clockSql() {
        return "SELECT {now}";
    }

    /**
     * Counts per phase, for an operator's view. Parameters (now - timeout, the same, the same,
     * limit); returns (phase, total, free, claimed, overdue, the oldest overdue lockedAt). A NULL
     * lockedAt is in none of the three: the claim's comparison never selects it.
     */
    String summarySql() {
        return """
                SELECT {phase}, COUNT(*),
                       SUM(CASE WHEN {lockedAt} = 0 THEN 1 ELSE 0 END),
                       SUM(CASE WHEN {lockedAt} > ? THEN 1 ELSE 0 END),
                       SUM(CASE WHEN {lockedAt} > 0 AND {lockedAt} <= ? THEN 1 ELSE 0 END),
                       MIN(CASE WHEN {lockedAt} > 0 AND {lockedAt} <= ? THEN {lockedAt} END)
                  FROM {table} GROUP BY {phase} ORDER BY {phase} LIMIT ?""";
    }

    /**
     * Tasks not free whose last progress is at or before a time, the oldest first. Parameters
     * (now - stuckAfter, limit); returns (id, phase, lockedAt, updatedAt, version). A scan: the
     * claiming index does not lead with updatedAt, and a console reads this every few seconds at most.
     */
    String stuckSql() {
        return """
                SELECT {id}, {phase}, {lockedAt}, {updatedAt}, {version} FROM {table}
                 WHERE {lockedAt} > 0 AND {updatedAt} > 0 AND {updatedAt} <= ?
                 ORDER BY {updatedAt}, {lockedAt} LIMIT ?""";
    }

    /**
     * An operator's release: due at once, version raised (the holder's writes fail), no progress
     * recorded; only a task still as the summary showed it: at the version, not free (an unlock
     * meanwhile wins) and with the same updatedAt (no progress meanwhile). Parameters (key,
     * version, updatedAt).
     */
    String releaseSql() {
        return "UPDATE {table} SET {lockedAt} = 0, {version} = {version} + 1 WHERE {id} = ? AND {version} = ? "
                + "AND {lockedAt} <> 0 AND {updatedAt} = ?";
    }

    /** {@link #fill} for the operator's statements, which also name the phase column. */
    final String fillWithPhase(String template, ClaimTable t) {
        return fill(template.replace("{phase}", t.phaseColumn()), t, "", "");
    }

    /** The DDL resource: the table and its claiming index. */
    final String createTable(ClaimTable t) {
        String ddl;
        try (InputStream in = ClaimSql.class.getResourceAsStream("claim-schema-" + dialect().id() + ".sql")) {
            ddl = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException | NullPointerException e) {
            throw new IllegalStateException("claim schema resource for " + dialect().id() + " is missing from the jar", e);
        }
        String filters = String.join(", ", t.filterColumns());
        String extraFilters = t.filterColumns().stream().skip(1)
                .map(c -> "\n    " + pad(c) + " " + filterColumnType() + ",").reduce("", String::concat);
        return fill(ddl.replace("{extraFilterColumns}", extraFilters).replace("{filters}", filters), t, "", "")
                .replace("{phase}", pad(t.phaseColumn()))
                .replace("{indexName}", indexName(t));
    }

    /** The type the shipped DDL gives filter columns besides the phase. */
    abstract String filterColumnType();

    /** The statement that adds a missing column, for the validation's message. */
    String addColumnSql(ClaimTable t, String column) {
        String type = column.equals(t.lockedAtColumn()) || column.equals(t.updatedAtColumn()) || column.equals(t.versionColumn())
                ? "BIGINT NOT NULL DEFAULT 0" : filterColumnType();
        return "ALTER TABLE " + t.table() + " ADD COLUMN " + column + " " + type;
    }

    /** The statement that adds the claiming index, for the validation's message. */
    String createIndexSql(ClaimTable t) {
        return "CREATE INDEX " + indexName(t) + " ON " + t.table() + " (" + String.join(", ", t.filterColumns()) + ", "
                + t.lockedAtColumn() + ", " + t.updatedAtColumn() + ")";
    }

    static String indexName(ClaimTable t) {
        String bare = t.table().substring(t.table().indexOf('.') + 1);
        return (bare.length() > 50 ? bare.substring(0, 50) : bare) + "_claim_idx";
    }

    private static String pad(String c) {
        return c.length() >= 13 ? c : c + " ".repeat(13 - c.length());
    }

    /** Fills the placeholders. */
    final String fill(String template, ClaimTable t, String filter, String set) {
        return template.replace("{table}", t.table())
                .replace("{id}", t.idColumn())
                .replace("{lockedAt}", t.lockedAtColumn())
                .replace("{updatedAt}", t.updatedAtColumn())
                .replace("{version}", t.versionColumn())
                .replace("{filter}", filter)
                .replace("{set}", set)
                .replace("{now}", now());
    }

    static String filterClause(ClaimFilter f) {
        StringBuilder b = new StringBuilder();
        for (String c : f.columns()) {
            b.append(c).append(" = ? AND ");
        }
        return b.toString();
    }

    static String setClause(Map<String, Object> values) {
        StringBuilder b = new StringBuilder();
        for (String c : values.keySet()) {
            b.append(c).append(" = ?, ");
        }
        return b.toString();
    }

    /** Runs the claim; the default is the single statement of {@link #claimSql()}. */
    List<ClaimedRow> claim(Connection c, ClaimTable t, String sql, ClaimFilter filter, long timeoutMillis, int max) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            int i = bindFilter(ps, filter);
            ps.setLong(i++, timeoutMillis);
            ps.setInt(i, max);
            try (ResultSet rs = ps.executeQuery()) {
                return rows(rs);
            }
        }
    }

    /** Step 2: parameters (the now of step 1, key…). */
    private static final String MARK = "UPDATE %s SET %s = ?, %s = %s + 1 WHERE %s IN (%s)";

    /**
     * A claim as a short transaction, for databases whose UPDATE cannot skip locked rows or return
     * them: select the due rows {@code FOR UPDATE SKIP LOCKED} with the database's now, update
     * exactly those by key, commit. The rows stay locked until the commit, so the version returned
     * is the selected one plus one.
     */
    static List<ClaimedRow> claimInTwoSteps(Connection c, ClaimTable t, String sql, ClaimFilter filter, long timeoutMillis, int max) throws SQLException {
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

    static int bindFilter(PreparedStatement ps, ClaimFilter filter) throws SQLException {
        int i = 1;
        for (Object v : filter.conditions().values()) {
            ps.setObject(i++, v);
        }
        return i;
    }

    static List<ClaimedRow> rows(ResultSet rs) throws SQLException {
        List<ClaimedRow> out = new ArrayList<>();
        while (rs.next()) {
            out.add(new ClaimedRow(rs.getObject(1), rs.getLong(2), Instant.ofEpochMilli(rs.getLong(3))));
        }
        return out;
    }

    @Override
    public String toString() {
        return dialect().id();
    }
}
