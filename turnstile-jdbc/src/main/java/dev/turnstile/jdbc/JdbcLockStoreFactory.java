package dev.turnstile.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.turnstile.StoreUnavailableException;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStoreFactory;
import dev.turnstile.spi.StoreUrls;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Opens JDBC stores from URLs, with a small HikariCP pool the store owns. Turnstile's own options
 * ride in the URL as {@code turnstile.*} parameters and are removed before the driver sees it:
 *
 * <ul>
 *   <li>{@code turnstile.table} — table name (default {@code turnstile_locks})
 *   <li>{@code turnstile.createTable} — create the table if missing (default {@code true} for the
 *       embedded SQLite and H2, {@code false} for server databases)
 *   <li>{@code turnstile.poolSize} — maximum connections (default 4)
 *   <li>{@code turnstile.connectTimeout} — milliseconds to wait for a connection (default 5000)
 * </ul>
 *
 * <p>SQLite URLs get {@code journal_mode=WAL} and {@code busy_timeout=10000} unless they set them,
 * so several processes on one host can share the file.
 */
public final class JdbcLockStoreFactory implements LockStoreFactory {
    /** Options ride as query parameters ({@code ?a=b&c=d}), or as H2-style settings ({@code ;a=b}). */
    private static final Pattern OPTION = Pattern.compile("([?&])turnstile\\.([A-Za-z]+)=([^&#]*)");
    private static final Pattern H2_OPTION = Pattern.compile("(;)turnstile\\.([A-Za-z]+)=([^;#]*)");
    private static final Set<String> KNOWN = Set.of("table", "createTable", "poolSize", "connectTimeout");

    @Override
    public List<String> schemes() {
        return List.of("jdbc:sqlite:", "jdbc:postgresql:", "jdbc:mariadb:", "jdbc:mysql:", "jdbc:h2:");
    }

    @Override
    public boolean supports(String url) {
        String u = url.toLowerCase(Locale.ROOT);
        return schemes().stream().anyMatch(u::startsWith);
    }

    @Override
    public String schema(String url) {
        Parsed p = parse(url);
        return p.dialect.createTable(p.options.getOrDefault("table", Dialect.DEFAULT_TABLE));
    }

    @Override
    public void applySchema(String url) {
        try (JdbcLockStore store = open(url, true)) {
            store.dialect(); // first use runs CREATE TABLE IF NOT EXISTS
        }
    }

    @Override
    public LockStore open(String url) {
        return open(url, null);
    }

    private JdbcLockStore open(String url, Boolean forceCreate) {
        Parsed p = parse(url);
        String table = p.options.getOrDefault("table", Dialect.DEFAULT_TABLE);
        boolean embedded = p.dialect == SqlDialect.SQLITE || p.dialect == SqlDialect.H2;
        boolean create = forceCreate != null ? forceCreate
                : bool("createTable", p.options.getOrDefault("createTable", Boolean.toString(embedded)));
        int poolSize = integer("poolSize", p.options.getOrDefault("poolSize", "4"), 1, 100);
        int connectTimeout = integer("connectTimeout", p.options.getOrDefault("connectTimeout", "5000"), 250, 600_000);

        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(p.dialect == SqlDialect.SQLITE ? withSqliteDefaults(p.jdbcUrl) : p.jdbcUrl);
        config.setPoolName("turnstile");
        config.setMaximumPoolSize(poolSize);
        config.setMinimumIdle(1);
        config.setConnectionTimeout(connectTimeout);
        config.setInitializationFailTimeout(1);
        HikariDataSource pool;
        try {
            pool = new HikariDataSource(config);
        } catch (RuntimeException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            throw new StoreUnavailableException("cannot connect to " + StoreUrls.redact(p.jdbcUrl) + ": "
                    + cause.getMessage(), e);
        }
        return JdbcLockStore.builder(pool)
                .dialect(p.dialect)
                .tableName(table)
                .createTableIfMissing(create)
                .description(StoreUrls.redact(p.jdbcUrl))
                .owning(pool)
                .build();
    }

    private record Parsed(String jdbcUrl, SqlDialect dialect, Map<String, String> options) {}

    private static Parsed parse(String url) {
        SqlDialect dialect = SqlDialect.fromJdbcUrl(url);
        Map<String, String> options = new LinkedHashMap<>();
        Matcher m = (dialect == SqlDialect.H2 ? H2_OPTION : OPTION).matcher(url);
        StringBuilder rest = new StringBuilder();
        while (m.find()) {
            String key = m.group(2);
            if (!KNOWN.contains(key)) {
                throw new IllegalArgumentException("unknown option 'turnstile." + key + "' in store URL '"
                        + StoreUrls.redact(url) + "': known options are turnstile." + String.join(", turnstile.", KNOWN));
            }
            options.put(key, m.group(3));
            // keep the separator only when it opens the query string ('?') so later parameters still parse
            m.appendReplacement(rest, m.group(1).equals("?") ? "?" : "");
        }
        m.appendTail(rest);
        String jdbcUrl = rest.toString().replace("?&", "?");
        if (jdbcUrl.endsWith("?")) {
            jdbcUrl = jdbcUrl.substring(0, jdbcUrl.length() - 1);
        }
        if (options.containsKey("table")) {
            Dialect.checkTable(options.get("table"));
        }
        return new Parsed(jdbcUrl, dialect, options);
    }

    private static String withSqliteDefaults(String url) {
        String s = url;
        if (!s.contains("journal_mode=")) {
            s += (s.contains("?") ? "&" : "?") + "journal_mode=WAL";
        }
        if (!s.contains("busy_timeout=")) {
            s += "&busy_timeout=10000";
        }
        return s;
    }

    private static boolean bool(String key, String v) {
        if (v.equalsIgnoreCase("true") || v.equalsIgnoreCase("false")) {
            return Boolean.parseBoolean(v);
        }
        throw new IllegalArgumentException("turnstile." + key + "=" + v + " in the store URL: give true or false");
    }

    private static int integer(String key, String v, int min, int max) {
        try {
            int n = Integer.parseInt(v);
            if (n >= min && n <= max) {
                return n;
            }
        } catch (NumberFormatException ignored) {
            // fall through to the message
        }
        throw new IllegalArgumentException("turnstile." + key + "=" + v + " in the store URL: give a whole number from "
                + min + " to " + max);
    }
}
