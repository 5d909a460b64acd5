package dev.turnstile.claim;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Where the tasks are: the user's own table (or collection) and the names of the columns (or
 * fields) that claiming reads and writes. Immutable; every name is validated as an identifier
 * when it is set, because it is spliced into the store's statements.
 *
 * <p>Columns, with their defaults:
 * <ul>
 *   <li>{@code id}: the task's key;
 *   <li>{@code phase}: the state the task is in ({@code Creating}, {@code Deleting}, …); also a
 *       filter column, and what {@link Claim#moveTo} sets;
 *   <li>{@code locked_at}: when the task was last claimed, by the store's clock, in epoch
 *       milliseconds on SQL stores and as a BSON date on MongoDB (the epoch when free);
 *   <li>{@code updated_at}: when the task last made progress, in the same form; claims are
 *       ordered by {@code locked_at} then {@code updated_at}, and {@link Claim#relock} measures the
 *       time waited from it (never set, 0 or missing: nothing waited yet);
 *   <li>{@code claim_version}: a number raised by every claim: the fence that guards later writes.
 * </ul>
 *
 * <pre>{@code
 * ClaimTable gateways = ClaimTable.builder("gateways").phaseColumn("state").build();
 * }</pre>
 */
public final class ClaimTable {
    private final String table;
    private final String idColumn;
    private final String phaseColumn;
    private final List<String> filterColumns;
    private final String lockedAtColumn;
    private final String updatedAtColumn;
    private final String versionColumn;

    private ClaimTable(Builder b) {
        this.table = b.table;
        this.idColumn = b.idColumn;
        this.phaseColumn = b.phaseColumn;
        this.lockedAtColumn = b.lockedAtColumn;
        this.updatedAtColumn = b.updatedAtColumn;
        this.versionColumn = b.versionColumn;
        Set<String> filters = new LinkedHashSet<>();
        filters.add(b.phaseColumn);
        filters.addAll(b.filterColumns);
        this.filterColumns = List.copyOf(filters);
    }

    /**
     * Starts a builder for a table (or collection) with the default column names.
     *
     * @param table the table name, an identifier, optionally {@code schema.table}
     * @return a builder
     * @throws IllegalArgumentException if the name is not an identifier
     */
    public static Builder builder(String table) {
        return new Builder(Identifiers.table(table));
    }

    /**
     * Returns the table (or collection) name.
     *
     * @return the name
     */
    public String table() {
        return table;
    }

    /**
     * Returns the key column.
     *
     * @return the column name
     */
    public String idColumn() {
        return idColumn;
    }

    /**
     * Returns the phase column, the one {@link Claim#moveTo} sets.
     *
     * @return the column name
     */
    public String phaseColumn() {
        return phaseColumn;
    }

    /**
     * Returns the columns a {@link ClaimFilter} may test: the phase column first, then the others
     * declared. The index the store needs starts with these.
     *
     * @return the column names, unmodifiable
     */
    public List<String> filterColumns() {
        return filterColumns;
    }

    /**
     * Returns the column holding when the task was last claimed (epoch milliseconds).
     *
     * @return the column name
     */
    public String lockedAtColumn() {
        return lockedAtColumn;
    }

    /**
     * Returns the column holding when the task last made progress (epoch milliseconds).
     *
     * @return the column name
     */
    public String updatedAtColumn() {
        return updatedAtColumn;
    }

    /**
     * Returns the claim version column: raised by every claim, checked by every guarded write.
     *
     * @return the column name
     */
    public String versionColumn() {
        return versionColumn;
    }

    /**
     * Returns every column claiming reads or writes, each once, in a stable order.
     *
     * @return the column names
     */
    public List<String> columns() {
        Set<String> all = new LinkedHashSet<>();
        all.add(idColumn);
        all.addAll(filterColumns);
        all.add(lockedAtColumn);
        all.add(updatedAtColumn);
        all.add(versionColumn);
        return List.copyOf(all);
    }

    /** Checks that a filter only names declared filter columns (they are what the index covers). */
    void checkFilter(ClaimFilter filter) {
        for (String column : filter.columns()) {
            if (filterColumns.stream().noneMatch(c -> c.equalsIgnoreCase(column))) {
                throw new IllegalArgumentException("filter column '" + column + "' is not a filter column of table '"
                        + table + "' (declared: " + filterColumns + "): add it with ClaimTable.builder(…).filterColumns(\""
                        + column + "\") and index it (the printed DDL shows the index)");
            }
        }
    }

    @Override
    public String toString() {
        return "ClaimTable[" + table + ": id=" + idColumn + ", filters=" + filterColumns + ", lockedAt=" + lockedAtColumn
                + ", updatedAt=" + updatedAtColumn + ", version=" + versionColumn + "]";
    }

    /** Builds a {@link ClaimTable}. Not thread-safe. */
    public static final class Builder {
        private final String table;
        private String idColumn = "id";
        private String phaseColumn = "phase";
        private final List<String> filterColumns = new ArrayList<>();
        private String lockedAtColumn = "locked_at";
        private String updatedAtColumn = "updated_at";
        private String versionColumn = "claim_version";

        private Builder(String table) {
            this.table = table;
        }

        /**
         * Sets the key column. Default {@code id}.
         *
         * @param column an identifier
         * @return this builder
         * @throws IllegalArgumentException if it is not an identifier
         */
        public Builder idColumn(String column) {
            this.idColumn = Identifiers.column("id column", column);
            return this;
        }

        /**
         * Sets the phase column. Default {@code phase}.
         *
         * @param column an identifier
         * @return this builder
         * @throws IllegalArgumentException if it is not an identifier
         */
        public Builder phaseColumn(String column) {
            this.phaseColumn = Identifiers.column("phase column", column);
            return this;
        }

        /**
         * Declares more columns a filter may test besides the phase (for example a tenant or a
         * shard). The store's index must start with the filter columns.
         *
         * @param columns identifiers
         * @return this builder
         * @throws IllegalArgumentException if one is not an identifier
         */
        public Builder filterColumns(String... columns) {
            if (columns == null) {
                throw new IllegalArgumentException("filter columns are null: give column names");
            }
            for (String c : columns) {
                filterColumns.add(Identifiers.column("filter column", c));
            }
            return this;
        }

        /**
         * Sets the column holding when the task was last claimed. Default {@code locked_at}.
         *
         * @param column an identifier
         * @return this builder
         * @throws IllegalArgumentException if it is not an identifier
         */
        public Builder lockedAtColumn(String column) {
            this.lockedAtColumn = Identifiers.column("lockedAt column", column);
            return this;
        }

        /**
         * Sets the column holding when the task last made progress. Default {@code updated_at}.
         *
         * @param column an identifier
         * @return this builder
         * @throws IllegalArgumentException if it is not an identifier
         */
        public Builder updatedAtColumn(String column) {
            this.updatedAtColumn = Identifiers.column("updatedAt column", column);
            return this;
        }

        /**
         * Sets the claim version column. Default {@code claim_version}.
         *
         * @param column an identifier
         * @return this builder
         * @throws IllegalArgumentException if it is not an identifier
         */
        public Builder versionColumn(String column) {
            this.versionColumn = Identifiers.column("claim version column", column);
            return this;
        }

        /**
         * Builds the value.
         *
         * @return the table description
         * @throws IllegalArgumentException if two roles share one column
         */
        public ClaimTable build() {
            List<String> roles = List.of(idColumn, phaseColumn, lockedAtColumn, updatedAtColumn, versionColumn);
            Set<String> seen = new LinkedHashSet<>();
            for (String r : roles) {
                if (!seen.add(r.toLowerCase(Locale.ROOT))) {
                    throw new IllegalArgumentException("column '" + r + "' is given two roles in table '" + table
                            + "': id, phase, lockedAt, updatedAt and version must be distinct columns");
                }
            }
            java.util.Map<String, String> spelled = new java.util.HashMap<>();
            spelled.put(phaseColumn.toLowerCase(Locale.ROOT), phaseColumn);
            for (String f : filterColumns) {
                // column names are case-insensitive (the store finds each in the table whatever its case):
                // PHASE beside phase would be one column tested and indexed twice
                String first = spelled.putIfAbsent(f.toLowerCase(Locale.ROOT), f);
                if (first != null && !first.equals(f)) {
                    throw new IllegalArgumentException("filter column '" + f + "' is column '" + first + "' spelled in "
                            + "another case in table '" + table + "': column names are case-insensitive, give each once");
                }
                if (!f.equalsIgnoreCase(phaseColumn) && seen.contains(f.toLowerCase(Locale.ROOT))) {
                    throw new IllegalArgumentException("filter column '" + f + "' is also the id, lockedAt, updatedAt or "
                            + "version column of table '" + table + "': filter on task data only");
                }
            }
            return new ClaimTable(this);
        }
    }
}
