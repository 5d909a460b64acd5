package dev.turnstile.jdbc;

import dev.turnstile.StoreSchemaException;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The lock table's key: exclusion rests on the database refusing a second row for one name. A
 * table of the right name and columns but without a primary key or unique index on {@code name}
 * alone (made by hand, or by a migration tool that only checked that the table exists) lets two
 * acquires each insert a row: MariaDB's {@code INSERT … ON DUPLICATE KEY UPDATE} and H2's
 * {@code MERGE … KEY} then meet no duplicate, and both callers hold the lock. Checked once per store
 * at start, from the database's own catalog: a primary key or a unique, non-partial index whose one
 * key column is the name column.
 */
final class UniqueKeys {
    private UniqueKeys() {}

    /**
     * Refuses a table whose {@code column} is not unique by itself.
     *
     * @param c a connection
     * @param dialectId the database family
     * @param table the table as configured ({@code schema.table} or {@code table}), unquoted
     * @param column the key column
     * @param what "lock table", for the message
     * @throws StoreSchemaException if no primary key or unique index covers the column alone
     */
    static void check(Connection c, String dialectId, String table, String column, String what) throws SQLException {
        Boolean unique = switch (dialectId) {
            case "mariadb" -> mariaDb(c, table, column);
            case "postgresql" -> postgres(c, table, column);
            case "sqlite" -> sqlite(c, table, column);
            case "h2" -> fromMetadata(c, dialectId, table, column);
            default -> null;
        };
        if (Boolean.FALSE.equals(unique)) {
            String fix = dialectId.equals("sqlite")
                    ? "CREATE UNIQUE INDEX " + table.replace('.', '_') + "_" + column + "_key ON " + table + " (" + column + ");"
                    : "ALTER TABLE " + table + " ADD PRIMARY KEY (" + column + ");";
            throw new StoreSchemaException("the " + what + " '" + table + "' has no primary key or unique index on '"
                    + column + "' alone, so two instances could each insert a row for one lock name and both hold it. "
                    + "It is not the table Turnstile creates (turnstile schema prints that DDL); fix it with:\n" + fix
                    + "\n(if rows with the same " + column + " are there already, delete the extra ones first)", null);
        }
    }

    /** MariaDB and MySQL: a unique index (the primary key is one) on the column alone, not on a prefix of it. */
    private static Boolean mariaDb(Connection c, String table, String column) throws SQLException {
        int dot = table.indexOf('.');
        String sql = "SELECT INDEX_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = "
                + (dot < 0 ? "DATABASE()" : "?") + " AND TABLE_NAME = ? AND NON_UNIQUE = 0 GROUP BY INDEX_NAME "
                + "HAVING COUNT(*) = 1 AND MAX(COLUMN_NAME) = ? AND MAX(SUB_PART) IS NULL";
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            int i = 1;
            if (dot >= 0) {
                ps.setString(i++, table.substring(0, dot));
            }
            ps.setString(i++, dot < 0 ? table : table.substring(dot + 1));
            ps.setString(i, column);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }

    /**
     * PostgreSQL: a unique index (a primary key or UNIQUE constraint makes one) whose one key
     * column is the column, with no predicate and no expression. to_regclass folds the unquoted
     * name as the statements do; a table it does not find is left to the statements' own error.
     */
    private static @Nullable Boolean postgres(Connection c, String table, String column) throws SQLException {
        String sql = "SELECT to_regclass(?) IS NOT NULL, EXISTS (SELECT 1 FROM pg_index i JOIN pg_attribute a "
                + "ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0] WHERE i.indrelid = to_regclass(?) "
                + "AND i.indisunique AND i.indisvalid AND i.indimmediate AND i.indpred IS NULL AND i.indexprs IS NULL "
                + "AND i.indnkeyatts = 1 "
                + "AND a.attname = lower(?))";
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, table);
            ps.setString(2, table);
            ps.setString(3, column);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1) ? rs.getBoolean(2) : null;
            }
        }
    }

    /** SQLite: a unique, non-partial index (the primary key's autoindex, a UNIQUE constraint's, or CREATE UNIQUE INDEX) on the column alone, or the column as the INTEGER PRIMARY KEY. */
    private static Boolean sqlite(Connection c, String table, String column) throws SQLException {
        int dot = table.indexOf('.');
        String schemaArg = dot < 0 ? "" : ", ?";
        String sql = "SELECT count(*) FROM pragma_index_list(?" + schemaArg + ") il WHERE il.\"unique\" = 1 AND il.partial = 0 "
                + "AND (SELECT count(*) FROM pragma_index_xinfo(il.name" + schemaArg + ") k WHERE k.key = 1) = 1 "
                + "AND (SELECT k.name FROM pragma_index_xinfo(il.name" + schemaArg + ") k WHERE k.key = 1) = ? COLLATE NOCASE";
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            int i = 1;
            ps.setString(i++, dot < 0 ? table : table.substring(dot + 1));
            if (dot >= 0) {
                String schema = table.substring(0, dot);
                ps.setString(i++, schema);
                ps.setString(i++, schema);
                ps.setString(i++, schema);
            }
            ps.setString(i, column);
            try (ResultSet rs = ps.executeQuery()) {
                if (rs.next() && rs.getInt(1) > 0) {
                    return true;
                }
            }
        }
        // An INTEGER PRIMARY KEY is the rowid itself, which no index lists: the table's only key column.
        String pk = "SELECT count(*) FROM pragma_table_info(?" + schemaArg + ") WHERE pk = 1 AND name = ? COLLATE NOCASE "
                + "AND (SELECT count(*) FROM pragma_table_info(?" + schemaArg + ") WHERE pk > 0) = 1";
        try (PreparedStatement ps = c.prepareStatement(pk)) {
            String bare = dot < 0 ? table : table.substring(dot + 1);
            int i = 1;
            ps.setString(i++, bare);
            if (dot >= 0) {
                ps.setString(i++, table.substring(0, dot));
            }
            ps.setString(i++, column);
            ps.setString(i++, bare);
            if (dot >= 0) {
                ps.setString(i, table.substring(0, dot));
            }
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && rs.getInt(1) > 0;
            }
        }
    }

    /** From the JDBC metadata (H2): the primary key, and the unique indexes with no filter, by their columns. */
    private static @Nullable Boolean fromMetadata(Connection c, String dialectId, String table, String column) throws SQLException {
        String[] p = QuotedNames.split(c, table, dialectId);
        String folded = QuotedNames.Folding.of(dialectId).fold(p[2]);
        DatabaseMetaData md = c.getMetaData();
        Map<String, List<String>> keys = new LinkedHashMap<>();
        try (ResultSet rs = md.getPrimaryKeys(p[0], p[1], folded)) {
            while (rs.next()) {
                keys.computeIfAbsent("PRIMARY KEY", k -> new ArrayList<>()).add(rs.getString("COLUMN_NAME"));
            }
        }
        try (ResultSet rs = md.getIndexInfo(p[0], p[1], folded, true, false)) {
            while (rs.next()) {
                if (rs.getBoolean("NON_UNIQUE") || rs.getString("FILTER_CONDITION") != null || rs.getString("COLUMN_NAME") == null) {
                    continue;
                }
                keys.computeIfAbsent("index " + rs.getString("INDEX_NAME"), k -> new ArrayList<>()).add(rs.getString("COLUMN_NAME"));
            }
        }
        if (keys.isEmpty() && !tableExists(md, p, folded)) {
            return null; // the statements' own error names the missing table
        }
        return keys.values().stream()
                .anyMatch(cols -> cols.size() == 1 && cols.get(0).toLowerCase(Locale.ROOT).equals(column.toLowerCase(Locale.ROOT)));
    }

    private static boolean tableExists(DatabaseMetaData md, String[] p, String folded) throws SQLException {
        try (ResultSet rs = md.getTables(p[0], QuotedNames.pattern(md, p[1]), QuotedNames.pattern(md, folded), null)) {
            return rs.next();
        }
    }
}
