package dev.turnstile.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.turnstile.StoreSchemaException;
import dev.turnstile.spi.AcquireRequest;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A lock table of the right name and columns whose name column is not unique by itself (made by
 * hand, or kept by a migration that only checked the table exists) is refused at start: on MariaDB
 * and H2 two acquires would each insert a row and both hold the lock.
 */
class UniqueKeyTest {
    private static final String COLUMNS = "owner VARCHAR(255) NOT NULL, token VARCHAR(64) NOT NULL, fence BIGINT NOT NULL, "
            + "acquired_at BIGINT NOT NULL, expires_at BIGINT NOT NULL";
    /** The name column as each database's own DDL has it (binary comparison). */
    private static final Map<String, String> NAME = Map.of(
            "postgresql", "name VARCHAR(255) COLLATE \"C\" NOT NULL",
            "mariadb", "name VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL",
            "h2", "name VARCHAR(255) NOT NULL",
            "sqlite", "name TEXT NOT NULL");

    @ParameterizedTest
    @ValueSource(strings = {"postgresql", "mariadb", "h2", "sqlite"})
    void aTableWhoseNameIsNotUniqueIsRefusedAtStartAndTheFixWorks(String kind, @TempDir Path dir) throws Exception {
        try (JdbcMigrationsTest.FreshDb db = new JdbcMigrationsTest.FreshDb(kind, dir)) {
            db.exec("CREATE TABLE turnstile_locks (" + NAME.get(kind) + ", " + COLUMNS + ")");
            String fix;
            try (JdbcLockStore store = JdbcLockStore.builder(db.pool).build()) {
                fix = refused(store);
            }
            assertThat(db.count("SELECT count(*) FROM turnstile_locks")).as("nothing written").isZero();
            db.exec(fix);
            try (JdbcLockStore a = JdbcLockStore.builder(db.pool).build(); JdbcLockStore b = JdbcLockStore.builder(db.pool).build()) {
                assertThat(a.tryAcquire(new AcquireRequest("job", "a", "token-a", Duration.ofSeconds(30)))).isPresent();
                assertThat(b.tryAcquire(new AcquireRequest("job", "b", "token-b", Duration.ofSeconds(30)))).isEmpty();
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"postgresql", "mariadb", "h2", "sqlite"})
    void aKeyOfNameWithAnotherColumnIsNotEnough(String kind, @TempDir Path dir) throws Exception {
        try (JdbcMigrationsTest.FreshDb db = new JdbcMigrationsTest.FreshDb(kind, dir)) {
            db.exec("CREATE TABLE turnstile_locks (" + NAME.get(kind) + ", " + COLUMNS + ", PRIMARY KEY (name, token))");
            try (JdbcLockStore store = JdbcLockStore.builder(db.pool).build()) {
                refused(store);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"postgresql", "mariadb", "h2", "sqlite"})
    void aUniqueIndexOnNameBesideAnotherPrimaryKeyIsAccepted(String kind, @TempDir Path dir) throws Exception {
        try (JdbcMigrationsTest.FreshDb db = new JdbcMigrationsTest.FreshDb(kind, dir)) {
            db.exec("CREATE TABLE turnstile_locks (id INTEGER NOT NULL PRIMARY KEY, " + NAME.get(kind) + ", " + COLUMNS + ")",
                    "CREATE UNIQUE INDEX turnstile_locks_by_name ON turnstile_locks (name)");
            try (JdbcLockStore store = JdbcLockStore.builder(db.pool).build()) {
                assertThat(store.heldLocks()).isEmpty();
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"postgresql", "sqlite"})
    void aPartialUniqueIndexIsNotEnough(String kind, @TempDir Path dir) throws Exception {
        try (JdbcMigrationsTest.FreshDb db = new JdbcMigrationsTest.FreshDb(kind, dir)) {
            db.exec("CREATE TABLE turnstile_locks (" + NAME.get(kind) + ", " + COLUMNS + ")",
                    "CREATE UNIQUE INDEX turnstile_locks_some ON turnstile_locks (name) WHERE fence > 0");
            try (JdbcLockStore store = JdbcLockStore.builder(db.pool).build()) {
                refused(store);
            }
        }
    }

    /** The store refuses the table at its first call, saying why and how to fix it; returns the fix. */
    private static String refused(JdbcLockStore store) {
        Throwable e = org.assertj.core.api.Assertions.catchThrowable(
                () -> store.tryAcquire(new AcquireRequest("job", "a", "token-a", Duration.ofSeconds(30))));
        assertThat(e).isInstanceOf(StoreSchemaException.class)
                .hasMessageContaining("has no primary key or unique index on 'name' alone")
                .hasMessageContaining("both hold it");
        String message = e.getMessage();
        assertThatThrownBy(store::heldLocks).as("and every later call").isInstanceOf(StoreSchemaException.class);
        return message.substring(message.indexOf("fix it with:\n") + "fix it with:\n".length(), message.indexOf(";\n") + 1);
    }
}
