package dev.turnstile.jdbc;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Turnstile writes table and column names unquoted, so the database folds them: PostgreSQL to
 * lower case, H2 to upper case. A table created with a quoted name in another case ({@code
 * "Gateways"}) is then not the one the statements reach, and looks "missing". This finds such a
 * table by the metadata's real spelling, so the message can give the rename that fixes it. MariaDB
 * and SQLite match unquoted names as written, so nothing is folded there.
 */
final class QuotedNames {
    /** How a database folds an unquoted name. */
    enum Folding {
        LOWER, UPPER, NONE;

        static Folding of(String dialectId) {
            switch (dialectId) {
                case "postgresql":
                    return LOWER;
                case "h2":
                    return UPPER;
                default:
                    return NONE;
            }
        }

        String fold(String name) {
            switch (this) {
                case LOWER:
                    return name.toLowerCase(Locale.ROOT);
                case UPPER:
                    return name.toUpperCase(Locale.ROOT);
                default:
                    return name;
            }
        }
    }

    private QuotedNames() {
    }

    /**
     * {catalog, schema, table} of a possibly qualified name, as the metadata calls want them:
     * MariaDB's schemas are catalogs, and an unqualified PostgreSQL table is in the connection's
     * schema.
     */
    static String[] split(Connection c, String name, String dialectId) throws SQLException {
        int dot = name.indexOf('.');
        String schema = dot < 0 ? null : name.substring(0, dot);
        String bare = dot < 0 ? name : name.substring(dot + 1);
        String catalog = null;
        if (dialectId.equals("mariadb")) {
            catalog = schema != null ? schema : c.getCatalog();
            schema = null;
        } else if (dialectId.equals("postgresql") && schema == null) {
            schema = c.getSchema();
        }
        return new String[] {catalog, schema, bare};
    }

    /** The name as given, then folded to lower and to upper case (the metadata matches exactly). */
    static List<String[]> variants(String[] p) {
        List<String[]> out = new ArrayList<>();
        out.add(p);
        out.add(new String[] {p[0], p[1] == null ? null : p[1].toLowerCase(Locale.ROOT), p[2].toLowerCase(Locale.ROOT)});
        out.add(new String[] {p[0], p[1] == null ? null : p[1].toUpperCase(Locale.ROOT), p[2].toUpperCase(Locale.ROOT)});
        return out;
    }

    /**
     * The real name of a table that differs from {@code p}'s only in case and that an unquoted
     * name does not reach (it was created quoted), if there is one.
     */
    static Optional<String> quotedTwin(DatabaseMetaData md, String[] p, Folding folding) throws SQLException {
        if (folding == Folding.NONE) {
            return Optional.empty();
        }
        String folded = folding.fold(p[2]);
        // every table of the schema, compared here: the metadata matches names exactly
        String schema = p[1];
        String twin = null;
        for (String s : schema == null ? new String[] {null}
                : new String[] {schema, schema.toLowerCase(Locale.ROOT), schema.toUpperCase(Locale.ROOT)}) {
            try (ResultSet rs = md.getTables(p[0], s, null, new String[] {"TABLE"})) {
                while (rs.next()) {
                    String real = rs.getString("TABLE_NAME");
                    if (real.equals(folded)) {
                        return Optional.empty(); // the table the statements reach exists
                    }
                    if (real.equalsIgnoreCase(p[2])) {
                        twin = real;
                    }
                }
            }
        }
        return Optional.ofNullable(twin);
    }

    /** The one-line explanation and fix for a table found by {@link #quotedTwin}. */
    static String twinAdvice(String real, String given, Folding folding) {
        String folded = folding.fold(given.substring(given.indexOf('.') + 1));
        return "a table named \"" + real + "\" exists, created with a quoted name, but an unquoted " + given + " means "
                + folded + " to this database: rename it with ALTER TABLE \"" + real + "\" RENAME TO " + folded;
    }
}
