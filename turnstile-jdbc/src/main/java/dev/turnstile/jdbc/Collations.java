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
 * (the column's collation must be binary or {@code _bin}) and PostgreSQL (the collation must be
 * deterministic; non-deterministic ICU collations compare case- or accent-insensitively).
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
            // SQLite keeps no collation catalogue: the column's COLLATE is in the table's own CREATE TABLE
            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE")) {
                ps.setString(1, bare);
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next() && rs.getString(1) != null) {
                        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?is)[(,]\\s*[\"`\\[]?" + java.util.regex.Pattern.quote(column)
                                + "[\"`\\]]?\\s[^,]*?\\bCOLLATE\\s+[\"']?(NOCASE|RTRIM)\\b").matcher(rs.getString(1));
                        if (m.find()) {
                            throw new StoreSchemaException("the " + what + " '" + table + "' compares column '" + column
                                    + "' with COLLATE " + m.group(1).toUpperCase(java.util.Locale.ROOT) + ": names that differ "
                                    + "only in case (or trailing spaces) would be one. SQLite cannot change a column's "
                                    + "collation: create the table again without it (turnstile schema prints the DDL) and "
                                    + "copy the rows over", null);
                        }
                    }
                }
            }
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
}
