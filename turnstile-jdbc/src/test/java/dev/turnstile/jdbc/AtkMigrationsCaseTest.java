package dev.turnstile.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.turnstile.spi.AcquireRequest;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * atk: the starter lets turnstile.jdbc.flyway.enabled=true run with any case of the table name
 * (TurnstileFlywayMigrations: bare.equalsIgnoreCase("turnstile_locks")), and its fold() leaves
 * MariaDB/MySQL names as they are. The migrations create turnstile_locks in lower case; on a
 * MariaDB/MySQL server with lower_case_table_names=0 (Linux's default) the store's unquoted
 * TURNSTILE_LOCKS is another table: the application fails at start, told to set the very
 * property it has set. Here: Turnstile's Flyway location applied, then the store as the starter
 * builds it for turnstile.jdbc.table=TURNSTILE_LOCKS.
 */
class AtkMigrationsCaseTest {

    @Test
    void anUpperCaseTableNameTheStarterAcceptsMeetsTheTableTheMariaDbMigrationCreated(@TempDir Path dir) throws Exception {
        try (JdbcMigrationsTest.FreshDb db = new JdbcMigrationsTest.FreshDb("mariadb", dir)) {
            assertThat(db.turnstileFlyway().migrate().migrationsExecuted).isEqualTo(1);
            try (JdbcLockStore store = JdbcLockStore.builder(db.pool).tableName("TURNSTILE_LOCKS").build()) {
                assertThat(store.tryAcquire(new AcquireRequest("job", "a", "token-a", Duration.ofSeconds(30))))
                        .as("the store on TURNSTILE_LOCKS after Turnstile's MariaDB migration").isPresent();
            }
        }
    }
}
