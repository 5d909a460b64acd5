package dev.turnstile.jdbc;

import dev.turnstile.StoreSchemaException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * A key column whose collation compares case-insensitively or ignores accents merges names:
 * {@code Report} and {@code report} (or {@code cafe} and {@code café}) become one lock, and
 * {@code release --force REPORT} frees {@code Report}. Turnstile's own DDL uses a binary collation;
 * a table created by a migration tool without one inherits the database's default
 * ({@code utf8mb4_general_ci} on MariaDB). Checked once per store at start, on MariaDB/MySQL
 * (the column's collation must be binary or {@code _bin}), PostgreSQL (the collation must be
 * deterministic, as non-deterministic ICU collations compare case- or accent-insensitively, and
 * the type not citext) and SQLite (no unique index on the column alone may use NOCASE or RTRIM).
 */
final class Collations {
    private Collations() {}

    /**
     * Refuses a key column that does not compare names byte for byte.
     *
     * @param c a connection
     * @param dialectId the database family
     * @param table the table as configured ({@code schema.table} or {@code table}), unquoted
     * @param column the key column
     * @param what "lock table" or "task table", for the message
     * @param type the column's type for the ALTER on MariaDB, for example {@code VARCHAR(255)}
     * @throws StoreSchemaException if the collation merges names
     */
    static void check(Connection c, String dialectId, String table, String column, String what, String type)
            throws SQLException {
        int dot = table.indexOf('.');
        String bare = dot < 0 ? table : table.substring(dot + 1);
        if (dialectId.equals("mariadb")) {
            String sql = "SELECT COLLATION_NAME, IS_NULLABLE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = "
                    + (dot < 0 ? "DATABASE()" : "?") + " AND TABLE_NAME = ? AND COLUMN_NAME = ?";
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                int i = 1;
                if (dot >= 0) {
                    ps.setString(i++, table.substring(0, dot));
                }
                ps.setString(i++, bare);
                ps.setString(i, column);
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) {
                        String collation = rs.getString(1);
                        if (collation != null && !collation.equals("binary") && !collation.endsWith("_bin")) {
                            throw new StoreSchemaException("the " + what + " '" + table + "' compares column '" + column
                                    + "' with the collation " + collation + ", which is not binary: names that differ "
                                    + "only in case or accents (Report/report, cafe/café) would be one. Fix it with:\n"
                                    + "ALTER TABLE " + table + " MODIFY " + column + " " + type
                                    + " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL;", null);
                        }
                    }
                }
            }
        } else if (dialectId.equals("sqlite")) {
            checkSqlite(c, table, column, what);
        } else if (dialectId.equals("postgresql")) {
            // to_regclass folds the unquoted name as the statements do, and is NULL for a missing table
            String sql = "SELECT co.collname, co.collisdeterministic FROM pg_attribute a JOIN pg_collation co "
                    + "ON co.oid = a.attcollation WHERE a.attrelid = to_regclass(?) AND a.attname = lower(?)";
            boolean auto = c.getAutoCommit();
            java.sql.Savepoint before = auto ? null : c.setSavepoint();
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                ps.setString(1, table);
                ps.setString(2, column);
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next() && !rs.getBoolean(2)) {
                        throw new StoreSchemaException("the " + what + " '" + table + "' compares column '" + column
                                + "' with the non-deterministic collation " + rs.getString(1) + ": names that it counts "
                                + "as equal (by case or accents) would be one. Fix it with:\nALTER TABLE " + table
                                + " ALTER COLUMN " + column + " TYPE " + type + " COLLATE \"C\";", null);
                    }
                }
                // citext compares case-insensitively with a deterministic collation: found by its type,
                // also through domains over it
                try (PreparedStatement types = c.prepareStatement(CITEXT_SQL)) {
                    types.setString(1, table);
                    types.setString(2, column);
                    try (ResultSet rs = types.executeQuery()) {
                        if (rs.next()) {
                            String declared = rs.getString(1);
                            throw new StoreSchemaException("the " + what + " '" + table + "' has column '" + column
                                    + "' of type " + declared + (declared.equals("citext") ? "" : " (a domain over citext)")
                                    + ", which compares case-insensitively: names that differ only in case (Report/report) "
                                    + "would be one. Fix it with:\nALTER TABLE " + table + " ALTER COLUMN " + column
                                    + " TYPE " + type + " COLLATE \"C\";", null);
                        }
                    }
                }
            } catch (SQLException e) {
                if (!"42703".equals(e.getSQLState())) {
                    throw e;
                }
                // before PostgreSQL 12 there is no collisdeterministic, and no non-deterministic collation
                if (before != null) {
                    c.rollback(before);
                }
            }
        }
    }

    /** The column's declared type, if it is citext or a domain over it (at any depth). */
    private static final String CITEXT_SQL = "WITH RECURSIVE ty(oid, base, depth) AS ("
            + "SELECT t.oid, t.typbasetype, 0 FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
            + "WHERE a.attrelid = to_regclass(?) AND a.attname = lower(?) "
            + "UNION ALL SELECT b.oid, b.typbasetype, ty.depth + 1 FROM pg_type b JOIN ty ON b.oid = ty.base "
            + "WHERE ty.base <> 0 AND ty.depth < 16) "
            + "SELECT format_type((SELECT oid FROM ty WHERE depth = 0), NULL) FROM ty JOIN pg_type t ON t.oid = ty.oid "
            + "WHERE t.typname = 'citext' LIMIT 1";

    /**
     * Every unique index whose key is the column alone (the primary key's autoindex, or a separate
     * CREATE UNIQUE INDEX), with the collation it compares with: what SQLite itself reports, so no
     * way of writing the DDL (comments, quoting, COLLATE[NOCASE]) hides it.
     */
    @SuppressWarnings("InlineFormatString") // the statement reads best beside what it finds, above
    private static final String SQLITE_SQL = "SELECT il.name, ix.coll FROM pragma_index_list(?%1$s) il "
            + "JOIN pragma_index_xinfo(il.name%1$s) ix ON ix.key = 1 "
            + "WHERE il.\"unique\" = 1 AND ix.name = ? COLLATE NOCASE AND ix.coll <> 'BINARY' COLLATE NOCASE "
            + "AND (SELECT count(*) FROM pragma_index_xinfo(il.name%1$s) k WHERE k.key = 1) = 1";

    /**
     * SQLite: a unique index on the column alone that is not BINARY makes names that it counts as
     * equal one row, so one lock ({@code Report} held makes {@code report} busy).
     */
    private static void checkSqlite(Connection c, String table, String column, String what) throws SQLException {
        // The column's own collation decides every WHERE name = ? (a forced release of REPORT would
        // free Report), even when a unique index is BINARY. A compound SELECT compares with its
        // leftmost column's collation, so this counts names as the column does, with no row read
        // or written (table and column are checked identifiers).
        String probe = "SELECT count(*) FROM (SELECT " + column + " FROM " + table + " WHERE 0 UNION SELECT 'Report' UNION SELECT ";
        try (java.sql.Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT (" + probe + "'report')), (" + probe + "'Report '))")) {
            if (rs.next() && (rs.getInt(1) < 2 || rs.getInt(2) < 2)) {
                throw new StoreSchemaException("the " + what + " '" + table + "' compares column '" + column + "' "
                        + (rs.getInt(1) < 2 ? "with COLLATE NOCASE, which ignores case" : "with COLLATE RTRIM, which ignores trailing spaces")
                        + ": names that differ only in case (or trailing spaces) would be one. SQLite cannot change a "
                        + "column's collation: create the table again without it (turnstile schema prints the DDL) and "
                        + "copy the rows over", null);
            }
        }
        int dot = table.indexOf('.');
        String sql = String.format(SQLITE_SQL, dot < 0 ? "" : ", ?");
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            int i = 1;
            ps.setString(i++, dot < 0 ? table : table.substring(dot + 1));
            if (dot >= 0) {
                ps.setString(i++, table.substring(0, dot));
                ps.setString(i++, table.substring(0, dot));
                ps.setString(i++, column);
                ps.setString(i, table.substring(0, dot));
            } else {
                ps.setString(i, column);
            }
            try (ResultSet rs = ps.executeQuery()) {
                if (rs.next()) {
                    String index = rs.getString(1);
                    String collation = rs.getString(2).toUpperCase(java.util.Locale.ROOT);
                    boolean key = index.startsWith("sqlite_autoindex_");
                    throw new StoreSchemaException("the " + what + " '" + table + "' compares column '" + column
                            + "' with COLLATE " + collation + (key ? " (its primary key or UNIQUE constraint)"
                                    : " (unique index " + index + ")")
                            + ": names that differ only in case (or trailing spaces) would be one. "
                            + (key ? "SQLite cannot change a column's collation: create the table again without it "
                                    + "(turnstile schema prints the DDL) and copy the rows over"
                                    : "Drop that index: DROP INDEX " + index + ";"), null);
                }
            }
        }
    }
}
