package dev.turnstile.jdbc;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

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
            return switch (dialectId) {
                case "postgresql" -> LOWER;
                case "h2" -> UPPER;
                default -> NONE;
            };
        }

        String fold(String name) {
            return switch (this) {
                case LOWER -> name.toLowerCase(Locale.ROOT);
                case UPPER -> name.toUpperCase(Locale.ROOT);
                case NONE -> name;
            };
        }
    }

    private QuotedNames() {
    }

    /**
     * {catalog, schema, table} of a possibly qualified name, as the metadata calls want them:
     * MariaDB's schemas are catalogs; an unqualified PostgreSQL or H2 table is in the connection's
     * current schema (H2 would otherwise search every schema, and INFORMATION_SCHEMA.LOCKS would
     * stand for a missing "locks"); a schema given unquoted is the folded one, as in the statements.
     */
    static String[] split(Connection c, String name, String dialectId) throws SQLException {
        int dot = name.indexOf('.');
        String schema = dot < 0 ? null : name.substring(0, dot);
        String bare = dot < 0 ? name : name.substring(dot + 1);
        String catalog = null;
        if (dialectId.equals("mariadb")) {
            catalog = schema != null ? schema : c.getCatalog();
            schema = null;
        } else if (dialectId.equals("postgresql") || dialectId.equals("h2")) {
            schema = schema == null ? c.getSchema() : Folding.of(dialectId).fold(schema);
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
     * A name as a metadata pattern that matches only itself: {@code _} and {@code %} are wildcards
     * there, so {@code job_tasks} would find {@code jobxtasks} and schema {@code a_b} would find
     * {@code aXb}.
     */
    static @Nullable String pattern(DatabaseMetaData md, @Nullable String name) throws SQLException {
        if (name == null) {
            return null;
        }
        String escape = md.getSearchStringEscape();
        if (escape == null || escape.isEmpty()) {
            return name;
        }
        StringBuilder out = new StringBuilder(name.length() + 4);
        for (int i = 0; i < name.length(); i++) {
            char ch = name.charAt(i);
            if (ch == '_' || ch == '%' || escape.indexOf(ch) >= 0) {
                out.append(escape);
            }
            out.append(ch);
        }
        return out.toString();
    }

    /**
     * The real names of the tables that differ from {@code p}'s only in case and that an unquoted
     * name does not reach (they were created quoted), if any: all of them, since with two
     * ({@code "Two"}, {@code "TWO"}) the user must choose. Only the schema the statements reach is
     * searched: advice to rename a table in another schema would rename the wrong one.
     */
    static List<String> quotedTwins(DatabaseMetaData md, String[] p, Folding folding) throws SQLException {
        if (folding == Folding.NONE || p[1] == null) {
            return List.of();
        }
        String folded = folding.fold(p[2]);
        // every table of the schema, compared here: the metadata matches names exactly
        List<String> twins = new ArrayList<>();
        try (ResultSet rs = md.getTables(p[0], pattern(md, p[1]), null, new String[] {"TABLE", "PARTITIONED TABLE"})) {
            while (rs.next()) {
                String real = rs.getString("TABLE_NAME");
                if (!p[1].equals(rs.getString("TABLE_SCHEM"))) {
                    continue; // a driver that ignores the escape
                }
                if (real.equals(folded)) {
                    return List.of(); // the table the statements reach exists
                }
                if (real.equalsIgnoreCase(p[2])) {
                    twins.add(real);
                }
            }
        }
        twins.sort(null);
        return twins;
    }

    /**
     * The rename that fixes a table found by {@link #quotedTwins}: qualified with the schema when the
     * name was, since an unqualified ALTER TABLE acts on the search path's table of that name.
     */
    static String renameSql(String real, String given, Folding folding) {
        int dot = given.indexOf('.');
        String folded = folding.fold(given.substring(dot + 1));
        return "ALTER TABLE " + (dot < 0 ? "" : given.substring(0, dot + 1)) + "\"" + real + "\" RENAME TO " + folded;
    }

    /** The one-line explanation and fix for the tables found by {@link #quotedTwins}. */
    static String twinAdvice(List<String> twins, String given, Folding folding) {
        String folded = folding.fold(given.substring(given.indexOf('.') + 1));
        if (twins.size() == 1) {
            return "a table named \"" + twins.get(0) + "\" exists, created with a quoted name, but an unquoted " + given
                    + " means " + folded + " to this database: rename it with " + renameSql(twins.get(0), given, folding);
        }
        return "tables named " + String.join(", ", twins.stream().map(t -> "\"" + t + "\"").toList())
                + " exist, created with quoted names, but an unquoted " + given + " means " + folded
                + " to this database: rename the one to use with " + renameSql(twins.get(0), given, folding)
                + " (or the same for " + String.join(", ", twins.subList(1, twins.size()).stream().map(t -> "\"" + t + "\"").toList())
                + ")";
    }
}
