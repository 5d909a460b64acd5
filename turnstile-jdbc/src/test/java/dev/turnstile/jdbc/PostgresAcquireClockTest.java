package dev.turnstile.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.turnstile.spi.AcquireRequest;
import dev.turnstile.spi.Grant;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * PostgreSQL's clock_timestamp() moves within a statement: an acquire that read it once for
 * acquired_at and again for expires_at made a lease a millisecond longer than its TTL whenever the
 * two reads fell on either side of a millisecond (CI saw a 60.001 s lease with a 60 s TTL). The
 * acquire reads it once; 2,000 grants each last exactly their TTL.
 */
class PostgresAcquireClockTest {
    private static final Duration TTL = Duration.ofMinutes(1);

    @Test
    void everyGrantLastsExactlyItsTtl() throws Exception {
        String table = JdbcLockStoreTest.table();
        try (HikariDataSource pool = JdbcLockStoreTest.pool(TestDatabases.POSTGRES, true);
                JdbcLockStore store = JdbcLockStore.builder(pool).tableName(table).createTableIfMissing(true).build();
                Connection admin = DriverManager.getConnection(TestDatabases.POSTGRES);
                Statement st = admin.createStatement()) {
            try {
                for (int i = 0; i < 2_000; i++) {
                    Grant g = store.tryAcquire(new AcquireRequest("clock-" + i, "o", "t" + i, TTL)).orElseThrow();
                    assertThat(Duration.between(g.acquiredAt(), g.expiresAt())).as("grant %d", i).isEqualTo(TTL);
                }
            } finally {
                st.execute("DROP TABLE " + table);
            }
        }
    }
}
