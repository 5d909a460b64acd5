package dev.turnstile.claim;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Which tasks a claim may take: equality on filter columns, all of them at once. Immutable.
 * Values reach the store as bound parameters (or document values), never spliced into a
 * statement; column names are identifiers and must be declared filter columns of the
 * {@link ClaimTable}.
 *
 * <pre>{@code
 * ClaimFilter deleting = ClaimFilter.where("phase", "Deleting");
 * }</pre>
 */
public final class ClaimFilter {
    private static final ClaimFilter ALL = new ClaimFilter(Map.of());
    private final Map<String, Object> conditions;

    private ClaimFilter(Map<String, Object> conditions) {
        this.conditions = conditions;
    }

    /**
     * Returns the filter that matches every task.
     *
     * @return the empty filter
     */
    public static ClaimFilter all() {
        return ALL;
    }

    /**
     * Returns a filter for tasks whose {@code column} equals {@code value}.
     *
     * @param column a filter column, an identifier
     * @param value a {@link String}, {@link Integer}, {@link Long} or {@link Boolean}
     * @return the filter
     * @throws IllegalArgumentException if the column is not an identifier or the value is null or
     *     of another type
     */
    public static ClaimFilter where(String column, Object value) {
        return ALL.and(column, value);
    }

    /**
     * Returns this filter with one more condition.
     *
     * @param column a filter column, an identifier
     * @param value a {@link String}, {@link Integer}, {@link Long} or {@link Boolean}
     * @return a new filter
     * @throws IllegalArgumentException if the column is not an identifier, is already tested, or
     *     the value is null or of another type
     */
    public ClaimFilter and(String column, Object value) {
        Identifiers.column("filter column", column);
        checkValue("filter value for '" + column + "'", value);
        if (conditions.keySet().stream().anyMatch(column::equalsIgnoreCase)) {
            throw new IllegalArgumentException("filter column '" + column + "' is tested twice: give each column once");
        }
        Map<String, Object> next = new LinkedHashMap<>(conditions);
        next.put(column, value);
        return new ClaimFilter(Collections.unmodifiableMap(next));
    }

    /**
     * Returns the conditions, column to value, in the order they were added.
     *
     * @return an unmodifiable map
     */
    public Map<String, Object> conditions() {
        return conditions;
    }

    /**
     * Returns the tested columns, in the order they were added.
     *
     * @return the column names
     */
    public List<String> columns() {
        return new ArrayList<>(conditions.keySet());
    }

    static Object checkValue(String what, Object value) {
        if (value == null) {
            throw new IllegalArgumentException(what + " is null: claiming tests equality, give a value");
        }
        if (!(value instanceof String || value instanceof Integer || value instanceof Long || value instanceof Boolean)) {
            throw new IllegalArgumentException(what + " is a " + value.getClass().getName()
                    + ": give a String, Integer, Long or Boolean (values every store can compare)");
        }
        return value;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ClaimFilter f && f.conditions.equals(conditions);
    }

    @Override
    public int hashCode() {
        return conditions.hashCode();
    }

    @Override
    public String toString() {
        return conditions.isEmpty() ? "all tasks" : conditions.toString();
    }
}
