package dev.turnstile.spring;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fresh PostgreSQL schemas for tests that run migrations (each case needs an empty schema, so that
 * one case's history table or lock table never decides another's), dropped after each test.
 * Register it with {@code @RegisterExtension}.
 */
final class PostgresSchemas implements AfterEachCallback {
    static final String URL = "jdbc:postgresql://127.0.0.1:5432/test?user=postgres";
    private final String prefix;
    private final List<String> created = new ArrayList<>();

    /** Schemas named {@code prefix} plus ten random hex digits. */
    PostgresSchemas(String prefix) {
        this.prefix = prefix;
    }

    /** Creates an empty schema and returns its name. */
    String fresh() throws SQLException {
        String schema = prefix + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        exec("CREATE SCHEMA " + schema);
        created.add(schema);
        return schema;
    }

    /** The Spring properties of a DataSource whose connections work in {@code schema}. */
    static String[] dataSource(String schema) {
        return new String[] {"spring.datasource.url=jdbc:postgresql://127.0.0.1:5432/test?currentSchema=" + schema,
            "spring.datasource.username=postgres"};
    }

    static void exec(String sql) throws SQLException {
        try (Connection c = DriverManager.getConnection(URL); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }

    /** The first column of every row {@code sql} returns. */
    static List<String> rows(String sql) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Connection c = DriverManager.getConnection(URL); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery(sql)) {
            while (rs.next()) {
                out.add(rs.getString(1));
            }
        }
        return out;
    }

    @Override
    public void afterEach(ExtensionContext context) throws SQLException {
        for (String schema : created) {
            exec("DROP SCHEMA " + schema + " CASCADE");
        }
        created.clear();
    }
}
