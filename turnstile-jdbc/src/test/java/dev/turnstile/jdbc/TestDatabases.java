package dev.turnstile.jdbc;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.logging.Logger;
import javax.sql.DataSource;

/** Where the test databases are: the servers this machine kind runs, and an SQLite file per run. */
final class TestDatabases {
    static final String POSTGRES = System.getProperty("turnstile.test.postgres",
            "jdbc:postgresql://127.0.0.1:5432/test?user=postgres");
    static final String MARIADB = System.getProperty("turnstile.test.mariadb",
            "jdbc:mariadb://127.0.0.1:3306/test?user=root");
    static final String MYSQL_DRIVER = System.getProperty("turnstile.test.mysql",
            "jdbc:mysql://127.0.0.1:3306/test?user=root&turnstile.table=turnstile_locks_mysql");
    static final String SQLITE = "jdbc:sqlite:" + tempDir().resolve("locks.db");

    private TestDatabases() {}

    private static Path tempDir() {
        try {
            return Files.createTempDirectory("turnstile-sqlite");
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Adds a Turnstile option to a URL whatever its separator style. */
    static String with(String url, String option) {
        if (url.startsWith("jdbc:h2:")) {
            return url + ";" + option;
        }
        return url + (url.contains("?") ? "&" : "?") + option;
    }

    /** A pool-less DataSource, for stores pointed where nothing answers. */
    static DataSource driverManager(String url) {
        return new DataSource() {
            @Override public Connection getConnection() throws SQLException { return DriverManager.getConnection(url); }
            @Override public Connection getConnection(String u, String p) throws SQLException { return DriverManager.getConnection(url, u, p); }
            @Override public PrintWriter getLogWriter() { return null; }
            @Override public void setLogWriter(PrintWriter out) {}
            @Override public void setLoginTimeout(int seconds) {}
            @Override public int getLoginTimeout() { return 0; }
            @Override public Logger getParentLogger() { return Logger.getGlobal(); }
            @Override public <T> T unwrap(Class<T> iface) throws SQLException { throw new SQLException("not a wrapper"); }
            @Override public boolean isWrapperFor(Class<?> iface) { return false; }
        };
    }
}
