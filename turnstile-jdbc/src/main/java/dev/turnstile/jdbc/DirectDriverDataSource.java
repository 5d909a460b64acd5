package dev.turnstile.jdbc;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.time.Duration;
import java.util.Optional;
import java.util.Properties;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * Connections straight from one named driver, for the pool to wrap. A pool given a JDBC URL asks
 * {@link java.sql.DriverManager}, whose first use loads and starts every driver on the class path
 * (the CLI carries five; MySQL's starts a thread): about a tenth of a {@code turnstile run}'s
 * start-up, spent on drivers that the URL does not need.
 */
final class DirectDriverDataSource implements DataSource {
    private final Driver driver;
    private final String url;
    private final Duration sqliteRaceBudget;
    /** The URL without its parameters: opens of one file take turns under this key. */
    private final String file;

    private DirectDriverDataSource(Driver driver, String url, Duration sqliteRaceBudget) {
        this.driver = driver;
        this.url = url;
        this.sqliteRaceBudget = sqliteRaceBudget;
        int query = url.indexOf('?');
        this.file = query < 0 ? url : url.substring(0, query);
    }

    /**
     * A data source for {@code url} over the driver class {@code driverClass}, if that class is on
     * the class path and takes the URL; empty otherwise (the caller then goes through
     * DriverManager, which reports a missing driver as it always has).
     */
    static Optional<DataSource> of(String driverClass, String url) {
        return of(driverClass, url, Duration.ZERO);
    }

    /**
     * As {@link #of(String, String)}, for a SQLite URL: an open that loses a race with another
     * connection to the same file is tried again for up to {@code sqliteRaceBudget} (see
     * {@link SqliteOpenRace}).
     */
    static Optional<DataSource> of(String driverClass, String url, Duration sqliteRaceBudget) {
        try {
            Class<?> type = Class.forName(driverClass, true, DirectDriverDataSource.class.getClassLoader());
            Driver driver = (Driver) type.getDeclaredConstructor().newInstance();
            return driver.acceptsURL(url) ? Optional.of(new DirectDriverDataSource(driver, url, sqliteRaceBudget)) : Optional.empty();
        } catch (ReflectiveOperationException | LinkageError | ClassCastException | SQLException e) {
            return Optional.empty();
        }
    }

    @Override
    public Connection getConnection() throws SQLException {
        if (sqliteRaceBudget.isZero()) {
            return connect();
        }
        return SqliteOpenRace.open(file, this::connect, sqliteRaceBudget);
    }

    private Connection connect() throws SQLException {
        Connection c = driver.connect(url, new Properties());
        if (c == null) {
            throw new SQLException("the driver " + driver.getClass().getName() + " does not take this URL");
        }
        return c;
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        // The URL carries the credentials; the pool is given none.
        throw new SQLFeatureNotSupportedException("credentials ride in the URL");
    }

    @Override
    public @Nullable PrintWriter getLogWriter() {
        return null;
    }

    @Override
    public void setLogWriter(PrintWriter out) {
        // no log writer: the pool and the store log through SLF4J
    }

    @Override
    public void setLoginTimeout(int seconds) {
        // the pool's connection timeout bounds the wait
    }

    @Override
    public int getLoginTimeout() {
        return 0;
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        throw new SQLFeatureNotSupportedException();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
        if (iface.isInstance(this)) {
            return iface.cast(this);
        }
        throw new SQLException("not a wrapper for " + iface.getName());
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) {
        return iface.isInstance(this);
    }
}
