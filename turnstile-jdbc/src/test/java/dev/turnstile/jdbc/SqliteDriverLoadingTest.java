package dev.turnstile.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.turnstile.LockOptions;
import dev.turnstile.Turnstile;
import dev.turnstile.spi.LockStore;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** An SQLite store opened from a URL takes its connections straight from the SQLite driver. */
class SqliteDriverLoadingTest {
    @TempDir Path dir;

    @Test
    void openingTheEmbeddedStoreLoadsNoOtherDriver() throws Exception {
        // A fresh JVM: in this one DriverManager has long been started by other tests.
        Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-verbose:class", "-cp", System.getProperty("java.class.path"), OpenSqliteStore.class.getName(),
                "jdbc:sqlite:" + dir.resolve("locks.db"))
                .redirectErrorStream(true).start();
        String out = new String(child.getInputStream().readAllBytes());
        assertThat(child.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(child.exitValue()).as(out).isZero();
        assertThat(out).contains("org.sqlite.JDBC ", "acquired fence 1")
                .doesNotContain("org.postgresql.Driver ", "org.h2.Driver ", "org.mariadb.jdbc.Driver ",
                        "com.mysql.cj.jdbc.Driver ");
    }

    @Test
    void aDriverThatIsMissingOrRefusesTheUrlIsNoDataSource() {
        assertThat(DirectDriverDataSource.of("org.example.NoSuchDriver", "jdbc:sqlite::memory:")).isEmpty();
        assertThat(DirectDriverDataSource.of("org.sqlite.JDBC", "jdbc:postgresql://127.0.0.1/test")).isEmpty();
        assertThat(DirectDriverDataSource.of("java.lang.String", "jdbc:sqlite::memory:")).isEmpty();
    }

    @Test
    void theDataSourceConnectsWithTheUrlsOwnSettings() throws Exception {
        String url = "jdbc:sqlite:" + dir.resolve("direct.db") + "?journal_mode=WAL&busy_timeout=1234";
        var ds = DirectDriverDataSource.of("org.sqlite.JDBC", url).orElseThrow();
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            for (var pragma : List.of(List.of("journal_mode", "wal"), List.of("busy_timeout", "1234"))) {
                try (ResultSet rs = s.executeQuery("PRAGMA " + pragma.get(0))) {
                    assertThat(rs.next()).isTrue();
                    assertThat(rs.getString(1)).isEqualTo(pragma.get(1));
                }
            }
        }
    }

    /** Opens the store from the URL in args[0] and takes one lock. */
    static final class OpenSqliteStore {
        public static void main(String[] args) {
            try (LockStore store = new JdbcLockStoreFactory().open(args[0]);
                    Turnstile turnstile = Turnstile.builder(store).build()) {
                var lease = turnstile.tryAcquire("loading", LockOptions.builder().build()).orElseThrow();
                System.out.println("acquired fence " + lease.fence());
                lease.release();
            }
        }
    }
}
