package dev.turnstile.jdbc;

import dev.turnstile.StoreSchemaException;
import dev.turnstile.claim.ClaimTable;
import dev.turnstile.jdbc.JdbcClaimStore.ColumnType;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * The check a {@link JdbcClaimStore} makes of its task table when it is built, through the
 * connection's metadata: every failure names what is missing and gives the statements that add it.
 */
final class ClaimTableCheck {
    private final ClaimTable table;
    private final ClaimSql sql;
    private final String description;

    ClaimTableCheck(ClaimTable table, ClaimSql sql, String description) {
        this.table = table;
        this.sql = sql;
        this.description = description;
    }

    /**
     * Creates the table and its index if asked, then checks the table: columns, their types, the
     * claiming index, names a quoted twin hides, and the key's collation.
     *
     * @return the columns' JDBC types by lower-case name, for the checks of values before a write
     * @throws StoreSchemaException naming what is missing and the statements that add it
     */
    Map<String, ColumnType> check(Connection c, boolean create) throws SQLException {
        if (create) {
            try (Statement st = c.createStatement()) {
                for (String ddl : statements(sql.createTable(table))) {
                    st.execute(ddl);
                }
            }
            JdbcCalls.commitIfNeeded(c);
        }
        DatabaseMetaData md = c.getMetaData();
        String[] parts = splitTable(c);
        Map<String, String> columns = columns(md, parts);
        Map<String, ColumnType> columnTypes = columnTypes(md, parts);
        List<String> problems = new ArrayList<>();
        List<String> fixes = new ArrayList<>();
        foldingProblems(md, parts, problems, fixes);
        if (!problems.isEmpty()) {
            throw new StoreSchemaException("the task table '" + table.table() + "' in " + description
                    + " cannot be claimed from: " + String.join("; ", problems) + ". Rename with:\n"
                    + String.join("\n", fixes), null);
        }
        if (columns.isEmpty()) {
            throw new StoreSchemaException("the task table '" + table.table() + "' does not exist in " + description
                    + " (or has no columns this connection can see). Create it with:\n" + sql.createTable(table)
                    + "\nor build the store with createTableIfMissing(true)", null);
        }
        for (String col : table.columns()) {
            if (!columns.containsKey(col.toLowerCase(Locale.ROOT))) {
                problems.add("no column '" + col + "'");
                fixes.add(sql.addColumnSql(table, col) + ";");
            }
        }
        for (String col : List.of(table.lockedAtColumn(), table.updatedAtColumn(), table.versionColumn())) {
            String type = columns.get(col.toLowerCase(Locale.ROOT));
            if (type != null && !isInteger(type)) {
                problems.add("column '" + col + "' is " + type + ", not an integer: claiming stores epoch milliseconds "
                        + "and versions as BIGINT");
                fixes.add("-- change " + col + " to BIGINT (epoch milliseconds), for example with a new column and a copy");
            }
        }
        if (problems.isEmpty() && !hasClaimIndex(md, parts)) {
            problems.add("no index that starts with the filter columns " + table.filterColumns() + " and then '"
                    + table.lockedAtColumn() + "' (without it every claim reads the whole table)");
            fixes.add(sql.createIndexSql(table) + ";");
        }
        if (problems.isEmpty() && !hasUniqueKey(md, parts)) {
            problems.add("no primary key or unique index on the id column '" + table.idColumn() + "' alone (every guarded "
                    + "write finds its task by it: two rows with one key, or keys a PAD SPACE collation reads alike, would "
                    + "share one claim)");
            fixes.add("CREATE UNIQUE INDEX " + uniqueIndexName() + " ON " + table.table() + " (" + table.idColumn() + ");");
        }
        if (!problems.isEmpty()) {
            throw new StoreSchemaException("the task table '" + table.table() + "' in " + description
                    + " cannot be claimed from: " + String.join("; ", problems) + ". Add what is missing with:\n"
                    + String.join("\n", fixes), null);
        }
        // the key compares byte for byte, or two task ids that differ in case would be one row's guard
        ColumnType id = columnTypes.get(table.idColumn().toLowerCase(Locale.ROOT));
        if (id != null && id.isText()) {
            Collations.check(c, sql.dialect().id(), table.table(), table.idColumn(), "task table",
                    id.name() + (id.size() > 0 && id.size() < 65536 ? "(" + id.size() + ")" : ""));
            JdbcCalls.commitIfNeeded(c);
        }
        return columnTypes;
    }

    private static boolean isInteger(String type) {
        String t = type.toLowerCase(Locale.ROOT);
        return t.contains("int") || t.equals("numeric") || t.equals("decimal") || t.equals("number");
    }

    /** Catalog, schema and table as the metadata calls want them. */
    private String[] splitTable(Connection c) throws SQLException {
        return QuotedNames.split(c, table.table(), sql.dialect().id());
    }

    /** Lower-case column name to type name; tries the name as given, lower and upper case (H2 folds up). */
    private static Map<String, String> columns(DatabaseMetaData md, String[] p) throws SQLException {
        for (String[] variant : QuotedNames.variants(p)) {
            Map<String, String> out = new TreeMap<>();
            try (ResultSet rs = md.getColumns(variant[0], QuotedNames.pattern(md, variant[1]),
                    QuotedNames.pattern(md, variant[2]), null)) {
                while (rs.next()) {
                    if (!rs.getString("TABLE_NAME").equals(variant[2])) {
                        continue; // a driver that ignores the escape
                    }
                    out.put(rs.getString("COLUMN_NAME").toLowerCase(Locale.ROOT), rs.getString("TYPE_NAME"));
                }
            }
            if (!out.isEmpty()) {
                return out;
            }
        }
        return Map.of();
    }

    /**
     * A table or column created with a quoted name in another case is not the one the unquoted
     * statements reach ({@link QuotedNames}): found here by the metadata's real spelling, with the
     * rename that fixes it.
     */
    private void foldingProblems(DatabaseMetaData md, String[] p, List<String> problems, List<String> fixes)
            throws SQLException {
        QuotedNames.Folding folding = QuotedNames.Folding.of(sql.dialect().id());
        if (folding == QuotedNames.Folding.NONE) {
            return;
        }
        Set<String> wanted = new LinkedHashSet<>();
        table.columns().forEach(c -> wanted.add(c.toLowerCase(Locale.ROOT)));
        List<String> twins = QuotedNames.quotedTwins(md, p, folding);
        // with two twins the user picks one; the column check reads the first, as the advice does
        Optional<String> twin = twins.stream().findFirst();
        twin.ifPresent(real -> {
            problems.add(QuotedNames.twinAdvice(twins, table.table(), folding));
            fixes.add(QuotedNames.renameSql(real, table.table(), folding) + ";");
        });
        for (String[] variant : QuotedNames.variants(p)) {
            List<String> real = new ArrayList<>();
            String name = twin.orElse(variant[2]);
            try (ResultSet rs = md.getColumns(variant[0], QuotedNames.pattern(md, variant[1]), QuotedNames.pattern(md, name), null)) {
                while (rs.next()) {
                    if (rs.getString("TABLE_NAME").equals(name)) { // a driver that ignores the escape
                        real.add(rs.getString("COLUMN_NAME"));
                    }
                }
            }
            if (real.isEmpty()) {
                continue;
            }
            for (String c : real) {
                String f = folding.fold(c);
                if (wanted.contains(c.toLowerCase(Locale.ROOT)) && !c.equals(f)) {
                    problems.add("column \"" + c + "\" was created with a quoted name; unquoted it means " + f);
                    // as given: qualified if it was, and reaching the table once any rename above is done
                    fixes.add("ALTER TABLE " + table.table() + " RENAME COLUMN \"" + c + "\" TO " + f + ";");
                }
            }
            return;
        }
    }

    /** Lower-case column name to its JDBC type, with the same name variants as {@link #columns}. */
    private static Map<String, ColumnType> columnTypes(DatabaseMetaData md, String[] p) throws SQLException {
        for (String[] variant : QuotedNames.variants(p)) {
            Map<String, ColumnType> out = new TreeMap<>();
            try (ResultSet rs = md.getColumns(variant[0], QuotedNames.pattern(md, variant[1]),
                    QuotedNames.pattern(md, variant[2]), null)) {
                while (rs.next()) {
                    if (!rs.getString("TABLE_NAME").equals(variant[2])) {
                        continue; // a driver that ignores the escape
                    }
                    out.put(rs.getString("COLUMN_NAME").toLowerCase(Locale.ROOT),
                            new ColumnType(rs.getInt("DATA_TYPE"), rs.getString("TYPE_NAME"), rs.getInt("COLUMN_SIZE")));
                }
            }
            if (!out.isEmpty()) {
                return Map.copyOf(out);
            }
        }
        return Map.of();
    }

    /** The key is the primary key, or has a unique index of its own. */
    private boolean hasUniqueKey(DatabaseMetaData md, String[] p) throws SQLException {
        String id = table.idColumn().toLowerCase(Locale.ROOT);
        for (String[] variant : QuotedNames.variants(p)) {
            List<String> primary = new ArrayList<>();
            try (ResultSet rs = md.getPrimaryKeys(variant[0], variant[1], variant[2])) {
                while (rs.next()) {
                    String column = rs.getString("COLUMN_NAME");
                    if (column != null) {
                        primary.add(column.toLowerCase(Locale.ROOT));
                    }
                }
            }
            if (primary.equals(List.of(id))) {
                return true;
            }
            Map<String, List<String>> unique = new LinkedHashMap<>();
            try (ResultSet rs = md.getIndexInfo(variant[0], variant[1], variant[2], true, true)) {
                while (rs.next()) {
                    String index = rs.getString("INDEX_NAME");
                    String column = rs.getString("COLUMN_NAME");
                    // a partial index (PostgreSQL's WHERE) keeps keys unique among some rows only
                    if (index != null && column != null && !rs.getBoolean("NON_UNIQUE") && filterCondition(rs) == null) {
                        unique.computeIfAbsent(index, k -> new ArrayList<>()).add(column.toLowerCase(Locale.ROOT));
                    }
                }
            }
            for (Map.Entry<String, List<String>> index : unique.entrySet()) {
                if (index.getValue().equals(List.of(id)) && enforced(md.getConnection(), index.getKey())) {
                    return true;
                }
            }
            if (!primary.isEmpty() || !unique.isEmpty()) {
                return false;
            }
        }
        return false;
    }

    /**
     * Whether a unique index the metadata reports does keep every key unique: not a partial index
     * (SQLite's metadata does not say; its DDL does) and, on PostgreSQL, not one left INVALID by a
     * failed {@code CREATE INDEX CONCURRENTLY}.
     */
    private boolean enforced(Connection c, String index) throws SQLException {
        String query = switch (sql.dialect().id()) {
            case "postgresql" -> "SELECT i.indisvalid AND i.indpred IS NULL FROM pg_index i JOIN pg_class x ON x.oid = i.indexrelid "
                    + "WHERE x.relname = ?";
            case "sqlite" -> "SELECT sql IS NULL OR NOT (' ' || lower(replace(replace(sql, char(10), ' '), char(9), ' ')) "
                    + "LIKE '% where %') FROM sqlite_master WHERE type = 'index' AND name = ?";
            default -> null;
        };
        if (query == null) {
            return true;
        }
        try (PreparedStatement ps = c.prepareStatement(query)) {
            ps.setString(1, index);
            try (ResultSet rs = ps.executeQuery()) {
                boolean any = false;
                while (rs.next()) {
                    any = true;
                    if (!rs.getBoolean(1)) {
                        return false;
                    }
                }
                return any;
            }
        } finally {
            JdbcCalls.commitIfNeeded(c);
        }
    }

    private static @Nullable String filterCondition(ResultSet rs) {
        try {
            String condition = rs.getString("FILTER_CONDITION");
            return condition == null || condition.isBlank() ? null : condition;
        } catch (SQLException e) {
            return null; // a driver without the column has no partial indexes to report
        }
    }

    private String uniqueIndexName() {
        String bare = table.table().substring(table.table().indexOf('.') + 1);
        return (bare.length() > 40 ? bare.substring(0, 40) : bare) + "_" + table.idColumn() + "_uidx";
    }

    private boolean hasClaimIndex(DatabaseMetaData md, String[] p) throws SQLException {
        for (String[] variant : QuotedNames.variants(p)) {
            Map<String, TreeMap<Integer, String>> indexes = new LinkedHashMap<>();
            try (ResultSet rs = md.getIndexInfo(variant[0], variant[1], variant[2], false, true)) {
                while (rs.next()) {
                    String index = rs.getString("INDEX_NAME");
                    String column = rs.getString("COLUMN_NAME");
                    if (index != null && column != null) {
                        indexes.computeIfAbsent(index, k -> new TreeMap<>())
                                .put((int) rs.getShort("ORDINAL_POSITION"), column.toLowerCase(Locale.ROOT));
                    }
                }
            }
            Set<String> filters = new LinkedHashSet<>();
            table.filterColumns().forEach(f -> filters.add(f.toLowerCase(Locale.ROOT)));
            for (TreeMap<Integer, String> idx : indexes.values()) {
                List<String> cols = new ArrayList<>(idx.values());
                if (cols.size() > filters.size() && Set.copyOf(cols.subList(0, filters.size())).equals(filters)
                        && cols.get(filters.size()).equals(table.lockedAtColumn().toLowerCase(Locale.ROOT))) {
                    return true;
                }
            }
            if (!indexes.isEmpty()) {
                return false;
            }
        }
        return false;
    }

    /** The DDL script's statements, without comment lines. */
    static List<String> statements(String script) {
        List<String> out = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        for (String line : script.split("\n", -1)) {
            if (line.strip().startsWith("--")) {
                continue;
            }
            current.append(line).append('\n');
            if (line.strip().endsWith(";")) {
                String s = current.toString().strip();
                out.add(s.substring(0, s.length() - 1));
                current.setLength(0);
            }
        }
        if (!current.toString().isBlank()) {
            out.add(current.toString().strip());
        }
        return out;
    }
}
