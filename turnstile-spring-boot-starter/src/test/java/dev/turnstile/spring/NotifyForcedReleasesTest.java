package dev.turnstile.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import java.io.PrintWriter;
import java.sql.Connection;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * The pool-size rule of {@code turnstile.jdbc.notify-forced-releases}: listening for forced releases
 * holds one connection, so it is on by default only where the pool is known to have room.
 */
class NotifyForcedReleasesTest {

    @Test
    void aHikariPoolSaysItsSizeAndAnUnknownDataSourceCountsAsNone() {
        try (HikariDataSource pool = new HikariDataSource()) {
            pool.setMaximumPoolSize(7); // not started: no connection is made
            assertThat(TurnstileStoreConfigurations.FromDataSource.maximumPoolSize(pool)).isEqualTo(7);
            pool.setMaximumPoolSize(1);
            assertThat(TurnstileStoreConfigurations.FromDataSource.maximumPoolSize(pool)).isEqualTo(1);
        }
        assertThat(TurnstileStoreConfigurations.FromDataSource.maximumPoolSize(new Unknown())).isZero();
    }

    /** A DataSource that says nothing of its size. */
    private static final class Unknown implements DataSource {
        @Override public Connection getConnection() { throw new UnsupportedOperationException(); }
        @Override public Connection getConnection(String u, String p) { throw new UnsupportedOperationException(); }
        @Override public PrintWriter getLogWriter() { return null; }
        @Override public void setLogWriter(PrintWriter out) { }
        @Override public void setLoginTimeout(int seconds) { }
        @Override public int getLoginTimeout() { return 0; }
        @Override public Logger getParentLogger() { return Logger.getGlobal(); }
        @Override public <T> T unwrap(Class<T> iface) { throw new UnsupportedOperationException(); }
        @Override public boolean isWrapperFor(Class<?> iface) { return false; }
    }
}
